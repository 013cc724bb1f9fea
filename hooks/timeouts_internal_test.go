package hooks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDeliveryTimeouts: a delivery context ends at its own deadline with
// context.DeadlineExceeded, a released one never does, the parent's
// cancellation wins when it comes first and stays the answer, and the one
// timer serves deadlines added in any order.
func TestDeliveryTimeouts(t *testing.T) {
	var ts timeouts
	defer ts.close()
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()

	long := ts.start(parent, time.Hour)
	defer ts.release(long)
	released := ts.start(parent, 5*time.Millisecond)
	short := ts.start(parent, 20*time.Millisecond)
	defer ts.release(short)
	shorter := ts.start(parent, 10*time.Millisecond)
	defer ts.release(shorter)
	ts.release(released)

	before := time.Now()
	<-shorter.Done()
	<-short.Done()
	for _, dc := range []*deliveryContext{shorter, short} {
		require.ErrorIs(t, dc.Err(), context.DeadlineExceeded)
		require.Equal(t, context.DeadlineExceeded, dc.Err())
		require.ErrorIs(t, context.Cause(dc), context.DeadlineExceeded)
		d, ok := dc.Deadline()
		require.True(t, ok)
		require.Equal(t, dc.deadline, d)
	}
	require.False(t, time.Now().Before(short.deadline), "short ended before its deadline")
	require.Less(t, time.Since(before), time.Minute)
	require.ErrorIs(t, released.Err(), context.Canceled, "a released delivery is cancelled, not timed out")
	require.NoError(t, long.Err())

	cancelParent()
	<-long.Done()
	require.Equal(t, context.Canceled, long.Err())
	require.Equal(t, context.DeadlineExceeded, short.Err(), "the first cause stays the answer")

	ts.mu.Lock()
	require.Len(t, ts.live(), 1, "only the long delivery is still pending until released")
	ts.mu.Unlock()
}

// TestDeliveryTimeoutAfterParentDeadline: when the call's own deadline
// comes first, the delivery ends with it and nothing is queued.
func TestDeliveryTimeoutAfterParentDeadline(t *testing.T) {
	var ts timeouts
	defer ts.close()
	parent, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	dc := ts.start(parent, time.Hour)
	defer ts.release(dc)
	ts.mu.Lock()
	require.Len(t, ts.live(), 1, "live, for cancelAll")
	require.Equal(t, farFuture, ts.live()[0].fire, "but never fired by the timer")
	require.True(t, ts.armed.IsZero())
	ts.mu.Unlock()
	pd, _ := parent.Deadline()
	d, ok := dc.Deadline()
	require.True(t, ok)
	require.Equal(t, pd, d)
	<-dc.Done()
	require.Equal(t, context.DeadlineExceeded, dc.Err())
	require.False(t, errors.Is(context.Cause(dc), errDeliveryTimeout), "the call's deadline, not the delivery's")
}

// TestDeliveryTimeoutsClosed: close joins the timer's goroutine; a start
// after close is already cancelled.
func TestDeliveryTimeoutsClosed(t *testing.T) {
	var ts timeouts
	dc := ts.start(context.Background(), time.Hour)
	ts.release(dc)
	require.ErrorIs(t, dc.Err(), context.Canceled)
	ts.close()
	select {
	case <-ts.done:
	default:
		t.Fatal("the timer goroutine was not joined")
	}
	ts.close() // idempotent
	late := ts.start(context.Background(), time.Hour)
	defer ts.release(late)
	require.ErrorIs(t, late.Err(), context.Canceled)
}

// TestDeliveryCancelAll: cancelAll ends every live delivery with its cause
// (Err is context.Canceled, as for context.WithCancelCause), including
// those without a deadline, and every delivery started afterwards.
func TestDeliveryCancelAll(t *testing.T) {
	var ts timeouts
	defer ts.close()
	noDeadline := ts.start(context.Background(), 0)
	defer ts.release(noDeadline)
	_, ok := noDeadline.Deadline()
	require.False(t, ok)
	timed := ts.start(context.Background(), time.Hour)
	defer ts.release(timed)
	ts.cancelAll(ErrClosed)
	for _, dc := range []*deliveryContext{noDeadline, timed} {
		<-dc.Done()
		require.Equal(t, context.Canceled, dc.Err())
		require.ErrorIs(t, context.Cause(dc), ErrClosed)
	}
	late := ts.start(context.Background(), time.Hour)
	defer ts.release(late)
	require.Equal(t, context.Canceled, late.Err())
	require.ErrorIs(t, context.Cause(late), ErrClosed)
}
