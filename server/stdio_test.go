package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

func lines(msgs ...[]byte) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(append(b, m...), '\n')
	}
	return b
}

// replyCodes returns "id code" for every output frame, in output order.
func replyCodes(t *testing.T, out []byte) []string {
	t.Helper()
	var got []string
	for _, l := range outputLines(t, out) {
		r := decodeReply(t, l)
		got = append(got, string(r.ID)+" "+jsonrpcCode(r.code()))
	}
	return got
}

func jsonrpcCode(c int) string {
	if c == 0 {
		return "ok"
	}
	return jsonrpc.CodeText(c)
}

func TestStdioFraming(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	logBuf := &syncBuffer{}
	h := fixtureHandler(&recorder{}, nil)
	h.Logger = slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.MaxConcurrency = 1 // answers in input order
	good := interceptBase(t)
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	oversize := append(append([]byte{}, good[:len(good)-1]...), []byte(`,"pad":"`+strings.Repeat("x", 600)+`"}`)...)

	cases := []struct {
		name  string
		input []byte
		want  []string
	}{
		{"malformed then valid", lines([]byte("{not json"), good), []string{"null Parse error", `"evt_http_001" ok`}},
		{"blank lines ignored", []byte("\n\n" + string(good) + "\n\n"), []string{`"evt_http_001" ok`}},
		{"CRLF terminated", []byte(string(good) + "\r\n" + string(good) + "\n"), []string{"null Parse error", `"evt_http_001" ok`}},
		{"unterminated final line", []byte(string(good) + "\n" + string(good)), []string{`"evt_http_001" ok`, "null Parse error"}},
		{"notification silent", lines(observe, observe, good), []string{`"evt_http_001" ok`}},
		{"invalid UTF-8 line", lines([]byte("{\"a\":\"\xff\"}"), good), []string{"null Parse error", `"evt_http_001" ok`}},
		{"batch line", lines([]byte("["+string(good)+"]"), good), []string{"null Invalid Request", `"evt_http_001" ok`}},
		{"oversize line", lines(oversize, good), []string{"null Parse error", `"evt_http_001" ok`}},
		{"empty input", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hh := *h
			if c.name == "oversize line" {
				hh.MaxBodyBytes = int64(len(good) + 100)
			}
			require.Equal(t, c.want, replyCodes(t, serveStdio(t, &hh, c.input)))
		})
	}
	// Diagnostics went to the logger only.
	require.Contains(t, logBuf.String(), "malformed stdio line")
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStdioEOFWaitsForInFlight is the process-per-event lifecycle: one
// message, EOF, and the answer is still written before ServeStdio returns.
func TestStdioEOFWaitsForInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		time.Sleep(100 * time.Millisecond)
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("slow no")}}, nil
	}}
	out := serveStdio(t, h, lines(interceptBase(t)))
	require.Equal(t, []string{`"evt_http_001" ok`}, replyCodes(t, out))
	require.Contains(t, string(out), "slow no")
}

// TestStdioConcurrentDispatch: a slow interception does not hold up a
// notification read after it, and responses are correlated by id.
func TestStdioConcurrentDispatch(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	observed := make(chan struct{})
	var once sync.Once
	h := &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			select {
			case <-observed:
				return server.InterceptResult{}, nil
			case <-time.After(10 * time.Second):
				return server.InterceptResult{}, errors.New("notification was not dispatched concurrently")
			}
		},
		Observe: func(context.Context, *gen.ObserveNotification) error {
			once.Do(func() { close(observed) })
			return nil
		},
	}
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	out := serveStdio(t, h, lines(interceptBase(t), observe))
	require.Equal(t, []string{`"evt_http_001" ok`}, replyCodes(t, out))
}

// TestStdioCancel: ServeStdio returns when ctx ends, joins its goroutines,
// gives callbacks in flight a canceled context, and leaves the pipe usable.
func TestStdioCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	t.Run("idle on a pipe", func(t *testing.T) {
		inR, inW, err := os.Pipe()
		require.NoError(t, err)
		defer inR.Close()
		defer inW.Close()
		var out syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- server.ServeStdio(ctx, inR, &out, fixtureHandler(&recorder{}, nil)) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("ServeStdio did not return after cancel")
		}
		require.Empty(t, out.String())
		// The read deadline was cleared: the pipe still works.
		_, err = inW.Write([]byte("x"))
		require.NoError(t, err)
		buf := make([]byte, 1)
		_, err = inR.Read(buf)
		require.NoError(t, err)
	})

	t.Run("callback in flight", func(t *testing.T) {
		inR, inW, err := os.Pipe()
		require.NoError(t, err)
		defer inR.Close()
		defer inW.Close()
		var out syncBuffer
		started := make(chan struct{})
		var sawCancel atomic.Bool
		h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			close(started)
			<-ctx.Done()
			sawCancel.Store(true)
			return server.InterceptResult{}, ctx.Err()
		}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- server.ServeStdio(ctx, inR, &out, h) }()
		_, err = inW.Write(lines(interceptBase(t)))
		require.NoError(t, err)
		<-started
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("ServeStdio did not return after cancel")
		}
		require.True(t, sawCancel.Load())
		require.Equal(t, []string{`"evt_http_001" Backend unavailable`}, replyCodes(t, []byte(out.String())))
	})

	t.Run("reader without deadlines", func(t *testing.T) {
		pr, pw := io.Pipe()
		var out syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- server.ServeStdio(ctx, pr, &out, fixtureHandler(&recorder{}, nil)) }()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("ServeStdio did not return after cancel")
		}
		// The reading goroutine ends as soon as its Read returns.
		require.NoError(t, pw.Close())
	})

	t.Run("already canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := server.ServeStdio(ctx, strings.NewReader(string(lines(interceptBase(t)))), io.Discard, fixtureHandler(&recorder{}, nil))
		require.ErrorIs(t, err, context.Canceled)
	})
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestStdioWriteError(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer inW.Close()
	_, err = inW.Write(lines(interceptBase(t)))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		done <- server.ServeStdio(context.Background(), inR, failingWriter{}, fixtureHandler(&recorder{}, nil))
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "broken pipe")
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not stop on a write error")
	}
}

// errReader fails after its data.
type errReader struct{ data io.Reader }

func (r errReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("device gone")
	}
	return n, err
}

func TestStdioReadError(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var out syncBuffer
	err := server.ServeStdio(context.Background(), errReader{bytes.NewReader(lines(interceptBase(t)))}, &out, fixtureHandler(&recorder{}, nil))
	require.ErrorContains(t, err, "device gone")
	require.Equal(t, []string{`"evt_http_001" ok`}, replyCodes(t, []byte(out.String())), "the message read before the error is answered")

	require.Error(t, server.ServeStdio(context.Background(), nil, io.Discard, fixtureHandler(&recorder{}, nil)))
	require.Error(t, server.ServeStdio(context.Background(), strings.NewReader(""), nil, fixtureHandler(&recorder{}, nil)))
}

// TestStdioPersistentSession exchanges several messages on one session,
// reading each answer before sending the next, like a persistent harness.
func TestStdioPersistentSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer outR.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- server.ServeStdio(ctx, inR, outW, fixtureHandler(&recorder{}, testManifest(t)))
		outW.Close()
	}()
	fr := jsonrpc.NewFrameReader(outR, 0)
	for i := range 5 {
		msg := interceptBase(t)
		if i%2 == 1 {
			msg = compact(t, readFixture(t, "http/capabilities-request.valid.json"))
		}
		_, err := inW.Write(lines(compact(t, readFixture(t, "http/observe-session-end.valid.json")), msg))
		require.NoError(t, err)
		frame, err := fr.Next()
		require.NoError(t, err)
		require.Zero(t, decodeReply(t, frame).code())
	}
	require.NoError(t, inW.Close())
	require.NoError(t, <-done)
	_, err = fr.Next()
	require.ErrorIs(t, err, io.EOF)
}
