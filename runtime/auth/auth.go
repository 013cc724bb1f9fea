package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/agenthooks/agenthooks-go/gen"
)

// Purpose says what a credential is for. Event and upload endpoints are
// separate resources: their credentials are resolved independently, and an
// absent upload binding never falls back to the event endpoint's
// credential (capability-auth.md, content-upload.md).
type Purpose string

const (
	// PurposeEvent is a credential for delivering JSON-RPC messages to the
	// backend's event endpoint.
	PurposeEvent Purpose = "event"
	// PurposeUpload is a credential for posting attachment bytes to a
	// subscription's upload endpoint.
	PurposeUpload Purpose = "upload"
)

// Request describes the delivery that needs a credential. The call's
// cancellation and deadline travel in the context passed beside it.
type Request struct {
	// BackendID is the registration id of the backend.
	BackendID string
	// Backend is the backend's complete registration entry, or nil when the
	// caller has none (a transport used on its own). It is shared by the
	// requests of that backend and must not be modified.
	Backend *gen.Backend
	// Binding is the selected authentication binding: the backend's
	// authentication for PurposeEvent, the subscription's upload auth for
	// PurposeUpload. It is the zero value (neither arm set) when the
	// registration configures none for this endpoint; see HasBinding. It
	// shares its arm with Backend and must not be modified.
	Binding gen.Authentication
	// URL is the destination endpoint.
	URL string
	// Purpose is what the credential is for.
	Purpose Purpose
}

// HasBinding reports whether the registration configures an
// authentication binding for this endpoint. Without one, the endpoint is
// tried without a credential unless the provider supplies one under its own
// policy (for example a token it obtained through protected-resource
// discovery for exactly this resource).
func (r Request) HasBinding() bool { return r.Binding.Bearer != nil || r.Binding.Oauth != nil }

// Credential is a resolved bearer credential. Token is secret: it is sent in
// exactly one Authorization header and never logged or reported by the SDK;
// Credential's own formatting, JSON and slog renderings omit it. The zero
// Credential is no credential (anonymous delivery).
type Credential struct {
	// Token is the bearer token.
	Token string
	// Identity is an opaque, non-secret identifier of this credential (an
	// attempt id, a cache key, "env:NAME"), handed back in a Challenge so
	// that a rejection of a stale credential need not invalidate a newer
	// one. It must not contain the token or any other secret.
	Identity string
}

// Bearer returns a bearer credential with the given token and identity.
func Bearer(token, identity string) Credential { return Credential{Token: token, Identity: identity} }

// IsZero reports whether c carries no token (anonymous).
func (c Credential) IsZero() bool { return c.Token == "" }

// String returns the identity and whether a token is present, never the
// token.
func (c Credential) String() string {
	if c.Token == "" {
		return "auth.Credential{anonymous, identity: " + strconv.Quote(c.Identity) + "}"
	}
	return "auth.Credential{token: [redacted], identity: " + strconv.Quote(c.Identity) + "}"
}

// Format implements fmt.Formatter so that every verb (%v, %+v, %#v, %s,
// %q, %x) prints String, never the token.
func (c Credential) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// LogValue implements slog.LogValuer without the token.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.Bool("token", c.Token != ""), slog.String("identity", c.Identity))
}

// MarshalJSON encodes the identity and whether a token is present, never
// the token.
func (c Credential) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Token    bool   `json:"token"`
		Identity string `json:"identity"`
	}{c.Token != "", c.Identity})
}

// Challenge is an authentication rejection of a request: HTTP 401 from the
// endpoint of Request, with the response's status and headers, never its
// body. It carries the Identity of the credential that was sent, never a
// token.
type Challenge struct {
	// Status is the HTTP status (401).
	Status int
	// Header is a copy of the response headers, WWW-Authenticate included.
	// They are the peer's text: the SDK never reports or logs them.
	Header http.Header
	// Challenges are the parsed WWW-Authenticate challenges; nil when the
	// response has none or ParseWWWAuthenticate refused them.
	Challenges []SchemeChallenge
	// Attempt is the Identity of the credential the rejected request
	// carried; empty when it was sent without one.
	Attempt string
	// Replay reports whether the request will be replayed once if
	// Provider.Challenge returns nil. It is true only for a request (an
	// interception), not yet replayed, whose 401 carries a Bearer challenge,
	// and for an upload sent without a credential to an endpoint without an
	// upload binding, whatever the 401's challenges: that is the
	// protected-resource discovery case, and the provider consents to the
	// replay by returning nil once it has a credential for the endpoint.
	// Observations are never replayed, nor is an upload whose credential
	// was rejected.
	Replay bool
}

// Bearer returns the first Bearer challenge, and whether there is one.
func (c Challenge) Bearer() (SchemeChallenge, bool) {
	for _, s := range c.Challenges {
		if s.IsBearer() {
			return s, true
		}
	}
	return SchemeChallenge{}, false
}

// Provider resolves credentials for authenticated endpoints and handles
// their challenges. The harness borrows it: implementations own discovery,
// trust policy, consent, token exchange, refresh, caching and their own
// lifetime; the SDK owns only the endpoint isolation, applying the
// credential in one Authorization header and the bounded replay.
// Implementations must be safe for concurrent use and must honour ctx,
// which ends with the delivery's budget (the caller's context shortened by
// the subscription's timeout, or the upload's). Errors prevent delivery;
// their text is never reported.
type Provider interface {
	// Credential resolves the credential for req at delivery time. For a
	// request with a binding it must return a token or an error: a missing
	// secret or an unsupported mechanism fails the delivery, never by
	// falling back to another credential or to anonymous delivery. For a
	// request without one (HasBinding false) it may return the zero
	// Credential: the endpoint is then tried without a credential.
	Credential(ctx context.Context, req Request) (Credential, error)
	// Challenge is told of a 401 answer to a request sent with the
	// credential whose identity is ch.Attempt. When ch.Replay is true and
	// Challenge returns nil, the request is replayed once, within the same
	// budget, with the credential a new Credential call returns (it must
	// differ from the rejected one). Any error means no replay: the delivery
	// fails with the 401. When ch.Replay is false the result is ignored;
	// the call lets the provider drop a stale credential or prepare the next
	// delivery.
	Challenge(ctx context.Context, req Request, ch Challenge) error
}

// BindingChecker is implemented by a provider that knows at construction
// which bindings it can never resolve. The harness asks it for every
// configured binding and rejects the registration when it returns an
// error, instead of failing every delivery.
type BindingChecker interface {
	// CheckBinding returns an error (matching ErrUnsupported) for a binding
	// the provider cannot resolve.
	CheckBinding(b gen.Authentication) error
}

// Sentinel errors of providers. A provider's error reaches the harness's
// diagnostics only as its classification (errors.Is), never as text.
var (
	// ErrMissingSecret reports that the secret a binding configures (its
	// tokenEnv variable or tokenRef) has no value.
	ErrMissingSecret = errors.New("auth: configured secret missing")
	// ErrUnsupported reports a binding or mechanism the provider does not
	// support (for example an OAuth binding given to EnvironmentProvider).
	ErrUnsupported = errors.New("auth: authentication mechanism not supported")
	// ErrNoReplay is what a provider returns from Challenge when it has no
	// better credential for a replay.
	ErrNoReplay = errors.New("auth: no replay for this challenge")
)

// ValidToken reports whether a token can be sent as a bearer credential in
// a header: not empty, no control characters, no leading or trailing
// space.
func ValidToken(t string) bool {
	if t == "" || t[0] == ' ' || t[len(t)-1] == ' ' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
