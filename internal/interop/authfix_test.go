package interop

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/testpki"
)

// The fixed fixture clock of the signed-token modes. It lies years before
// the machine's clock, so a token that passes proves the fixed clock was
// used, not the system's.
const (
	fixtureNow = 1700000000
	tokenTTL   = 600
)

// Test-only secrets. Each is a distinct canary that must never appear in a
// report, a log line or an error.
const (
	oauthKey     = "oauth-signing-key-CANARY-5e1f"
	workloadKey  = "workload-signing-key-CANARY-77ab"
	clientSecret = "client-secret-CANARY-0c9d"
	interopIss   = "https://issuer.interop.test"
	interopAud   = "https://ahp.interop.test/intercept"
	oauthPurpose = "ahp-event"
)

// signedToken signs claims as an HS256 JWT with header
// {"alg":"HS256","typ":"JWT"}.
func signedToken(t testing.TB, key string, claims jwt.MapClaims) string {
	t.Helper()
	s, err := sign(key, claims)
	require.NoError(t, err)
	return s
}

func sign(key string, claims jwt.MapClaims) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
}

// claimsFor is a valid claim set under the fixture clock.
func claimsFor(purpose string) jwt.MapClaims {
	return jwt.MapClaims{"iss": interopIss, "aud": interopAud, "purpose": purpose, "iat": fixtureNow, "exp": fixtureNow + tokenTTL, "sub": "interop-client"}
}

// grant is one token request the issuer received.
type grant struct {
	form       map[string][]string
	authHeader []string
	issued     string
}

// tokenIssuer is the local synthetic issuer of the oauth mode: a real
// loopback token endpoint for the client-credentials grant that answers a
// correct form (grant_type, client_id, client_secret, audience) with an
// HS256 JWT for the configured issuer, audience and purpose.
type tokenIssuer struct {
	srv *httptest.Server
	// refuse makes every grant fail with a 401 whose body is refuseBody.
	refuse     bool
	refuseBody string
	// block holds every grant until its request context ends, after
	// announcing it on entered; cancelled is closed when it ended.
	block     bool
	entered   chan struct{}
	cancelled chan struct{}

	mu     sync.Mutex
	grants []grant
}

func newTokenIssuer(t *testing.T) *tokenIssuer {
	ti := &tokenIssuer{entered: make(chan struct{}, 16), cancelled: make(chan struct{})}
	ti.srv = httptest.NewServer(ti)
	t.Cleanup(ti.srv.Close)
	return ti
}

func (ti *tokenIssuer) url() string { return ti.srv.URL + "/token" }

func (ti *tokenIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/token" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		http.Error(w, "not a token request", http.StatusBadRequest)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	ti.mu.Lock()
	n := len(ti.grants) + 1
	g := grant{form: r.PostForm, authHeader: r.Header.Values("Authorization")}
	ti.mu.Unlock()
	if ti.block {
		ti.entered <- struct{}{}
		<-r.Context().Done()
		close(ti.cancelled)
		return
	}
	ok := r.PostForm.Get("grant_type") == "client_credentials" && r.PostForm.Get("client_id") == "interop-client" &&
		subtle.ConstantTimeCompare([]byte(r.PostForm.Get("client_secret")), []byte(clientSecret)) == 1 &&
		r.PostForm.Get("audience") == interopAud && len(g.authHeader) == 0
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok || ti.refuse {
		w.WriteHeader(http.StatusUnauthorized)
		body := ti.refuseBody
		if body == "" {
			body = `{"error":"invalid_client"}`
		}
		_, _ = io.WriteString(w, body)
		ti.record(g)
		return
	}
	claims := claimsFor(oauthPurpose)
	claims["jti"] = strconv.Itoa(n) // every issued token differs
	var err error
	if g.issued, err = sign(oauthKey, claims); err != nil {
		http.Error(w, "signing failed", http.StatusInternalServerError)
		return
	}
	ti.record(g)
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": g.issued, "token_type": "Bearer", "expires_in": tokenTTL})
}

func (ti *tokenIssuer) record(g grant) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.grants = append(ti.grants, g)
}

func (ti *tokenIssuer) granted() []grant {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]grant(nil), ti.grants...)
}

// modeFixture is one auth label's server and client auth objects, as the
// runner passes them, with every secret of the pair.
type modeFixture struct {
	server, client AuthConfig
	secrets        []string
	issuer         *tokenIssuer
}

// fixtureFor builds the auth objects of mode: static tokens, a local
// token issuer (oauth), a pre-signed assertion (workload), or a CA, a
// server and a client certificate written to a temporary directory (mtls).
func fixtureFor(t *testing.T, mode string) modeFixture {
	t.Helper()
	switch mode {
	case AuthNone:
		return modeFixture{server: AuthConfig{Mode: AuthNone}, client: AuthConfig{Mode: AuthNone}}
	case AuthBearer:
		const token = "tok-7f3a9c1e-CANARY-interop-only"
		a := AuthConfig{Mode: AuthBearer, Token: token}
		return modeFixture{server: a, client: a, secrets: []string{token}}
	case AuthOAuth:
		ti := newTokenIssuer(t)
		signed := AuthConfig{Mode: AuthOAuth, SigningKey: oauthKey, Issuer: interopIss, Audience: interopAud, Purpose: oauthPurpose, Clock: json.Number(strconv.Itoa(fixtureNow))}
		cli := signed
		cli.TokenEndpoint, cli.ClientID, cli.ClientSecret = ti.url(), "interop-client", clientSecret
		return modeFixture{server: signed, client: cli, issuer: ti, secrets: []string{oauthKey, clientSecret, "eyJ"}}
	case AuthWorkload:
		assertion := signedToken(t, workloadKey, claimsFor(PurposeWorkload))
		srv := AuthConfig{Mode: AuthWorkload, SigningKey: workloadKey, Issuer: interopIss, Audience: interopAud, Purpose: PurposeWorkload, Clock: json.Number(strconv.Itoa(fixtureNow))}
		return modeFixture{server: srv, client: AuthConfig{Mode: AuthWorkload, Assertion: assertion, Issuer: interopIss, Audience: interopAud, Purpose: PurposeWorkload},
			secrets: []string{workloadKey, assertion, "eyJ"}}
	case AuthMTLS:
		f, _ := mtlsFixture(t, "interop-ca")
		return f
	}
	t.Fatalf("no fixture for %s", mode)
	return modeFixture{}
}

// mtlsFixture writes a CA, a server certificate for loopback and a client
// certificate to a temporary directory, all ECDSA P-256 valid for ten
// minutes, and returns the auth objects and the CA.
func mtlsFixture(t *testing.T, caName string) (modeFixture, *testpki.CA) {
	t.Helper()
	dir := t.TempDir()
	ca, err := testpki.NewCA(caName, 10*time.Minute)
	require.NoError(t, err)
	caFile, err := ca.WriteFile(dir, "ca")
	require.NoError(t, err)
	srvLeaf, err := ca.Server("interop-server")
	require.NoError(t, err)
	srvCert, srvKey, err := srvLeaf.WriteFiles(dir, "server")
	require.NoError(t, err)
	cliLeaf, err := ca.Client("interop-client")
	require.NoError(t, err)
	cliCert, cliKey, err := cliLeaf.WriteFiles(dir, "client")
	require.NoError(t, err)
	return modeFixture{
		server:  AuthConfig{Mode: AuthMTLS, CAFile: caFile, CertFile: srvCert, KeyFile: srvKey},
		client:  AuthConfig{Mode: AuthMTLS, CAFile: caFile, CertFile: cliCert, KeyFile: cliKey},
		secrets: []string{"PRIVATE KEY", string(srvLeaf.KeyPEM[40:90]), string(cliLeaf.KeyPEM[40:90])},
	}, ca
}

// allModes are the contract's auth labels.
var allModes = []string{AuthNone, AuthBearer, AuthOAuth, AuthMTLS, AuthWorkload}
