package hooks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Delivery timeouts (a subscription's timeoutMs, Config.ObserveTimeout)
// and Close are enforced through one registry per Hooks instead of a
// context.WithTimeout per delivery under a per-call context that Close
// cancels: those cost a runtime timer and three contexts per call, about a
// fifth of the harness's own work on a tool.before call
// (BenchmarkToolBeforeNoTransport). Each delivery gets one context of its
// own (deliveryContext) that follows the caller's; the registry's one timer
// is armed for the earliest pending deadline. Since deliveries mostly share
// a few timeouts, later deliveries rarely re-arm it, and a delivery that
// completes leaves it alone (the timer then fires once for nothing and
// re-arms for what is still pending). Close cancels every registered
// delivery.

// errDeliveryTimeout is the cause of a delivery context whose own deadline
// passed. It matches context.DeadlineExceeded.
var errDeliveryTimeout = fmt.Errorf("hooks: delivery timeout: %w", context.DeadlineExceeded)

// deliveryContext is the context of one delivery: it carries the caller's
// context's values and deadline, ends when the caller's context ends, and
// also at its own deadline (if it has one), when the Hooks closes and when
// it is released. Err reports context.DeadlineExceeded once its own
// deadline passed, as a context from context.WithDeadline does, and
// context.Canceled after Close, with ErrClosed as its cause
// (context.Cause). The first end recorded wins.
//
// Under a caller's context that can end (its Done is not nil), it is a
// context.WithCancelCause child of it (inner), as every delivery context
// used to be. Under one that never ends (context.Background, most
// callers), it is a context of its own: a *context.cancelCtx there would
// cost two allocations, and a child registering with it (net/http's
// Transport derives one from each request's context) a children map of
// two more, about 350 bytes a call. It implements the context package's
// AfterFunc method instead, through which the package registers the
// children of a parent that is no cancelCtx: the child of the moment (most
// deliveries have at most one at a time) takes a slot in the context,
// others a map allocated when needed; internal/ctxwatch registers
// functions there directly. Value answers context.Cause's look-up with a
// record of the cause once the delivery has ended (see cancelCtxKey).
//
// Its zero value is ready for timeouts.startIn; it must not be copied.
type deliveryContext struct {
	// parent is the caller's context; inner, its WithCancelCause child,
	// which cancelInner cancels.
	parent      context.Context
	cancelInner context.CancelCauseFunc

	mu sync.Mutex
	// state (without inner) is 0 while the delivery is live, then how it
	// ended (endReleased and the others): set under mu once rare's err,
	// cause and carrier are final (so a non-zero load makes them readable
	// without mu), before done closes.
	state atomic.Uint32
	// inner reports that parent is a WithCancelCause child of the caller's
	// context, which holds the delivery's state (none of the fields below
	// but deadline, timed, prev and next is used then); timed that the
	// registry's timer ends the delivery at deadline (the caller's deadline
	// does not come first).
	inner, timed bool
	// slotGen counts the registrations the slot has held, so that a stop
	// function stops only its own (guarded by mu).
	slotGen uint16
	done    chan struct{} // created by the first Done, closed (or closedChan) at the end
	// slot is the function of the child registered in the slot, nil when
	// it is free.
	slot func()
	rare *deliveryRare

	// deadline is the delivery's own deadline, as an offset from its
	// registry's base time (8 bytes where a time.Time is 24; t.base.Add
	// keeps the monotonic clock reading deadlines are compared with); 0:
	// none.
	deadline time.Duration
	t        *timeouts // its registry, set with deadline
	// prev and next link it in the timeouts queue it is live in, nil once
	// it is not (guarded by timeouts.mu).
	prev, next *deliveryContext
}

// deadlineTime returns the delivery's own deadline; zero without one.
func (d *deliveryContext) deadlineTime() time.Time {
	if d.deadline == 0 {
		return time.Time{}
	}
	return d.t.base.Add(d.deadline)
}

// deliveryRare holds what few deliveries need: the children registered
// while the slot is taken, and the Err and cause of an end none of the common
// kinds describes (endOther), with the value context.Cause reads the cause
// from.
type deliveryRare struct {
	more       map[*afterFuncEntry]struct{}
	err, cause error
	carrier    any
}

// afterFuncEntry is a child registered while the slot is taken.
type afterFuncEntry struct{ f func() }

// How a delivery ended (deliveryContext.state): its Err and cause.
const (
	endReleased = 1 + iota // context.Canceled, context.Canceled
	endTimeout             // context.DeadlineExceeded, errDeliveryTimeout (its own)
	endClosed              // context.Canceled, ErrClosed
	endOther               // rare.err, rare.cause
)

// closedChan is the Done channel of a delivery that ended before anyone
// asked for one.
var closedChan = make(chan struct{})

func init() { close(closedChan) }

// cancelCtxKey is the key under which the context package's Cause looks up
// the innermost cancellation it records causes in (context.Cause asks a
// context that ended for it through Value); learnt once from Cause itself.
// A deliveryContext answers it with a carrier of its own cause.
var cancelCtxKey = func() any {
	p := &keyProbe{Context: context.Background()}
	_ = context.Cause(p)
	return p.key
}()

// keyProbe is an ended context that records the key its Value is asked.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Err() error { return context.Canceled }

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

// causeCarrier returns what Value(cancelCtxKey) of a context ended with
// cause must return for context.Cause to report cause: the context
// package's own record of a context cancelled with that cause.
func causeCarrier(cause error) any {
	if cancelCtxKey == nil {
		return nil
	}
	c, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return c.Value(cancelCtxKey)
}

// The carriers of the causes every Hooks uses, built once.
var (
	timeoutCarrier = causeCarrier(errDeliveryTimeout)
	closedCarrier  = causeCarrier(ErrClosed)
)

// Deadline returns the earlier of the delivery's and the caller's deadline.
func (d *deliveryContext) Deadline() (time.Time, bool) {
	pd, ok := d.parent.Deadline()
	if d.deadline == 0 {
		return pd, ok
	}
	own := d.deadlineTime()
	if ok && pd.Before(own) {
		return pd, ok
	}
	return own, true
}

// Done returns a channel closed when the delivery ends.
func (d *deliveryContext) Done() <-chan struct{} {
	if d.inner {
		return d.parent.Done()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done == nil {
		if d.state.Load() != 0 {
			d.done = closedChan
		} else {
			d.done = make(chan struct{})
		}
	}
	return d.done
}

// Err returns nil while the delivery is live; then context.DeadlineExceeded
// when it ended by its own deadline, and otherwise what ended it:
// context.Canceled (released, Close) or the caller's context's Err. The
// answer never changes once it is non-nil.
func (d *deliveryContext) Err() error {
	if d.inner {
		err := d.parent.Err()
		if err != nil && errors.Is(context.Cause(d.parent), errDeliveryTimeout) {
			return context.DeadlineExceeded
		}
		return err
	}
	state := d.state.Load()
	if state == 0 {
		return nil
	}
	<-d.Done() // closed by now, or in a moment by the end that set state
	switch state {
	case endReleased, endClosed:
		return context.Canceled
	case endTimeout:
		return context.DeadlineExceeded
	}
	return d.rare.err
}

// Value returns the caller's context's value for key; for the key that
// context.Cause reads, the record of the delivery's cause once it ended
// (nothing while it is live, so that no child takes it for a parent whose
// children it may add to a map of its own: they register through
// AfterFunc).
func (d *deliveryContext) Value(key any) any {
	if d.inner || key != cancelCtxKey || key == nil {
		return d.parent.Value(key) // inner answers the key itself
	}
	switch d.state.Load() {
	case 0, endReleased:
		return nil // live, or Cause is Err
	case endTimeout:
		return timeoutCarrier
	case endClosed:
		return closedCarrier
	}
	return d.rare.carrier
}

// AfterFunc arranges for f to run when the delivery ends, and returns a
// function that unregisters it, reporting whether that stopped f from
// running (the context package's afterFuncer: context.AfterFunc and every
// context derived from the delivery register through it). f runs in the
// goroutine that ends the delivery, after it has ended and without any of
// its locks held, as a *context.cancelCtx cancels its children; if the
// delivery has already ended, f runs at once in a goroutine of its own
// (the context package calls AfterFunc holding the child's lock that f
// takes). With inner, it is context.AfterFunc on the inner context (whose
// children register in its own map).
func (d *deliveryContext) AfterFunc(f func()) (stop func() bool) {
	if d.inner {
		return context.AfterFunc(d.parent, f)
	}
	d.mu.Lock()
	if d.state.Load() != 0 {
		d.mu.Unlock()
		go f()
		return stopNothing
	}
	if d.slot == nil {
		d.slot = f
		d.slotGen++
		gen := d.slotGen
		d.mu.Unlock()
		return func() bool { return d.stopSlot(gen) }
	}
	e := &afterFuncEntry{f: f}
	if d.rare == nil {
		d.rare = &deliveryRare{}
	}
	if d.rare.more == nil {
		d.rare.more = map[*afterFuncEntry]struct{}{}
	}
	d.rare.more[e] = struct{}{}
	d.mu.Unlock()
	return func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		if _, ok := d.rare.more[e]; !ok {
			return false
		}
		delete(d.rare.more, e)
		return true
	}
}

// stopNothing is the stop function of a function already started.
func stopNothing() bool { return false }

// stopSlot unregisters the child registered in the slot as its gen-th.
func (d *deliveryContext) stopSlot(gen uint16) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.slot == nil || d.slotGen != gen {
		return false // it ran, was stopped, or the slot holds a later one
	}
	d.slot = nil
	return true
}

// cancel ends the delivery with cause (nil: context.Canceled), as a
// context.CancelCauseFunc does; an end recorded earlier stays.
func (d *deliveryContext) cancel(cause error) {
	if d.inner {
		d.cancelInner(cause)
		return
	}
	d.end(context.Canceled, cause)
}

// end records the delivery's end (without inner) with err and cause unless
// one was recorded already, closes Done and runs the registered children's
// functions. errDeliveryTimeout's Err is context.DeadlineExceeded.
func (d *deliveryContext) end(err, cause error) {
	if cause == nil {
		cause = err
	}
	d.mu.Lock()
	if d.state.Load() != 0 {
		d.mu.Unlock()
		return
	}
	var state uint32
	switch {
	case cause == errDeliveryTimeout:
		state = endTimeout
	case err == context.Canceled && cause == context.Canceled:
		state = endReleased
	case err == context.Canceled && cause == ErrClosed:
		state = endClosed
	default:
		state = endOther
		if errors.Is(cause, errDeliveryTimeout) {
			err = context.DeadlineExceeded // as for endTimeout
		}
		if d.rare == nil {
			d.rare = &deliveryRare{}
		}
		d.rare.err, d.rare.cause, d.rare.carrier = err, cause, causeCarrier(cause)
	}
	d.state.Store(state) // before Done closes: whoever it wakes sees Err
	if d.done == nil {
		d.done = closedChan
	} else {
		close(d.done)
	}
	first := d.slot
	d.slot = nil
	var more map[*afterFuncEntry]struct{}
	if d.rare != nil {
		more, d.rare.more = d.rare.more, nil
	}
	d.mu.Unlock()
	if first != nil {
		first()
	}
	for e := range more {
		e.f()
	}
}

// timedOut reports whether the delivery ended by its own deadline (not by
// its caller's context or Close).
func (d *deliveryContext) timedOut() bool {
	if d.inner {
		return errors.Is(context.Cause(d.parent), errDeliveryTimeout)
	}
	switch d.state.Load() {
	case endTimeout:
		return true
	case endOther:
		return errors.Is(d.rare.cause, errDeliveryTimeout)
	}
	return false
}

// String names the context type, as the standard ones do.
func (d *deliveryContext) String() string { return "hooks.deliveryContext" }

// timeouts holds the live delivery contexts of one Hooks and the one timer
// that enforces their deadlines. Its goroutine starts with the first
// deadline and is joined by close.
//
// The live contexts are kept in one first-in first-out queue per timeout
// duration (the subscriptions' timeoutMs and Config.ObserveTimeout: a few
// values fixed at New), plus one for those the timer never ends: start
// reads the clock under the lock, so within a queue the deadlines follow
// the queue's order, the earliest at its head, and start, release and
// expiry cost O(1) whatever the number of calls in flight (no heap).
type timeouts struct {
	mu     sync.Mutex
	queues map[time.Duration]*fireQueue // live contexts the timer ends, by their timeout
	never  fireQueue                    // live contexts the timer never ends (not timed)
	base   time.Time                    // the origin of its deliveries' deadlines, set by the first; never changed
	timer  *time.Timer
	armed  time.Time // when the timer fires; zero while it is stopped
	ended  bool      // cancelAll or close ran: deliveries are born cancelled, the timer is not re-armed
	stop   chan struct{}
	done   chan struct{}
}

// fireQueue is a circular doubly linked list of live delivery contexts in
// start order around root, which is no delivery (guarded by timeouts.mu):
// a delivery leaves it without knowing which queue it is in. The zero
// value is an empty queue.
type fireQueue struct{ root deliveryContext }

// front returns the earliest delivery in q, nil when there is none.
func (q *fireQueue) front() *deliveryContext {
	if dc := q.root.next; dc != nil && dc != &q.root {
		return dc
	}
	return nil
}

// push puts dc, in no queue, at the end of q.
func (q *fireQueue) push(dc *deliveryContext) {
	if q.root.next == nil {
		q.root.prev, q.root.next = &q.root, &q.root
	}
	last := q.root.prev
	dc.prev, dc.next = last, &q.root
	last.next, q.root.prev = dc, dc
}

// unqueue takes dc out of the queue it is in, if any.
func (dc *deliveryContext) unqueue() {
	if dc.next == nil {
		return
	}
	dc.prev.next, dc.next.prev = dc.next, dc.prev
	dc.prev, dc.next = nil, nil
}

// each calls f for every delivery in q, in order.
func (q *fireQueue) each(f func(*deliveryContext)) {
	for dc := q.front(); dc != nil && dc != &q.root; dc = dc.next {
		f(dc)
	}
}

// start returns a context that ends when parent ends, when d (if positive)
// has elapsed, or when cancelAll runs. It must be released with
// t.release when the delivery is over.
func (t *timeouts) start(parent context.Context, d time.Duration) *deliveryContext {
	dc := new(deliveryContext)
	t.startIn(dc, parent, d)
	return dc
}

// startIn is start into dc, a deliveryContext never used before (its
// zero value).
func (t *timeouts) startIn(dc *deliveryContext, parent context.Context, d time.Duration) {
	dc.parent = parent
	if parent.Done() != nil {
		dc.parent, dc.cancelInner = context.WithCancelCause(parent)
		dc.inner = true
	}
	pd, hasPD := parent.Deadline()
	t.mu.Lock()
	if t.ended {
		if d > 0 {
			dc.deadline, dc.t = t.sinceBase(d), t
		}
		t.mu.Unlock()
		dc.cancel(ErrClosed)
		return
	}
	q := &t.never
	if d > 0 {
		// Read under the lock: deadlines are then in queue order.
		dc.deadline, dc.t = t.sinceBase(d), t
		if !hasPD || pd.After(dc.deadlineTime()) {
			dc.timed = true // otherwise the caller's deadline comes first
			if q = t.queues[d]; q == nil {
				if t.queues == nil {
					t.queues = map[time.Duration]*fireQueue{}
				}
				q = &fireQueue{}
				t.queues[d] = q
			}
		}
	}
	q.push(dc)
	if dc.timed && (t.armed.IsZero() || dc.deadlineTime().Before(t.armed)) {
		t.arm(dc.deadlineTime())
	}
	t.mu.Unlock()
}

// release ends a delivery context that start returned.
func (t *timeouts) release(dc *deliveryContext) {
	t.mu.Lock()
	dc.unqueue()
	t.mu.Unlock()
	dc.cancel(nil)
}

// sinceBase is the time elapsed since t.base plus d (d > 0), at most the
// largest Duration; the first call sets t.base. t.mu is held.
func (t *timeouts) sinceBase(d time.Duration) time.Duration {
	if t.base.IsZero() {
		t.base = time.Now()
	}
	now := time.Since(t.base)
	if d > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + d
}

// arm sets the timer to fire at when. t.mu is held.
func (t *timeouts) arm(when time.Time) {
	t.armed = when
	wait := time.Until(when)
	if t.timer == nil {
		t.timer = time.NewTimer(wait)
		t.stop, t.done = make(chan struct{}), make(chan struct{})
		go t.run(t.timer.C, t.stop)
		return
	}
	t.timer.Reset(wait)
}

// run ends the deliveries whose deadline passed, each time the timer fires.
func (t *timeouts) run(fired <-chan time.Time, stop <-chan struct{}) {
	defer close(t.done)
	for {
		select {
		case <-stop:
			return
		case <-fired:
		}
		var expired []*deliveryContext
		t.mu.Lock()
		now := time.Since(t.base)
		var next time.Time
		for _, q := range t.queues {
			dc := q.front()
			for ; dc != nil && dc.deadline <= now; dc = q.front() {
				dc.unqueue()
				expired = append(expired, dc)
			}
			if dc != nil && (next.IsZero() || dc.deadlineTime().Before(next)) {
				next = dc.deadlineTime()
			}
		}
		t.armed = time.Time{}
		if !next.IsZero() && !t.ended {
			t.arm(next)
		}
		t.mu.Unlock()
		for _, dc := range expired {
			dc.cancel(errDeliveryTimeout)
		}
	}
}

// live returns every live delivery context. t.mu is held.
func (t *timeouts) live() []*deliveryContext {
	var out []*deliveryContext
	add := func(dc *deliveryContext) { out = append(out, dc) }
	t.never.each(add)
	for _, q := range t.queues {
		q.each(add)
	}
	return out
}

// cancelAll ends every live delivery with cause, and every later one at
// its start.
func (t *timeouts) cancelAll(cause error) {
	t.mu.Lock()
	t.ended = true
	live := t.live()
	t.mu.Unlock()
	for _, dc := range live {
		dc.cancel(cause)
	}
}

// close stops the timer and joins its goroutine; it is idempotent. Calls
// have ended by then (Hooks.Close waits for them), so nothing is pending; a
// delivery started afterwards is born cancelled.
func (t *timeouts) close() {
	t.mu.Lock()
	t.ended = true
	stop, done := t.stop, t.done
	t.stop = nil
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
