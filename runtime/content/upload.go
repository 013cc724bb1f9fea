package content

import (
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// DefaultMaxReceiptBytes is the default bound on a receipt response body.
const DefaultMaxReceiptBytes = 64 << 10

// DefaultExpectContinueTimeout is how long an upload waits for the
// receiver's verdict on its headers (100 Continue, or a rejection such as
// 401, 403 or 413) before sending the body anyway, when the uploader's
// transport sets no ExpectContinueTimeout of its own.
const DefaultExpectContinueTimeout = time.Second

// HeaderContentSHA256 is the request header carrying the body's lowercase
// hex SHA-256.
const HeaderContentSHA256 = "AHP-Content-SHA256"

// UploaderConfig configures an Uploader. The zero value is usable.
type UploaderConfig struct {
	// HTTPClient is borrowed for uploads. The uploader works on a copy: its
	// Transport and Timeout are used as they are, its redirect policy is
	// replaced (redirects are never followed) and its Jar is dropped (no
	// cookie is sent to or accepted from an upload endpoint: ambient
	// session state is not an upload credential). The Transport's TLS
	// configuration, client certificates included, applies to every upload:
	// pass a client meant for upload endpoints, not the event client
	// (event authentication must not migrate to an upload resource). Nil
	// means a client owned by the uploader.
	HTTPClient *http.Client
	// Credentials resolves upload credentials (Purpose auth.PurposeUpload,
	// the subscription's upload binding, never the event endpoint's) and is
	// told of every 401 (Provider.Challenge); it owns protected-resource
	// discovery for an upload endpoint without a binding. Nil means
	// auth.EnvironmentProvider{}. Borrowed.
	Credentials auth.Provider
	// AllowLoopbackHTTP permits plain http:// upload endpoints on loopback
	// hosts (transport.IsLoopbackHost): the explicitly configured loopback
	// tests the protocol allows. Without it, or AllowInsecureHTTP, every
	// upload endpoint must be https.
	AllowLoopbackHTTP bool
	// AllowInsecureHTTP permits plain http:// upload endpoints on any host,
	// loopback included (explicitly controlled local development only).
	AllowInsecureHTTP bool
	// Limiter bounds concurrent uploads and may be shared. Nil means a new
	// limiter of MaxConcurrentUploads.
	Limiter *Limiter
	// MaxConcurrentUploads sizes the uploader's own limiter when Limiter is
	// nil; 0 means DefaultMaxConcurrentUploads, a negative value is an error.
	MaxConcurrentUploads int
	// MaxReceiptBytes bounds the receipt body; <= 0 means
	// DefaultMaxReceiptBytes.
	MaxReceiptBytes int64
}

// Uploader posts attachment bytes to upload endpoints and verifies their
// receipts. It is safe for concurrent use.
type Uploader struct {
	client   *http.Client
	owned    *http.Transport
	creds    auth.Provider
	insecure bool
	loopback bool
	lim      *Limiter
	maxRcpt  int64
}

// NewUploader returns an uploader; it performs no I/O.
func NewUploader(cfg UploaderConfig) (*Uploader, error) {
	u := &Uploader{creds: cfg.Credentials, insecure: cfg.AllowInsecureHTTP, loopback: cfg.AllowLoopbackHTTP, lim: cfg.Limiter, maxRcpt: cfg.MaxReceiptBytes}
	if u.lim == nil {
		n := cfg.MaxConcurrentUploads
		if n == 0 {
			n = DefaultMaxConcurrentUploads
		}
		lim, err := NewLimiter(n)
		if err != nil {
			return nil, err
		}
		u.lim = lim
	}
	if u.creds == nil {
		u.creds = auth.EnvironmentProvider{}
	}
	if u.maxRcpt <= 0 {
		u.maxRcpt = DefaultMaxReceiptBytes
	}
	var c http.Client
	if cfg.HTTPClient != nil {
		c = *cfg.HTTPClient // same connection pool, our redirect policy
		c.Jar = nil         // no cookie reaches an upload endpoint
		if t, ok := c.Transport.(*http.Transport); ok && t.ExpectContinueTimeout == 0 {
			// Without a timeout net/http sends the body at once despite
			// Expect: 100-continue; a clone that waits for the receiver's
			// verdict is the uploader's own (CloseIdleConnections).
			u.owned = t.Clone()
			u.owned.ExpectContinueTimeout = DefaultExpectContinueTimeout
			c.Transport = u.owned
		}
	} else {
		u.owned = http.DefaultTransport.(*http.Transport).Clone()
		u.owned.ExpectContinueTimeout = DefaultExpectContinueTimeout
		c.Transport = u.owned
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u.client = &c
	return u, nil
}

// Limiter returns the uploader's limiter.
func (u *Uploader) Limiter() *Limiter { return u.lim }

// CloseIdleConnections releases the idle connections of the uploader's own
// transport (its own client's, or its clone of a borrowed *http.Transport
// that set no ExpectContinueTimeout); a borrowed transport is left alone.
func (u *Uploader) CloseIdleConnections() {
	if u.owned != nil {
		u.owned.CloseIdleConnections()
	}
}

// Destination is one subscription's upload endpoint.
type Destination struct {
	// BackendID is the registration id of the receiving backend, passed to
	// the credential provider.
	BackendID string
	// Backend is the backend's complete registration entry, passed to the
	// credential provider (auth.Request.Backend); nil when the caller has
	// none. It must not be modified.
	Backend *gen.Backend
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
	// Upload is the subscription's upload configuration.
	Upload gen.ContentUpload
}

// Confirmation is a confirmed upload.
type Confirmation struct {
	// Reference is what an event's body-selected attachment carries: the
	// receiver's ref, and nothing else.
	Reference gen.ContentReference
	// Receipt is the verified receipt, for the caller's records; it never
	// goes into an event.
	Receipt gen.ContentUploadReceipt
}

// plan is a checked upload configuration.
type plan struct {
	url      string
	timeout  time.Duration
	maxBytes int64
}

// check validates an upload configuration before any source is read.
func (u *Uploader) check(cfg gen.ContentUpload) (plan, error) {
	p := plan{url: cfg.Endpoint}
	if err := u.checkEndpoint(cfg.Endpoint); err != nil {
		return p, err
	}
	if cfg.Auth != nil && !oneArm(*cfg.Auth) {
		return p, invalid("upload auth must set exactly one binding")
	}
	ms, huge, ok := jsonInteger(string(cfg.TimeoutMs))
	if !ok || ms < 1 {
		return p, invalid("upload timeoutMs must be a positive integer")
	}
	if huge || ms > math.MaxInt64/int64(time.Millisecond) {
		p.timeout = math.MaxInt64
	} else {
		p.timeout = time.Duration(ms) * time.Millisecond
	}
	mb, _, ok := jsonInteger(string(cfg.MaxBytes))
	if !ok {
		return p, invalid("upload maxBytes must be a nonnegative integer")
	}
	p.maxBytes = mb
	return p, nil
}

func (u *Uploader) checkEndpoint(raw string) error {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f {
			return ErrEndpoint // CR/LF and other controls never reach a request line
		}
	}
	e, err := url.Parse(raw)
	if err != nil || e.Host == "" || e.Opaque != "" {
		return ErrEndpoint
	}
	if e.User != nil {
		return ErrEndpoint // net/http would send them as Basic authentication
	}
	switch e.Scheme {
	case "https":
	case "http":
		if !u.insecure && !(u.loopback && transport.IsLoopbackHost(e.Hostname())) {
			return ErrEndpoint
		}
	default:
		return ErrEndpoint
	}
	return nil
}

// Upload posts a's bytes to dest and returns the verified confirmation. It
// takes a permit of the uploader's limiter for the whole upload, including
// reading a (which joins any materialization already under way). The
// upload configuration is checked before a is read; bytes over maxBytes
// fail before anything is sent. Credential resolution and the transfer run
// within ctx shortened by the upload's timeoutMs.
func (u *Uploader) Upload(ctx context.Context, a *Attachment, dest Destination) (Confirmation, error) {
	if err := u.lim.Acquire(ctx); err != nil {
		return Confirmation{}, err
	}
	defer u.lim.Release()
	return u.upload(ctx, a, dest)
}

// upload is Upload for a caller that holds a permit.
func (u *Uploader) upload(ctx context.Context, a *Attachment, dest Destination) (Confirmation, error) {
	if a == nil {
		return Confirmation{}, invalid("nil attachment")
	}
	p, err := u.check(dest.Upload)
	if err != nil {
		return Confirmation{}, err
	}
	if n, ok := a.ExpectedSize(); ok && n > p.maxBytes {
		return Confirmation{}, ErrTooLarge // a correct expectation is over; a wrong one fails anyway
	}
	s, err := a.Snapshot(ctx)
	if err != nil {
		return Confirmation{}, err
	}
	if s.Size() > p.maxBytes {
		return Confirmation{}, ErrTooLarge
	}
	return u.send(ctx, p, dest, s)
}

// send performs the POST (and at most one replay, in the discovery case)
// within the upload budget.
//
// The provider is asked at every upload, with the upload's own binding or
// none. Without a binding it may supply a credential it obtained for
// exactly this resource, or none: the endpoint is then tried without a
// credential, as the protocol requires. Every 401 goes to the provider's
// Challenge with the response's status and headers (the parsed
// WWW-Authenticate challenges included, whatever their schemes) and the
// identity of the credential sent. Only the credential-free attempt to an
// endpoint without a binding is eligible for a replay (Challenge.Replay):
// the provider runs protected-resource discovery (resource_metadata, or
// the RFC 9728 well-known locations when the challenge names none) and
// authorizes the replay by returning nil; the replay carries the
// credential a new Credential call returns. A rejected credential is never
// replayed.
func (u *Uploader) send(ctx context.Context, p plan, dest Destination, s *Snapshot) (Confirmation, error) {
	bctx, cancel := context.WithTimeoutCause(ctx, p.timeout, ErrTimeout)
	defer cancel()
	req := auth.Request{BackendID: dest.BackendID, Backend: dest.Backend, URL: dest.Upload.Endpoint, Purpose: auth.PurposeUpload}
	if dest.Upload.Auth != nil {
		req.Binding = *dest.Upload.Auth
	}
	cred, err := u.credential(ctx, bctx, req)
	if err != nil {
		return Confirmation{}, err
	}
	resp, err := u.post(ctx, bctx, p, s, cred.Token)
	if err != nil {
		return Confirmation{}, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		discovery := !req.HasBinding() && cred.IsZero()
		if !u.challenge(bctx, req, resp, cred.Identity, discovery) {
			return Confirmation{}, unauthorized(ctx, bctx, discovery)
		}
		next, err := u.credential(ctx, bctx, req)
		if err != nil {
			if e := budgetErr(ctx, bctx); e != nil {
				return Confirmation{}, e
			}
			return Confirmation{}, unauthorized(ctx, bctx, true)
		}
		if next.IsZero() {
			return Confirmation{}, unauthorized(ctx, bctx, true) // nothing to replay with
		}
		if resp, err = u.post(ctx, bctx, p, s, next.Token); err != nil {
			return Confirmation{}, err
		}
		if resp.StatusCode == http.StatusUnauthorized {
			u.challenge(bctx, req, resp, next.Identity, false)
			return Confirmation{}, unauthorized(ctx, bctx, false)
		}
	}
	defer resp.Body.Close()
	return u.confirm(ctx, bctx, resp, s)
}

// challenge tells the provider of the 401 resp (whose body it drains and
// closes, unread) to an upload sent with the credential of identity attempt,
// and reports whether to replay: only if eligible and the provider agrees
// within the budget.
func (u *Uploader) challenge(bctx context.Context, req auth.Request, resp *http.Response, attempt string, eligible bool) bool {
	drain(resp.Body)
	resp.Body.Close()
	ch := auth.Challenge{Status: resp.StatusCode, Header: resp.Header, Attempt: attempt, Replay: eligible}
	// A header the bounded parser refuses is no challenge; the provider
	// still sees the raw header and may go to the well-known locations.
	ch.Challenges, _ = auth.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	err := u.creds.Challenge(bctx, req, ch)
	return eligible && err == nil && bctx.Err() == nil
}

// unauthorized is the failure of an upload answered 401 and not replayed:
// the end of the budget if that came first, else a *StatusError, which
// also matches ErrCredential when discovery found no credential for it.
func unauthorized(ctx, bctx context.Context, discovery bool) error {
	if e := budgetErr(ctx, bctx); e != nil {
		return e
	}
	if discovery {
		return fmt.Errorf("%w: %w", &StatusError{Code: http.StatusUnauthorized}, ErrCredential)
	}
	return &StatusError{Code: http.StatusUnauthorized}
}

// credential resolves an upload credential; its error never carries the
// provider's text. A binding never yields an anonymous upload.
func (u *Uploader) credential(ctx, bctx context.Context, req auth.Request) (auth.Credential, error) {
	cred, err := u.creds.Credential(bctx, req)
	if e := budgetErr(ctx, bctx); e != nil {
		return auth.Credential{}, e
	}
	switch {
	case err != nil:
		return auth.Credential{}, ErrCredential
	case cred.IsZero() && req.HasBinding():
		return auth.Credential{}, ErrCredential
	case !cred.IsZero() && !auth.ValidToken(cred.Token):
		return auth.Credential{}, ErrCredential
	}
	return cred, nil
}

func (u *Uploader) post(ctx, bctx context.Context, p plan, s *Snapshot, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(bctx, http.MethodPost, p.url, s.NewReader())
	if err != nil {
		return nil, ErrEndpoint
	}
	// NewRequest sets the exact length (and http.NoBody for zero bytes);
	// net/http then sends Content-Length, also 0 for a POST, never chunked.
	req.Header = http.Header{
		"Content-Type":       {"application/octet-stream"},
		"Accept":             {"application/json"},
		"Ahp-Content-Sha256": {s.SHA256()},
	}
	if s.Size() > 0 {
		// The receiver judges the headers (credential, digest, length)
		// before the body: a rejection arrives before any byte is sent
		// instead of racing a receiver that closes without reading.
		req.Header["Expect"] = []string{"100-continue"}
	}
	if token != "" {
		req.Header["Authorization"] = []string{"Bearer " + token}
	}
	resp, err := u.client.Do(req)
	if err != nil {
		if e := budgetErr(ctx, bctx); e != nil {
			return nil, e
		}
		// The net error may name the URL; only the classification leaves.
		return nil, ErrUnreachable
	}
	return resp, nil
}

// confirm accepts only a 201 JSON receipt that matches s.
func (u *Uploader) confirm(ctx, bctx context.Context, resp *http.Response, s *Snapshot) (Confirmation, error) {
	if resp.StatusCode != http.StatusCreated {
		drain(resp.Body)
		return Confirmation{}, &StatusError{Code: resp.StatusCode}
	}
	if !isJSONMediaType(resp.Header.Get("Content-Type")) {
		drain(resp.Body)
		return Confirmation{}, receiptErr("content type")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, u.maxRcpt+1))
	if err != nil {
		if e := budgetErr(ctx, bctx); e != nil {
			return Confirmation{}, e
		}
		return Confirmation{}, ErrUnreachable
	}
	if int64(len(body)) > u.maxRcpt {
		return Confirmation{}, receiptErr("too large")
	}
	r, err := gen.ParseContentUploadReceipt(body)
	if err != nil || !uniqueMembers(body) {
		return Confirmation{}, receiptErr("not canonical")
	}
	if n, huge, ok := jsonInteger(string(r.Size)); !ok || huge || n != s.Size() {
		return Confirmation{}, receiptErr("size differs from the bytes sent")
	}
	if r.SHA256 != s.SHA256() {
		return Confirmation{}, receiptErr("sha256 differs from the bytes sent")
	}
	return Confirmation{Reference: gen.ContentReference{Ref: r.Ref}, Receipt: *r}, nil
}

func receiptErr(reason string) error { return fmt.Errorf("%w: %s", ErrReceipt, reason) }

// budgetErr classifies a failure after ctx (the caller's) or bctx (the
// upload budget) ended, or returns nil.
func budgetErr(ctx, bctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("content: upload: %w", err)
	}
	if bctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
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
		return true
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}
