package hooks

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDeliveryTimeoutQueuesConcurrent: deliveries started and released
// from many goroutines at once, with timeouts of several durations (their
// own queues), none, and longer than the parent's deadline, each end no
// earlier than their own deadline and with the timeout as cause, are never
// ended by the timer once released, and leave nothing live behind (run
// with -race).
func TestDeliveryTimeoutQueuesConcurrent(t *testing.T) {
	var ts timeouts
	defer ts.close()
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	durations := []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, 0, 2 * time.Hour, time.Minute}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				d := durations[(g+i)%len(durations)]
				dc := ts.start(parent, d)
				switch {
				case d > 0 && d < time.Second && i%3 != 0:
					<-dc.Done()
					if time.Now().Before(dc.deadline) {
						errs <- "ended before its deadline"
					}
					if context.Cause(dc) != errDeliveryTimeout && dc.Err() != context.DeadlineExceeded {
						errs <- "ended without the timeout: " + context.Cause(dc).Error()
					}
					ts.release(dc)
				default:
					ts.release(dc)
					// A short one may have timed out before its release.
					if c := context.Cause(dc); c != context.Canceled && !(d < time.Second && c == errDeliveryTimeout) {
						errs <- "a released delivery ended otherwise: " + c.Error()
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		require.Fail(t, e)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	require.Empty(t, ts.live(), "every delivery was released")
}
