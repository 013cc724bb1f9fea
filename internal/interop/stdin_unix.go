//go:build unix

package interop

import (
	"io"
	"os"
	"syscall"
)

// StdinForServer returns standard input as a file the runtime poller
// manages, so closing it interrupts a pending read and the stdio server can
// join its reader goroutine on shutdown. It falls back to os.Stdin.
func StdinForServer() io.ReadCloser {
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(0, "/dev/stdin")
}
