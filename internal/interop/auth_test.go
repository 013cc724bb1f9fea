package interop

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// TestTokenVerifier: the oauth/workload server accepts exactly an HS256
// JWT with header {"alg":"HS256","typ":"JWT"}, the configured key, issuer,
// audience and purpose, and an exp after the fixed clock; anything else is
// rejected with one fixed error that quotes nothing.
func TestTokenVerifier(t *testing.T) {
	v, err := NewTokenVerifier(AuthConfig{Mode: AuthOAuth, SigningKey: oauthKey, Issuer: interopIss, Audience: interopAud, Purpose: oauthPurpose, Clock: json.Number(strconv.Itoa(fixtureNow))}, "")
	require.NoError(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	valid := signedToken(t, oauthKey, claimsFor(oauthPurpose))
	_, payloadAndSig, _ := strings.Cut(valid, ".")
	// withHeader re-signs the valid payload under another header.
	withHeader := func(h string) string {
		head := b64([]byte(h))
		payload, _, _ := strings.Cut(payloadAndSig, ".")
		sig, err := jwt.SigningMethodHS256.Sign(head+"."+payload, []byte(oauthKey))
		require.NoError(t, err)
		return head + "." + payload + "." + b64(sig)
	}
	// withPayload signs a raw payload under the valid header: claim sets that
	// jwt.MapClaims cannot spell (repeated or case-variant names).
	withPayload := func(p string) string {
		head, _, _ := strings.Cut(valid, ".")
		payload := b64([]byte(p))
		sig, err := jwt.SigningMethodHS256.Sign(head+"."+payload, []byte(oauthKey))
		require.NoError(t, err)
		return head + "." + payload + "." + b64(sig)
	}
	good := fmt.Sprintf(`"iss":%q,"aud":%q,"purpose":%q,"exp":%d`, interopIss, interopAud, oauthPurpose, fixtureNow+tokenTTL)
	edit := func(f func(jwt.MapClaims)) string {
		c := claimsFor(oauthPurpose)
		f(c)
		return signedToken(t, oauthKey, c)
	}
	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"valid", valid, true},
		{"audience in a list", edit(func(c jwt.MapClaims) { c["aud"] = []string{"other", interopAud} }), true},
		{"members swapped in the header", withHeader(`{"typ":"JWT","alg":"HS256"}`), true},
		{"another signing key", signedToken(t, workloadKey, claimsFor(oauthPurpose)), false},
		{"header with a kid", withHeader(`{"alg":"HS256","typ":"JWT","kid":"k1"}`), false},
		{"header repeating alg", withHeader(`{"alg":"HS256","alg":"HS256","typ":"JWT"}`), false},
		{"header without typ", withHeader(`{"alg":"HS256"}`), false},
		{"header typ at+jwt", withHeader(`{"alg":"HS256","typ":"at+jwt"}`), false},
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + strings.SplitN(valid, ".", 3)[1] + ".", false},
		{"alg HS384", func() string {
			s, err := jwt.NewWithClaims(jwt.SigningMethodHS384, claimsFor(oauthPurpose)).SignedString([]byte(oauthKey))
			require.NoError(t, err)
			return s
		}(), false},
		{"wrong issuer", edit(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }), false},
		{"wrong audience", edit(func(c jwt.MapClaims) { c["aud"] = "https://other.test" }), false},
		{"wrong purpose", edit(func(c jwt.MapClaims) { c["purpose"] = PurposeWorkload }), false},
		{"no purpose", edit(func(c jwt.MapClaims) { delete(c, "purpose") }), false},
		{"expired at the fixture clock", edit(func(c jwt.MapClaims) { c["exp"] = fixtureNow }), false},
		{"no exp", edit(func(c jwt.MapClaims) { delete(c, "exp") }), false},
		{"not yet valid", edit(func(c jwt.MapClaims) { c["nbf"] = fixtureNow + 60 }), false},
		{"issued in the future", edit(func(c jwt.MapClaims) { c["iat"] = fixtureNow + 60 }), false},
		{"raw valid payload", withPayload(`{` + good + `}`), true},
		{"expired exp overridden by Exp", withPayload(fmt.Sprintf(`{"iss":%q,"aud":%q,"purpose":%q,"exp":%d,"Exp":%d}`, interopIss, interopAud, oauthPurpose, fixtureNow-1, fixtureNow+tokenTTL)), false},
		{"claims only in upper case", withPayload(fmt.Sprintf(`{"ISS":%q,"AUD":%q,"PURPOSE":%q,"EXP":%d}`, interopIss, interopAud, oauthPurpose, fixtureNow+tokenTTL)), false},
		{"wrong purpose overridden by PURPOSE", withPayload(fmt.Sprintf(`{"iss":%q,"aud":%q,"purpose":"upload","PURPOSE":%q,"exp":%d}`, interopIss, interopAud, oauthPurpose, fixtureNow+tokenTTL)), false},
		{"repeated purpose", withPayload(`{` + good + `,"purpose":"upload"}`), false},
		{"repeated exp", withPayload(fmt.Sprintf(`{"exp":1,`+good[:strings.Index(good, `,"exp"`)]+`,"exp":%d}`, fixtureNow+tokenTTL)), false},
		{"exp as a string", withPayload(fmt.Sprintf(`{"iss":%q,"aud":%q,"purpose":%q,"exp":"%d"}`, interopIss, interopAud, oauthPurpose, fixtureNow+tokenTTL)), false},
		{"tampered payload", strings.SplitN(valid, ".", 3)[0] + "." + b64([]byte(`{"iss":"`+interopIss+`","aud":"`+interopAud+`","purpose":"`+oauthPurpose+`","exp":9999999999}`)) + "." + strings.SplitN(valid, ".", 3)[2], false},
		{"two segments", strings.Join(strings.SplitN(valid, ".", 3)[:2], "."), false},
		{"garbage", "not-a-jwt", false},
		{"oversized", valid + strings.Repeat("A", maxTokenBytes), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.Verify(c.token)
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrTokenRejected)
			require.Equal(t, ErrTokenRejected.Error(), err.Error(), "one fixed text")
		})
	}

	// Without a clock the system clock applies: the fixture's token has
	// long expired.
	live, err := NewTokenVerifier(AuthConfig{Mode: AuthOAuth, SigningKey: oauthKey, Issuer: interopIss, Audience: interopAud, Purpose: oauthPurpose}, "")
	require.NoError(t, err)
	require.ErrorIs(t, live.Verify(valid), ErrTokenRejected)
}

// post sends one AHP request to url with the given Authorization fields.
func post(t *testing.T, client *http.Client, url string, body []byte, authz ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for _, a := range authz {
		req.Header.Add("Authorization", a)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode, resp.Header
}

// serveMode serves the scripted server's handler for fx on loopback, over
// TLS with the adapter's own server configuration in the mtls mode, and
// returns it with a client holding the client side's credentials.
func serveMode(t *testing.T, fx modeFixture, wrap func(http.Handler) http.Handler) (*scriptServer, *httptest.Server, *http.Client, *ClientAuth, *ScenarioFile) {
	t.Helper()
	s, f := corpusServer(t, fx.server)
	var h http.Handler = s.ahpHandler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewUnstartedServer(h)
	if s.auth.TLS != nil {
		srv.TLS = s.auth.TLS
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	ca, err := NewClientAuth(fx.client, u)
	require.NoError(t, err)
	t.Cleanup(ca.Close)
	ht := http.DefaultTransport.(*http.Transport).Clone()
	ht.TLSClientConfig = ca.TLS
	client := &http.Client{Transport: ht}
	t.Cleanup(client.CloseIdleConnections)
	return s, srv, client, ca, f
}

// credentialFor resolves the client side's credential the way a delivery
// does, or "" when the mode has none.
func credentialFor(t *testing.T, ca *ClientAuth, url string) string {
	t.Helper()
	if ca.Provider == nil {
		return ""
	}
	req := auth.Request{BackendID: backendID, URL: url, Purpose: auth.PurposeEvent}
	if ca.Binding != nil {
		req.Binding = *ca.Binding
	}
	cred, err := ca.Provider.Credential(context.Background(), req)
	require.NoError(t, err)
	return cred.Token
}

// TestServerAuthenticatesBeforeDispatch: in every mode a request with two
// Authorization fields is refused with 400, and in every mode but none a
// missing or wrong credential gets 401 (a Bearer challenge for the token
// modes); only a correct credential reaches the scripted response. GET
// /capabilities is behind the same check.
func TestServerAuthenticatesBeforeDispatch(t *testing.T) {
	for _, mode := range allModes {
		t.Run(mode, func(t *testing.T) {
			fx := fixtureFor(t, mode)
			s, srv, client, ca, f := serveMode(t, fx, nil)
			url := srv.URL + "/intercept"
			body := f.Scenarios[0].Request
			good := credentialFor(t, ca, url)
			field := "Bearer " + good
			if good == "" {
				field = "Bearer anything"
			}

			status, _ := post(t, client, url, body, field, field)
			require.Equal(t, http.StatusBadRequest, status, "duplicate Authorization fields")
			status, _ = post(t, client, url, body, "Bearer a", "Basic b")
			require.Equal(t, http.StatusBadRequest, status, "duplicate Authorization fields")

			if mode != AuthNone && mode != AuthMTLS {
				status, h := post(t, client, url, body)
				require.Equal(t, http.StatusUnauthorized, status)
				require.Equal(t, BearerRealm, h.Get("WWW-Authenticate"))
				for _, bad := range []string{"Bearer wrong", "Basic " + good, "Bearer", "Bearer " + good + " extra", "bearer  " + good + "x"} {
					status, h = post(t, client, url, body, bad)
					require.Equal(t, http.StatusUnauthorized, status, bad)
					ch, ok := auth.BearerChallenge(h)
					require.True(t, ok)
					e, _ := ch.Param("error")
					require.Equal(t, "invalid_token", e)
				}
				req, err := http.NewRequest(http.MethodGet, srv.URL+"/capabilities", nil)
				require.NoError(t, err)
				resp, err := client.Do(req)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "discovery is authenticated too")
			}
			body2, err := s.receiptsJSON()
			require.NoError(t, err)
			require.JSONEq(t, `{"requests":[]}`, string(body2), "nothing refused was dispatched")

			authz := []string{}
			if good != "" {
				authz = append(authz, "bearer  "+good) // scheme case-insensitive, 1*SP
			}
			status, _ = post(t, client, url, body, authz...)
			require.Equal(t, http.StatusOK, status)
			body2, err = s.receiptsJSON()
			require.NoError(t, err)
			require.Contains(t, string(body2), `"auth":"`+mode+`"`)
			requireNoLeak(t, "receipts", string(body2), append(fx.secrets, good)...)
		})
	}
}

// TestServerMTLSHandshake: the mtls server requires a client certificate
// during the handshake and verifies it against caFile: no certificate, or
// one from another CA, never gets an HTTP exchange; the client in turn
// verifies the server against caFile alone.
func TestServerMTLSHandshake(t *testing.T) {
	fx := fixtureFor(t, AuthMTLS)
	s, srv, client, _, f := serveMode(t, fx, nil)
	url := srv.URL + "/intercept"
	status, _ := post(t, client, url, f.Scenarios[0].Request)
	require.Equal(t, http.StatusOK, status)

	pool := client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	other, _ := mtlsFixture(t, "another-ca")
	otherCert, err := tls.LoadX509KeyPair(other.client.CertFile, other.client.KeyFile)
	require.NoError(t, err)
	for name, cfg := range map[string]*tls.Config{
		"no client certificate":     {RootCAs: pool},
		"certificate of another CA": {RootCAs: pool, Certificates: []tls.Certificate{otherCert}},
	} {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(f.Scenarios[0].Request))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		require.Error(t, err, name)
		c.CloseIdleConnections()
	}
	// A client that trusts only another CA refuses the server.
	otherPool := tlsPool(t, other.client.CAFile)
	cliCert, err := tls.LoadX509KeyPair(fx.client.CertFile, fx.client.KeyFile)
	require.NoError(t, err)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: otherPool, Certificates: []tls.Certificate{cliCert}}}}
	_, err = c.Post(url, "application/json", bytes.NewReader(f.Scenarios[0].Request))
	require.Error(t, err, "the server is verified against the CA")
	c.CloseIdleConnections()

	body, err := s.receiptsJSON()
	require.NoError(t, err)
	var got struct {
		Requests []receipt `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Len(t, got.Requests, 1, "only the verified client was dispatched")
}

func tlsPool(t *testing.T, caFile string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	require.NoError(t, err)
	p := x509.NewCertPool()
	require.True(t, p.AppendCertsFromPEM(pem))
	return p
}

// attempt is one AHP request as the recording front saw it.
type attempt struct {
	method, path, authz string
	body                []byte
	status              int
}

// front records every request to the scripted server and can answer some
// itself with 401 and a challenge, as a resource server that revoked a
// token would.
type front struct {
	next http.Handler
	// revoke reports whether to refuse this request (n counts the POSTs to
	// /intercept so far, this one included).
	revoke    func(r *http.Request, n int) bool
	challenge string

	mu   sync.Mutex
	seen []attempt
	n    int
}

func (fr *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	fr.mu.Lock()
	if r.Method == http.MethodPost {
		fr.n++
	}
	n := fr.n
	fr.mu.Unlock()
	a := attempt{method: r.Method, path: r.URL.Path, authz: r.Header.Get("Authorization"), body: body, status: http.StatusOK}
	if fr.revoke != nil && fr.revoke(r, n) {
		a.status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", fr.challenge)
		w.WriteHeader(http.StatusUnauthorized)
	} else {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		fr.next.ServeHTTP(rec, r)
		a.status = rec.status
	}
	fr.mu.Lock()
	fr.seen = append(fr.seen, a)
	fr.mu.Unlock()
}

func (fr *front) attempts() []attempt {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return append([]attempt(nil), fr.seen...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// runInProcess runs the client on the corpus against endpoint and returns
// its error, the report and the client's log.
func runInProcess(t *testing.T, ctx context.Context, endpoint string, a AuthConfig) (error, []byte, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := ClientConfig{Transport: TransportHTTP, Endpoint: endpoint, ScenarioFile: corpusAbs(t), ReportFile: filepath.Join(dir, "report.json"), Auth: a}
	var logs lockedBuffer
	err := RunClient(ctx, &cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	rep, rerr := os.ReadFile(cfg.ReportFile)
	require.NoError(t, rerr)
	return err, rep, logs.String()
}

// TestOAuthReplayOnce: the resource server revokes the first token while
// the run is under way. The interception it refuses with a Bearer
// challenge is replayed exactly once, with the same bytes (so the same
// JSON-RPC id) and a freshly issued token; every other row is sent once;
// all rows pass. A row whose replay is refused too is not replayed again
// and fails.
func TestOAuthReplayOnce(t *testing.T) {
	fx := fixtureFor(t, AuthOAuth)
	var fr *front
	_, srv, _, _, f := serveMode(t, fx, func(h http.Handler) http.Handler {
		fr = &front{next: h, challenge: BearerRealm + `, error="invalid_token"`}
		return fr
	})
	first := func() string { return fx.issuer.granted()[0].issued }
	fr.revoke = func(r *http.Request, n int) bool {
		return r.Method == http.MethodPost && n == 1 && r.Header.Get("Authorization") == "Bearer "+first()
	}
	err, rep, logs := runInProcess(t, context.Background(), srv.URL+"/intercept", fx.client)
	require.NoError(t, err, logs)
	verifyReport(t, f, rep)

	grants := fx.issuer.granted()
	require.Len(t, grants, 2, "the revoked token, then one fresh token for the rest of the run")
	posts := map[string][]attempt{}
	var order []string
	for _, a := range fr.attempts() {
		if a.method != http.MethodPost {
			continue
		}
		env, err := jsonrpc.Classify(a.body)
		require.NoError(t, err)
		id := env.ID.String()
		if posts[id] == nil {
			order = append(order, id)
		}
		posts[id] = append(posts[id], a)
	}
	require.Len(t, posts, len(f.Scenarios))
	replayed := posts[order[0]]
	require.Len(t, replayed, 2, "replayed exactly once")
	require.Equal(t, http.StatusUnauthorized, replayed[0].status)
	require.Equal(t, "Bearer "+grants[0].issued, replayed[0].authz)
	require.Equal(t, http.StatusOK, replayed[1].status)
	require.Equal(t, "Bearer "+grants[1].issued, replayed[1].authz)
	require.Equal(t, replayed[0].body, replayed[1].body, "the replay is the same bytes")
	for _, id := range order[1:] {
		require.Len(t, posts[id], 1, id)
		require.Equal(t, "Bearer "+grants[1].issued, posts[id][0].authz)
	}
	requireNoLeak(t, "report", string(rep), append(fx.secrets, grants[0].issued, grants[1].issued)...)
	requireNoLeak(t, "client log", logs, append(fx.secrets, grants[0].issued, grants[1].issued)...)

	t.Run("bounded", func(t *testing.T) {
		fx := fixtureFor(t, AuthOAuth)
		var fr *front
		_, srv, _, _, f := serveMode(t, fx, func(h http.Handler) http.Handler {
			fr = &front{next: h, challenge: BearerRealm + `, error="invalid_token"`}
			return fr
		})
		fr.revoke = func(r *http.Request, n int) bool { return r.Method == http.MethodPost && n <= 2 }
		err, rep, _ := runInProcess(t, context.Background(), srv.URL+"/intercept", fx.client)
		require.Error(t, err, "one row failed")
		var r report
		require.NoError(t, json.Unmarshal(rep, &r))
		require.Equal(t, statusFailed, r.Results[0].Status)
		require.Contains(t, r.Results[0].Error, "status 401")
		for _, row := range r.Results[1:] {
			require.Equal(t, statusPassed, row.Status, row.ID)
		}
		n := 0
		for _, a := range fr.attempts() {
			if a.method == http.MethodPost && bytes.Contains(a.body, []byte(`"id":"`+f.Scenarios[0].ID+`"`)) {
				n++
			}
		}
		require.Equal(t, 2, n, "the first row: sent, replayed once, never again")
		require.Len(t, fx.issuer.granted(), 3, "each rejected token was dropped")
	})
}

// TestDiscoveryReplayOnce: a Bearer 401 to GET /capabilities is answered
// with one retry under a fresh token.
func TestDiscoveryReplayOnce(t *testing.T) {
	fx := fixtureFor(t, AuthOAuth)
	var fr *front
	_, srv, _, _, f := serveMode(t, fx, func(h http.Handler) http.Handler {
		fr = &front{next: h, challenge: BearerRealm + `, error="invalid_token"`}
		return fr
	})
	var once sync.Once
	fr.revoke = func(r *http.Request, _ int) bool {
		hit := false
		if r.Method == http.MethodGet {
			once.Do(func() { hit = true })
		}
		return hit
	}
	err, rep, logs := runInProcess(t, context.Background(), srv.URL+"/intercept", fx.client)
	require.NoError(t, err, logs)
	verifyReport(t, f, rep)
	gets := 0
	for _, a := range fr.attempts() {
		if a.method == http.MethodGet {
			gets++
		}
	}
	require.Equal(t, 2, gets)
	require.Len(t, fx.issuer.granted(), 2)
}

// TestAuthCanaries: a canary in a challenge header, in the token
// endpoint's error body, and as every configured secret never reaches the
// report, the client's log or an error.
func TestAuthCanaries(t *testing.T) {
	const headerCanary = "CANARY-challenge-header-8e2b"
	const bodyCanary = "CANARY-token-error-body-61c0"
	t.Run("challenge header", func(t *testing.T) {
		fx := fixtureFor(t, AuthOAuth)
		var fr *front
		_, srv, _, _, _ := serveMode(t, fx, func(h http.Handler) http.Handler {
			fr = &front{next: h, challenge: `Bearer realm="` + headerCanary + `", error="invalid_token", error_description="` + headerCanary + `"`}
			return fr
		})
		fr.revoke = func(*http.Request, int) bool { return true }
		err, rep, logs := runInProcess(t, context.Background(), srv.URL+"/intercept", fx.client)
		require.Error(t, err)
		for _, text := range []string{err.Error(), string(rep), logs} {
			requireNoLeak(t, "output", text, append(fx.secrets, headerCanary)...)
		}
	})
	t.Run("token endpoint error body", func(t *testing.T) {
		fx := fixtureFor(t, AuthOAuth)
		fx.issuer.refuse = true
		fx.issuer.refuseBody = `{"error":"invalid_client","error_description":"` + bodyCanary + `"}`
		_, srv, _, _, _ := serveMode(t, fx, nil)
		err, rep, logs := runInProcess(t, context.Background(), srv.URL+"/intercept", fx.client)
		require.Error(t, err)
		for _, text := range []string{err.Error(), string(rep), logs} {
			requireNoLeak(t, "output", text, append(fx.secrets, bodyCanary)...)
		}
		p, err := newOAuthProvider(fx.client)
		require.NoError(t, err)
		defer p.owned.CloseIdleConnections()
		_, err = p.Credential(context.Background(), auth.Request{Binding: gen.Authentication{Oauth: &gen.AuthenticationOauth{}}})
		require.ErrorIs(t, err, errTokenEndpoint)
		require.NotContains(t, err.Error(), bodyCanary)
	})
}

// TestOAuthProviderCancelledWithCall: the token request runs under the
// delivery's context; cancelling the call ends it at the token endpoint,
// and nothing is sent to the AHP endpoint.
func TestOAuthProviderCancelledWithCall(t *testing.T) {
	fx := fixtureFor(t, AuthOAuth)
	fx.issuer.block = true
	var fr *front
	_, srv, _, ca, f := serveMode(t, fx, func(h http.Handler) http.Handler { fr = &front{next: h}; return fr })
	tr := transport.NewHTTP(srv.URL+"/intercept", transport.HTTPOptions{BackendID: backendID, Authentication: ca.Binding, Credentials: ca.Provider})
	defer tr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tr.Exchange(ctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodIntercept, ID: jsonrpc.StringID(f.Scenarios[0].ID), Body: f.Scenarios[0].Request})
		done <- err
	}()
	<-fx.issuer.entered
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.StageAuth, te.Stage)
	select {
	case <-fx.issuer.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the token request was not cancelled")
	}
	require.Empty(t, fr.attempts(), "nothing reached the endpoint")
}
