//go:build unix

package transport

import (
	"io"
	"os"
	"syscall"
)

// rawPipe reads from or writes to one end of a pipe (which os.Pipe makes
// non-blocking and pollable on Unix) through its syscall.RawConn, calling
// onBlock before it waits: only when the pipe has no input to read, or no
// room to write, rather than before every read or write. The persistent
// child arms the cancellation of an exchange there, so that an exchange
// whose reads and writes do not block registers none. One read and one
// write at a time; the buffer and the callbacks are fields so that a call
// allocates nothing.
type rawPipe struct {
	rc      syscall.RawConn
	onBlock func() // called before waiting; nil: nothing to call

	p       []byte
	n       int
	err     error
	blocked bool // onBlock was called during this call
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
}

// newRawPipe returns a rawPipe for f, or nil if f has no RawConn (then f's
// own Read and Write are used, and onBlock is called before each).
func newRawPipe(f *os.File) *rawPipe {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawPipe{rc: rc}
	r.readFn, r.writeFn = r.read, r.write
	return r
}

func (r *rawPipe) block() {
	if !r.blocked {
		r.blocked = true
		if r.onBlock != nil {
			r.onBlock()
		}
	}
}

func (r *rawPipe) read(fd uintptr) bool {
	for {
		n, err := syscall.Read(int(fd), r.p)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			r.block()
			return false // wait until readable (or the read deadline)
		case nil:
			r.n = n
		default:
			r.err = err
		}
		return true
	}
}

func (r *rawPipe) write(fd uintptr) bool {
	for r.n < len(r.p) {
		n, err := syscall.Write(int(fd), r.p[r.n:])
		if n > 0 {
			r.n += n
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			r.block()
			return false // wait until writable
		case err != nil:
			r.err = err
			return true
		case n <= 0:
			r.err = io.ErrShortWrite
			return true
		}
	}
	return true
}

// Read reads into p; a read deadline interrupts it while it waits
// (os.ErrDeadlineExceeded). It reports whether it called onBlock.
func (r *rawPipe) Read(p []byte) (int, bool, error) {
	if len(p) == 0 {
		return 0, false, nil
	}
	r.p, r.n, r.err, r.blocked = p, 0, nil, false
	err := r.rc.Read(r.readFn)
	n, blocked := r.n, r.blocked
	if err == nil {
		err = r.err
	}
	r.p, r.err = nil, nil
	if err != nil {
		return 0, blocked, &os.PathError{Op: "read", Path: "|0", Err: err}
	}
	if n == 0 {
		return 0, blocked, io.EOF
	}
	return n, blocked, nil
}

// Write writes all of p, waiting for room as long as needed. It reports
// whether it called onBlock.
func (r *rawPipe) Write(p []byte) (int, bool, error) {
	r.p, r.n, r.err, r.blocked = p, 0, nil, false
	err := r.rc.Write(r.writeFn)
	n, blocked := r.n, r.blocked
	if err == nil {
		err = r.err
	}
	r.p, r.err = nil, nil
	if err != nil {
		return n, blocked, &os.PathError{Op: "write", Path: "|1", Err: err}
	}
	return n, blocked, nil
}
