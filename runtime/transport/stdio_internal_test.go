package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRelaunchDelay: the relaunch backoff doubles with every child that
// ended without answering, from the base up to the cap.
func TestRelaunchDelay(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		n           int
		base, limit time.Duration
		want        time.Duration
	}{
		{0, 100 * ms, time.Second, 0},
		{1, 100 * ms, time.Second, 100 * ms},
		{2, 100 * ms, time.Second, 200 * ms},
		{4, 100 * ms, time.Second, 800 * ms},
		{5, 100 * ms, time.Second, time.Second},
		{1 << 20, 100 * ms, time.Second, time.Second},
		{3, 0, time.Second, 0}, // disabled
		{1 << 20, time.Hour, DefaultMaxRelaunchBackoff, DefaultMaxRelaunchBackoff},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, relaunchDelay(tc.n, tc.base, tc.limit), "%+v", tc)
	}
}

// TestStdioDefaults: every limit of StdioOptions has a default, selected by
// its zero value; negative durations switch the grace and the backoff off.
func TestStdioDefaults(t *testing.T) {
	s := NewStdio(StdioOptions{})
	require.Equal(t, DefaultCloseGrace, s.opts.CloseGrace)
	require.Equal(t, DefaultMaxInFlight, cap(s.sem))
	require.Equal(t, DefaultMaxChildren, cap(s.slots))
	require.Equal(t, DefaultRelaunchBackoff, s.backoffBase)
	require.Equal(t, DefaultMaxRelaunchBackoff, s.backoffMax)
	require.Equal(t, DefaultHealthyAfter, s.opts.HealthyAfter)
	require.Equal(t, DefaultMaxMalformed, s.opts.MaxMalformed)
	require.Equal(t, int64(DefaultMaxStderrBytes), s.opts.MaxStderrBytes)
	require.Equal(t, DefaultMaxResponseBytes, s.opts.MaxFrameBytes)

	s = NewStdio(StdioOptions{CloseGrace: -1, RelaunchBackoff: -1, MaxInFlight: 4, MaxChildren: 3})
	require.Zero(t, s.opts.CloseGrace)
	require.Zero(t, s.backoffBase)
	require.Equal(t, 4, cap(s.sem))
	require.Equal(t, 3, cap(s.slots))

	s = NewStdio(StdioOptions{RelaunchBackoff: time.Minute, MaxRelaunchBackoff: time.Second})
	require.Equal(t, time.Minute, s.backoffMax, "the cap is never below the first delay")
}
