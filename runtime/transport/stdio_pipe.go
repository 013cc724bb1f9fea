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
	exited atomic.Bool
	left   int // post-exit read budget, used by the one reader

	mu     sync.Mutex // orders deadline changes
	exitAt time.Time  // the read deadline from exit on
}

func newOutPipe(f *os.File) *outPipe { return &outPipe{f: f, left: maxAfterExit} }

// Read implements io.Reader for one reader at a time.
func (o *outPipe) Read(p []byte) (int, error) {
	if !o.exited.Load() {
		n, err := o.f.Read(p)
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
