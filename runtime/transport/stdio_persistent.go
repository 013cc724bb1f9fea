package transport

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/internal/framebatch"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// child is one persistent backend process.
//
// Its stdout has no reader goroutine: an Exchange reads frames itself, so
// that with one request in flight its response goes from the pipe to the
// caller without changing goroutines. With several in flight, the Exchange
// holding the reading role reads for all of them: it hands each response to
// the request it correlates with and gives the role up when its own
// arrives, its context ends or the stream fails; a waiting Exchange then
// takes it over. Cancellation interrupts a read with a read deadline.
type child struct {
	*proc
	w            *framebatch.Writer // coalesces the requests of concurrent Exchanges
	done         chan struct{}      // closed once the process is reaped
	exitCode     int                // set before done is closed
	killed       atomic.Bool
	maxMalformed int
	multiplexed  bool // more than one request may be in flight
	// discardUncorrelated skips responses correlated to no request
	// (StdioOptions.DiscardUncorrelated).
	discardUncorrelated bool

	startedAt time.Time // when it was launched
	endOnce   sync.Once
	endedAt   time.Time // set by endTime's first caller

	// solo is the waiter of every request when only one is in flight at a
	// time (Stdio.sem has one slot), reused with its interrupt to spare two
	// allocations per exchange.
	solo          waiter
	soloInterrupt func()

	reading   chan struct{}        // capacity 1: held by the Exchange reading stdout
	fr        *jsonrpc.FrameReader // used by the holder of reading
	malformed int                  // consecutive malformed frames; likewise

	mu        sync.Mutex
	pending   []*waiter    // requests written and not yet answered
	abandoned []jsonrpc.ID // recent ids whose late responses are dropped

	// afterWrite, set only by tests, runs once a message has been written,
	// before its interrupt is stopped.
	afterWrite func()

	users       int  // Exchanges using the child; guarded by Stdio.mu
	retired     bool // replaced; guarded by Stdio.mu
	releaseOnce sync.Once
}

const maxAbandoned = 64

// waiter is one request in flight on a persistent child, or one
// notification being written (it is never pending).
type waiter struct {
	id    jsonrpc.ID
	reply chan reply // multiplexed only: the reader's answer, sent at most once

	mu          sync.Mutex
	state       waitState
	interrupted bool // its cancellation set a read deadline

	fired chan struct{} // solo only: receives when an interrupt has run
}

type reply struct {
	frame []byte
	err   error
}

type waitState uint8

const (
	stateIdle    waitState = iota
	stateWriting           // writing the request, or waiting to
	stateReading           // holding the reading role
)

// exchange writes a request and waits for its response.
func (c *child) exchange(ctx context.Context, msg Message) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, ctxFail(ctx, StageSend)
	}
	var w *waiter
	var interrupt func()
	if c.multiplexed {
		mw := &waiter{reply: make(chan reply, 1)}
		w, interrupt = mw, func() { c.interrupt(mw) }
	} else {
		// The previous exchange has ended, and so has its interrupt.
		w, interrupt = &c.solo, c.soloInterrupt
	}
	w.id, w.state, w.interrupted = msg.ID, stateWriting, false
	if !c.register(w) {
		return nil, fail(CodeTransport, StageSend, "duplicate_id", ErrMalformed)
	}
	defer c.finish(w)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, interrupt)
		defer func() {
			if !stop() && w.fired != nil {
				<-w.fired // the interrupt has started: let it end before w is reused
			}
		}()
	}
	if err := c.write(w, msg.Body); err != nil {
		return nil, c.writeFailed(ctx, err)
	}
	for {
		select {
		case r := <-w.reply:
			return r.frame, r.err
		case <-ctx.Done():
			return nil, ctxFail(ctx, StageReceive)
		case c.reading <- struct{}{}:
			frame, err := c.read(ctx, w)
			<-c.reading
			return frame, err
		}
	}
}

// write writes body for w, which is in stateWriting, and leaves that
// state: an interrupt kills the child while the write is in progress, and
// not once it has ended.
func (c *child) write(w *waiter, body []byte) error {
	err := c.w.WriteFrame(body)
	w.mu.Lock()
	w.state = stateIdle
	w.mu.Unlock()
	if c.afterWrite != nil {
		c.afterWrite()
	}
	return err
}

// register records w as pending; it fails if a pending request has its id.
func (c *child) register(w *waiter) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pending {
		if p.id.Equal(w.id) {
			return false
		}
	}
	c.pending = append(c.pending, w)
	return true
}

// finish ends w: if it is still pending (its response was not read), its
// id is abandoned, so that a late response is skipped.
func (c *child) finish(w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.takeLocked(w) {
		c.abandonLocked(w.id)
	}
}

// takeLocked removes w from the pending requests and reports whether it was
// there. The caller holds c.mu.
func (c *child) takeLocked(w *waiter) bool {
	for i, p := range c.pending {
		if p == w {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (c *child) abandonLocked(id jsonrpc.ID) {
	if len(c.abandoned) == maxAbandoned {
		c.abandoned = c.abandoned[1:]
	}
	c.abandoned = append(c.abandoned, id)
}

// interrupt runs when the ctx of w ends. A message being written (to a
// child that stopped reading) cannot be withdrawn: the child is killed,
// which unblocks the write. A read is interrupted with a read deadline in
// the past, and the child is kept. A request waiting for its response
// while another Exchange reads needs nothing: it is woken by ctx.
func (c *child) interrupt(w *waiter) {
	w.mu.Lock()
	switch w.state {
	case stateWriting:
		c.kill()
	case stateReading:
		c.stdout.interrupt()
		w.interrupted = true
	}
	w.mu.Unlock()
	if w.fired != nil {
		w.fired <- struct{}{}
	}
}

// read holds the reading role for w: it reads frames until w's response,
// handing the responses of other pending requests to them.
func (c *child) read(ctx context.Context, w *waiter) ([]byte, error) {
	select {
	case r := <-w.reply: // handed over by the previous reader
		return r.frame, r.err
	default:
	}
	w.mu.Lock()
	if ctx.Err() != nil {
		w.mu.Unlock()
		return nil, ctxFail(ctx, StageReceive)
	}
	w.state = stateReading
	w.mu.Unlock()
	defer func() {
		// Give the role up with the read deadline cleared.
		w.mu.Lock()
		w.state = stateIdle
		if w.interrupted {
			c.stdout.resume()
			w.interrupted = false
		}
		w.mu.Unlock()
	}()
	for {
		frame, err := c.fr.Next()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, ctxFail(ctx, StageReceive)
			case errors.Is(err, jsonrpc.ErrFrameTooLarge):
				// The line was skipped: the stream is still in step.
				return nil, c.fault(w, fail(CodeCapacity, StageReceive, "too_large", ErrTooLarge), false)
			case errors.Is(err, jsonrpc.ErrEmptyFrame), errors.Is(err, jsonrpc.ErrCRLF),
				errors.Is(err, jsonrpc.ErrUnterminatedFrame):
				return nil, c.fault(w, fail(CodeProtocolRejection, StageReceive, "frame", ErrMalformed), true)
			}
			// End of stdout (the child exited, or closed its stdout and
			// can never answer) or a read error.
			return nil, c.ended(ctx, StageReceive)
		}
		env, err := jsonrpc.Classify(frame)
		if err != nil || (env.Kind != jsonrpc.KindResponse && env.Kind != jsonrpc.KindErrorResponse) {
			return nil, c.fault(w, fail(CodeProtocolRejection, StageReceive, "not_response", ErrMalformed), true)
		}
		if env.ID.Equal(w.id) {
			c.mu.Lock()
			c.takeLocked(w)
			c.mu.Unlock()
			c.malformed = 0
			return frame, nil
		}
		// A response for another pending request is handed over; one for
		// an abandoned request is skipped. One for no request at all is the
		// live requests' failure (id_mismatch: the backend may have
		// mis-correlated their answer), unless DiscardUncorrelated: then it
		// is taken for an unsolicited or stale frame (a backend answering a
		// notification, a repeated reply) and skipped, consuming no live
		// request; w keeps waiting for its own response within its deadline.
		if !c.handOver(env.ID, frame) && !c.discardUncorrelated {
			return nil, c.fault(w, fail(CodeProtocolRejection, StageReceive, "id_mismatch", ErrMalformed), true)
		}
	}
}

// handOver gives frame to the pending request with id, or skips it if id
// was abandoned. It reports false (and skips the frame) for an id that is
// neither.
func (c *child) handOver(id jsonrpc.ID, frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pending {
		if p.id.Equal(id) {
			c.takeLocked(p)
			p.reply <- reply{frame: frame}
			c.malformed = 0
			return true
		}
	}
	for _, a := range c.abandoned {
		if a.Equal(id) {
			return true // a late reply to an abandoned request
		}
	}
	return false
}

// fault fails w and every other pending request with err: output that
// cannot be correlated may have been meant for any of them. Malformed
// output counts towards MaxMalformed; a child that keeps emitting it is
// terminated.
func (c *child) fault(w *waiter, err *Error, malformed bool) error {
	c.mu.Lock()
	for _, p := range c.pending {
		c.abandonLocked(p.id)
		if p != w && p.reply != nil {
			e := *err
			p.reply <- reply{err: &e}
		}
	}
	c.pending = c.pending[:0]
	c.mu.Unlock()
	if malformed {
		c.malformed++
		if c.malformed >= c.maxMalformed {
			c.kill()
		}
	}
	return err
}

// notify writes a notification. Notifications take no in-flight slot; if
// ctx ends while the write is in progress (blocked on a child that stopped
// reading) the child is killed, which unblocks it, as for a request. Once
// the notification is written, the end of ctx leaves the child alone.
func (c *child) notify(ctx context.Context, body []byte) error {
	if ctx.Err() != nil {
		return ctxFail(ctx, StageSend)
	}
	w := &waiter{state: stateWriting}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { c.interrupt(w) })
		defer stop()
	}
	if err := c.write(w, body); err != nil {
		return c.writeFailed(ctx, err)
	}
	return nil
}

// writeFailed classifies a failed write. A child whose stdin is broken is
// killed (if it has not exited already) and its exit status reported.
func (c *child) writeFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxFail(ctx, StageSend)
	}
	if errors.Is(err, jsonrpc.ErrNewlineInFrame) || errors.Is(err, jsonrpc.ErrEmptyFrame) {
		return fail(CodeTransport, StageSend, "frame", ErrMalformed)
	}
	return c.ended(ctx, StageSend)
}

// ended kills a child whose pipes are broken (a no-op once it has exited),
// waits until it is reaped, and reports its exit.
func (c *child) ended(ctx context.Context, stage Stage) error {
	c.kill()
	select {
	case <-c.done:
		return exitFail(stage, c.exitCode)
	case <-ctx.Done():
		return ctxFail(ctx, stage)
	}
}

// kill kills the process group (a no-op once it has exited); the next use
// launches a new child without waiting for this one to be reaped.
func (c *child) kill() {
	c.endTime()
	c.killed.Store(true)
	killGroup(c.cmd.Process)
}

// endTime returns when the child was first known to have ended: when it
// was killed or reaped, whichever came first.
func (c *child) endTime() time.Time {
	c.endOnce.Do(func() { c.endedAt = time.Now() })
	return c.endedAt
}

// gone reports whether the child has exited or been killed.
func (c *child) gone() bool {
	if c.killed.Load() {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// reap waits for the process to exit and records its status.
func (c *child) reap() {
	_ = c.proc.wait()
	_ = c.stdin.Close() // a write to a child that exited fails at once
	if c.cmd.ProcessState != nil {
		c.exitCode = c.cmd.ProcessState.ExitCode()
	}
	c.endTime()
	close(c.done)
}

// release closes the harness's end of stdout. It is called once no
// Exchange can be reading it, or at Close.
func (c *child) release() {
	c.releaseOnce.Do(func() { _ = c.stdout.f.Close() })
}

// stop closes stdin, waits up to grace for the child to exit, then kills it
// and waits until it is reaped.
func (c *child) stop(grace time.Duration) {
	_ = c.stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-c.done:
		return
	case <-timer.C:
	}
	c.kill()
	<-c.done
}

func exitFail(stage Stage, code int) *Error {
	e := fail(CodeTransport, stage, "process_exit", ErrExited)
	e.Status = code
	return e
}
