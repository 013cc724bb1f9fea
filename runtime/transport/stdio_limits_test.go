package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// stdioChild runs the child modes of the limit and hygiene tests; it
// reports false for a mode it does not know. Like child, it announces
// itself on stderr. Modes:
//
//	big      answer the first request with a 8 KiB response, then like echo
//	once     answer the first request, exit with status 3 on the second
//	held     report "got ID" on stderr for each request; answer every
//	         request held so far, in arrival order, on each notification
//	heldbad  like held, but answer a notification with a line of garbage
func stdioChild(mode string) (int, bool) {
	switch mode {
	case "big", "once", "held", "heldbad":
	default:
		if code, ok := pipelineChild(mode); ok {
			return code, true
		}
		return unixChild(mode)
	}
	fmt.Fprintf(os.Stderr, "start %d\n", os.Getpid())
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	var held []jsonrpc.ID
	n := 0
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil {
			continue
		}
		answer := func(id jsonrpc.ID, pad int) {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"pid":%d,"pad":"%s"}}`+"\n", id, os.Getpid(), strings.Repeat("x", pad))
		}
		if env.Kind == jsonrpc.KindNotification {
			switch mode {
			case "held":
				for _, id := range held {
					answer(id, 0)
				}
				held = nil
			case "heldbad":
				fmt.Println("Welcome to the policy backend")
			}
			continue
		}
		if env.Kind != jsonrpc.KindRequest {
			continue
		}
		n++
		switch mode {
		case "big":
			pad := 0
			if n == 1 {
				pad = 8 << 10
			}
			answer(env.ID, pad)
		case "once":
			if n == 2 {
				return 3, true
			}
			answer(env.ID, 0)
		case "held", "heldbad":
			fmt.Fprintf(os.Stderr, "got %s\n", env.ID)
			held = append(held, env.ID)
		}
	}
	return 0, true
}

var note = transport.Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}

// TestStdioTooLargeIsCapacity: a response over the frame limit fails its
// delivery as a capacity failure (capacity/too_large), whatever the
// lifecycle, as over HTTP. A persistent child is kept: the long line was
// skipped and the stream is still in step.
func TestStdioTooLargeIsCapacity(t *testing.T) {
	for _, lc := range []gen.StdioTransportLifecycle{gen.StdioTransportLifecyclePersistent, gen.StdioTransportLifecyclePerEvent} {
		t.Run(string(lc), func(t *testing.T) {
			var stderr syncBuffer
			s := stdioWith(t, "big", transport.StdioOptions{Lifecycle: lc, MaxFrameBytes: 1024, Stderr: &stderr})
			_, err := exchange(t, s, context.Background(), "a")
			requireFail(t, err, transport.CodeCapacity, transport.StageReceive, "too_large")
			require.ErrorIs(t, err, transport.ErrTooLarge)
			if lc == gen.StdioTransportLifecyclePerEvent {
				return
			}
			first, err := exchange(t, s, context.Background(), "b")
			require.NoError(t, err)
			second, err := exchange(t, s, context.Background(), "c")
			require.NoError(t, err)
			require.Equal(t, first.Result.PID, second.Result.PID)
			require.NoError(t, s.Close())
			require.Equal(t, 1, strings.Count(stderr.String(), "start "), "the child was kept")
		})
	}
}

// TestStdioRelaunchBackoff: a persistent child that ends before it has
// stayed up StdioOptions.HealthyAfter is not relaunched until its backoff
// has passed, whether or not it answered; meanwhile deliveries fail at
// once. The end of a child that stayed up that long resets the backoff.
func TestStdioRelaunchBackoff(t *testing.T) {
	t.Run("crash loop", func(t *testing.T) {
		var stderr syncBuffer
		s := stdioWith(t, "exit", transport.StdioOptions{Stderr: &stderr, RelaunchBackoff: time.Hour, HealthyAfter: time.Hour})
		_, err := exchange(t, s, context.Background(), "0")
		te := requireFail(t, err, transport.CodeTransport, transport.StageReceive, "process_exit")
		require.Equal(t, 3, te.Status)
		for i := 1; i < 50; i++ {
			_, err := exchange(t, s, context.Background(), fmt.Sprint(i))
			requireFail(t, err, transport.CodeTransport, transport.StageSend, "relaunch_backoff")
		}
		requireFail(t, s.Notify(context.Background(), note), transport.CodeTransport, transport.StageSend, "relaunch_backoff")
		require.NoError(t, s.Close())
		require.Equal(t, 1, strings.Count(stderr.String(), "start "), "one launch in 50 calls")
	})
	t.Run("an answer does not reset it", func(t *testing.T) {
		// A child that answers one request and exits on the next is a
		// crash loop too: before the fix every answer reset the backoff,
		// and 60 calls made 30 launches.
		for _, healthy := range []time.Duration{0, time.Hour} { // the default, and an explicit threshold
			t.Run(fmt.Sprint(healthy), func(t *testing.T) {
				var stderr syncBuffer
				s := stdioWith(t, "once", transport.StdioOptions{Stderr: &stderr, RelaunchBackoff: time.Hour, HealthyAfter: healthy})
				_, err := exchange(t, s, context.Background(), "ok0")
				require.NoError(t, err)
				_, err = exchange(t, s, context.Background(), "exit0")
				requireFail(t, err, transport.CodeTransport, transport.StageReceive, "process_exit")
				for i := 1; i < 30; i++ {
					for _, id := range []string{"ok", "exit"} {
						_, err := exchange(t, s, context.Background(), fmt.Sprint(id, i))
						requireFail(t, err, transport.CodeTransport, transport.StageSend, "relaunch_backoff")
					}
				}
				require.NoError(t, s.Close())
				require.Equal(t, 1, strings.Count(stderr.String(), "start "), "one launch in 60 calls")
			})
		}
	})
	t.Run("a healthy child resets it", func(t *testing.T) {
		// Every child stays up at least a nanosecond, so each one proves
		// healthy, answers or not, and the next is launched at once.
		for _, mode := range []string{"once", "exit"} {
			t.Run(mode, func(t *testing.T) {
				var stderr syncBuffer
				s := stdioWith(t, mode, transport.StdioOptions{Stderr: &stderr, RelaunchBackoff: time.Hour, HealthyAfter: time.Nanosecond})
				for i := range 3 {
					if mode == "once" {
						_, err := exchange(t, s, context.Background(), fmt.Sprint("ok", i))
						require.NoError(t, err)
					}
					_, err := exchange(t, s, context.Background(), fmt.Sprint("exit", i))
					requireFail(t, err, transport.CodeTransport, transport.StageReceive, "process_exit")
				}
				require.NoError(t, s.Close())
				require.Equal(t, 3, strings.Count(stderr.String(), "start "))
			})
		}
	})
	t.Run("launch failure", func(t *testing.T) {
		s := transport.NewStdio(transport.StdioOptions{Command: "/nonexistent/ahp-backend", Lifecycle: gen.StdioTransportLifecyclePersistent, RelaunchBackoff: time.Hour})
		defer s.Close()
		_, err := s.Exchange(context.Background(), req("0"))
		requireFail(t, err, transport.CodeTransport, transport.StageSend, "launch")
		for i := 1; i < 5; i++ {
			_, err := s.Exchange(context.Background(), req(fmt.Sprint(i)))
			requireFail(t, err, transport.CodeTransport, transport.StageSend, "relaunch_backoff")
		}
	})
}

// gotWriter collects a child's stderr and sends on got for every "got "
// line it reports.
type gotWriter struct {
	syncBuffer
	got chan struct{}
}

func newGotWriter() *gotWriter { return &gotWriter{got: make(chan struct{}, 64)} }

func (w *gotWriter) Write(p []byte) (int, error) {
	_, _ = signalWriter{"got ", w.got}.Write(p)
	return w.syncBuffer.Write(p)
}

func (w *gotWriter) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		<-w.got
	}
}

// TestStdioMultiplexed: with MaxInFlight above one, requests from several
// callers are outstanding on the one child at once and each gets the
// response with its own id, in whatever order they come; a caller that
// gives up leaves the reading to the others, and its late response is
// skipped.
func TestStdioMultiplexed(t *testing.T) {
	stderr := newGotWriter()
	s := stdioWith(t, "held", transport.StdioOptions{MaxInFlight: 2, Stderr: stderr})
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	type out struct {
		a   answer
		err error
	}
	outA, outB := make(chan out, 1), make(chan out, 1)
	go func() {
		_, err := s.Exchange(ctxA, req("a"))
		outA <- out{err: err}
	}()
	go func() {
		a, err := exchange(t, s, context.Background(), "b")
		outB <- out{a, err}
	}()
	stderr.wait(t, 2) // both requests are outstanding
	cancelA()
	requireFail(t, (<-outA).err, transport.CodeCancelled, transport.StageReceive, "cancelled")
	require.NoError(t, s.Notify(context.Background(), note)) // the child answers "a", then "b"
	b := <-outB
	require.NoError(t, b.err)

	// The stream is in step: the next request gets its own answer.
	outC := make(chan out, 1)
	go func() {
		a, err := exchange(t, s, context.Background(), "c")
		outC <- out{a, err}
	}()
	stderr.wait(t, 1)
	require.NoError(t, s.Notify(context.Background(), note))
	c := <-outC
	require.NoError(t, c.err)
	require.Equal(t, b.a.Result.PID, c.a.Result.PID)
	require.NoError(t, s.Close())
	require.Equal(t, 1, strings.Count(stderr.String(), "start "))
}

// TestStdioMultiplexedFault: output that cannot be correlated fails every
// request outstanding when it is read, since it may have been meant for
// any of them.
func TestStdioMultiplexedFault(t *testing.T) {
	stderr := newGotWriter()
	s := stdioWith(t, "heldbad", transport.StdioOptions{MaxInFlight: 3, Stderr: stderr})
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, id := range []string{"a", "b", "c"} {
		wg.Go(func() {
			_, err := s.Exchange(context.Background(), req(id))
			errs <- err
		})
	}
	stderr.wait(t, 3)
	require.NoError(t, s.Notify(context.Background(), note))
	wg.Wait()
	close(errs)
	for err := range errs {
		requireFail(t, err, transport.CodeProtocolRejection, transport.StageReceive, "not_response")
	}
}
