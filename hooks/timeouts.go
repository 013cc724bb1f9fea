package hooks

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Delivery timeouts (a subscription's timeoutMs, Config.ObserveTimeout)
// are enforced by one timer per Hooks instead of a context.WithTimeout per
// delivery: arming a runtime timer for every delivery costs more than the
// rest of the call's bookkeeping, and its wake-ups land on the other
// processor while the call is in flight. The timer is armed for the
// earliest pending deadline; since deliveries mostly share a few timeouts,
// later deliveries rarely re-arm it, and a delivery that completes leaves
// it alone (the timer then fires at most once for nothing and re-arms for
// what is still pending).

// errDeliveryTimeout is the cause of a delivery context whose own deadline
// passed. It matches context.DeadlineExceeded.
var errDeliveryTimeout = fmt.Errorf("hooks: delivery timeout: %w", context.DeadlineExceeded)

// deliveryContext is the context of one delivery: a child of the call's
// context that also ends at deadline. Err reports
// context.DeadlineExceeded once the deadline passed, as a context from
// context.WithDeadline does.
type deliveryContext struct {
	context.Context // a cancelCtx child of the call's context
	cancel          context.CancelCauseFunc
	deadline        time.Time
	index           int // in the timeouts heap; -1 when not in it (guarded by timeouts.mu)
}

// Deadline returns the earlier of the delivery's and the call's deadline.
func (d *deliveryContext) Deadline() (time.Time, bool) {
	if pd, ok := d.Context.Deadline(); ok && pd.Before(d.deadline) {
		return pd, true
	}
	return d.deadline, true
}

// Err returns context.DeadlineExceeded when the delivery ended by its own
// deadline, and otherwise what the parent context reports. The first cause
// recorded wins, so the answer never changes once it is non-nil.
func (d *deliveryContext) Err() error {
	err := d.Context.Err()
	if err != nil && errors.Is(context.Cause(d.Context), errDeliveryTimeout) {
		return context.DeadlineExceeded
	}
	return err
}

// String names the context type, as the standard ones do.
func (d *deliveryContext) String() string { return "hooks.deliveryContext" }

// timeouts holds the pending delivery deadlines of one Hooks and the one
// timer that enforces them. Its goroutine starts with the first delivery
// and is joined by close.
type timeouts struct {
	mu      sync.Mutex
	pending deadlineHeap
	timer   *time.Timer
	armed   time.Time // when the timer fires; zero while it is stopped
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

// start returns a context that ends when parent ends or d has elapsed, and
// the function that releases it (which must be called).
func (t *timeouts) start(parent context.Context, d time.Duration) (*deliveryContext, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	dc := &deliveryContext{Context: ctx, cancel: cancel, deadline: time.Now().Add(d), index: -1}
	if pd, ok := parent.Deadline(); ok && !pd.After(dc.deadline) {
		// The call's own deadline comes first: nothing to enforce here.
		return dc, func() { cancel(nil) }
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		cancel(context.Canceled)
		return dc, func() {}
	}
	heap.Push(&t.pending, dc)
	if t.armed.IsZero() || dc.deadline.Before(t.armed) {
		t.arm(dc.deadline)
	}
	t.mu.Unlock()
	return dc, func() {
		t.mu.Lock()
		if dc.index >= 0 {
			heap.Remove(&t.pending, dc.index)
		}
		t.mu.Unlock()
		cancel(nil)
	}
}

// arm sets the timer to fire at when. t.mu is held.
func (t *timeouts) arm(when time.Time) {
	t.armed = when
	wait := time.Until(when)
	if t.timer == nil {
		t.timer = time.NewTimer(wait)
		t.stop, t.done = make(chan struct{}), make(chan struct{})
		go t.run(t.timer.C)
		return
	}
	t.timer.Reset(wait)
}

// run ends the deliveries whose deadline passed, each time the timer fires.
func (t *timeouts) run(fired <-chan time.Time) {
	defer close(t.done)
	for {
		select {
		case <-t.stop:
			return
		case <-fired:
		}
		var expired []*deliveryContext
		t.mu.Lock()
		now := time.Now()
		for len(t.pending) > 0 && !t.pending[0].deadline.After(now) {
			expired = append(expired, heap.Pop(&t.pending).(*deliveryContext))
		}
		t.armed = time.Time{}
		if len(t.pending) > 0 && !t.closed {
			t.arm(t.pending[0].deadline)
		}
		t.mu.Unlock()
		for _, dc := range expired {
			dc.cancel(errDeliveryTimeout)
		}
	}
}

// close stops the timer and joins its goroutine. Calls have ended by then
// (Hooks.Close waits for them), so nothing is pending.
func (t *timeouts) close() {
	t.mu.Lock()
	t.closed = true
	stop, done := t.stop, t.done
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// deadlineHeap orders pending deliveries by deadline (container/heap).
type deadlineHeap []*deliveryContext

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *deadlineHeap) Push(x any) {
	dc := x.(*deliveryContext)
	dc.index = len(*h)
	*h = append(*h, dc)
}

func (h *deadlineHeap) Pop() any {
	old := *h
	n := len(old)
	dc := old[n-1]
	old[n-1] = nil
	dc.index = -1
	*h = old[:n-1]
	return dc
}
