//go:build !unix

package transport

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"time"
)

// ownGroup leaves cmd in the harness's process group: this platform has no
// process groups that the transport could kill.
func ownGroup(*exec.Cmd) {}

// killGroup kills p only; processes it started are not reached, and the
// post-exit read deadline bounds how long they can hold its pipes.
func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}

// exitDeadline bounds the reads of a child's pipe after the child exited:
// without a non-blocking read, processes it left behind may hold the pipe
// open for grace.
func exitDeadline(grace time.Duration) time.Time { return time.Now().Add(grace) }

// readAfterExit reads f until the deadline set at exit, which ends it.
func readAfterExit(f *os.File, p []byte) (int, error) {
	n, err := f.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, io.EOF
	}
	return n, err
}
