package hooks

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// customContext is a caller's context the context package knows nothing
// about: neither a cancelCtx nor an afterFuncer, with a Done of its own.
type customContext struct {
	context.Context
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
	value any
}

func newCustomContext() *customContext {
	return &customContext{Context: context.Background(), done: make(chan struct{}), value: "custom"}
}

func (c *customContext) Done() <-chan struct{} { return c.done }

func (c *customContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *customContext) Value(key any) any {
	if key == (valueKey{}) {
		return c.value
	}
	return nil
}

func (c *customContext) end(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	})
}

type valueKey struct{}

var errCallerCause = errors.New("the caller's cause")

// contextPair is a delivery context and the standard library's model of
// it over an equivalent parent: a context.WithCancelCause child, or a
// context.WithTimeoutCause one with errDeliveryTimeout as its cause for a
// delivery with a timeout of its own.
type contextPair struct {
	name     string
	dc       *deliveryContext
	model    context.Context
	endModel context.CancelCauseFunc
}

// parentKind builds a caller's context, its twin for the model, and the
// function that ends both (nil: they never end).
type parentKind struct {
	name string
	make func(t *testing.T, ts *timeouts) (parent, twin context.Context, end func())
}

func parentKinds() []parentKind {
	return []parentKind{
		{"background", func(*testing.T, *timeouts) (context.Context, context.Context, func()) {
			return context.WithValue(context.Background(), valueKey{}, "v"), context.WithValue(context.Background(), valueKey{}, "v"), nil
		}},
		{"cancel cause", func(t *testing.T, _ *timeouts) (context.Context, context.Context, func()) {
			p, cancelP := context.WithCancelCause(context.WithValue(context.Background(), valueKey{}, "v"))
			q, cancelQ := context.WithCancelCause(context.WithValue(context.Background(), valueKey{}, "v"))
			t.Cleanup(func() { cancelP(nil); cancelQ(nil) })
			return p, q, func() { cancelP(errCallerCause); cancelQ(errCallerCause) }
		}},
		{"deadline", func(t *testing.T, _ *timeouts) (context.Context, context.Context, func()) {
			// Ended by hand (its deadline is far): a timerCtx parent.
			p, cancelP := context.WithTimeoutCause(context.WithValue(context.Background(), valueKey{}, "v"), time.Hour, errCallerCause)
			q, cancelQ := context.WithTimeoutCause(context.WithValue(context.Background(), valueKey{}, "v"), time.Hour, errCallerCause)
			t.Cleanup(func() { cancelP(); cancelQ() })
			return p, q, func() { cancelP(); cancelQ() }
		}},
		{"custom", func(*testing.T, *timeouts) (context.Context, context.Context, func()) {
			p, q := newCustomContext(), newCustomContext()
			return p, q, func() { p.end(context.Canceled); q.end(context.Canceled) }
		}},
		{"custom error", func(*testing.T, *timeouts) (context.Context, context.Context, func()) {
			p, q := newCustomContext(), newCustomContext()
			return p, q, func() { p.end(errCallerCause); q.end(errCallerCause) }
		}},
		{"delivery", func(t *testing.T, ts *timeouts) (context.Context, context.Context, func()) {
			// A delivery within a delivery (an owed observation's timeout
			// under ObserveTimeout's), modelled by a WithCancelCause pair.
			base, cancelBase := context.WithCancelCause(context.WithValue(context.Background(), valueKey{}, "v"))
			t.Cleanup(func() { cancelBase(nil) })
			p := ts.start(base, 0)
			t.Cleanup(func() { ts.release(p) })
			q, cancelQ := context.WithCancelCause(context.WithValue(context.Background(), valueKey{}, "v"))
			t.Cleanup(func() { cancelQ(nil) })
			return p, q, func() { p.cancel(errCallerCause); cancelQ(errCallerCause) }
		}},
	}
}

// endKind ends a delivery and its model the same way.
type endKind struct {
	name    string
	timeout time.Duration // the delivery's own
	end     func(ts *timeouts, p *contextPair, endParent func())
}

func endKinds() []endKind {
	return []endKind{
		{"released", 0, func(ts *timeouts, p *contextPair, _ func()) {
			ts.release(p.dc)
			p.endModel(nil)
		}},
		{"closed", time.Hour, func(ts *timeouts, p *contextPair, _ func()) {
			ts.cancelAll(ErrClosed)
			p.endModel(ErrClosed)
		}},
		{"timed out", 5 * time.Millisecond, func(_ *timeouts, p *contextPair, _ func()) {
			<-p.dc.Done()
			<-p.model.Done()
		}},
		{"caller ended", time.Hour, func(_ *timeouts, p *contextPair, endParent func()) {
			endParent()
			<-p.dc.Done()
			<-p.model.Done()
		}},
	}
}

// children derives from ctx every kind of child the standard library
// makes, as net/http's Transport, context.AfterFunc and callers do; check
// then compares them with the same children of the model.
type children struct {
	cancel      context.Context
	timeout     context.Context
	value       context.Context
	afterFuncCh chan struct{}
	stops       []func()
}

func deriveChildren(ctx context.Context) *children {
	c := &children{afterFuncCh: make(chan struct{})}
	var cancel context.CancelCauseFunc
	c.cancel, cancel = context.WithCancelCause(ctx)
	var stop context.CancelFunc
	c.timeout, stop = context.WithTimeout(ctx, time.Hour)
	c.value = context.WithValue(ctx, valueKey{}, "child")
	stopAfter := context.AfterFunc(ctx, func() { close(c.afterFuncCh) })
	c.stops = []func(){func() { cancel(nil) }, stop, func() { stopAfter() }}
	return c
}

func (c *children) release() {
	for _, stop := range c.stops {
		stop()
	}
}

// requireSameEnd asserts that got and want ended alike: Err, Cause and a
// closed Done.
func requireSameEnd(t *testing.T, got, want context.Context, what string) {
	t.Helper()
	<-got.Done()
	<-want.Done()
	require.Equal(t, want.Err(), got.Err(), "%s: Err", what)
	require.Equal(t, context.Cause(want), context.Cause(got), "%s: Cause", what)
}

// requireSameChildEnd is requireSameEnd for a child of dc. A child of a
// delivery under a caller's context that can end is a child of its inner
// WithCancelCause context, which the registry's timer cancels: at the
// delivery's own deadline such a child reports context.Canceled (with the
// timeout as its cause), as every child did before deliveries had
// contexts of their own.
func requireSameChildEnd(t *testing.T, dc *deliveryContext, got, want context.Context, what string) {
	t.Helper()
	if !dc.inner || !dc.timedOut() {
		requireSameEnd(t, got, want, what)
		return
	}
	<-got.Done()
	<-want.Done()
	require.Equal(t, context.Canceled, got.Err(), "%s: Err", what)
	require.Equal(t, context.Cause(want), context.Cause(got), "%s: Cause", what)
}

// TestDeliveryContextModel: a delivery context, and every child the
// standard library derives from it (WithCancelCause, WithTimeout,
// WithValue, AfterFunc), end as their twins under the standard library's
// model of it (a WithCancelCause child of the caller's context, or
// WithTimeoutCause with errDeliveryTimeout), for every end (released,
// closed, timed out, the caller's end) and every kind of caller's context
// (none that ends, a cancelCtx, a timerCtx, a custom one, another
// delivery): the same Err and Cause, Done closed, AfterFunc run, the
// caller's values seen.
func TestDeliveryContextModel(t *testing.T) {
	for _, pk := range parentKinds() {
		for _, ek := range endKinds() {
			t.Run(pk.name+"/"+ek.name, func(t *testing.T) {
				var ts timeouts
				defer ts.close()
				parent, twin, endParent := pk.make(t, &ts)
				if ek.name == "caller ended" && endParent == nil {
					t.Skip("this caller's context never ends")
				}
				p := &contextPair{name: pk.name, dc: ts.start(parent, ek.timeout)}
				defer ts.release(p.dc)
				var stopModel context.CancelFunc = func() {}
				if ek.timeout > 0 {
					var m context.Context
					m, stopModel = context.WithTimeoutCause(twin, ek.timeout, errDeliveryTimeout)
					p.model, p.endModel = context.WithCancelCause(m)
				} else {
					p.model, p.endModel = context.WithCancelCause(twin)
				}
				defer stopModel()
				defer p.endModel(nil)

				require.Equal(t, parent.Value(valueKey{}), p.dc.Value(valueKey{}), "the caller's values")
				if ek.timeout == 0 || ek.timeout >= time.Hour { // a short one may have timed out already
					require.NoError(t, p.dc.Err())
					require.NoError(t, context.Cause(p.dc))
				}
				got, want := deriveChildren(p.dc), deriveChildren(p.model)
				defer got.release()
				defer want.release()
				require.Equal(t, parent.Value(valueKey{}), got.cancel.Value(valueKey{}), "a child sees the caller's values")

				ek.end(&ts, p, endParent)

				requireSameEnd(t, p.dc, p.model, "the delivery")
				requireSameChildEnd(t, p.dc, got.cancel, want.cancel, "WithCancelCause child")
				requireSameChildEnd(t, p.dc, got.timeout, want.timeout, "WithTimeout child")
				requireSameEnd(t, got.value, want.value, "WithValue child")
				<-got.afterFuncCh
				<-want.afterFuncCh
				require.Equal(t, ek.name == "timed out", p.dc.timedOut())

				// A child derived after the end is born ended, alike.
				late, lateModel := deriveChildren(p.dc), deriveChildren(p.model)
				defer late.release()
				defer lateModel.release()
				requireSameEnd(t, late.cancel, lateModel.cancel, "a later child")
				<-late.afterFuncCh

				// The first end stays the answer.
				err, cause := p.dc.Err(), context.Cause(p.dc)
				ts.release(p.dc)
				p.dc.cancel(errors.New("later"))
				require.Equal(t, err, p.dc.Err())
				require.Equal(t, cause, context.Cause(p.dc))
			})
		}
	}
}

// TestDeliveryContextParentEndedFirst: a caller's context that has ended
// before the delivery starts ends it at once, with the caller's Err and
// Cause, which a later end (release, Close) does not replace.
func TestDeliveryContextParentEndedFirst(t *testing.T) {
	var ts timeouts
	defer ts.close()
	parent, cancel := context.WithCancelCause(context.Background())
	cancel(errCallerCause)
	dc := ts.start(parent, time.Hour)
	<-dc.Done()
	require.Equal(t, context.Canceled, dc.Err())
	require.Equal(t, errCallerCause, context.Cause(dc))
	ts.cancelAll(ErrClosed)
	ts.release(dc)
	require.Equal(t, errCallerCause, context.Cause(dc))
}

// TestDeliveryContextChildrenUnregister: children that end before the
// delivery leave nothing registered with it, whether they took its slot or
// came while it was taken; a freed slot serves the next child, and a stale
// stop function never unregisters a later one; ending the delivery ends
// the children still registered, and only those.
func TestDeliveryContextChildrenUnregister(t *testing.T) {
	var ts timeouts
	defer ts.close()
	dc := ts.start(context.Background(), 0)
	defer ts.release(dc)
	registered := func() (inSlot bool, more int) {
		dc.mu.Lock()
		defer dc.mu.Unlock()
		if dc.rare != nil {
			more = len(dc.rare.more)
		}
		return dc.slot != nil, more
	}

	first, cancelFirst := context.WithCancel(dc)
	inSlot, _ := registered()
	require.True(t, inSlot, "the first child takes the slot")
	cancelFirst()
	inSlot, _ = registered()
	require.False(t, inSlot, "and leaves it when it ends")
	require.Equal(t, context.Canceled, first.Err())

	ran := make(chan string, 4)
	stopA := dc.AfterFunc(func() { ran <- "a" })
	require.True(t, stopA())
	require.False(t, stopA(), "stopped already")
	stopB := dc.AfterFunc(func() { ran <- "b" }) // the freed slot
	inSlot, _ = registered()
	require.True(t, inSlot)
	require.False(t, stopA(), "a stale stop leaves the slot's later child")
	inSlot, _ = registered()
	require.True(t, inSlot)

	var kept []context.Context
	var cancels []context.CancelFunc
	for range 10 {
		c, cancel := context.WithCancel(dc)
		kept = append(kept, c)
		cancels = append(cancels, cancel)
	}
	_, more := registered()
	require.Equal(t, 10, more, "the slot is taken")
	for _, cancel := range cancels[:5] {
		cancel()
	}
	_, more = registered()
	require.Equal(t, 5, more, "ended children unregister")
	for _, c := range kept[5:] {
		require.NoError(t, c.Err())
	}
	ts.cancelAll(ErrClosed)
	require.Equal(t, "b", <-ran, "the slot's child ran, the stopped one did not")
	for _, c := range kept[5:] {
		<-c.Done()
		require.Equal(t, ErrClosed, context.Cause(c))
	}
	for _, c := range kept[:5] {
		require.Equal(t, context.Canceled, context.Cause(c), "ended before the delivery: its own cause")
	}
	require.False(t, stopB(), "it ran")
	inSlot, more = registered()
	require.False(t, inSlot)
	require.Zero(t, more)
	require.Empty(t, ran)
}

// TestDeliveryContextConcurrent: children registering and ending from
// many goroutines while the delivery ends (by Close, its timeout, the
// caller's end or its release) all end, each with the delivery's cause or
// its own, and none is left registered or running (run with -race).
func TestDeliveryContextConcurrent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for round := range 80 {
		var ts timeouts
		// Odd rounds: a caller's context that can end (the delivery is then
		// a WithCancelCause child of it); even ones, one that never ends
		// (a context of its own), whose end by the caller is a release.
		var parent context.Context = context.Background()
		cancelParent := func(error) {}
		if round%2 == 1 {
			parent, cancelParent = context.WithCancelCause(context.Background())
		}
		how := round / 2 % 4
		timeout := time.Duration(0)
		if how == 1 {
			timeout = time.Millisecond
		}
		dc := ts.start(parent, timeout)
		require.Equal(t, round%2 == 1, dc.inner)
		ownCause := errors.New("own")
		var wg sync.WaitGroup
		errs := make(chan string, 256)
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					child, cancel := context.WithCancelCause(dc)
					if (g+i)%2 == 0 {
						cancel(ownCause)
						if c := context.Cause(child); c != ownCause && c != context.Cause(dc) {
							errs <- "a child's end lost its cause"
						}
						continue
					}
					ran := make(chan struct{})
					stop := context.AfterFunc(dc, func() { close(ran) })
					if i%3 == 0 && stop() {
						close(ran)
					}
					defer cancel(nil)
					defer func() {
						<-child.Done()
						<-ran
						if context.Cause(child) != context.Cause(dc) {
							errs <- "a child did not end with the delivery's cause"
						}
					}()
				}
			}()
		}
		switch {
		case how == 0:
			ts.cancelAll(ErrClosed)
		case how == 2 && dc.inner:
			cancelParent(errCallerCause)
		case how >= 2:
			ts.release(dc)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			require.Fail(t, e)
		}
		<-dc.Done()
		want := map[int]error{0: ErrClosed, 1: errDeliveryTimeout, 2: errCallerCause, 3: context.Canceled}[how]
		if how == 2 && !dc.inner {
			want = context.Canceled
		}
		require.Equal(t, want, context.Cause(dc))
		ts.release(dc)
		cancelParent(nil)
		ts.close()
		dc.mu.Lock()
		inSlot, more := dc.slot != nil, 0
		if dc.rare != nil {
			more = len(dc.rare.more)
		}
		dc.mu.Unlock()
		require.False(t, inSlot)
		require.Zero(t, more)
	}
}

// TestDeliveryContextNoLeak: released deliveries under a caller's context
// that never ends leave nothing registered with it (no goroutine, no
// AfterFunc), and deliveries whose caller's context ends leave no
// goroutine behind.
func TestDeliveryContextNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var ts timeouts
	defer ts.close()
	custom := newCustomContext() // a goroutine per child would wait on it
	parent, cancel := context.WithCancel(context.Background())
	for range 100 {
		for _, p := range []context.Context{custom, parent} {
			dc := ts.start(p, time.Hour)
			child, stop := context.WithCancel(dc)
			stop()
			<-child.Done()
			ts.release(dc)
		}
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/agenthooks/agenthooks-go/hooks.(*timeouts).run"))
	var live []*deliveryContext
	for range 20 {
		live = append(live, ts.start(parent, 0), ts.start(custom, 0))
	}
	cancel()
	custom.end(context.Canceled)
	for _, dc := range live {
		<-dc.Done()
		require.Equal(t, context.Canceled, dc.Err())
		ts.release(dc)
	}
}

// TestDeliveryContextZeroUse: a zero deliveryContext (a call's first
// delivery lives in the call) is ready for startIn.
func TestDeliveryContextZeroUse(t *testing.T) {
	var ts timeouts
	defer ts.close()
	var dc deliveryContext
	ts.startIn(&dc, context.Background(), time.Hour)
	d, ok := dc.Deadline()
	require.True(t, ok)
	require.Equal(t, dc.deadlineTime(), d)
	child, cancel := context.WithCancelCause(&dc)
	defer cancel(nil)
	ts.release(&dc)
	<-child.Done()
	require.Equal(t, context.Canceled, context.Cause(child))
	require.Equal(t, "hooks.deliveryContext", dc.String())
}

// TestDeliveryContextCauseKey: the key context.Cause asks a context for
// was learnt (without it, Cause would report Err in place of ErrClosed and
// the timeout's cause).
func TestDeliveryContextCauseKey(t *testing.T) {
	require.NotNil(t, cancelCtxKey)
	require.NotNil(t, timeoutCarrier)
	require.NotNil(t, closedCarrier)
}

// BenchmarkDeliveryContext: a delivery under a caller's context that never
// ends, with the one child net/http's Transport derives per request
// (context.WithCancelCause, its Done and its end), beside the same with
// the standard library's context.WithCancelCause in place of the delivery.
func BenchmarkDeliveryContext(b *testing.B) {
	b.Run("ctx=delivery", func(b *testing.B) {
		var ts timeouts
		defer ts.close()
		b.ReportAllocs()
		for b.Loop() {
			var dc deliveryContext
			ts.startIn(&dc, context.Background(), time.Minute)
			child, cancel := context.WithCancelCause(&dc)
			select { // net/http selects on it
			case <-child.Done():
			default:
			}
			cancel(nil)
			ts.release(&dc)
		}
	})
	b.Run("ctx=cancelCause", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dc, cancelDC := context.WithCancelCause(context.Background())
			child, cancel := context.WithCancelCause(dc)
			select {
			case <-child.Done():
			default:
			}
			cancel(nil)
			cancelDC(nil)
		}
	})
}
