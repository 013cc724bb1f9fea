package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/boundedread"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
)

// DefaultMaxResponseBytes is the default limit on one response body or
// stdio frame (4 MiB).
const DefaultMaxResponseBytes = 4 << 20

// DefaultMaxIdleConnsPerHost is how many idle connections to its backend
// the client owned by an HTTP transport keeps for reuse: enough for that
// many concurrent callers under steady load to reuse their connections
// instead of opening (and leaving in TIME_WAIT) a new one per call, which
// net/http's default of 2 does beyond two callers.
const DefaultMaxIdleConnsPerHost = 64

// HTTPOptions configures an HTTP transport.
type HTTPOptions struct {
	// BackendID is the registration id, passed to the credential provider.
	BackendID string
	// Backend is the backend's registration entry, passed to the credential
	// provider (shared, never modified); nil when there is none.
	Backend *gen.Backend
	// Client is the HTTP client to use. It is borrowed: the transport never
	// closes it, and it never follows redirects through it (a 3xx response
	// is a failure). Nil means a client owned by the transport, whose idle
	// connections Close releases.
	Client *http.Client
	// MaxIdleConnsPerHost sizes the idle pool of the owned client (Client
	// nil) for the concurrent callers expected on this backend; <= 0 means
	// DefaultMaxIdleConnsPerHost. A borrowed Client keeps its own pool.
	MaxIdleConnsPerHost int
	// Authentication is the endpoint's binding from the registration, or
	// nil for none (the endpoint is then tried without a credential unless
	// the provider supplies one).
	Authentication *gen.Authentication
	// Credentials resolves credentials at delivery time and is told of
	// challenges (see runtime/auth). Nil means auth.EnvironmentProvider{}.
	// Borrowed.
	Credentials CredentialProvider
	// MaxResponseBytes bounds a response body; <= 0 means
	// DefaultMaxResponseBytes. The body is read into a buffer that grows
	// with the bytes received, never one sized by the declared
	// Content-Length.
	MaxResponseBytes int64
}

// HTTP is the HTTP binding: one POST per message to a fixed URL.
//
// Every message asks the credential provider at delivery time (with the
// endpoint's binding, or none) and carries the token it returns in one
// Authorization header. A 401 is reported to the provider's Challenge. For
// a request (Exchange) whose 401 carries a Bearer challenge, the provider
// may have it replayed once: the same bytes, hence the same JSON-RPC id,
// with a new credential, within the same context. Notifications are never
// replayed.
type HTTP struct {
	url    string
	tmpl   *http.Request // the fixed part of every request; nil when url does not parse
	client *http.Client
	owned  *http.Transport
	// direct is the owned transport when requests go to it without the
	// http.Client: it has no cookie jar, timeout or redirects to follow
	// (the redirect policy returns the first response, as RoundTrip
	// does), and the URL carries no user information the client would
	// turn into a header. Nil otherwise.
	direct http.RoundTripper
	// plain is the header of every token-less request on the direct path,
	// shared and never modified (RoundTrip does not modify requests).
	plain   http.Header
	binding *gen.Authentication
	backend *gen.Backend
	creds   CredentialProvider
	id      string
	limit   int64

	mu     sync.Mutex
	closed bool
}

// NewHTTP returns a transport posting to url. It performs no I/O.
func NewHTTP(url string, opts HTTPOptions) *HTTP {
	t := &HTTP{url: url, binding: opts.Authentication, backend: opts.Backend, creds: opts.Credentials, id: opts.BackendID, limit: opts.MaxResponseBytes}
	if t.limit <= 0 {
		t.limit = DefaultMaxResponseBytes
	}
	if t.creds == nil {
		t.creds = auth.EnvironmentProvider{}
	}
	var c http.Client
	if opts.Client != nil {
		c = *opts.Client // shallow copy: same connection pool, our redirect policy
	} else {
		t.owned = http.DefaultTransport.(*http.Transport).Clone()
		n := opts.MaxIdleConnsPerHost
		if n <= 0 {
			n = DefaultMaxIdleConnsPerHost
		}
		t.owned.MaxIdleConnsPerHost = n
		t.owned.MaxIdleConns = max(t.owned.MaxIdleConns, n)
		c.Transport = t.owned
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.client = &c
	// The URL is parsed once; each request is a copy of this template
	// with its own context, headers and body.
	if tmpl, err := http.NewRequest(http.MethodPost, url, nil); err == nil {
		t.tmpl = tmpl
		if t.owned != nil && tmpl.URL.User == nil {
			t.direct = t.owned
			t.plain = http.Header{"Content-Type": {"application/json"}}
		}
	}
	return t
}

// Exchange implements Transport. After a 401 with a Bearer challenge it may
// replay the request once (see HTTP).
func (t *HTTP) Exchange(ctx context.Context, msg Message) ([]byte, error) {
	resp, err := t.post(ctx, msg, true)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readResponse(ctx, resp.StatusCode, resp.Header, resp.Body, resp.ContentLength, t.limit)
}

// Notify implements Transport. It is never replayed.
func (t *HTTP) Notify(ctx context.Context, msg Message) error {
	resp, err := t.post(ctx, msg, false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return checkNotifyResponse(resp.StatusCode, resp.Body)
}

// post sends msg with the provider's credential. A 401 goes to the
// provider's Challenge and ends as a failure, unless request is set, the
// challenge is Bearer and the provider has the message replayed, once.
func (t *HTTP) post(ctx context.Context, msg Message, request bool) (*http.Response, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if t.tmpl == nil {
		return nil, fail(CodeTransport, StageSend, "request", ErrUnreachable)
	}
	areq := auth.Request{BackendID: t.id, Backend: t.backend, URL: t.url, Purpose: auth.PurposeEvent}
	if t.binding != nil {
		areq.Binding = *t.binding
	}
	cred, err := t.credential(ctx, areq)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(ctx, msg.Body, cred.Token)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if !t.challenge(ctx, areq, resp, cred.Identity, request) {
		return nil, unauthorized(ctx)
	}
	next, err := t.credential(ctx, areq)
	if err != nil {
		return nil, err
	}
	if next.Token == "" || next.Token == cred.Token {
		return nil, unauthorized(ctx) // nothing better to replay with
	}
	if resp, err = t.send(ctx, msg.Body, next.Token); err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	t.challenge(ctx, areq, resp, next.Identity, false)
	return nil, unauthorized(ctx)
}

// credential asks the provider; its error and text never leave, only a
// classification.
func (t *HTTP) credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	cred, err := t.creds.Credential(ctx, req)
	switch {
	case ctx.Err() != nil:
		return auth.Credential{}, ctxFail(ctx, StageAuth)
	case err != nil:
		reason := "credential"
		switch {
		case errors.Is(err, auth.ErrMissingSecret):
			reason = "credential_missing"
		case errors.Is(err, auth.ErrUnsupported):
			reason = "auth_unsupported"
		}
		return auth.Credential{}, fail(CodeTransport, StageAuth, reason, ErrCredential)
	case cred.Token == "" && req.HasBinding():
		// A configured binding is never delivered anonymously.
		return auth.Credential{}, fail(CodeTransport, StageAuth, "credential_missing", ErrCredential)
	case cred.Token != "" && !auth.ValidToken(cred.Token):
		return auth.Credential{}, fail(CodeTransport, StageAuth, "credential_invalid", ErrCredential)
	}
	return cred, nil
}

// challenge tells the provider of the 401 resp (whose body it drains and
// closes, unread) to a message sent with the credential of identity
// attempt, and reports whether to replay: only if eligible, the challenge
// is Bearer and the provider agrees within ctx.
func (t *HTTP) challenge(ctx context.Context, req auth.Request, resp *http.Response, attempt string, eligible bool) bool {
	drain(resp.Body)
	resp.Body.Close()
	ch := auth.Challenge{Status: resp.StatusCode, Header: resp.Header, Attempt: attempt}
	ch.Challenges, _ = auth.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	_, bearer := ch.Bearer()
	ch.Replay = eligible && bearer
	err := t.creds.Challenge(ctx, req, ch)
	return ch.Replay && err == nil && ctx.Err() == nil
}

// unauthorized is the failure of a message answered 401 and not replayed,
// or the end of ctx if that came first.
func unauthorized(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctxFail(ctx, StageAuth)
	}
	e := fail(CodeTransport, StageReceive, "http_status", ErrStatus)
	e.Status = http.StatusUnauthorized
	return e
}

// send posts body once, with token in the Authorization header unless it
// is empty.
func (t *HTTP) send(ctx context.Context, body []byte, token string) (*http.Response, error) {
	// What http.NewRequestWithContext would build for the body, without
	// parsing the URL again.
	req := t.tmpl.WithContext(ctx)
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	} else {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	// The header values in one allocation of the request's own (a borrowed
	// client's RoundTripper may edit them); each slice has a capacity of
	// one, so appending to one copies it. No Accept header: the binding
	// fixes the answer's media type (base/transports/http.md: request
	// and response bodies use application/json), which readResponse
	// checks, so there is nothing to negotiate, and the header cost each
	// round trip about 3.7k instructions to write, parse and store.
	if token == "" && t.direct != nil {
		req.Header = t.plain
	} else if token == "" {
		req.Header = http.Header{"Content-Type": []string{"application/json"}}
	} else {
		vals := &[2]string{"application/json", "Bearer " + token}
		req.Header = http.Header{"Content-Type": vals[0:1:1], "Authorization": vals[1:2:2]}
	}
	var resp *http.Response
	var err error
	if t.direct != nil {
		resp, err = t.direct.RoundTrip(req)
	} else {
		resp, err = t.client.Do(req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctxFail(ctx, StageSend)
		}
		// The net error may name the URL; only the classification leaves.
		return nil, fail(CodeTransport, StageSend, "connect", ErrUnreachable)
	}
	return resp, nil
}

// Close implements Transport. It releases the idle connections of an owned
// client; a borrowed client is left alone.
func (t *HTTP) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	if t.owned != nil {
		t.owned.CloseIdleConnections()
	}
	return nil
}

// readResponse applies the HTTP binding's rules to a request's response:
// status 200, a JSON media type, at most limit bytes. length is the declared
// length of the body, or -1.
func readResponse(ctx context.Context, status int, h http.Header, body io.Reader, length, limit int64) ([]byte, error) {
	if status != http.StatusOK {
		drain(body)
		e := fail(CodeTransport, StageReceive, "http_status", ErrStatus)
		e.Status = status
		return nil, e
	}
	var ct string // h.Get("Content-Type"), whose key is canonical already
	if v := h["Content-Type"]; len(v) > 0 {
		ct = v[0]
	}
	if !isJSONMediaType(ct) {
		drain(body)
		return nil, fail(CodeProtocolRejection, StageReceive, "content_type", ErrMalformed)
	}
	data, err := readBody(body, length, limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctxFail(ctx, StageReceive)
		}
		return nil, fail(CodeTransport, StageReceive, "read", ErrUnreachable)
	}
	if int64(len(data)) > limit {
		return nil, fail(CodeCapacity, StageReceive, "too_large", ErrTooLarge)
	}
	return data, nil
}

// firstReadBytes is the most a response body buffer starts with, whatever
// Content-Length declares; from there it doubles as bytes arrive, up to the
// declared length plus one. A smaller body of declared length gets one
// buffer of exactly that length plus one (the hot path); a backend that
// declares 4 MiB and sends nothing holds 16 KiB, not 4 MiB.
const firstReadBytes = 16 << 10

// firstReadUnknown is the first buffer of a body of unknown length, as
// io.ReadAll's.
const firstReadUnknown = 512

// readBody reads at most limit+1 bytes of body, into a buffer that grows
// with the bytes received (see [firstReadBytes]). A body of declared length
// within the limit that ends early is io.ErrUnexpectedEOF; one longer than
// declared is read on, bounded by the limit.
func readBody(body io.Reader, length, limit int64) ([]byte, error) {
	if length < 0 || length > limit {
		return boundedread.ReadAtMost(body, boundedread.PlusOne(limit), firstReadUnknown)
	}
	buf, err := boundedread.ReadAtMost(body, boundedread.PlusOne(length), firstReadBytes)
	if err != nil {
		return nil, err
	}
	switch got := int64(len(buf)); {
	case got < length:
		return nil, io.ErrUnexpectedEOF // ended before its declared length
	case got == length:
		return buf, nil
	}
	// Longer than declared: the limit decides.
	rest, err := boundedread.ReadAtMost(body, limit-length, firstReadUnknown)
	return append(buf, rest...), err
}

// checkNotifyResponse accepts 202 or 204 and discards any body.
func checkNotifyResponse(status int, body io.Reader) error {
	drain(body)
	if status != http.StatusAccepted && status != http.StatusNoContent {
		e := fail(CodeTransport, StageReceive, "http_status", ErrStatus)
		e.Status = status
		return e
	}
	return nil
}

// drain reads and discards a bounded amount so the connection can be reused.
func drain(r io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10))
}

// isJSONMediaType accepts application/json with optional parameters.
func isJSONMediaType(v string) bool {
	if v == "application/json" || v == "application/json; charset=utf-8" {
		return true // the common forms, without ParseMediaType's allocations
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

var errHandlerPanic = errors.New("transport: handler panicked")
