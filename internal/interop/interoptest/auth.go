// Package interoptest holds test fixtures shared by the adapter suites'
// tests: the synthetic local trust of every authentication label
// (CONTRACT.md) and the process checks of a stdio run.
package interoptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/testpki"
)

// Synthetic local trust of the signed-token and mtls modes: a fixed
// fixture clock years before the machine's, test-only keys. The CANARY
// markers make a leaked secret easy to find.
const (
	FixtureNow   = 1700000000
	FixtureIss   = "https://issuer.interop.test"
	FixtureAud   = "https://ahp.interop.test/intercept"
	oauthKey     = "oauth-signing-key-interoptest-CANARY"
	workloadKey  = "workload-signing-key-interoptest-CANARY"
	clientSecret = "client-secret-interoptest-CANARY"
	clientID     = "interoptest-client"
)

// AuthModes are the five authentication labels of the contract.
var AuthModes = []string{interop.AuthNone, interop.AuthBearer, interop.AuthOAuth, interop.AuthMTLS, interop.AuthWorkload}

func signHS256(t *testing.T, key, purpose string) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": FixtureIss, "aud": FixtureAud, "purpose": purpose,
		"iat": FixtureNow, "exp": FixtureNow + 600, "sub": clientID}).SignedString([]byte(key))
	require.NoError(t, err)
	return tok
}

// AuthFixture returns the server and client auth objects of a mode and the
// secrets that must stay out of reports and logs: a static token (bearer),
// a local client-credentials issuer (oauth, closed at the test's end), a
// pre-signed assertion (workload), or a CA with server and client
// certificates on disk (mtls).
func AuthFixture(t *testing.T, mode, token string) (server, client map[string]any, secrets []string) {
	t.Helper()
	switch mode {
	case interop.AuthNone:
		a := map[string]any{"mode": mode}
		return a, a, nil
	case interop.AuthBearer:
		a := map[string]any{"mode": mode, "token": token}
		return a, a, []string{token}
	case interop.AuthOAuth:
		issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != clientID ||
				r.PostForm.Get("client_secret") != clientSecret || r.PostForm.Get("audience") != FixtureAud {
				http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": signHS256(t, oauthKey, "ahp-event"), "token_type": "Bearer", "expires_in": 600})
		}))
		t.Cleanup(issuer.Close)
		server = map[string]any{"mode": mode, "signingKey": oauthKey, "issuer": FixtureIss, "audience": FixtureAud, "purpose": "ahp-event", "clock": FixtureNow}
		client = map[string]any{"mode": mode, "tokenEndpoint": issuer.URL + "/token", "clientId": clientID, "clientSecret": clientSecret,
			"signingKey": oauthKey, "issuer": FixtureIss, "audience": FixtureAud, "purpose": "ahp-event", "clock": FixtureNow}
		return server, client, []string{oauthKey, clientSecret, "eyJ"}
	case interop.AuthWorkload:
		assertion := signHS256(t, workloadKey, interop.PurposeWorkload)
		server = map[string]any{"mode": mode, "signingKey": workloadKey, "issuer": FixtureIss, "audience": FixtureAud, "purpose": interop.PurposeWorkload, "clock": FixtureNow}
		client = map[string]any{"mode": mode, "assertion": assertion, "issuer": FixtureIss, "audience": FixtureAud, "purpose": interop.PurposeWorkload}
		return server, client, []string{workloadKey, assertion, "eyJ"}
	case interop.AuthMTLS:
		dir := t.TempDir()
		ca, err := testpki.NewCA("interoptest-ca", 10*time.Minute)
		require.NoError(t, err)
		caFile, err := ca.WriteFile(dir, "ca")
		require.NoError(t, err)
		srvLeaf, err := ca.Server("interoptest-server")
		require.NoError(t, err)
		srvCert, srvKey, err := srvLeaf.WriteFiles(dir, "server")
		require.NoError(t, err)
		cliLeaf, err := ca.Client("interoptest-client")
		require.NoError(t, err)
		cliCert, cliKey, err := cliLeaf.WriteFiles(dir, "client")
		require.NoError(t, err)
		return map[string]any{"mode": mode, "caFile": caFile, "certFile": srvCert, "keyFile": srvKey},
			map[string]any{"mode": mode, "caFile": caFile, "certFile": cliCert, "keyFile": cliKey},
			[]string{"PRIVATE KEY"}
	}
	t.Fatalf("no fixture for %s", mode)
	return nil, nil, nil
}

// Gone reports, within a bounded watchdog, that pid has ended: it no
// longer exists or is a zombie awaiting its reaper (under go run the
// server is a grandchild of the client, reaped by init).
func Gone(pid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // bounded watchdog polling, not ordering
	}
}
