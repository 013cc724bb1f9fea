package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

const authCanary = "CANARY-transport-auth-91c2"

// seen is one request as an authenticated backend received it.
type seen struct {
	auth []string // every Authorization field value
	body string
}

// authBackend is a real HTTP backend that accepts only "Bearer "+good and
// answers anything else 401 with challenge (when set) and a body holding
// the canary.
type authBackend struct {
	good      string
	challenge string

	mu   sync.Mutex
	reqs []seen
}

func (b *authBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.reqs = append(b.reqs, seen{auth: r.Header.Values("Authorization"), body: string(body)})
	b.mu.Unlock()
	if b.good == "" || r.Header.Get("Authorization") != "Bearer "+b.good {
		if b.challenge != "" {
			w.Header().Set("WWW-Authenticate", b.challenge)
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "denied: "+authCanary)
		return
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &env)
	if env.Method == "hooks/observe" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, env.ID)
}

func (b *authBackend) seen() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.reqs...)
}

func (b *authBackend) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return srv
}

// hostProvider is a host's own provider: it hands out tokens in order, one
// per Credential call (the last one repeats), with identities attempt-1,
// attempt-2, ..., and records what it is told.
type hostProvider struct {
	tokens       []string
	challengeErr error

	mu         sync.Mutex
	requests   []auth.Request
	challenges []auth.Challenge
}

func (p *hostProvider) Credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	n := len(p.requests)
	tok := p.tokens[min(n, len(p.tokens))-1]
	if tok == "" {
		return auth.Credential{}, nil
	}
	return auth.Bearer(tok, fmt.Sprintf("attempt-%d", n)), nil
}

func (p *hostProvider) Challenge(ctx context.Context, req auth.Request, ch auth.Challenge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.challenges = append(p.challenges, ch)
	return p.challengeErr
}

func (p *hostProvider) told() ([]auth.Request, []auth.Challenge) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]auth.Request(nil), p.requests...), append([]auth.Challenge(nil), p.challenges...)
}

const invalidToken = `Bearer realm="x", error="invalid_token"`

func bearerRef(ref string) *gen.Authentication {
	return &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenRef: &ref}}
}

func requireStatus(t *testing.T, err error, status int) {
	t.Helper()
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, transport.ErrStatus)
	require.Equal(t, status, te.Status)
	require.Equal(t, transport.CodeTransport, te.Code)
}

// TestHTTPReplayAfterBearerChallenge: a request answered 401 with a Bearer
// challenge is replayed exactly once, with the same bytes (so the same
// JSON-RPC id) and the provider's new credential; the provider is told the
// status, the parsed challenge and the rejected attempt's identity.
func TestHTTPReplayAfterBearerChallenge(t *testing.T) {
	be := &authBackend{good: "fresh", challenge: invalidToken}
	srv := be.start(t)
	p := &hostProvider{tokens: []string{"stale", "fresh"}}
	backend := &gen.Backend{ID: "com.example.a"}
	binding := bearerRef("vault:a")
	tr := transport.NewHTTP(srv.URL+"/hook", transport.HTTPOptions{BackendID: "com.example.a", Backend: backend, Authentication: binding, Credentials: p})
	defer tr.Close()
	msg := req("r-1")
	out, err := tr.Exchange(context.Background(), msg)
	require.NoError(t, err)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":"r-1","result":{}}`, string(out))

	got := be.seen()
	require.Len(t, got, 2, "one replay")
	require.Equal(t, []string{"Bearer stale"}, got[0].auth)
	require.Equal(t, []string{"Bearer fresh"}, got[1].auth, "exactly one Authorization field")
	require.Equal(t, string(msg.Body), got[0].body)
	require.Equal(t, got[0].body, got[1].body, "the same serialized request, id included")

	reqs, chs := p.told()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.Equal(t, auth.Request{BackendID: "com.example.a", Backend: backend, Binding: *binding, URL: srv.URL + "/hook", Purpose: auth.PurposeEvent}, r)
	}
	require.Len(t, chs, 1)
	ch := chs[0]
	require.Equal(t, http.StatusUnauthorized, ch.Status)
	require.Equal(t, "attempt-1", ch.Attempt)
	require.True(t, ch.Replay)
	require.Equal(t, invalidToken, ch.Header.Get("WWW-Authenticate"))
	b, ok := ch.Bearer()
	require.True(t, ok)
	v, _ := b.Param("error")
	require.Equal(t, "invalid_token", v)
	require.NotContains(t, fmt.Sprintf("%#v", ch), "stale", "the challenge carries no token")
	require.NotContains(t, fmt.Sprintf("%#v", ch), authCanary, "nor the response body")
}

// TestHTTPNoReplay: observations, other schemes, a second 401, a provider
// that declines, a provider with nothing better and malformed or absent
// challenges all end with the 401 after at most the one replay.
func TestHTTPNoReplay(t *testing.T) {
	for _, tc := range []struct {
		name         string
		challenge    string
		good         string
		tokens       []string
		challengeErr error
		notify       bool
		wantReqs     int
		wantReplay   []bool // Challenge.Replay of each call
	}{
		{name: "observation", challenge: invalidToken, good: "fresh", tokens: []string{"stale", "fresh"}, notify: true, wantReqs: 1, wantReplay: []bool{false}},
		{name: "basic challenge", challenge: `Basic realm="x"`, good: "fresh", tokens: []string{"stale", "fresh"}, wantReqs: 1, wantReplay: []bool{false}},
		{name: "no challenge", good: "fresh", tokens: []string{"stale", "fresh"}, wantReqs: 1, wantReplay: []bool{false}},
		{name: "malformed challenge", challenge: `Bearer realm="x`, good: "fresh", tokens: []string{"stale", "fresh"}, wantReqs: 1, wantReplay: []bool{false}},
		{name: "second 401", challenge: invalidToken, good: "never", tokens: []string{"stale", "fresh"}, wantReqs: 2, wantReplay: []bool{true, false}},
		{name: "provider declines", challenge: invalidToken, good: "fresh", tokens: []string{"stale", "fresh"}, challengeErr: auth.ErrNoReplay, wantReqs: 1, wantReplay: []bool{true}},
		{name: "same token again", challenge: invalidToken, good: "fresh", tokens: []string{"stale"}, wantReqs: 1, wantReplay: []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &authBackend{good: tc.good, challenge: tc.challenge}
			srv := be.start(t)
			p := &hostProvider{tokens: tc.tokens, challengeErr: tc.challengeErr}
			tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Authentication: bearerRef("r"), Credentials: p})
			defer tr.Close()
			var err error
			if tc.notify {
				err = tr.Notify(context.Background(), transport.Message{Method: "hooks/observe", Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)})
			} else {
				_, err = tr.Exchange(context.Background(), req("r-1"))
			}
			requireStatus(t, err, http.StatusUnauthorized)
			require.NotContains(t, err.Error(), authCanary)
			got := be.seen()
			require.Len(t, got, tc.wantReqs)
			_, chs := p.told()
			var replay []bool
			for i, ch := range chs {
				replay = append(replay, ch.Replay)
				require.Equal(t, fmt.Sprintf("attempt-%d", i+1), ch.Attempt)
			}
			require.Equal(t, tc.wantReplay, replay)
		})
	}
}

// TestHTTPDiscoveryReplay: without a binding the endpoint is tried without
// a credential; a host provider may answer its Bearer challenge (the OAuth
// discovery case) and have the request replayed once with a token. The
// default provider never does: the 401 stands, anonymously.
func TestHTTPDiscoveryReplay(t *testing.T) {
	be := &authBackend{good: "discovered", challenge: `Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource"`}
	srv := be.start(t)
	p := &hostProvider{tokens: []string{"", "discovered"}}
	tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Credentials: p})
	defer tr.Close()
	_, err := tr.Exchange(context.Background(), req("r-1"))
	require.NoError(t, err)
	got := be.seen()
	require.Len(t, got, 2)
	require.Empty(t, got[0].auth, "first attempt without a credential")
	require.Equal(t, []string{"Bearer discovered"}, got[1].auth)
	reqs, chs := p.told()
	require.False(t, reqs[0].HasBinding())
	require.Len(t, chs, 1)
	require.Empty(t, chs[0].Attempt, "the rejected attempt had no credential")
	b, _ := chs[0].Bearer()
	md, _ := b.Param("resource_metadata")
	require.Equal(t, "https://rs.example/.well-known/oauth-protected-resource", md)

	be2 := &authBackend{good: "discovered", challenge: invalidToken}
	srv2 := be2.start(t)
	def := transport.NewHTTP(srv2.URL, transport.HTTPOptions{})
	defer def.Close()
	_, err = def.Exchange(context.Background(), req("r-1"))
	requireStatus(t, err, http.StatusUnauthorized)
	require.Len(t, be2.seen(), 1)
	require.Empty(t, be2.seen()[0].auth)
}

// TestHTTPCredentialFailures: a configured binding that cannot be resolved
// is never sent, with a diagnostic reason that names the failure and
// carries no secret.
func TestHTTPCredentialFailures(t *testing.T) {
	be := &authBackend{good: "x"}
	srv := be.start(t)
	missing := "AHP_TRANSPORT_AUTH_MISSING"
	for _, tc := range []struct {
		name    string
		binding *gen.Authentication
		creds   transport.CredentialProvider
		reason  string
	}{
		{name: "missing env", binding: &gen.Authentication{Bearer: &gen.AuthenticationBearer{TokenEnv: &missing}}, reason: "credential_missing"},
		{name: "tokenRef without resolver", binding: bearerRef("vault:x"), reason: "auth_unsupported"},
		{name: "oauth with the default provider", binding: &gen.Authentication{Oauth: &gen.AuthenticationOauth{Issuer: "https://i.example", Resource: "https://r.example", ClientID: "c"}}, reason: "auth_unsupported"},
		{name: "resolver fails", binding: bearerRef("vault:x"), creds: auth.EnvironmentProvider{ResolveRef: func(context.Context, string) (string, error) {
			return "", fmt.Errorf("vault: %s", authCanary)
		}}, reason: "credential_missing"},
		{name: "provider answers a binding anonymously", binding: bearerRef("vault:x"), creds: &hostProvider{tokens: []string{""}}, reason: "credential_missing"},
		{name: "token unusable in a header", binding: bearerRef("vault:x"), creds: &hostProvider{tokens: []string{"a\r\nX-Injected: " + authCanary}}, reason: "credential_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Authentication: tc.binding, Credentials: tc.creds})
			defer tr.Close()
			_, err := tr.Exchange(context.Background(), req("r-1"))
			var te *transport.Error
			require.ErrorAs(t, err, &te)
			require.ErrorIs(t, err, transport.ErrCredential)
			require.Equal(t, transport.StageAuth, te.Stage)
			require.Equal(t, tc.reason, te.Reason)
			require.NotContains(t, fmt.Sprintf("%v %#v", err, te), authCanary)
			require.Empty(t, be.seen(), "nothing is sent without the configured credential")
		})
	}
}

// TestHTTPAuthCanary: a token from the environment, a challenge header and
// a 401 body that all hold the canary leave no trace in the error.
func TestHTTPAuthCanary(t *testing.T) {
	t.Setenv("AHP_TRANSPORT_AUTH_TOKEN", authCanary)
	be := &authBackend{good: "other", challenge: `Bearer realm="` + authCanary + `", error="invalid_token"`}
	srv := be.start(t)
	env := "AHP_TRANSPORT_AUTH_TOKEN"
	tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{TokenEnv: &env}}})
	defer tr.Close()
	_, err := tr.Exchange(context.Background(), req("r-1"))
	requireStatus(t, err, http.StatusUnauthorized)
	require.Equal(t, []string{"Bearer " + authCanary}, be.seen()[0].auth, "resolved at delivery time")
	require.Len(t, be.seen(), 1, "the default provider never replays")
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), authCanary)
}

// blockingProvider blocks in Credential (or, after its first credential,
// in Challenge) until its context ends, and reports that context's error.
type blockingProvider struct {
	inChallenge bool
	entered     chan struct{}
	ended       chan error
}

func (p *blockingProvider) wait(ctx context.Context) error {
	close(p.entered)
	<-ctx.Done()
	p.ended <- ctx.Err()
	return ctx.Err()
}

func (p *blockingProvider) Credential(ctx context.Context, _ auth.Request) (auth.Credential, error) {
	if p.inChallenge {
		return auth.Bearer("stale", "attempt-1"), nil
	}
	return auth.Credential{}, p.wait(ctx)
}

func (p *blockingProvider) Challenge(ctx context.Context, _ auth.Request, _ auth.Challenge) error {
	return p.wait(ctx)
}

// TestHTTPProviderContext: the provider's context is the delivery's: when
// the call is cancelled, or its deadline passes, the provider's wait ends,
// the delivery fails at the auth stage and nothing more is sent.
func TestHTTPProviderContext(t *testing.T) {
	for _, inChallenge := range []bool{false, true} {
		for _, deadline := range []bool{false, true} {
			t.Run(fmt.Sprintf("challenge=%v/deadline=%v", inChallenge, deadline), func(t *testing.T) {
				be := &authBackend{good: "fresh", challenge: invalidToken}
				srv := be.start(t)
				p := &blockingProvider{inChallenge: inChallenge, entered: make(chan struct{}), ended: make(chan error, 1)}
				tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Authentication: bearerRef("r"), Credentials: p})
				defer tr.Close()
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				dctx, dcancel := context.WithCancel(ctx)
				defer dcancel()
				if deadline {
					var c context.CancelFunc
					dctx, c = context.WithDeadline(ctx, deadlineSoon())
					defer c()
				}
				done := make(chan error, 1)
				go func() {
					_, err := tr.Exchange(dctx, req("r-1"))
					done <- err
				}()
				<-p.entered
				if !deadline {
					cancel(nil)
				}
				perr := <-p.ended
				err := <-done
				var te *transport.Error
				require.ErrorAs(t, err, &te)
				require.Equal(t, transport.StageAuth, te.Stage)
				if deadline {
					require.ErrorIs(t, perr, context.DeadlineExceeded)
					require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
				} else {
					require.ErrorIs(t, perr, context.Canceled)
					require.Equal(t, transport.CodeCancelled, te.Code)
				}
				want := 0
				if inChallenge {
					want = 1
				}
				require.Len(t, be.seen(), want, "no delivery after the provider's context ended")
			})
		}
	}
}

func deadlineSoon() time.Time { return time.Now().Add(50 * time.Millisecond) }
