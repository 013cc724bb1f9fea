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

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// pipelineChild runs the child modes of the pipelining tests, which all
// hold the requests they read until a second one has arrived: a backend
// that answers one request at a time could never answer, so an answer
// proves that two requests were outstanding at once. Each request read is
// reported as "got ID" on stderr. Modes:
//
//	pair      answer the pair in reverse order (the second first)
//	pairdup   answer the second twice, then an id never sent, then the
//	          first, then the first again
//	paircrash exit with status 7, both unanswered
//	pairesc   answer the pair in reverse order with each id written
//	          differently: every character of a string escaped (\u0061
//	          for "a"), the integer 0 as -0
func pipelineChild(mode string) (int, bool) {
	switch mode {
	case "pair", "pairdup", "paircrash", "pairesc":
	case "flood":
		// Never answer: once a request is read, write responses for an id
		// never sent, without pause, until stdout breaks.
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 4<<20)
		if !sc.Scan() {
			return 0, true
		}
		out := bufio.NewWriter(os.Stdout)
		for {
			if _, err := out.WriteString(`{"jsonrpc":"2.0","id":"never-sent","result":{}}` + "\n"); err != nil {
				return 1, true
			}
		}
	default:
		return 0, false
	}
	fmt.Fprintf(os.Stderr, "start %d\n", os.Getpid())
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	out := bufio.NewWriter(os.Stdout)
	answer := func(id jsonrpc.ID) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"pid":%d}}`+"\n", id, os.Getpid())
	}
	var held []jsonrpc.ID
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil || env.Kind != jsonrpc.KindRequest {
			continue
		}
		fmt.Fprintf(os.Stderr, "got %s\n", env.ID)
		held = append(held, env.ID)
		if len(held) < 2 {
			continue
		}
		first, second := held[0], held[1]
		held = held[:0]
		switch mode {
		case "pair":
			answer(second)
			answer(first)
		case "pairdup":
			answer(second)
			answer(second)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"never-sent","result":{}}`+"\n")
			answer(first)
			answer(first)
		case "paircrash":
			return 7, true
		case "pairesc":
			for _, id := range []jsonrpc.ID{second, first} {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"pid":%d}}`+"\n", escapedID(id), os.Getpid())
			}
		}
		if out.Flush() != nil {
			return 1, true
		}
	}
	return 0, true
}

// escapedID is the text of id written differently: a string with every
// byte escaped as \u00XX, the integer 0 as -0 (other integers unchanged).
func escapedID(id jsonrpc.ID) string {
	if v, ok := id.StringValue(); ok {
		var b strings.Builder
		b.WriteByte('"')
		for i := range len(v) {
			fmt.Fprintf(&b, `\u%04x`, v[i])
		}
		b.WriteByte('"')
		return b.String()
	}
	if n, ok := id.Int64(); ok && n == 0 {
		return "-0"
	}
	return id.String()
}

// pair sends requests a and b from two callers at once and returns what
// each got.
func pair(t *testing.T, s *transport.Stdio, ctxA context.Context, a, b string) (answer, error, answer, error) {
	t.Helper()
	var wg sync.WaitGroup
	var ansA, ansB answer
	var errA, errB error
	wg.Go(func() { ansA, errA = exchange(t, s, ctxA, a) })
	wg.Go(func() { ansB, errB = exchange(t, s, context.Background(), b) })
	wg.Wait()
	return ansA, errA, ansB, errB
}

// TestStdioPipelinedByDefault: with default options, two callers have
// their requests outstanding on the one persistent child at once (the
// child answers only once it holds both), and each gets the response with
// its own id although they come in reverse order. Repeated pairs keep the
// stream in step on the same child.
func TestStdioPipelinedByDefault(t *testing.T) {
	var stderr syncBuffer
	s := stdioWith(t, "pair", transport.StdioOptions{Stderr: &stderr})
	pid := 0
	for i := range 5 {
		a, errA, b, errB := pair(t, s, context.Background(), fmt.Sprint("a", i), fmt.Sprint("b", i))
		require.NoError(t, errA)
		require.NoError(t, errB)
		require.Equal(t, a.Result.PID, b.Result.PID)
		if pid == 0 {
			pid = a.Result.PID
		}
		require.Equal(t, pid, a.Result.PID, "the child was replaced")
	}
	require.NoError(t, s.Close())
	require.Equal(t, 1, strings.Count(stderr.String(), "start "))
}

// TestStdioPipelinedDefaultBound: DefaultMaxInFlight requests are
// outstanding at once by default; one more is written only once a slot
// frees. The "held" child answers what it holds on each notification, so
// the extra request, written after the first notification freed the slots,
// stays unanswered until a second one.
func TestStdioPipelinedDefaultBound(t *testing.T) {
	stderr := newGotWriter()
	s := stdioWith(t, "held", transport.StdioOptions{Stderr: stderr})
	var wg sync.WaitGroup
	errs := make(chan error, transport.DefaultMaxInFlight)
	for i := range transport.DefaultMaxInFlight {
		wg.Go(func() {
			_, err := exchange(t, s, context.Background(), fmt.Sprint("r", i))
			errs <- err
		})
	}
	stderr.wait(t, transport.DefaultMaxInFlight) // all are outstanding on the child
	extra := make(chan error, 1)
	go func() {
		_, err := exchange(t, s, context.Background(), "one-more")
		extra <- err
	}()
	require.NoError(t, s.Notify(context.Background(), note)) // the child answers the first ones
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	stderr.wait(t, 1) // the extra request reached the child after the notification
	select {
	case err := <-extra:
		t.Fatalf("the request over the bound was answered with the first ones (%v)", err)
	default:
	}
	require.NoError(t, s.Notify(context.Background(), note))
	require.NoError(t, <-extra)
}

// TestStdioPipelinedHostileFrames: with DiscardUncorrelated, duplicate
// responses, a response with an id never sent and a repeat of an answered
// one are skipped without consuming a live request; each caller gets its
// own answer and the next pair is served by the same child.
func TestStdioPipelinedHostileFrames(t *testing.T) {
	var stderr syncBuffer
	s := stdioWith(t, "pairdup", transport.StdioOptions{Stderr: &stderr, DiscardUncorrelated: true})
	for i := range 3 {
		_, errA, _, errB := pair(t, s, context.Background(), fmt.Sprint("a", i), fmt.Sprint("b", i))
		require.NoError(t, errA)
		require.NoError(t, errB)
	}
	require.NoError(t, s.Close())
	require.Equal(t, 1, strings.Count(stderr.String(), "start "), "the child was kept")
}

// TestStdioPipelinedCrash: a child that exits with requests outstanding
// fails every one of them with its exit status.
func TestStdioPipelinedCrash(t *testing.T) {
	s := stdioWith(t, "paircrash", transport.StdioOptions{RelaunchBackoff: -1})
	_, errA, _, errB := pair(t, s, context.Background(), "a", "b")
	for _, err := range []error{errA, errB} {
		te := requireFail(t, err, transport.CodeTransport, transport.StageReceive, "process_exit")
		require.Equal(t, 7, te.Status)
		require.ErrorIs(t, err, transport.ErrExited)
	}
}

// TestStdioPipelinedCancelOne: a caller whose deadline ends while its
// request is outstanding gets its own failure; the other caller's request
// is answered (the late answer to the first is skipped), and the stream
// stays in step.
func TestStdioPipelinedCancelOne(t *testing.T) {
	stderr := newGotWriter()
	s := stdioWith(t, "pair", transport.StdioOptions{Stderr: stderr})
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	errA := make(chan error, 1)
	go func() {
		_, err := exchange(t, s, ctxA, "a")
		errA <- err
	}()
	stderr.wait(t, 1) // "a" is held by the child
	cancelA()
	requireFail(t, <-errA, transport.CodeCancelled, transport.StageReceive, "cancelled")
	// "b" completes the pair: the child answers "b", then the abandoned "a".
	b, err := exchange(t, s, context.Background(), "b")
	require.NoError(t, err)
	require.Equal(t, "b", b.ID)
	_, errC, _, errD := pair(t, s, context.Background(), "d", "e")
	require.NoError(t, errC)
	require.NoError(t, errD)
}

// TestStdioPipelinedEscapedIDs: responses are matched to the requests
// outstanding by the value of their id, not its text: a string id written
// with escapes and the integer 0 written as -0 reach their callers, in
// reverse order, round after round on the same child.
func TestStdioPipelinedEscapedIDs(t *testing.T) {
	var stderr syncBuffer
	s := stdioWith(t, "pairesc", transport.StdioOptions{Stderr: &stderr})
	for i := range 4 {
		a, errA, b, errB := pair(t, s, context.Background(), fmt.Sprint("a", i), fmt.Sprint("b", i))
		require.NoError(t, errA)
		require.NoError(t, errB)
		require.Equal(t, fmt.Sprint("a", i), a.ID)
		require.Equal(t, fmt.Sprint("b", i), b.ID)
	}
	intReq := func(n int64) transport.Message {
		return transport.Message{ID: jsonrpc.IntID(n), Method: jsonrpc.MethodIntercept,
			Body: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"hooks/intercept","params":{}}`, n)}
	}
	for range 2 {
		var wg sync.WaitGroup
		var got0, got7 []byte
		var err0, err7 error
		wg.Go(func() { got0, err0 = s.Exchange(context.Background(), intReq(0)) })
		wg.Go(func() { got7, err7 = s.Exchange(context.Background(), intReq(7)) })
		wg.Wait()
		require.NoError(t, err0)
		require.NoError(t, err7)
		require.Contains(t, string(got0), `"id":-0,`)
		require.Contains(t, string(got7), `"id":7,`)
	}
	require.NoError(t, s.Close())
	require.Equal(t, 1, strings.Count(stderr.String(), "start "), "the child was kept")
}

// TestStdioFloodOutlivesNoDeadline: a child that never answers but keeps
// stdout full of uncorrelated responses (skipped with DiscardUncorrelated)
// must not keep the reading exchange past its context: the reader never
// finds stdout empty, so cancellation armed only when a read must wait is
// never armed, and the read loop must check the context between frames.
func TestStdioFloodOutlivesNoDeadline(t *testing.T) {
	s := stdioWith(t, "flood", transport.StdioOptions{DiscardUncorrelated: true})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := s.Exchange(ctx, req("a"))
		errc <- err
	}()
	select {
	case err := <-errc:
		require.Error(t, err)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(30 * time.Second):
		_ = s.Close()
		t.Fatal("the exchange outlived its 300 ms deadline by 30 s while the child flooded stdout")
	}
}
