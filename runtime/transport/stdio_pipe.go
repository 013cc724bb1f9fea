package transport

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// maxAfterExit bounds what is read from a pipe once its child has exited:
// the largest pipe buffer Linux grants an unprivileged process (1 MiB,
// fs.pipe-max-size), which holds everything the child wrote and the
// harness had not read yet. More can only come from processes it left
// behind, which are not heard.
const maxAfterExit = 1 << 20

// outPipe is the harness's read end of a child's stdout or stderr, whose
// output ends at the child's exit rather than when every process holding
// the pipe has closed it.
//
// Until the child has been reaped, Read is an ordinary read, which a read
// deadline interrupts (cancellation). Then exit interrupts a blocked read,
// and from there on Read returns what the pipe already holds, without
// waiting, and io.EOF once it is empty (on Unix; elsewhere it reads for at
// most the grace given to exit).
type outPipe struct {
	f      *os.File
	raw    *rawPipe // nil: f.Read
	exited atomic.Bool
	left   int    // post-exit read budget, used by the one reader
	wait   func() // called by the reader before it waits for input; nil: none

	mu     sync.Mutex // orders deadline changes
	exitAt time.Time  // the read deadline from exit on
}

func newOutPipe(f *os.File) *outPipe { return &outPipe{f: f, raw: newRawPipe(f), left: maxAfterExit} }

// onWait sets what the reader calls before it waits for input (nil:
// nothing): only when the pipe has none to read. It is called by the one
// reader, between reads.
func (o *outPipe) onWait(fn func()) {
	o.wait = fn
	if o.raw != nil {
		o.raw.onBlock = fn
	}
}

// Read implements io.Reader for one reader at a time.
func (o *outPipe) Read(p []byte) (int, error) {
	if !o.exited.Load() {
		var n int
		var err error
		if o.raw != nil {
			n, _, err = o.raw.Read(p)
		} else {
			if o.wait != nil {
				o.wait()
			}
			n, err = o.f.Read(p)
		}
		if n > 0 || err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !o.exited.Load() {
			return n, err
		}
	}
	if o.left <= 0 {
		return 0, io.EOF
	}
	if len(p) > o.left {
		p = p[:o.left]
	}
	n, err := readAfterExit(o.f, p)
	o.left -= n
	return n, err
}

// interrupt makes a blocked or later read return os.ErrDeadlineExceeded
// until resume.
func (o *outPipe) interrupt() {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.f.SetReadDeadline(time.Unix(1, 0))
}

// resume undoes interrupt (a deadline set by exit stays).
func (o *outPipe) resume() {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.f.SetReadDeadline(o.exitAt)
}

// exit records that the child has been reaped and interrupts a blocked
// read, which continues with what the pipe holds.
func (o *outPipe) exit(grace time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.exited.Store(true)
	o.exitAt = exitDeadline(grace)
	_ = o.f.SetReadDeadline(o.exitAt)
}

// pipeID identifies a pipe (its inode on Linux), so that the processes
// still holding one of a child's pipes can be found.
type pipeID uint64

// inPipe is the harness's write end of a persistent child's stdin. A write
// that finds no room in the pipe (the child is not reading) calls
// child.writeBlocked before it waits and child.writeUnblocked once it has
// ended, so that the exchanges whose messages are being written can be
// interrupted meanwhile.
type inPipe struct {
	f   *os.File
	raw *rawPipe // nil: f.Write, with writeBlocked called before each
	c   *child
}

func newInPipe(f *os.File, c *child) *inPipe {
	in := &inPipe{f: f, raw: newRawPipe(f), c: c}
	if in.raw != nil {
		in.raw.onBlock = c.writeBlocked
	}
	return in
}

// Write implements io.Writer for one writer at a time (framebatch.Writer
// writes one batch at a time).
func (in *inPipe) Write(p []byte) (int, error) {
	if in.raw == nil {
		in.c.writeBlocked()
		defer in.c.writeUnblocked()
		return in.f.Write(p)
	}
	n, blocked, err := in.raw.Write(p)
	if blocked {
		in.c.writeUnblocked()
	}
	return n, err
}
