package transport

import (
	"context"
	"errors"
	"slices"
	"strings"
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
//
// An Exchange that waits for its response while another reads needs no
// more than its context's Done channel. Only a read or a write that has to
// wait for the pipe needs its cancellation armed (context.AfterFunc, about
// two thousand instructions and three allocations): the reader arms its own
// when stdout has nothing to read yet, and a write that finds stdin full
// arms that of every message being written or queued (writeBlocked).
// Under load most exchanges find their response read by another and their
// request written at once, or queued behind a write that another makes,
// and arm nothing.
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
	// time (Stdio.sem has one slot).
	solo waiter

	reading   chan struct{}        // capacity 1: held by the Exchange reading stdout
	fr        *jsonrpc.FrameReader // used by the holder of reading
	malformed int                  // consecutive malformed frames; likewise

	mu        sync.Mutex
	pending   []*waiter    // requests written and not yet answered
	abandoned []jsonrpc.ID // recent ids whose late responses are dropped
	free      []*waiter    // multiplexed waiters of ended exchanges, reused
	notifying []*waiter    // notifications being written
	blocked   atomic.Int32 // writes to stdin waiting for room; changed with mu held

	// afterWrite, set only by tests, runs once a message has been written,
	// before its interrupt is stopped.
	afterWrite func()
	// afterBlocked, set only by tests, runs once writeBlocked has armed
	// the messages being written.
	afterBlocked func()

	users       int  // Exchanges using the child; guarded by Stdio.mu
	retired     bool // replaced; guarded by Stdio.mu
	releaseOnce sync.Once
}

const maxAbandoned = 64

// waiter is one request in flight on a persistent child, or one
// notification being written (it is never pending). Waiters are reused from
// one exchange to the next (child.solo, child.free), with their channels and
// interrupt, so that an exchange allocates none of them.
type waiter struct {
	id jsonrpc.ID
	// key is the text of id and exact whether texts of equal ids are
	// always equal (no escapes, no -0): then ids are matched by comparing
	// texts, without jsonrpc.ID.Equal.
	key   string
	exact bool
	reply chan reply // multiplexed only: the reader's answer, sent at most once
	seq   uint64     // its request's number in c.w (framebatch.Writer.Send); 0: none

	mu          sync.Mutex
	state       waitState
	interrupted bool               // its cancellation set a read deadline
	ctx         context.Context    // of the exchange, while it may need arming; nil: never armed
	stop        func() (stop bool) // of its armed cancellation; nil: not armed

	interrupt func()        // runs c.interrupt for this waiter
	armRead   func()        // arms the cancellation (the reader waits for input)
	fired     chan struct{} // receives when an interrupt has run
}

// arm arms w's cancellation, unless it is armed or its exchange has none.
// w.mu is held.
func (w *waiter) arm() {
	if w.stop == nil && w.ctx != nil {
		w.stop = context.AfterFunc(w.ctx, w.interrupt)
	}
}

// disarm stops w's cancellation and waits for an interrupt that has
// started to end; w is then never armed again.
func (w *waiter) disarm() {
	w.mu.Lock()
	stop := w.stop
	w.stop, w.ctx = nil, nil
	w.mu.Unlock()
	if stop != nil && !stop() {
		<-w.fired // the interrupt has started: let it end before w is reused
	}
}

// idKey returns the text of id and whether the texts of ids equal to it
// are always equal to it: a string without escapes, an integer other than
// -0, null. Other ids are compared with jsonrpc.ID.Equal.
func idKey(id jsonrpc.ID) (string, bool) {
	raw := id.String()
	switch {
	case id.IsZero():
		return "", false
	case id.IsString():
		return raw, !strings.Contains(raw, `\`)
	case raw == "-0":
		return raw, false
	}
	return raw, true
}

// matches reports whether w waits for the id whose idKey is key, exact.
func (w *waiter) matches(id jsonrpc.ID, key string, exact bool) bool {
	if w.exact && exact {
		return w.key == key
	}
	return w.id.Equal(id)
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
	w := c.register(ctx, msg.ID)
	if w == nil {
		return nil, fail(CodeTransport, StageSend, "duplicate_id", ErrMalformed)
	}
	defer c.finish(w)
	if err := c.write(w, msg.Body, true); err != nil {
		return nil, c.writeFailed(ctx, err)
	}
	for {
		select {
		case r := <-w.reply:
			return r.frame, r.err
		case <-ctx.Done():
			return nil, ctxFail(ctx, c.cancelStage(w))
		case c.reading <- struct{}{}:
			frame, err := c.read(ctx, w)
			<-c.reading
			return frame, err
		}
	}
}

// write writes body for w, which is in stateWriting, and leaves that
// state: an interrupt kills the child while the write is in progress, and
// not once it has ended. A request (queue) is only queued when another
// goroutine is writing (framebatch.Writer.Send), which writes it without
// this one waiting: until it has been written, w counts as writing
// (unsent), for interrupts and writeBlocked. A notification waits for its
// write, so that notifications, which take no in-flight slot, never pile
// up in the queue.
func (c *child) write(w *waiter, body []byte, queue bool) error {
	var err error
	var seq uint64
	if queue {
		seq, err = c.w.Send(body)
	} else {
		err = c.w.WriteFrame(body)
	}
	w.mu.Lock()
	w.state, w.seq = stateIdle, seq
	w.mu.Unlock()
	if c.afterWrite != nil {
		c.afterWrite()
	}
	return err
}

// register records a request of ctx with id as pending, in stateWriting,
// and returns its waiter, armed if a write is blocked; it returns nil if a
// pending request has its id.
func (c *child) register(ctx context.Context, id jsonrpc.ID) *waiter {
	key, exact := idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pending {
		if p.matches(id, key, exact) {
			return nil
		}
	}
	var w *waiter
	switch {
	case !c.multiplexed:
		// The previous exchange has ended, and so has its interrupt.
		w = &c.solo
	case len(c.free) > 0:
		w = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	default:
		w = c.newWaiter()
		w.reply = make(chan reply, 1)
	}
	w.id, w.key, w.exact, w.seq = id, key, exact, 0
	w.state, w.interrupted = stateWriting, false
	c.pending = append(c.pending, w)
	if ctx.Done() != nil {
		w.mu.Lock()
		w.ctx = ctx
		if c.blocked.Load() > 0 {
			w.arm()
		}
		w.mu.Unlock()
	}
	return w
}

// newWaiter returns a waiter with its interrupt.
func (c *child) newWaiter() *waiter {
	w := &waiter{fired: make(chan struct{}, 1)}
	w.interrupt = func() { c.interrupt(w) }
	w.armRead = func() {
		w.mu.Lock()
		w.arm()
		w.mu.Unlock()
	}
	return w
}

// writeBlocked runs when a write to stdin finds no room: the messages
// being written may now wait for as long as the child does not read, so
// their cancellation is armed, as is that of messages registered until
// writeUnblocked.
func (c *child) writeBlocked() {
	c.mu.Lock()
	c.blocked.Add(1)
	arm := func(w *waiter) {
		w.mu.Lock()
		if w.state == stateWriting || c.unsent(w) {
			w.arm()
		}
		w.mu.Unlock()
	}
	for _, w := range c.pending {
		arm(w)
	}
	for _, w := range c.notifying {
		arm(w)
	}
	hook := c.afterBlocked
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// cancelStage is the stage at which w's exchange ends when its context
// does: StageSend while its request is still queued (or its write failed),
// StageReceive once it has been written. It is called by w's exchange.
func (c *child) cancelStage(w *waiter) Stage {
	if w.seq != 0 && !c.w.Sent(w.seq) {
		return StageSend
	}
	return StageReceive
}

// unsent reports whether w's request was queued behind another write and
// has not been written yet. w.mu is held.
func (c *child) unsent(w *waiter) bool {
	return w.state == stateIdle && w.seq != 0 && !c.w.Sent(w.seq)
}

// writeUnblocked runs when a write that called writeBlocked has ended.
func (c *child) writeUnblocked() {
	c.mu.Lock()
	c.blocked.Add(-1)
	c.mu.Unlock()
}

// finish ends w, once its interrupt cannot run any more: if it is still
// pending (its response was not read), its id is abandoned, so that a late
// response is skipped. A multiplexed waiter is then kept for reuse: it is
// no longer pending, so nothing is sent to it any more.
func (c *child) finish(w *waiter) {
	w.disarm()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.takeLocked(w) {
		c.abandonLocked(w.id)
	}
	if w.reply != nil {
		select {
		case <-w.reply: // answered after its exchange gave up
		default:
		}
		w.id, w.key = jsonrpc.ID{}, ""
		c.free = append(c.free, w)
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
		if w.seq != 0 && c.blocked.Load() > 0 && !c.w.Sent(w.seq) {
			c.kill() // its request is still queued behind a blocked write
		}
	default:
		if c.unsent(w) {
			c.kill() // its request is still queued behind a blocked write
		}
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
		return nil, ctxFail(ctx, c.cancelStage(w))
	}
	w.state = stateReading
	w.mu.Unlock()
	c.stdout.onWait(w.armRead)
	defer func() {
		// Give the role up with the read deadline cleared.
		c.stdout.onWait(nil)
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
				return nil, ctxFail(ctx, c.cancelStage(w))
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
		key, exact := idKey(env.ID)
		if w.matches(env.ID, key, exact) {
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
		if !c.handOver(env.ID, key, exact, frame) && !c.discardUncorrelated {
			return nil, c.fault(w, fail(CodeProtocolRejection, StageReceive, "id_mismatch", ErrMalformed), true)
		}
	}
}

// handOver gives frame to the pending request with id, or skips it if id
// was abandoned. It reports false (and skips the frame) for an id that is
// neither.
func (c *child) handOver(id jsonrpc.ID, key string, exact bool, frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pending {
		if p.matches(id, key, exact) {
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
		w.fired = make(chan struct{}, 1)
		w.interrupt = func() { c.interrupt(w) }
		w.ctx = ctx
		c.mu.Lock()
		c.notifying = append(c.notifying, w)
		if c.blocked.Load() > 0 {
			w.arm() // w is not shared yet
		}
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.notifying = slices.DeleteFunc(c.notifying, func(p *waiter) bool { return p == w })
			c.mu.Unlock()
			w.disarm()
		}()
	}
	if err := c.write(w, body, false); err != nil {
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
