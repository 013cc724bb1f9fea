package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// gated is one request an authenticated backend received.
type gated struct {
	method string
	id     string
	auth   []string
	body   string
}

// authGate is a real HTTP backend: it serves h to requests carrying
// "Bearer "+good and answers anything else 401 with its challenge and a
// body holding the canary, recording every request.
type authGate struct {
	good      string
	challenge string
	h         http.Handler

	mu   sync.Mutex
	reqs []gated
}

func (g *authGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &env)
	g.mu.Lock()
	g.reqs = append(g.reqs, gated{method: env.Method, id: string(env.ID), auth: r.Header.Values("Authorization"), body: string(body)})
	good := g.good
	g.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+good {
		w.Header().Set("WWW-Authenticate", g.challenge)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "unauthorized "+canary)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.h.ServeHTTP(w, r)
}

func (g *authGate) seen() []gated {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]gated(nil), g.reqs...)
}

func (g *authGate) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

// rotatingProvider is a host's provider: it hands out its current token;
// told that the current one was rejected, it moves to the next (as a
// refresh would), and it lets an interception be replayed when it has one.
type rotatingProvider struct {
	tokens []string

	mu         sync.Mutex
	cur        int
	requests   []auth.Request
	challenges []auth.Challenge
}

func (p *rotatingProvider) Credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	return auth.Bearer(p.tokens[p.cur], fmt.Sprintf("gen-%d", p.cur)), nil
}

func (p *rotatingProvider) Challenge(ctx context.Context, req auth.Request, ch auth.Challenge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.challenges = append(p.challenges, ch)
	if ch.Attempt != fmt.Sprintf("gen-%d", p.cur) {
		return nil // a stale rejection: the newer credential stands
	}
	if p.cur+1 == len(p.tokens) {
		return auth.ErrNoReplay
	}
	p.cur++
	return nil
}

func (p *rotatingProvider) told() ([]auth.Request, []auth.Challenge) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]auth.Request(nil), p.requests...), append([]auth.Challenge(nil), p.challenges...)
}

const bearerInvalid = `Bearer realm="x", error="invalid_token"`

func authBackend(id, url, auth string, subs ...string) string {
	return fmt.Sprintf(`{"id":%q,"transport":%s,"authentication":%s,"subscriptions":[%s]}`, id, httpTransport(url), auth, strings.Join(subs, ","))
}

func authedDeny() *server.Handler {
	return &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{Effects: []gen.Effect{server.Deny("denied after authentication")}}, nil
		},
		Observe: func(context.Context, *gen.ObserveNotification) error { return nil },
	}
}

func turnEnd() hooks.TurnEndInput {
	return hooks.TurnEndInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"}, Outcome: gen.OutcomeCompleted, ContinuationCount: "0"}
}

// TestAuthReplayOnlyInterception: an interception answered 401 with a
// Bearer challenge is replayed exactly once, same JSON-RPC id and bytes,
// and its response settles the call; an observation answered 401 is not
// replayed (its provider is told, and the next observation uses the
// refreshed credential).
func TestAuthReplayOnlyInterception(t *testing.T) {
	g := &authGate{good: "fresh", challenge: bearerInvalid, h: authedDeny()}
	srv := g.start(t)
	reg := registration(authBackend("com.example.guard", srv.URL+"/ahp", `{"type":"bearer","tokenRef":"vault:guard"}`,
		interceptSub(`"tool.before"`, 5000, "fail-open"), observeSub(`"turn.end"`)))

	t.Run("interception", func(t *testing.T) {
		p := &rotatingProvider{tokens: []string{"stale", "fresh"}}
		cfg := baseConfig()
		cfg.AuthProvider = p
		h, err := hooks.New(reg, cfg)
		require.NoError(t, err)
		defer h.Close()
		before := len(g.seen())
		res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
		require.NoError(t, err)
		require.Equal(t, gen.PermissionDeny, res.Permission)
		require.Equal(t, "denied after authentication", res.DenyReason(), "the replayed request's answer settles the call")
		require.Empty(t, res.Diagnostics)
		got := g.seen()[before:]
		require.Len(t, got, 2)
		require.Equal(t, "hooks/intercept", got[0].method)
		require.Equal(t, got[0].id, got[1].id, "same request identity")
		require.Equal(t, got[0].body, got[1].body, "same serialized body")
		require.Equal(t, []string{"Bearer stale"}, got[0].auth)
		require.Equal(t, []string{"Bearer fresh"}, got[1].auth)
		reqs, chs := p.told()
		require.Len(t, chs, 1)
		require.True(t, chs[0].Replay)
		require.Equal(t, "gen-0", chs[0].Attempt)
		require.Len(t, reqs, 2)
		require.Equal(t, auth.PurposeEvent, reqs[0].Purpose)
		require.Equal(t, srv.URL+"/ahp", reqs[0].URL)
		require.Equal(t, "com.example.guard", reqs[0].BackendID)
		require.NotNil(t, reqs[0].Backend)
		require.Equal(t, gen.ReverseDNSName("com.example.guard"), reqs[0].Backend.ID, "the complete backend entry")
		require.Len(t, reqs[0].Backend.Subscriptions, 2)
		require.Equal(t, "vault:guard", *reqs[0].Binding.Bearer.TokenRef)
		require.Same(t, reqs[0].Backend.Authentication.Bearer, reqs[0].Binding.Bearer, "the binding is the entry's")
	})

	t.Run("observation", func(t *testing.T) {
		p := &rotatingProvider{tokens: []string{"stale", "fresh"}}
		cfg := baseConfig()
		cfg.AuthProvider = p
		h, err := hooks.New(reg, cfg)
		require.NoError(t, err)
		defer h.Close()
		before := len(g.seen())
		res, err := h.TurnEnd(ctxTimeout(t, 10*time.Second), turnEnd())
		require.NoError(t, err)
		require.Len(t, res.Diagnostics, 1)
		d := res.Diagnostics[0]
		require.Equal(t, gen.ModeObserve, d.Mode)
		require.Equal(t, transport.CodeTransport, d.Code)
		require.Equal(t, http.StatusUnauthorized, d.Status)
		got := g.seen()[before:]
		require.Len(t, got, 1, "an observation is never replayed")
		require.Equal(t, "hooks/observe", got[0].method)
		_, chs := p.told()
		require.Len(t, chs, 1)
		require.False(t, chs[0].Replay)

		res, err = h.TurnEnd(ctxTimeout(t, 10*time.Second), turnEnd())
		require.NoError(t, err)
		require.Empty(t, res.Diagnostics, "the next observation carries the refreshed credential")
		got = g.seen()[before:]
		require.Len(t, got, 2)
		require.Equal(t, []string{"Bearer fresh"}, got[1].auth)
	})
}

// TestAuthCanary: a token in the environment, a secret in the challenge
// header and in the 401 body never reach a diagnostic, an error or a log
// line; a missing configured secret fails closed before anything is sent,
// with a diagnostic that says so.
func TestAuthCanary(t *testing.T) {
	t.Setenv("AHP_TEST_AUTH_TOKEN", canary)
	g := &authGate{good: "something-else", challenge: `Bearer realm="` + canary + `", error="invalid_token", error_description="` + canary + `"`, h: authedDeny()}
	srv := g.start(t)
	m := &authGate{good: "unused", challenge: bearerInvalid, h: authedDeny()}
	msrv := m.start(t)
	reg := registration(
		authBackend("com.example.rejects", srv.URL, `{"type":"bearer","tokenEnv":"AHP_TEST_AUTH_TOKEN"}`, interceptSub(`"tool.before"`, 5000, "fail-open"), observeSub(`"turn.end"`)),
		authBackend("com.example.missing", msrv.URL, `{"type":"bearer","tokenEnv":"AHP_TEST_AUTH_MISSING"}`, interceptSub(`"tool.before"`, 5000, "fail-closed")),
	)
	logs := &capture{}
	cfg := baseConfig()
	cfg.Logger = logs.logger()
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	defer h.Close()
	res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
	require.NoError(t, err)
	obs, err := h.TurnEnd(ctxTimeout(t, 10*time.Second), turnEnd())
	require.NoError(t, err)

	require.Equal(t, []string{"Bearer " + canary}, g.seen()[0].auth, "tokenEnv is resolved at delivery")
	require.Len(t, g.seen(), 2, "one interception and one observation, neither replayed by the default provider")
	require.Empty(t, m.seen(), "nothing is sent without the configured secret")
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.True(t, res.SyntheticDenial)
	byBackend := map[string]hooks.Diagnostic{}
	for _, d := range res.Diagnostics {
		byBackend[d.BackendID] = d
	}
	require.Equal(t, http.StatusUnauthorized, byBackend["com.example.rejects"].Status)
	missing := byBackend["com.example.missing"]
	require.Equal(t, transport.CodeTransport, missing.Code)
	require.Equal(t, transport.StageAuth, missing.Stage)
	require.Equal(t, "credential_missing", missing.Reason)
	require.True(t, missing.SyntheticDenial)

	all := fmt.Sprintf("%+v %#v %v %+v %s", res.Diagnostics, res.Diagnostics, obs.Diagnostics, res, res.DenyReason()) + logs.String()
	require.NotContains(t, all, canary)
	require.Contains(t, logs.String(), "credential_missing", "the failure is logged, as a code")
}

// TestAuthTokenRefAtDelivery: the default provider with a tokenRef
// resolver resolves at every delivery, with the delivery's context, never
// when the Hooks is built.
func TestAuthTokenRefAtDelivery(t *testing.T) {
	g := &authGate{good: "v1", challenge: bearerInvalid, h: authedDeny()}
	srv := g.start(t)
	type key struct{}
	var mu sync.Mutex
	var refs []string
	var sawValue []any
	secret := "v1"
	p := auth.EnvironmentProvider{ResolveRef: func(ctx context.Context, ref string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		refs = append(refs, ref)
		sawValue = append(sawValue, ctx.Value(key{}))
		return secret, nil
	}}
	cfg := baseConfig()
	cfg.AuthProvider = p
	h, err := hooks.New(registration(authBackend("com.example.a", srv.URL, `{"type":"bearer","tokenRef":"vault:a"}`, interceptSub(`"tool.before"`, 5000, "fail-closed"))), cfg)
	require.NoError(t, err)
	defer h.Close()
	mu.Lock()
	require.Empty(t, refs, "nothing is resolved at construction")
	mu.Unlock()

	ctx := context.WithValue(ctxTimeout(t, 10*time.Second), key{}, "call")
	res, err := h.ToolBefore(ctx, toolInput())
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	mu.Lock()
	secret = "v2"
	g.mu.Lock()
	g.good = "v2"
	g.mu.Unlock()
	mu.Unlock()
	res, err = h.ToolBefore(ctx, toolInput())
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	mu.Lock()
	require.Equal(t, []string{"vault:a", "vault:a"}, refs)
	require.Equal(t, []any{"call", "call"}, sawValue, "resolved under the call's context")
	mu.Unlock()
	got := g.seen()
	require.Equal(t, []string{"Bearer v1"}, got[0].auth)
	require.Equal(t, []string{"Bearer v2"}, got[1].auth, "a rotated secret is picked up at the next delivery")
}

// hostOAuth is a host provider for OAuth bindings (it implements no
// BindingChecker, so New accepts every binding).
type hostOAuth struct{}

func (hostOAuth) Credential(context.Context, auth.Request) (auth.Credential, error) {
	return auth.Bearer("t", "oauth-1"), nil
}
func (hostOAuth) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return auth.ErrNoReplay
}

// TestAuthLoadChecks: bindings the provider can never resolve are rejected
// by New, event and upload bindings alike.
func TestAuthLoadChecks(t *testing.T) {
	u := httpTransport("http://127.0.0.1:1/x")
	oauthJSON := `{"type":"oauth","issuer":"https://issuer.example","resource":"https://rs.example","clientId":"c","flow":"client_credentials"}`
	withAuth := func(a string) []byte {
		return registration(`{"id":"com.example.a","transport":` + u + `,"authentication":` + a + `,"subscriptions":[` + interceptSub(`"tool.before"`, 500, "fail-open") + `]}`)
	}
	withUpload := func(a string) []byte {
		return registration(backendJSON("com.example.a", u, `{"events":["tool.before"],"mode":"intercept","timeoutMs":500,"failurePolicy":"fail-open","content":{"default":"body"},"upload":{"endpoint":"https://up.example/u","timeoutMs":1000,"maxBytes":1024,"auth":`+a+`}}`))
	}
	for _, tc := range []struct {
		name     string
		reg      []byte
		provider auth.Provider
		pointer  string // empty: accepted
	}{
		{name: "tokenRef, default provider", reg: withAuth(`{"type":"bearer","tokenRef":"vault:a"}`), pointer: "/hooks/0/authentication"},
		{name: "oauth, default provider", reg: withAuth(oauthJSON), pointer: "/hooks/0/authentication"},
		{name: "upload oauth, default provider", reg: withUpload(oauthJSON), pointer: "/hooks/0/subscriptions/0/upload/auth"},
		{name: "upload tokenRef, default provider", reg: withUpload(`{"type":"bearer","tokenRef":"vault:u"}`), pointer: "/hooks/0/subscriptions/0/upload/auth"},
		{name: "tokenRef, environment provider without resolver", reg: withAuth(`{"type":"bearer","tokenRef":"vault:a"}`), provider: auth.EnvironmentProvider{}, pointer: "/hooks/0/authentication"},
		{name: "tokenEnv, default provider", reg: withAuth(`{"type":"bearer","tokenEnv":"AHP_X"}`)},
		{name: "upload tokenEnv, default provider", reg: withUpload(`{"type":"bearer","tokenEnv":"AHP_X"}`)},
		{name: "tokenRef, environment provider with resolver", reg: withAuth(`{"type":"bearer","tokenRef":"vault:a"}`),
			provider: auth.EnvironmentProvider{ResolveRef: func(context.Context, string) (string, error) { return "", nil }}},
		{name: "oauth, host provider", reg: withAuth(oauthJSON), provider: hostOAuth{}},
		{name: "upload oauth, host provider", reg: withUpload(oauthJSON), provider: hostOAuth{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.AuthProvider = tc.provider
			h, err := hooks.New(tc.reg, cfg)
			if tc.pointer == "" {
				require.NoError(t, err)
				require.NoError(t, h.Close())
				return
			}
			require.ErrorIs(t, err, hooks.ErrInvalidRegistration)
			var ve *hooks.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, tc.pointer, ve.Pointer)
			require.Equal(t, "credentials", ve.Keyword)
		})
	}
}

// waitingProvider blocks in Credential until its context ends.
type waitingProvider struct {
	entered chan struct{}
	ended   chan error
}

func (p *waitingProvider) Credential(ctx context.Context, _ auth.Request) (auth.Credential, error) {
	close(p.entered)
	<-ctx.Done()
	p.ended <- ctx.Err()
	return auth.Credential{}, ctx.Err()
}
func (p *waitingProvider) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return auth.ErrNoReplay
}

// TestAuthProviderCancelledWithCall: cancelling the call cancels the
// provider's wait; the call returns the cancellation and nothing is sent.
func TestAuthProviderCancelledWithCall(t *testing.T) {
	g := &authGate{good: "x", challenge: bearerInvalid, h: authedDeny()}
	srv := g.start(t)
	p := &waitingProvider{entered: make(chan struct{}), ended: make(chan error, 1)}
	cfg := baseConfig()
	cfg.AuthProvider = p
	h, err := hooks.New(registration(authBackend("com.example.a", srv.URL, `{"type":"bearer","tokenRef":"vault:a"}`, interceptSub(`"tool.before"`, 30000, "fail-open"))), cfg)
	require.NoError(t, err)
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	type out struct {
		res *hooks.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := h.ToolBefore(ctx, toolInput())
		done <- out{res, err}
	}()
	<-p.entered
	cancel()
	require.ErrorIs(t, <-p.ended, context.Canceled, "the provider's context ends with the call")
	got := <-done
	require.ErrorIs(t, got.err, context.Canceled)
	require.True(t, got.res.Interrupted)
	require.NotEqual(t, gen.PermissionAllow, got.res.Permission)
	require.Empty(t, g.seen())
}
