package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
)

// InProcessOptions configures an in-process transport.
type InProcessOptions struct {
	// MaxResponseBytes bounds a response body; <= 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Path is the request path handed to the handler; empty means "/".
	Path string
}

// InProcess delivers messages to an http.Handler in the same process: the
// handler sees the same POST, headers and JSON-RPC bytes as over the HTTP
// binding, and its response is held to the same rules, but no socket is
// involved.
//
// Each message runs the handler on the caller's goroutine, with the
// message's context as the request's context, and returns only once the
// handler has: no delivery outlives the call that made it
// (base/composition.md, Observers). A message whose context has already
// ended fails at once without running the handler; one whose context ends
// while the handler runs fails with that end (any answer is discarded) as
// soon as the handler returns. So the handler must honour its request's
// context: one that ignores it holds the caller past its deadline, until it
// returns. server.Handler passes that context to its callbacks. A handler
// panic is recovered and reported as a transport failure.
type InProcess struct {
	h     http.Handler
	limit int64
	path  string

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// NewInProcess returns a transport that calls h directly. h is borrowed.
func NewInProcess(h http.Handler, opts InProcessOptions) *InProcess {
	t := &InProcess{h: h, limit: opts.MaxResponseBytes, path: opts.Path}
	if t.limit <= 0 {
		t.limit = DefaultMaxResponseBytes
	}
	if t.path == "" {
		t.path = "/"
	}
	return t
}

// Exchange implements Transport.
func (t *InProcess) Exchange(ctx context.Context, msg Message) ([]byte, error) {
	rec, err := t.serve(ctx, msg)
	if err != nil {
		return nil, err
	}
	return readResponse(ctx, rec.status, rec.header, bytes.NewReader(rec.body.Bytes()), int64(rec.body.Len()), t.limit)
}

// Notify implements Transport.
func (t *InProcess) Notify(ctx context.Context, msg Message) error {
	rec, err := t.serve(ctx, msg)
	if err != nil {
		return err
	}
	return checkNotifyResponse(rec.status, io.LimitReader(&rec.body, 0))
}

// serve runs the handler for msg on the calling goroutine and returns its
// recorded response.
func (t *InProcess) serve(ctx context.Context, msg Message) (*recorder, error) {
	if ctx.Err() != nil {
		return nil, ctxFail(ctx, StageSend)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	t.wg.Add(1)
	t.mu.Unlock()
	defer t.wg.Done()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://in-process"+t.path, bytes.NewReader(msg.Body))
	if err != nil {
		return nil, fail(CodeTransport, StageSend, "request", ErrUnreachable)
	}
	req.RemoteAddr = "in-process"
	req.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}, limit: t.limit}
	if !t.run(rec, req) {
		return nil, fail(CodeTransport, StageReceive, "handler_panic", errHandlerPanic)
	}
	if ctx.Err() != nil { // ended while the handler ran: its answer is late
		return nil, ctxFail(ctx, StageReceive)
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.over {
		return nil, fail(CodeCapacity, StageReceive, "too_large", ErrTooLarge)
	}
	return rec, nil
}

// run calls the handler and reports whether it returned without panicking
// (a panic is recovered).
func (t *InProcess) run(rec *recorder, req *http.Request) (ok bool) {
	defer func() {
		if !ok {
			_ = recover()
		}
	}()
	t.h.ServeHTTP(rec, req)
	return true
}

// Close implements Transport: it refuses new messages and waits for running
// handlers (and so for the messages that run them). The handler itself is
// borrowed and left alone.
func (t *InProcess) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}

// recorder is a minimal bounded http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	limit  int64
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if int64(r.body.Len()+len(p)) > r.limit {
		r.over = true
		return len(p), nil
	}
	return r.body.Write(p)
}
