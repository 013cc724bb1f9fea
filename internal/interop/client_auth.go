package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// Token references of the config-supplied secrets. The adapter's provider
// resolves exactly these names and nothing else.
const (
	refBearerToken = "interop-config:token"
	refAssertion   = "interop-config:assertion"
)

// ClientAuth is the client's endpoint authentication for one run: the
// registration binding the SDK transport gets, the provider that resolves
// it at delivery time, and the TLS configuration of the borrowed HTTP
// client (mtls).
type ClientAuth struct {
	// Binding is the registration's authentication binding (nil for none
	// and mtls).
	Binding *gen.Authentication
	// Provider resolves Binding at delivery time (nil for none and mtls).
	Provider auth.Provider
	// TLS is the HTTP client's TLS configuration (mtls only).
	TLS   *tls.Config
	oauth *oauthProvider // set in the oauth mode, for cleanup
}

// NewClientAuth builds the authentication of an HTTP client run for
// endpoint. Plain http is accepted only for loopback endpoints (and token
// endpoints); mtls needs https.
func NewClientAuth(a AuthConfig, endpoint *url.URL) (*ClientAuth, error) {
	if endpoint.Scheme == "http" && !transport.IsLoopbackHost(endpoint.Hostname()) {
		return nil, fmt.Errorf("%w: plain http endpoints must be loopback", ErrUsage)
	}
	ca := &ClientAuth{}
	switch a.Mode {
	case AuthNone:
	case AuthBearer:
		if a.Token == "" {
			return nil, fmt.Errorf("%w: bearer auth needs auth.token", ErrUsage)
		}
		ca.Binding, ca.Provider = bearerRefBinding(refBearerToken), configToken(refBearerToken, a.Token)
	case AuthWorkload:
		// A workload platform's assertion reaches AHP as a portable bearer
		// credential supplied by the provider (capability-auth.md,
		// "Deployment-specific authentication").
		if a.Assertion == "" {
			return nil, fmt.Errorf("%w: workload auth needs auth.assertion", ErrUsage)
		}
		ca.Binding, ca.Provider = bearerRefBinding(refAssertion), configToken(refAssertion, a.Assertion)
	case AuthOAuth:
		p, err := newOAuthProvider(a)
		if err != nil {
			return nil, err
		}
		ca.Binding = &gen.Authentication{Oauth: &gen.AuthenticationOauth{
			Type: "oauth", Issuer: a.Issuer, Resource: a.Audience, ClientID: a.ClientID,
			Flow: gen.AuthenticationFlow("client_credentials"),
		}}
		ca.Provider, ca.oauth = p, p
	case AuthMTLS:
		if endpoint.Scheme != "https" {
			return nil, fmt.Errorf("%w: mtls needs an https endpoint", ErrUsage)
		}
		pool, cert, err := LoadTLSFiles(a)
		if err != nil {
			return nil, err
		}
		// The server is verified against caFile alone, by the endpoint's
		// host name or address; the client certificate is presented in the
		// handshake. No HTTP credential is involved.
		ca.TLS = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}}
	default:
		return nil, fmt.Errorf("%w: unknown auth mode", ErrUsage)
	}
	return ca, nil
}

// Close releases the provider's idle token-endpoint connections. It is
// safe on a nil ClientAuth.
func (ca *ClientAuth) Close() {
	if ca != nil && ca.oauth != nil {
		ca.oauth.owned.CloseIdleConnections()
	}
}

func bearerRefBinding(ref string) *gen.Authentication {
	return &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenRef: &ref}}
}

// configToken resolves the binding's tokenRef to the configured bearer
// token, at delivery time; the transport sends it in exactly one
// Authorization header.
func configToken(ref, token string) auth.Provider {
	return auth.EnvironmentProvider{ResolveRef: func(_ context.Context, r string) (string, error) {
		if r != ref {
			return "", auth.ErrMissingSecret
		}
		return token, nil
	}}
}

// Errors of the oauth provider. Their text is fixed: the token endpoint's
// answer (which may hold secrets) is never kept.
var (
	// errTokenEndpoint is a token request that failed: refused,
	// unreachable, redirected, or answered with something that is not a
	// bearer access token.
	errTokenEndpoint = errors.New("oauth: token request failed")
	// errForeignToken is an issued token that is not for this resource:
	// wrong issuer, audience or purpose, bad signature, or expired.
	errForeignToken = errors.New("oauth: issued token is not valid for this resource")
)

// oauthProvider is the client's auth.Provider in the oauth mode: the
// OAuth 2.0 client-credentials grant (RFC 6749 section 4.4) against the
// configured token endpoint through golang.org/x/oauth2/clientcredentials,
// client_id and client_secret posted in the form with the audience, never
// following redirects (the client secret must not reach another
// resource). It caches the token until it expires or the endpoint rejects
// it; a rejection of the current token drops it, so the replay that the
// transport makes after a Bearer challenge gets a freshly issued one.
// Fetches run under the delivery's context: cancelling the call cancels
// the token request.
type oauthProvider struct {
	cc     clientcredentials.Config
	client *http.Client
	owned  *http.Transport
	verify *TokenVerifier // when the client is given the signing key

	sem chan struct{} // serializes fetches and guards the fields below
	tok *oauth2.Token
	id  string
	n   int
}

func newOAuthProvider(a AuthConfig) (*oauthProvider, error) {
	if a.TokenEndpoint == "" || a.ClientID == "" || a.ClientSecret == "" || a.Audience == "" {
		return nil, fmt.Errorf("%w: oauth auth needs tokenEndpoint, clientId, clientSecret and audience", ErrUsage)
	}
	te, err := url.Parse(a.TokenEndpoint)
	if err != nil || te.Host == "" || te.User != nil || (te.Scheme != "https" && te.Scheme != "http") ||
		(te.Scheme == "http" && !transport.IsLoopbackHost(te.Hostname())) {
		return nil, fmt.Errorf("%w: auth.tokenEndpoint must be an https URL, or http on loopback", ErrUsage)
	}
	p := &oauthProvider{
		cc: clientcredentials.Config{
			ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenEndpoint,
			EndpointParams: url.Values{"audience": {a.Audience}},
			AuthStyle:      oauth2.AuthStyleInParams,
		},
		owned: http.DefaultTransport.(*http.Transport).Clone(),
		sem:   make(chan struct{}, 1),
	}
	p.client = &http.Client{Transport: p.owned, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if a.SigningKey != "" {
		if p.verify, err = NewTokenVerifier(a, ""); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *oauthProvider) lock(ctx context.Context) error {
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *oauthProvider) unlock() { <-p.sem }

// Credential implements auth.Provider for the run's oauth binding.
func (p *oauthProvider) Credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	if req.Binding.Oauth == nil {
		return auth.Credential{}, auth.ErrUnsupported
	}
	if err := p.lock(ctx); err != nil {
		return auth.Credential{}, err
	}
	defer p.unlock()
	if p.tok != nil && p.tok.Valid() {
		return auth.Bearer(p.tok.AccessToken, p.id), nil
	}
	tok, err := p.cc.Token(context.WithValue(ctx, oauth2.HTTPClient, p.client))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return auth.Credential{}, cerr
		}
		return auth.Credential{}, errTokenEndpoint // the library's text quotes the endpoint's body
	}
	if !strings.EqualFold(tok.TokenType, "bearer") || !auth.ValidToken(tok.AccessToken) {
		return auth.Credential{}, errTokenEndpoint
	}
	if p.verify != nil && p.verify.Verify(tok.AccessToken) != nil {
		return auth.Credential{}, errForeignToken
	}
	p.n++
	p.tok, p.id = tok, "oauth-token-"+strconv.Itoa(p.n)
	return auth.Bearer(tok.AccessToken, p.id), nil
}

// Challenge implements auth.Provider: a rejection of the current token
// drops it; a rejection of an older one leaves the newer one in place.
// Either way an eligible interception is replayed once with whatever
// Credential returns next (a new token, which the transport requires to
// differ from the rejected one).
func (p *oauthProvider) Challenge(ctx context.Context, _ auth.Request, ch auth.Challenge) error {
	if err := p.lock(ctx); err != nil {
		return err
	}
	defer p.unlock()
	if ch.Attempt != "" && ch.Attempt == p.id {
		p.tok = nil
	}
	if !ch.Replay {
		return auth.ErrNoReplay
	}
	return nil
}
