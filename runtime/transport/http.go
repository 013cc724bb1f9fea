package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"os"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
)

// DefaultMaxResponseBytes is the default limit on one response body or
// stdio frame (4 MiB).
const DefaultMaxResponseBytes = 4 << 20

func lookupEnv(k string) (string, bool) { return os.LookupEnv(k) }

// HTTPOptions configures an HTTP transport.
type HTTPOptions struct {
	// BackendID is the registration id, passed to the credential provider.
	BackendID string
	// Client is the HTTP client to use. It is borrowed: the transport never
	// closes it, and it never follows redirects through it (a 3xx response
	// is a failure). Nil means a client owned by the transport, whose idle
	// connections Close releases.
	Client *http.Client
	// Authentication is the endpoint's binding from the registration, or
	// nil for none (the endpoint is then tried without a credential).
	Authentication *gen.Authentication
	// Credentials resolves Authentication at delivery time. Nil means
	// EnvCredentials.
	Credentials CredentialProvider
	// MaxResponseBytes bounds a response body; <= 0 means
	// DefaultMaxResponseBytes. The body is read into a buffer that grows
	// with the bytes received, never one sized by the declared
	// Content-Length.
	MaxResponseBytes int64
}

// HTTP is the HTTP binding: one POST per message to a fixed URL.
type HTTP struct {
	url    string
	tmpl   *http.Request // the fixed part of every request; nil when url does not parse
	client *http.Client
	owned  *http.Transport
	auth   *gen.Authentication
	creds  CredentialProvider
	id     string
	limit  int64

	mu     sync.Mutex
	closed bool
}

// NewHTTP returns a transport posting to url. It performs no I/O.
func NewHTTP(url string, opts HTTPOptions) *HTTP {
	t := &HTTP{url: url, auth: opts.Authentication, creds: opts.Credentials, id: opts.BackendID, limit: opts.MaxResponseBytes}
	if t.limit <= 0 {
		t.limit = DefaultMaxResponseBytes
	}
	if t.creds == nil {
		t.creds = EnvCredentials{}
	}
	var c http.Client
	if opts.Client != nil {
		c = *opts.Client // shallow copy: same connection pool, our redirect policy
	} else {
		t.owned = http.DefaultTransport.(*http.Transport).Clone()
		c.Transport = t.owned
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.client = &c
	// The URL is parsed once; each request is a copy of this template
	// with its own context, headers and body.
	if tmpl, err := http.NewRequest(http.MethodPost, url, nil); err == nil {
		t.tmpl = tmpl
	}
	return t
}

// Exchange implements Transport.
func (t *HTTP) Exchange(ctx context.Context, msg Message) ([]byte, error) {
	resp, err := t.post(ctx, msg)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readResponse(ctx, resp.StatusCode, resp.Header, resp.Body, resp.ContentLength, t.limit)
}

// Notify implements Transport.
func (t *HTTP) Notify(ctx context.Context, msg Message) error {
	resp, err := t.post(ctx, msg)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return checkNotifyResponse(resp.StatusCode, resp.Body)
}

func (t *HTTP) post(ctx context.Context, msg Message) (*http.Response, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if t.tmpl == nil {
		return nil, fail(CodeTransport, StageSend, "request", ErrUnreachable)
	}
	// What http.NewRequestWithContext would build for the body, without
	// parsing the URL again.
	req := t.tmpl.WithContext(ctx)
	if body := msg.Body; len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	} else {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	// The two header values in one allocation of the request's own (a
	// borrowed client's RoundTripper may edit them); each slice has a
	// capacity of one, so appending to one copies it.
	vals := &[2]string{"application/json", "application/json"}
	req.Header = http.Header{"Content-Type": vals[0:1:1], "Accept": vals[1:2:2]}
	if t.auth != nil {
		cred, err := t.creds.Credential(ctx, CredentialRequest{BackendID: t.id, Binding: *t.auth, URL: t.url, Purpose: PurposeEvent})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxFail(ctx, StageAuth)
			}
			return nil, fail(CodeTransport, StageAuth, "credential", ErrCredential)
		}
		if cred.Token == "" {
			return nil, fail(CodeTransport, StageAuth, "credential", ErrCredential)
		}
		req.Header.Set("Authorization", "Bearer "+cred.Token)
	}
	resp, err := t.client.Do(req)
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
	if !isJSONMediaType(h.Get("Content-Type")) {
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
		return readAtMost(body, plusOne(limit), firstReadUnknown)
	}
	buf, err := readAtMost(body, plusOne(length), firstReadBytes)
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
	rest, err := readAtMost(body, limit-length, firstReadUnknown)
	return append(buf, rest...), err
}

// readAtMost reads from rd until EOF or size bytes, whichever comes first.
// The buffer starts at no more than first bytes and doubles when full,
// never beyond size, so it is at most twice the bytes received, or first:
// memory follows what the peer sent, not what it declared. The error is nil
// at EOF and at size, rd's own otherwise.
func readAtMost(rd io.Reader, size, first int64) ([]byte, error) {
	// The first buffer is size halved (rounding up) until it is at most
	// first, so that the doublings end on size, not one byte short of it.
	start := size
	for start > first {
		start -= start / 2
	}
	buf := make([]byte, start)
	n := 0
	for {
		if n == len(buf) {
			if int64(n) == size {
				return buf, nil
			}
			grown := make([]byte, min(size, 2*int64(n)))
			copy(grown, buf)
			buf = grown
		}
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return buf[:n], err
		}
	}
}

// plusOne is n+1, or n when that would overflow.
func plusOne(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
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
