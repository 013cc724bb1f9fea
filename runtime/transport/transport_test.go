package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-child" {
		if code, ok := stdioChild(os.Args[2]); ok {
			os.Exit(code)
		}
		os.Exit(child(os.Args[2]))
	}
	goleak.VerifyTestMain(m)
}

// child answers each request line with a response echoing its id and
// reporting its pid. It announces itself on stderr. Modes:
//
//	echo     answer every request
//	late     delay the first answer past the caller's deadline
//	split    write half of the answer to "a"; the rest goes out with the
//	         next answer
//	exit     exit with status 3 on the first request, unanswered
//	answered answer the first request, then exit with status 7
//	closeout close stdout on the first request and keep reading stdin
//	garbage  answer every request with a line that is not JSON
//	stderr   write 1 MiB to stderr before every answer
//	deaf     never read stdin
//	sleeper  sleep, never reading stdin (started by holdout and orphan)
//	holdout  read a line, start a sleeper holding stdout, sleep
//	orphan   read a line, start a sleeper holding stdout, answer id "x",
//	         exit 0
//	unsolicited precede every answer with unsolicited responses: an id
//	         never sent and a repeat of the previous answer
func child(mode string) int {
	fmt.Fprintf(os.Stderr, "start %d\n", os.Getpid())
	switch mode {
	case "deaf", "sleeper":
		time.Sleep(time.Hour)
		return 0
	case "holdout", "orphan":
		// Start a process that inherits stdout and outlives this one.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		exe, _ := os.Executable()
		helper := exec.Command(exe, "-child", "sleeper")
		helper.Stdout = os.Stdout
		if helper.Start() != nil {
			return 9
		}
		if mode == "orphan" {
			fmt.Println(`{"jsonrpc":"2.0","id":"x","result":{}}`)
			return 0
		}
		time.Sleep(time.Hour)
		return 0
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	first := true
	var rest string
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil || env.Kind != jsonrpc.KindRequest {
			continue
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"pid":%d}}`+"\n", env.ID, os.Getpid())
		switch mode {
		case "late":
			if first {
				time.Sleep(300 * time.Millisecond)
			}
		case "split":
			if env.ID.String() == `"a"` {
				fmt.Print(answer[:len(answer)/2])
				rest = answer[len(answer)/2:]
				continue
			}
			answer, rest = rest+answer, ""
		case "exit":
			return 3
		case "closeout":
			if first {
				_ = os.Stdout.Close()
			}
		case "garbage":
			answer = "Welcome to the policy backend\n"
		case "stderr":
			_, _ = os.Stderr.Write(bytes.Repeat([]byte("e"), 1<<20))
		case "unsolicited":
			fmt.Println(`{"jsonrpc":"2.0","id":"unsolicited-observer","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"observer must not decide"}]}}`)
			fmt.Print(rest)
			rest = answer
		}
		first = false
		fmt.Print(answer)
		if mode == "answered" {
			return 7
		}
	}
	return 0
}

func req(id string) transport.Message {
	return transport.Message{ID: jsonrpc.StringID(id), Method: jsonrpc.MethodIntercept, Body: []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{}}`)}
}

func stdio(t *testing.T, mode string, lc gen.StdioTransportLifecycle) *transport.Stdio {
	exe, err := os.Executable()
	require.NoError(t, err)
	s := transport.NewStdio(transport.StdioOptions{Command: exe, Args: []string{"-child", mode}, Lifecycle: lc})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStdioPersistentCorrelatesAndDropsLateReplies(t *testing.T) {
	s := stdio(t, "late", gen.StdioTransportLifecyclePersistent)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := s.Exchange(ctx, req("a"))
	cancel()
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
	// The late reply to "a" is discarded; "b" gets its own answer.
	out, err := s.Exchange(context.Background(), req("b"))
	require.NoError(t, err)
	require.Contains(t, string(out), `"id":"b"`)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Exchange(context.Background(), req("c"))
	require.ErrorIs(t, err, transport.ErrClosed)
}

// TestStdioPersistentSkipsUnsolicitedFrames: with DiscardUncorrelated,
// responses correlated to no pending request (an id never sent, a repeat
// of an answered one) are discarded without consuming or failing the live
// requests, concurrent ones included (LIFECYCLE-MATRIX.md: "unsolicited
// stale/unknown stdio frames discarded without consuming a live request");
// the child is kept. Without it, the first such frame fails the request
// (id_mismatch).
func TestStdioPersistentSkipsUnsolicitedFrames(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	strict := transport.NewStdio(transport.StdioOptions{Command: exe, Args: []string{"-child", "unsolicited"}, Lifecycle: gen.StdioTransportLifecyclePersistent})
	t.Cleanup(func() { _ = strict.Close() })
	_, err = strict.Exchange(context.Background(), req("a"))
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, "id_mismatch", te.Reason)

	s := transport.NewStdio(transport.StdioOptions{Command: exe, Args: []string{"-child", "unsolicited"}, Lifecycle: gen.StdioTransportLifecyclePersistent, MaxInFlight: 4, DiscardUncorrelated: true})
	t.Cleanup(func() { _ = s.Close() })
	var pids []string
	for _, id := range []string{"a", "b", "c", "d"} { // more than DefaultMaxMalformed
		out, err := s.Exchange(context.Background(), req(id))
		require.NoError(t, err, id)
		require.Contains(t, string(out), `"id":"`+id+`"`)
		var r struct {
			Result struct {
				PID json.Number `json:"pid"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(out, &r))
		pids = append(pids, r.Result.PID.String())
	}
	require.Equal(t, []string{pids[0], pids[0], pids[0], pids[0]}, pids, "the child was replaced")
	// Concurrent requests: each gets its own answer past the unsolicited
	// frames.
	errs := make(chan error, 2)
	for _, id := range []string{"e", "f"} {
		go func() {
			out, err := s.Exchange(context.Background(), req(id))
			if err == nil && !bytes.Contains(out, []byte(`"id":"`+id+`"`)) {
				err = errors.New("wrong answer for " + id)
			}
			errs <- err
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
}

func TestStdioPerEvent(t *testing.T) {
	s := stdio(t, "echo", gen.StdioTransportLifecyclePerEvent)
	out, err := s.Exchange(context.Background(), req("x"))
	require.NoError(t, err)
	require.Contains(t, string(out), `"id":"x"`)
	require.NoError(t, s.Notify(context.Background(), transport.Message{Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}))
}

func TestHTTPRules(t *testing.T) {
	var gotAuth string
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/observe", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()
	tokenEnv := "AHP_TRANSPORT_TEST_TOKEN"
	t.Setenv(tokenEnv, "s3cret")
	auth := &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &tokenEnv}}

	tr := transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, Authentication: auth})
	out, err := tr.Exchange(context.Background(), req("1"))
	require.NoError(t, err)
	require.Equal(t, `{"ok":true}`, string(out))
	require.Equal(t, "Bearer s3cret", gotAuth)
	require.Nil(t, client.CheckRedirect, "the borrowed client is not modified")

	_, err = transport.NewHTTP(srv.URL+"/redirect", transport.HTTPOptions{Client: client}).Exchange(context.Background(), req("1"))
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, http.StatusFound, te.Status, "redirects are not followed")

	require.NoError(t, transport.NewHTTP(srv.URL+"/observe", transport.HTTPOptions{Client: client}).Notify(context.Background(), req("1")))
	require.ErrorIs(t, transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client}).Notify(context.Background(), req("1")), transport.ErrStatus)

	_, err = transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, MaxResponseBytes: 4}).Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrTooLarge)

	missing := "AHP_TRANSPORT_TEST_MISSING"
	gotAuth = "unset"
	_, err = transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &missing}}}).Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrCredential)
	require.Equal(t, "unset", gotAuth, "no request without the configured credential")
	require.NotContains(t, err.Error(), srv.URL)

	owned := transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{})
	_, err = owned.Exchange(context.Background(), req("1"))
	require.NoError(t, err)
	require.NoError(t, owned.Close())
}

func TestInProcess(t *testing.T) {
	tr := transport.NewInProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "panic") {
			panic("boom")
		}
		w.WriteHeader(http.StatusAccepted)
	}), transport.InProcessOptions{})
	require.NoError(t, tr.Notify(context.Background(), req("1")))
	_, err := tr.Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrStatus)
	p := transport.NewInProcess(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), transport.InProcessOptions{})
	_, err = p.Exchange(context.Background(), req("1"))
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeTransport, te.Code)
	require.NoError(t, tr.Close())
	require.NoError(t, p.Close())
	_, err = tr.Exchange(context.Background(), req("1"))
	require.True(t, errors.Is(err, transport.ErrClosed))
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
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

// stdioWith is stdio with options.
func stdioWith(t *testing.T, mode string, opts transport.StdioOptions) *transport.Stdio {
	exe, err := os.Executable()
	require.NoError(t, err)
	opts.Command, opts.Args = exe, []string{"-child", mode}
	if opts.Lifecycle == "" {
		opts.Lifecycle = gen.StdioTransportLifecyclePersistent
	}
	s := transport.NewStdio(opts)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// answer is a decoded response of the test child.
type answer struct {
	ID     string `json:"id"`
	Result struct {
		PID int `json:"pid"`
	} `json:"result"`
}

func exchange(t *testing.T, s *transport.Stdio, ctx context.Context, id string) (answer, error) {
	t.Helper()
	out, err := s.Exchange(ctx, req(id))
	if err != nil {
		return answer{}, err
	}
	var a answer
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.Equal(t, id, a.ID)
	return a, nil
}

// requireFail checks the code, stage and reason of a delivery failure.
func requireFail(t *testing.T, err error, code transport.Code, stage transport.Stage, reason string) *transport.Error {
	t.Helper()
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, code, te.Code, "%v", err)
	require.Equal(t, stage, te.Stage, "%v", err)
	require.Equal(t, reason, te.Reason, "%v", err)
	return te
}

// TestStdioPersistentReusesChild: one child answers every request, from
// one caller or many (one outstanding request at a time).
func TestStdioPersistentReusesChild(t *testing.T) {
	s := stdio(t, "echo", gen.StdioTransportLifecyclePersistent)
	first, err := exchange(t, s, context.Background(), "0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8*25)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				a, err := exchange(t, s, ctx, fmt.Sprintf("g%d-%d", g, i))
				cancel()
				if err == nil && a.Result.PID != first.Result.PID {
					err = fmt.Errorf("answered by pid %d, want %d", a.Result.PID, first.Result.PID)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestStdioCancelWhileReading: ctx ends while the caller waits for a
// response that is half written. The child is kept, the rest of the late
// response is skipped, and the next request gets its own answer.
func TestStdioCancelWhileReading(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		code transport.Code
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, transport.CodeDeadlineExceeded},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, transport.CodeCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := stdio(t, "split", gen.StdioTransportLifecyclePersistent)
			before, err := exchange(t, s, context.Background(), "0")
			require.NoError(t, err)
			ctx, cancel := tc.ctx()
			_, err = s.Exchange(ctx, req("a"))
			cancel()
			requireFail(t, err, tc.code, transport.StageReceive, map[transport.Code]string{
				transport.CodeDeadlineExceeded: "deadline", transport.CodeCancelled: "cancelled"}[tc.code])
			after, err := exchange(t, s, context.Background(), "b")
			require.NoError(t, err, "the read deadline was cleared")
			require.Equal(t, before.Result.PID, after.Result.PID, "the child was kept")
		})
	}
}

// TestStdioChildEnds: a child that exits or closes its stdout fails the
// request with its exit status, promptly, and is replaced on next use
// (without a relaunch backoff).
func TestStdioChildEnds(t *testing.T) {
	tests := []struct {
		mode   string
		status int
	}{
		{"exit", 3},
		{"closeout", -1}, // killed: it could never answer
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			var stderr syncBuffer
			s := stdioWith(t, tc.mode, transport.StdioOptions{Stderr: &stderr, RelaunchBackoff: -1})
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := exchange(t, s, ctx, "a")
				cancel()
				te := requireFail(t, err, transport.CodeTransport, transport.StageReceive, "process_exit")
				require.Equal(t, tc.status, te.Status)
			}
			require.NoError(t, s.Close())
			require.Equal(t, 2, strings.Count(stderr.String(), "start "), "one child per request")
		})
	}
}

// TestStdioAnswerThenExit: a response written just before the child exits
// is delivered.
func TestStdioAnswerThenExit(t *testing.T) {
	for range 20 {
		s := stdio(t, "answered", gen.StdioTransportLifecyclePersistent)
		_, err := exchange(t, s, context.Background(), "a")
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
}

// TestStdioMalformedLimit: malformed output fails the request; after
// MaxMalformed consecutive malformed frames the child is replaced.
func TestStdioMalformedLimit(t *testing.T) {
	var stderr syncBuffer
	s := stdioWith(t, "garbage", transport.StdioOptions{Stderr: &stderr, MaxMalformed: 2, RelaunchBackoff: -1})
	for range 3 {
		_, err := exchange(t, s, context.Background(), "a")
		requireFail(t, err, transport.CodeProtocolRejection, transport.StageReceive, "not_response")
	}
	require.NoError(t, s.Close())
	require.Equal(t, 2, strings.Count(stderr.String(), "start "), "relaunched after 2 malformed frames")
}

// TestStdioStderrBounded: stderr is drained (the child never blocks on it)
// and at most MaxStderrBytes of it is forwarded.
func TestStdioStderrBounded(t *testing.T) {
	var stderr syncBuffer
	s := stdioWith(t, "stderr", transport.StdioOptions{Stderr: &stderr, MaxStderrBytes: 1000})
	for i := range 3 {
		_, err := exchange(t, s, context.Background(), fmt.Sprint(i))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	require.Len(t, stderr.String(), 1000)
	require.True(t, strings.HasPrefix(stderr.String(), "start "))
}

// TestStdioBlockedWriteCanceled: a request or notification that cannot be
// written (the child does not read) is abandoned when ctx ends, and the
// child killed.
func TestStdioBlockedWriteCanceled(t *testing.T) {
	starts := make(chan struct{}, 2)
	s := stdioWith(t, "deaf", transport.StdioOptions{Stderr: signalWriter{"start ", starts}, RelaunchBackoff: -1})
	big := req("big")
	big.Body = []byte(`{"jsonrpc":"2.0","id":"big","method":"hooks/intercept","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)
	bigNote := transport.Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)}
	sends := []func(context.Context) error{
		func(ctx context.Context) error { _, err := s.Exchange(ctx, big); return err },
		func(ctx context.Context) error { return s.Notify(ctx, bigNote) },
	}
	for _, send := range sends {
		// The child is running (it announced itself) and will never read.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-starts
			cancel()
		}()
		err := send(ctx)
		cancel()
		requireFail(t, err, transport.CodeCancelled, transport.StageSend, "cancelled")
	}
	require.NoError(t, s.Close()) // each child was replaced: two have started
}

// TestStdioCloseDuringExchange: Close ends a request in flight, reaps the
// child, and is idempotent.
func TestStdioCloseDuringExchange(t *testing.T) {
	s := stdioWith(t, "split", transport.StdioOptions{CloseGrace: 100 * time.Millisecond})
	_, err := exchange(t, s, context.Background(), "0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := s.Exchange(context.Background(), req("a")) // never fully answered
		done <- err
	}()
	require.NoError(t, s.Close())
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the exchange in flight did not end at Close")
	}
	require.NoError(t, s.Close())
	_, err = s.Exchange(context.Background(), req("b"))
	require.ErrorIs(t, err, transport.ErrClosed)
	require.ErrorIs(t, s.Notify(context.Background(), req("b")), transport.ErrClosed)
}

// TestStdioNotifyPersistent: notifications reach the persistent child and
// do not disturb the next exchange.
func TestStdioNotifyPersistent(t *testing.T) {
	s := stdio(t, "echo", gen.StdioTransportLifecyclePersistent)
	note := transport.Message{Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}
	for i := range 3 {
		require.NoError(t, s.Notify(context.Background(), note))
		_, err := exchange(t, s, context.Background(), fmt.Sprint(i))
		require.NoError(t, err)
	}
}

// BenchmarkStdioExchange is one persistent-lifecycle exchange with a
// deadline, as the harness makes it, next to the same round trip written
// and read directly on the child's pipes.
func BenchmarkStdioExchange(b *testing.B) {
	exe, err := os.Executable()
	require.NoError(b, err)
	msg := req("bench")
	b.Run("transport", func(b *testing.B) {
		s := transport.NewStdio(transport.StdioOptions{Command: exe, Args: []string{"-child", "echo"}, Lifecycle: gen.StdioTransportLifecyclePersistent})
		defer s.Close()
		_, err := s.Exchange(context.Background(), msg)
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := s.Exchange(ctx, msg)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		cmd := exec.Command(exe, "-child", "echo")
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(b, err)
		require.NoError(b, cmd.Start())
		defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
		r := bufio.NewReader(stdout)
		line := append(append([]byte(nil), msg.Body...), '\n')
		b.ReportAllocs()
		for b.Loop() {
			if _, err := stdin.Write(line); err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestHTTPRequestShape: every POST carries the message as its body with
// its length, the JSON media type and no Accept header, and nothing of one
// request leaks into the next, also through a borrowed client whose cookie
// jar adds headers.
func TestHTTPRequestShape(t *testing.T) {
	type seen struct {
		method, path, query, ctype, accept, cookie string
		length                                     int64
		body                                       string
	}
	got := make(chan seen, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Cookie"), r.ContentLength, string(body)}
		http.SetCookie(w, &http.Cookie{Name: "n", Value: "v"})
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	tr := transport.NewHTTP(srv.URL+"/hooks?x=1", transport.HTTPOptions{Client: &http.Client{Jar: jar}})
	defer tr.Close()
	for i, body := range []string{`{"a":1}`, `{"bb":22}`, `{"a":1}`} {
		_, err := tr.Exchange(context.Background(), transport.Message{Body: []byte(body)})
		require.NoError(t, err)
		s := <-got
		require.Equal(t, seen{http.MethodPost, "/hooks", "x=1", "application/json", "", s.cookie, int64(len(body)), body}, s)
		if i > 0 {
			require.Equal(t, "n=v", s.cookie, "the jar's cookie, once")
		}
	}
	_, err = transport.NewHTTP("http://[::1", transport.HTTPOptions{}).Exchange(context.Background(), transport.Message{Body: []byte(`{}`)})
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeTransport, te.Code)
}

// BenchmarkHTTPExchange is one HTTP exchange with a deadline, as the
// harness makes it, next to a raw net/http client posting the same bytes;
// both against a handler that drains the body and writes a constant answer.
func BenchmarkHTTPExchange(b *testing.B) {
	answer := []byte(`{"jsonrpc":"2.0","id":"bench","result":{"protocolVersion":"draft","effects":[]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	msg := req("bench")
	b.Run("transport", func(b *testing.B) {
		h := transport.NewHTTP(srv.URL, transport.HTTPOptions{})
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := h.Exchange(ctx, msg)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transport-bearer", func(b *testing.B) {
		env := "AHP_TRANSPORT_BENCH_TOKEN"
		b.Setenv(env, "bench-token")
		h := transport.NewHTTP(srv.URL, transport.HTTPOptions{Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{TokenEnv: &env}}})
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := h.Exchange(ctx, msg)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(msg.Body))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"": false, "example.com": false, "10.0.0.1": false, "localhost.example.com": false, "[::1]": false, "0.0.0.0": false,
	} {
		require.Equal(t, want, transport.IsLoopbackHost(host), host)
	}
}
