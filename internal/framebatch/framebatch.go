// Package framebatch writes LF-terminated frames (the stdio binding's
// messages) from concurrent goroutines to one stream, coalescing the frames
// that are waiting while a write is in progress into the next single Write
// call, so that pipelined messages cost one system call per batch rather
// than one each. The goroutine that writes a batch writes the batches
// queued meanwhile too, until none is left, so that a frame queued with
// Send needs no goroutine to wait for its write.
package framebatch

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// maxRetained bounds the buffer a Writer keeps between writes.
const maxRetained = 64 << 10

// maxQueued bounds the bytes Send leaves queued behind a write in progress
// without waiting: past it, Send waits for its frame's write as WriteFrame
// does, so that what is queued does not grow with a peer that stopped
// reading.
const maxQueued = 64 << 10

// Writer writes frames to a stream. It is safe for concurrent use: frames
// are never interleaved or split across batches, each is written exactly
// once, and the frames of one goroutine are written in the order it wrote
// them. WriteFrame returns once its frame has been handed to the stream;
// Send returns once its frame is queued behind a write in progress, or
// written.
//
// A write error (a short write included) ends the stream: the frames of
// the failed write and every later one fail with it, wrapped.
type Writer struct {
	w io.Writer

	mu      sync.Mutex
	cond    sync.Cond // broadcast when a write ends
	queue   []byte    // frames waiting for the next write
	spare   []byte    // the previous write's buffer, reused
	queued  uint64    // frames queued so far
	done    uint64    // frames whose write has ended
	writing bool      // a goroutine is writing a batch
	err     error     // set by the first failed write
	failed  uint64    // the first frame of that write

	// sendWait, set only by tests, runs when Send waits for its write.
	sendWait func()
}

// New returns a Writer that writes to w.
func New(w io.Writer) *Writer {
	x := &Writer{w: w}
	x.cond.L = &x.mu
	return x
}

// WriteFrame writes msg followed by a single LF, together with the frames
// of other goroutines waiting at the same time. msg must be one compact
// JSON value; WriteFrame does not parse it but refuses an empty msg
// (jsonrpc.ErrEmptyFrame) and one containing a raw LF or CR byte
// (jsonrpc.ErrNewlineInFrame), as jsonrpc.FrameWriter does.
func (x *Writer) WriteFrame(msg []byte) error {
	if len(msg) == 0 {
		return jsonrpc.ErrEmptyFrame
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		return jsonrpc.ErrNewlineInFrame
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return x.err
	}
	x.queue = append(append(x.queue, msg...), '\n')
	x.queued++
	mine := x.queued
	for x.done < mine {
		if x.writing {
			x.cond.Wait()
			continue
		}
		x.flushAllLocked()
	}
	if x.err != nil && mine >= x.failed {
		return x.err
	}
	return nil
}

// Send queues msg, checked as WriteFrame checks it, to be written with the
// frames waiting at the same time, and returns its number (Sent reports
// whether it has been written). If another goroutine is writing, that
// goroutine writes msg before its own call returns, and Send returns at
// once, without waiting: a failure of that write ends the stream (the
// writing goroutine and every later call see it). Once more than
// maxQueued bytes are queued so, Send waits for its frame's write as
// WriteFrame does, so that the queue does not grow with a peer that has
// stopped reading. Otherwise Send writes
// msg itself, with the frames queued meanwhile, and returns the error of
// any write it made.
func (x *Writer) Send(msg []byte) (uint64, error) {
	if len(msg) == 0 {
		return 0, jsonrpc.ErrEmptyFrame
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		return 0, jsonrpc.ErrNewlineInFrame
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return 0, x.err
	}
	x.queue = append(append(x.queue, msg...), '\n')
	x.queued++
	seq := x.queued
	if !x.writing {
		x.flushAllLocked()
		return seq, x.err
	}
	if len(x.queue) <= maxQueued {
		return seq, nil // the goroutine writing writes it
	}
	// The peer is slow to read: wait, as WriteFrame does.
	if x.sendWait != nil {
		x.sendWait()
	}
	for x.done < seq {
		if x.writing {
			x.cond.Wait()
			continue
		}
		x.flushAllLocked()
	}
	if x.err != nil && seq >= x.failed {
		return seq, x.err
	}
	return seq, nil
}

// Sent reports whether the frame that Send numbered seq has been handed to
// the stream: false while it is queued or being written, and for good once
// the write carrying it failed (or it was dropped after a failed write).
func (x *Writer) Sent(seq uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.done >= seq && (x.err == nil || seq < x.failed)
}

// flushAllLocked writes batches until none is queued, so that no frame is
// left queued once no write is in progress; after a failed write, the
// frames still queued fail with it, unwritten. x.mu is held and no write
// is in progress.
func (x *Writer) flushAllLocked() {
	for x.done < x.queued && x.err == nil {
		x.flushLocked()
	}
	if x.err != nil && x.done < x.queued {
		x.done = x.queued
		x.queue = x.queue[:0]
		x.cond.Broadcast()
	}
}

// flushLocked writes the queued frames in one Write, with x.mu released
// meanwhile. x.mu is held and no write is in progress.
func (x *Writer) flushLocked() {
	x.writing = true
	buf, first, last := x.queue, x.done+1, x.queued
	x.queue, x.spare = x.spare[:0], nil
	x.mu.Unlock()
	n, err := x.w.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	x.mu.Lock()
	x.writing = false
	x.done = last
	if err != nil {
		x.err, x.failed = fmt.Errorf("framebatch: write frame: %w", err), first
	}
	if cap(buf) <= maxRetained && x.spare == nil {
		x.spare = buf[:0]
	}
	x.cond.Broadcast()
}
