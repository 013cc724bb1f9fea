package transport_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// returnsWithin runs f and fails the test if it has not returned after
// limit, which is far below how long the children of these tests would
// hold it without the behaviour under test (an hour).
func returnsWithin[T any](t *testing.T, limit time.Duration, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
		t.Fatalf("still running after %v", limit)
		return <-done
	}
}

// TestStdioPerEventDeadlineReachesDescendants: a per_event child that
// started a process holding its stdout does not stretch the exchange past
// the caller's deadline; the process group is killed.
func TestStdioPerEventDeadlineReachesDescendants(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process groups")
	}
	s := stdioWith(t, "holdout", transport.StdioOptions{Lifecycle: gen.StdioTransportLifecyclePerEvent})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := returnsWithin(t, 10*time.Second, func() error {
		_, err := s.Exchange(ctx, req("x"))
		return err
	})
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
}

// TestStdioPerEventAnswerThenExit: a child that answers and exits 0 while
// a process it started still holds stdout has completed its exchange
// (base/transports/stdio.md); the leftover process is killed with the
// group, so the answer is returned at once.
func TestStdioPerEventAnswerThenExit(t *testing.T) {
	s := stdioWith(t, "orphan", transport.StdioOptions{Lifecycle: gen.StdioTransportLifecyclePerEvent, CloseGrace: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	type out struct {
		frame []byte
		err   error
	}
	got := returnsWithin(t, 10*time.Second, func() out {
		f, err := s.Exchange(ctx, req("x"))
		return out{f, err}
	})
	require.NoError(t, got.err)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":"x","result":{}}`, string(got.frame))
	// Close does not wait for the leftover either.
	returnsWithin(t, 10*time.Second, func() error { return s.Close() })
}

// TestStdioNotifyReleasesExitedChildren: notifications alone to a
// persistent backend that exits after each line do not accumulate the
// pipes of the children that exited.
func TestStdioNotifyReleasesExitedChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	// A shell starts much faster than the test binary built with -race.
	starts := make(chan struct{}, 1000)
	s := transport.NewStdio(transport.StdioOptions{Command: "/bin/sh", Args: []string{"-c", "echo 'start ' >&2; read line"},
		Lifecycle: gen.StdioTransportLifecyclePersistent, Stderr: signalWriter{"start ", starts}, RelaunchBackoff: -1})
	t.Cleanup(func() { _ = s.Close() })
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(entries)
	}
	note := transport.Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}
	before := fds()
	// A notification that meets a child that exited fails; a later one
	// starts a new child. Notify until 30 children have started.
	started := 0
	for i := 0; started < 30; i++ {
		require.Less(t, i, 100000, "children are relaunched")
		if err := s.Notify(context.Background(), note); err != nil {
			var te *transport.Error
			require.True(t, errors.As(err, &te))
		}
		for len(starts) > 0 {
			<-starts
			started++
		}
	}
	require.Less(t, fds()-before, 12)
}

// TestStdioStderrOneWriterAtATime: concurrent per_event children forward
// stderr to the one writer one write at a time (-race checks the buffer).
func TestStdioStderrOneWriterAtATime(t *testing.T) {
	var stderr bytes.Buffer // not safe for concurrent use
	s := stdioWith(t, "echo", transport.StdioOptions{Lifecycle: gen.StdioTransportLifecyclePerEvent, Stderr: &stderr})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := s.Exchange(context.Background(), req("x"))
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, s.Close())
	require.Equal(t, 8, bytes.Count(stderr.Bytes(), []byte("start ")))
}

// signalWriter sends on c for every write that contains word.
type signalWriter struct {
	word string
	c    chan<- struct{}
}

func (w signalWriter) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte(w.word)) {
		w.c <- struct{}{}
	}
	return len(p), nil
}
