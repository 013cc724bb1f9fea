//go:build !unix

package main

import (
	"io"
	"os"
)

// stdinForServer returns standard input.
func stdinForServer() io.ReadCloser { return os.Stdin }
