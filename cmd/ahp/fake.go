package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// fakeModes are the behaviours of ahp fake-backend.
var fakeModes = []string{"no-effect", "deny", "allow", "ask", "modify-input", "timeout", "malformed-json", "id-mismatch", "jsonrpc-error", "crash", "slow"}

// fakeDenyReason is the reason of the fake backend's denial.
const fakeDenyReason = "denied by ahp fake-backend"

const fakeSynopsis = `fake-backend [--http ADDR] --mode MODE [--delay D]

Runs an AHP backend built on the server package whose interceptions answer
according to --mode, for testing hosts; over stdio by default, over HTTP with
--http (it prints "listening on http://ADDR" to standard error). Observations
are accepted and dropped. Modes:
  no-effect       answers with no effects
  deny            denies ("` + fakeDenyReason + `")
  allow, ask      sends that permission effect
  modify-input    replaces the tool input with {"ahpFake":"replaced"}
  timeout         never answers an interception
  malformed-json  answers with a line that is not JSON
  id-mismatch     answers with a response id the request did not use
  jsonrpc-error   answers with a JSON-RPC error
  crash           exits with status 3 on the first interception
  slow            answers with no effects after --delay
Effects the request did not advertise are refused by the server's admission,
which then answers with an error.`

func runFake(e *env, args []string) error {
	fs := newFlags(e, "fake-backend", fakeSynopsis)
	addr := fs.String("http", "", "serve HTTP on `ADDR` (host:port; port 0 picks one) instead of stdio")
	mode := fs.String("mode", "", "the backend's `behaviour`: "+strings.Join(fakeModes, ", "))
	delay := fs.Duration("delay", time.Second, "answer delay of --mode slow")
	ops, _, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return usageError("fake-backend takes no operands")
	}
	if !slices.Contains(fakeModes, *mode) {
		return usageError("--mode must be one of %s", strings.Join(fakeModes, ", "))
	}
	if *delay < 0 {
		return usageError("--delay must not be negative")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := fakeHandler(*mode, *delay)
	rewrite := frameRewriter(*mode)
	if *addr == "" {
		out := &lineRewriter{w: e.stdout, rewrite: rewrite}
		err := server.ServeStdio(ctx, e.stdin, out, h)
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	return serveFakeHTTP(ctx, e, *addr, h, rewrite)
}

func fakeHandler(mode string, delay time.Duration) *server.Handler {
	return &server.Handler{
		Observe:        func(context.Context, *gen.ObserveNotification) error { return nil },
		MaxConcurrency: 1,
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			switch mode {
			case "deny":
				return server.InterceptResult{Effects: []gen.Effect{server.Deny(fakeDenyReason)}}, nil
			case "allow":
				return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
			case "ask":
				return server.InterceptResult{Effects: []gen.Effect{server.Ask()}}, nil
			case "modify-input":
				return server.InterceptResult{Effects: []gen.Effect{server.ReplaceInput(json.RawMessage(`{"ahpFake":"replaced"}`))}}, nil
			case "timeout":
				<-ctx.Done()
				return server.InterceptResult{}, ctx.Err()
			case "jsonrpc-error":
				return server.InterceptResult{}, errors.New("fake-backend: scripted failure")
			case "crash":
				os.Exit(3)
			case "slow":
				t := time.NewTimer(delay)
				defer t.Stop()
				select {
				case <-t.C:
				case <-ctx.Done():
					return server.InterceptResult{}, ctx.Err()
				}
			}
			return server.InterceptResult{}, nil
		},
	}
}

// frameRewriter returns the fault applied to each response frame, or nil.
func frameRewriter(mode string) func([]byte) []byte {
	switch mode {
	case "malformed-json":
		return func([]byte) []byte { return []byte(`{"jsonrpc":"2.0","id":`) }
	case "id-mismatch":
		return func(b []byte) []byte {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				return b
			}
			m["id"] = json.RawMessage(`"ahp-fake-mismatched-id"`)
			out, err := json.Marshal(m)
			if err != nil {
				return b
			}
			return out
		}
	}
	return nil
}

// lineRewriter applies a rewrite to each newline-terminated frame written
// to w.
type lineRewriter struct {
	mu      sync.Mutex
	w       io.Writer
	rewrite func([]byte) []byte
	buf     []byte
}

func (l *lineRewriter) Write(p []byte) (int, error) {
	if l.rewrite == nil {
		return l.w.Write(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append(l.rewrite(l.buf[:i]), '\n')
		l.buf = l.buf[i+1:]
		if _, err := l.w.Write(line); err != nil {
			return 0, err
		}
	}
}

func serveFakeHTTP(ctx context.Context, e *env, addr string, h *server.Handler, rewrite func([]byte) []byte) error {
	if err := h.Validate(); err != nil {
		return err
	}
	var handler http.Handler = h
	if rewrite != nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
			h.ServeHTTP(rec, r)
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			body := rec.body.Bytes()
			if rec.status == http.StatusOK && len(body) > 0 {
				body = rewrite(bytes.TrimRight(body, "\n"))
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.status)
			_, _ = w.Write(body)
		})
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--http %s: %v", addr, err)
	}
	srv := server.NewHTTPServer(addr, handler)
	fmt.Fprintf(e.stderr, "ahp fake-backend: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bufferedResponse is an http.ResponseWriter that keeps the response for
// rewriting.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
