package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
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
	in := &eofAnnouncer{Reader: bytes.NewReader(lines(interceptBase(t))), eof: make(chan struct{})}
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		<-in.eof // the input has ended while this answer is pending
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("slow no")}}, nil
	}}
	var out syncBuffer
	require.NoError(t, server.ServeStdio(context.Background(), in, &out, h))
	require.Equal(t, []string{`"evt_http_001" ok`}, replyCodes(t, []byte(out.String())))
	require.Contains(t, out.String(), "slow no")
}

// eofAnnouncer closes eof when its reader reports the end of the input.
type eofAnnouncer struct {
	io.Reader
	once sync.Once
	eof  chan struct{}
}

func (r *eofAnnouncer) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if errors.Is(err, io.EOF) {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
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

// announcedFile is an *os.File (with its read deadlines) that announces its
// first Read on reading, so that a test can act while ServeStdio waits for
// input.
type announcedFile struct {
	*os.File
	once    sync.Once
	reading chan struct{}
}

func (f *announcedFile) Read(p []byte) (int, error) {
	f.once.Do(func() { close(f.reading) })
	return f.File.Read(p)
}

// announcedReader is announcedFile for a reader without read deadlines.
type announcedReader struct {
	io.Reader
	once    sync.Once
	reading chan struct{}
}

func (r *announcedReader) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	return r.Reader.Read(p)
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
		in := &announcedFile{File: inR, reading: make(chan struct{})}
		go func() { done <- server.ServeStdio(ctx, in, &out, fixtureHandler(&recorder{}, nil)) }()
		<-in.reading // ServeStdio waits for input
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
		in := &announcedReader{Reader: pr, reading: make(chan struct{})}
		go func() { done <- server.ServeStdio(ctx, in, &out, fixtureHandler(&recorder{}, nil)) }()
		<-in.reading // ServeStdio waits for input
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

// interceptWithID is the base intercept request with id (and event id) id.
func interceptWithID(t testing.TB, id string) []byte {
	return []byte(strings.ReplaceAll(string(interceptBase(t)), `"evt_http_001"`, `"`+id+`"`))
}

// inflight counts concurrent callbacks and remembers the highest count.
type inflight struct{ now, peak atomic.Int64 }

func (f *inflight) enter() {
	n := f.now.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (f *inflight) leave() { f.now.Add(-1) }

// TestStdioOrderMaxConcurrency1: with MaxConcurrency 1 messages are
// dispatched one at a time and answered in input order, malformed lines
// included, even when earlier callbacks take longer than later ones.
func TestStdioOrderMaxConcurrency1(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 40
	var f inflight
	var seen []string // callbacks run one at a time
	h := &server.Handler{MaxConcurrency: 1, Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		f.enter()
		defer f.leave()
		seen = append(seen, req.Params.Event.ID())
		for range 200 - 4*len(seen) { // earlier messages take longer
			runtime.Gosched()
		}
		return server.InterceptResult{}, nil
	}}
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	var in []byte
	var want, wantSeen []string
	for i := range n {
		id := fmt.Sprintf("evt_%02d", i)
		switch i % 4 {
		case 1:
			in = append(in, "{not json\n"...)
			want = append(want, "null Parse error")
		case 2:
			in = append(append(in, observe...), "\n\n"...)
		}
		in = append(append(in, interceptWithID(t, id)...), '\n')
		want = append(want, `"`+id+`" ok`)
		wantSeen = append(wantSeen, id)
	}
	require.Equal(t, want, replyCodes(t, serveStdio(t, h, in)))
	require.Equal(t, wantSeen, seen)
	require.EqualValues(t, 1, f.peak.Load())
}

// TestStdioConcurrencyLimit: up to MaxConcurrency messages are dispatched
// at the same time, never more.
func TestStdioConcurrencyLimit(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, limit := range []int{2, 3, 16} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var f inflight
			var started atomic.Int64
			allStarted, release := make(chan struct{}), make(chan struct{})
			h := &server.Handler{MaxConcurrency: limit, Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
				f.enter()
				defer f.leave()
				if started.Add(1) == int64(limit) {
					close(allStarted)
				}
				<-release
				return server.InterceptResult{}, nil
			}}
			var in []byte
			var want []string
			for i := range 2*limit + 1 {
				id := fmt.Sprintf("evt_%02d", i)
				in = append(append(in, interceptWithID(t, id)...), '\n')
				want = append(want, `"`+id+`" ok`)
			}
			done := make(chan []byte, 1)
			go func() { done <- serveStdio(t, h, in) }()
			select {
			case <-allStarted: // limit callbacks run at the same time
			case <-time.After(10 * time.Second):
				t.Fatal("messages were not dispatched concurrently")
			}
			// Not a synchronisation: a window in which a dispatch beyond
			// the limit, if the limit were broken, would start and raise
			// the peak.
			time.Sleep(20 * time.Millisecond)
			close(release)
			out := <-done
			require.ElementsMatch(t, want, replyCodes(t, out))
			require.EqualValues(t, limit, f.peak.Load())
		})
	}
}

// TestStdioEOFWithMessagesInFlight: the input ends while messages are being
// dispatched and others are still unread; every one is answered before
// ServeStdio returns nil.
func TestStdioEOFWithMessagesInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, limit := range []int{1, 2, 16} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			const n = 5
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			defer inR.Close()
			var out syncBuffer
			var started atomic.Int64
			firstStarted, release := make(chan struct{}), make(chan struct{})
			h := &server.Handler{MaxConcurrency: limit, Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
				if started.Add(1) == 1 {
					close(firstStarted)
				}
				<-release
				return server.InterceptResult{}, nil
			}}
			var in []byte
			var want []string
			for i := range n {
				id := fmt.Sprintf("evt_%02d", i)
				in = append(append(in, interceptWithID(t, id)...), '\n')
				want = append(want, `"`+id+`" ok`)
			}
			_, err = inW.Write(in)
			require.NoError(t, err)
			require.NoError(t, inW.Close()) // EOF after the messages
			done := make(chan error, 1)
			go func() { done <- server.ServeStdio(context.Background(), inR, &out, h) }()
			<-firstStarted
			select {
			case err := <-done:
				t.Fatalf("ServeStdio returned with a message in flight: %v", err)
			default:
			}
			close(release)
			require.NoError(t, <-done)
			got := replyCodes(t, []byte(out.String()))
			if limit == 1 {
				require.Equal(t, want, got)
			} else {
				require.ElementsMatch(t, want, got)
			}
		})
	}
}

// TestStdioCancelWhileReading: ctx ends while a goroutine is blocked reading
// the pipe, after messages were answered and possibly with others still in
// flight. ServeStdio interrupts the read, waits for the callbacks, returns
// ctx.Err() and leaves the pipe usable.
func TestStdioCancelWhileReading(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name     string
		limit    int
		inFlight bool // a callback is blocked when ctx ends
	}{
		{"sequential idle", 1, false},
		{"concurrent idle", 16, false},
		{"concurrent with a callback in flight", 16, true},
		{"sequential with the slot taken", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			defer inR.Close()
			defer inW.Close()
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			defer outR.Close()
			defer outW.Close()
			blocked := make(chan struct{})
			var sawCancel atomic.Bool
			h := &server.Handler{MaxConcurrency: tc.limit, Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
				if req.Params.Event.ID() != "evt_block" {
					return server.InterceptResult{}, nil
				}
				close(blocked)
				<-ctx.Done()
				sawCancel.Store(true)
				return server.InterceptResult{}, ctx.Err()
			}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- server.ServeStdio(ctx, inR, outW, h) }()
			fr := jsonrpc.NewFrameReader(outR, 0)
			for i := range 3 {
				_, err := inW.Write(lines(interceptWithID(t, fmt.Sprintf("evt_%d", i))))
				require.NoError(t, err)
				frame, err := fr.Next()
				require.NoError(t, err)
				require.Zero(t, decodeReply(t, frame).code())
			}
			if tc.inFlight {
				_, err := inW.Write(lines(interceptWithID(t, "evt_block")))
				require.NoError(t, err)
				<-blocked
			}
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(5 * time.Second):
				t.Fatal("ServeStdio did not return after cancel")
			}
			require.Equal(t, tc.inFlight, sawCancel.Load())
			if tc.inFlight {
				frame, err := fr.Next()
				require.NoError(t, err)
				require.Equal(t, `"evt_block"`, string(decodeReply(t, frame).ID))
			}
			// The read deadline was cleared: the pipe still works.
			_, err = inW.Write([]byte("x"))
			require.NoError(t, err)
			buf := make([]byte, 1)
			_, err = inR.Read(buf)
			require.NoError(t, err)
		})
	}
}

// BenchmarkServeStdio measures one persistent-lifecycle round trip through
// ServeStdio over pipes: write a line, read the answer line. "parse error"
// spends almost nothing in dispatch and isolates the serving loop.
func BenchmarkServeStdio(b *testing.B) {
	msgs := []struct {
		name string
		msg  []byte
	}{
		{"intercept", interceptBase(b)},
		{"parse error", []byte("x")},
	}
	for _, m := range msgs {
		for _, limit := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/MaxConcurrency=%d", m.name, limit), func(b *testing.B) {
				inR, inW, err := os.Pipe()
				require.NoError(b, err)
				outR, outW, err := os.Pipe()
				require.NoError(b, err)
				h := &server.Handler{MaxConcurrency: limit, Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
					return server.InterceptResult{}, nil
				}}
				done := make(chan error, 1)
				go func() {
					done <- server.ServeStdio(context.Background(), inR, outW, h)
					_ = outW.Close()
				}()
				defer func() {
					_ = inW.Close()
					require.NoError(b, <-done)
					_ = inR.Close()
					_ = outR.Close()
				}()
				line := lines(m.msg)
				fr := jsonrpc.NewFrameReader(outR, 0)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := inW.Write(line); err != nil {
						b.Fatal(err)
					}
					if _, err := fr.Next(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
