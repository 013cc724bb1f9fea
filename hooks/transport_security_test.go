package hooks_test

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/testpki"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// mtlsBackend is a real HTTPS backend that requires a client certificate
// issued by its CA and records the verified principal of every request.
type mtlsBackend struct {
	srv *httptest.Server

	mu         sync.Mutex
	principals []string
}

func newMTLSBackend(t *testing.T, ca *testpki.CA) *mtlsBackend {
	t.Helper()
	leaf, err := ca.Server("backend")
	require.NoError(t, err)
	b := &mtlsBackend{}
	h := authedDeny()
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.principals = append(b.principals, r.TLS.VerifiedChains[0][0].Subject.CommonName)
		b.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	b.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{leaf.TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	b.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *mtlsBackend) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.principals...)
}

// TestMutualTLSThroughHTTPClient: workload identity by client certificate
// is the transport's, configured on the borrowed Config.HTTPClient: the
// backend verifies the host's certificate in the handshake, before any
// HTTP request, and authorizes the verified principal. Without a
// certificate, with one from another CA, or trusting another CA for the
// server, nothing reaches the backend and the delivery fails at send
// (fail-closed: a synthetic denial).
func TestMutualTLSThroughHTTPClient(t *testing.T) {
	ca, err := testpki.NewCA("deployment-ca", 10*time.Minute)
	require.NoError(t, err)
	other, err := testpki.NewCA("another-ca", 10*time.Minute)
	require.NoError(t, err)
	host, err := ca.Client("host-workload")
	require.NoError(t, err)
	stranger, err := other.Client("host-workload")
	require.NoError(t, err)
	be := newMTLSBackend(t, ca)
	reg := registration(backendJSON("com.example.mtls", httpTransport(be.srv.URL+"/ahp"), interceptSub(`"tool.before"`, 5000, "fail-closed")))

	run := func(t *testing.T, tlsCfg *tls.Config) *hooks.Result {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
		defer client.CloseIdleConnections()
		cfg := baseConfig()
		cfg.HTTPClient = client
		h, err := hooks.New(reg, cfg)
		require.NoError(t, err)
		defer h.Close()
		res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
		require.NoError(t, err)
		return res
	}

	res := run(t, &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{host.TLS}})
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Empty(t, res.Diagnostics)
	require.Equal(t, []string{"host-workload"}, be.seen(), "the backend saw the verified principal")

	for name, cfg := range map[string]*tls.Config{
		"no client certificate":          {RootCAs: ca.Pool()},
		"client certificate of other CA": {RootCAs: ca.Pool(), Certificates: []tls.Certificate{stranger.TLS}},
		"server not trusted":             {RootCAs: other.Pool(), Certificates: []tls.Certificate{host.TLS}},
	} {
		t.Run(name, func(t *testing.T) {
			res := run(t, cfg)
			require.Len(t, res.Diagnostics, 1)
			d := res.Diagnostics[0]
			require.Equal(t, transport.CodeTransport, d.Code)
			require.Equal(t, transport.StageSend, d.Stage)
			require.Equal(t, "connect", d.Reason)
			require.True(t, d.SyntheticDenial)
			require.Equal(t, gen.PermissionDeny, res.Permission)
		})
	}
	require.Len(t, be.seen(), 1, "no refused client reached the backend")
}

// TestCredentialsNeverFollowRedirects: a backend that answers a
// credential-bearing delivery with any redirect gets no second request,
// even through a borrowed client whose own policy follows redirects (left
// unchanged): the Authorization header is never forwarded, to another
// origin or anywhere, and the delivery fails with the 3xx status.
func TestCredentialsNeverFollowRedirects(t *testing.T) {
	const tokenEnv = "AHP_TEST_REDIRECT_TOKEN"
	t.Setenv(tokenEnv, canary)
	var mu sync.Mutex
	var elsewhere []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(target.Close)
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, where := range []string{"another origin", "same origin"} {
			t.Run(http.StatusText(code)+"/"+where, func(t *testing.T) {
				var authz []string
				var amu sync.Mutex
				var srv *httptest.Server
				srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					amu.Lock()
					authz = append(authz, r.Header.Get("Authorization"))
					amu.Unlock()
					if r.URL.Path == "/followed" {
						t.Errorf("a redirect was followed")
						w.WriteHeader(http.StatusNoContent)
						return
					}
					to := target.URL + "/stolen"
					if where == "same origin" {
						to = srv.URL + "/followed"
					}
					http.Redirect(w, r, to, code)
				}))
				defer srv.Close()
				follows := &http.Client{} // the default policy follows up to 10 redirects
				defer follows.CloseIdleConnections()
				reg := registration(authBackend("com.example.redirect", srv.URL+"/ahp", `{"type":"bearer","tokenEnv":"`+tokenEnv+`"}`,
					interceptSub(`"tool.before"`, 5000, "fail-open"), observeSub(`"turn.end"`)))
				logs := &capture{}
				cfg := baseConfig()
				cfg.HTTPClient = follows
				cfg.Logger = logs.logger()
				h, err := hooks.New(reg, cfg)
				require.NoError(t, err)
				defer h.Close()
				res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
				require.NoError(t, err)
				require.Len(t, res.Diagnostics, 1)
				require.Equal(t, "http_status", res.Diagnostics[0].Reason)
				require.Equal(t, code, res.Diagnostics[0].Status)
				obs, err := h.TurnEnd(ctxTimeout(t, 10*time.Second), turnEnd())
				require.NoError(t, err)
				require.Len(t, obs.Diagnostics, 1)
				require.Equal(t, code, obs.Diagnostics[0].Status)
				require.Nil(t, follows.CheckRedirect, "the borrowed client is not modified")

				amu.Lock()
				require.Equal(t, []string{"Bearer " + canary, "Bearer " + canary}, authz, "one interception, one observation, no follow-up")
				amu.Unlock()
				require.NotContains(t, logs.String(), canary)
			})
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, elsewhere, "nothing reached the redirect target")
}

// TestPlainHTTPOnlyForLoopback: plain http:// event endpoints are accepted
// for loopback hosts (localhost, 127.0.0.0/8, ::1) and refused elsewhere
// unless Config.AllowInsecureHTTP says the deployment controls the network.
// The check is made by New, before any I/O.
func TestPlainHTTPOnlyForLoopback(t *testing.T) {
	for _, c := range []struct {
		url      string
		loopback bool
	}{
		{"http://127.0.0.1:1/ahp", true},
		{"http://127.8.9.10:1/ahp", true},
		{"http://localhost:1/ahp", true},
		{"http://LOCALHOST:1/ahp", true},
		{"http://[::1]:1/ahp", true},
		{"http://10.0.0.1:1/ahp", false},
		{"http://192.168.1.1/ahp", false},
		{"http://policy.example.com/ahp", false},
		{"http://localhost.example.com/ahp", false},
		{"http://[::ffff:10.0.0.1]/ahp", false},
	} {
		t.Run(c.url, func(t *testing.T) {
			reg := registration(backendJSON("com.example.a", httpTransport(c.url), interceptSub(`"tool.before"`, 500, "fail-open")))
			h, err := hooks.New(reg, baseConfig())
			if c.loopback {
				require.NoError(t, err)
				require.NoError(t, h.Close())
			} else {
				var ve *hooks.ValidationError
				require.ErrorAs(t, err, &ve)
				require.Equal(t, "/hooks/0/transport/url", ve.Pointer)
				require.Equal(t, "https", ve.Keyword)
				require.False(t, strings.Contains(err.Error(), c.url), "the URL is not quoted")
			}
			cfg := baseConfig()
			cfg.AllowInsecureHTTP = true
			h, err = hooks.New(reg, cfg)
			require.NoError(t, err, "explicitly allowed")
			require.NoError(t, h.Close())
		})
	}
}
