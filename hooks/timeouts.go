package hooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Delivery timeouts (a subscription's timeoutMs, Config.ObserveTimeout)
// and Close are enforced through one registry per Hooks instead of a
// context.WithTimeout per delivery under a per-call context that Close
// cancels: those cost a runtime timer and three contexts per call, about a
// fifth of the harness's own work on a tool.before call
// (BenchmarkToolBeforeNoTransport). Each delivery gets one cancelable child
// of the caller's context; the registry's one timer is armed for the
// earliest pending deadline. Since deliveries mostly share a few timeouts,
// later deliveries rarely re-arm it, and a delivery that completes leaves
// it alone (the timer then fires once for nothing and re-arms for what is
// still pending). Close cancels every registered delivery.

// errDeliveryTimeout is the cause of a delivery context whose own deadline
// passed. It matches context.DeadlineExceeded.
var errDeliveryTimeout = fmt.Errorf("hooks: delivery timeout: %w", context.DeadlineExceeded)

// deliveryContext is the context of one delivery: a child of the caller's
// context that also ends at its deadline (if it has one) and when the Hooks
// closes. Err reports context.DeadlineExceeded once the deadline passed, as
// a context from context.WithDeadline does, and context.Canceled after
// Close, with ErrClosed as its cause.
type deliveryContext struct {
	context.Context // a cancelCtx child of the caller's context
	cancel          context.CancelCauseFunc
	deadline        time.Time // zero: none of its own
	fire            time.Time // when the timer must end it: deadline, or never (farFuture)
	// queue is the timeouts queue it is live in, nil once it is not;
	// prev and next link it there (all guarded by timeouts.mu).
	queue      *fireQueue
	prev, next *deliveryContext
}

// farFuture is the fire time of a delivery the timer never ends: one
// without a deadline of its own, or whose caller's deadline comes first.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Deadline returns the earlier of the delivery's and the caller's deadline.
func (d *deliveryContext) Deadline() (time.Time, bool) {
	pd, ok := d.Context.Deadline()
	if d.deadline.IsZero() || (ok && pd.Before(d.deadline)) {
		return pd, ok
	}
	return d.deadline, true
}

// Err returns context.DeadlineExceeded when the delivery ended by its own
// deadline, and otherwise what the underlying context reports. The first
// cause recorded wins, so the answer never changes once it is non-nil.
func (d *deliveryContext) Err() error {
	err := d.Context.Err()
	if err != nil && errors.Is(context.Cause(d.Context), errDeliveryTimeout) {
		return context.DeadlineExceeded
	}
	return err
}

// timedOut reports whether the delivery ended by its own deadline (not by
// its caller's context or Close).
func (d *deliveryContext) timedOut() bool {
	return errors.Is(context.Cause(d.Context), errDeliveryTimeout)
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
// reads the clock under the lock, so within a queue the fire times follow
// the queue's order, the earliest at its head, and start, release and
// expiry cost O(1) whatever the number of calls in flight (no heap).
type timeouts struct {
	mu     sync.Mutex
	queues map[time.Duration]*fireQueue // live contexts the timer ends, by their timeout
	never  fireQueue                    // live contexts the timer never ends (fire is farFuture)
	timer  *time.Timer
	armed  time.Time // when the timer fires; zero while it is stopped
	ended  bool      // cancelAll or close ran: deliveries are born cancelled, the timer is not re-armed
	stop   chan struct{}
	done   chan struct{}
}

// fireQueue is a doubly linked list of live delivery contexts in start
// order (guarded by timeouts.mu).
type fireQueue struct{ head, tail *deliveryContext }

func (q *fireQueue) push(dc *deliveryContext) {
	dc.queue, dc.prev, dc.next = q, q.tail, nil
	if q.tail != nil {
		q.tail.next = dc
	} else {
		q.head = dc
	}
	q.tail = dc
}

func (q *fireQueue) remove(dc *deliveryContext) {
	if dc.prev != nil {
		dc.prev.next = dc.next
	} else {
		q.head = dc.next
	}
	if dc.next != nil {
		dc.next.prev = dc.prev
	} else {
		q.tail = dc.prev
	}
	dc.queue, dc.prev, dc.next = nil, nil, nil
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
	ctx, cancel := context.WithCancelCause(parent)
	*dc = deliveryContext{Context: ctx, cancel: cancel, fire: farFuture}
	pd, hasPD := parent.Deadline()
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		if d > 0 {
			dc.deadline = time.Now().Add(d)
		}
		cancel(ErrClosed)
		return
	}
	q := &t.never
	if d > 0 {
		// Read under the lock: fire times are then in queue order.
		dc.deadline = time.Now().Add(d)
		if !hasPD || pd.After(dc.deadline) {
			dc.fire = dc.deadline // otherwise the caller's deadline comes first
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
	if dc.fire != farFuture && (t.armed.IsZero() || dc.fire.Before(t.armed)) {
		t.arm(dc.fire)
	}
	t.mu.Unlock()
}

// release ends a delivery context that start returned.
func (t *timeouts) release(dc *deliveryContext) {
	t.mu.Lock()
	if dc.queue != nil {
		dc.queue.remove(dc)
	}
	t.mu.Unlock()
	dc.cancel(nil)
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
		now := time.Now()
		var next time.Time
		for _, q := range t.queues {
			for q.head != nil && !q.head.fire.After(now) {
				dc := q.head
				q.remove(dc)
				expired = append(expired, dc)
			}
			if q.head != nil && (next.IsZero() || q.head.fire.Before(next)) {
				next = q.head.fire
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
	for dc := t.never.head; dc != nil; dc = dc.next {
		out = append(out, dc)
	}
	for _, q := range t.queues {
		for dc := q.head; dc != nil; dc = dc.next {
			out = append(out, dc)
		}
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
