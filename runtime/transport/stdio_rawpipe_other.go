//go:build !unix

package transport

import (
	"errors"
	"os"
)

// rawPipe is not used outside Unix: newRawPipe returns nil, and pipes are
// read and written with their own Read and Write, onBlock being called
// before each.
type rawPipe struct {
	onBlock func()
}

func newRawPipe(*os.File) *rawPipe { return nil }

func (r *rawPipe) Read([]byte) (int, bool, error)  { return 0, false, errors.ErrUnsupported }
func (r *rawPipe) Write([]byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
