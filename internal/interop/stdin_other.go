//go:build !unix

package interop

import (
	"io"
	"os"
)

// StdinForServer returns standard input.
func StdinForServer() io.ReadCloser { return os.Stdin }
