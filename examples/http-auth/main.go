// Command http-auth is a harness whose backend endpoints are authenticated
// three independent ways, all on real loopback HTTPS:
//
//   - the transport: mutual TLS, the host's client certificate presented
//     through the borrowed Config.HTTPClient's TLS configuration (workload
//     identity is transport configuration, not an AHP binding);
//   - the event endpoint: an oauth binding, for which the host's own
//     auth.Provider runs the OAuth client-credentials grant
//     (golang.org/x/oauth2/clientcredentials) against a local authorization
//     server and caches the resource-bound token;
//   - the upload endpoint: its own bearer binding with tokenEnv, resolved
//     from the environment at delivery time and never the event token.
//
// Halfway through, the authorization server rotates its signing key: the
// cached token is refused with a Bearer challenge, the provider drops it,
// and the SDK replays that interception once, same JSON-RPC id and bytes,
// with a fresh token.
//
//	go run ./examples/http-auth
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/agenthooks/agenthooks-go/examples/internal/fsstore"
	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/testpki"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/server"
)

// The names of the deployment-managed secrets. In production they come
// from the host's secret manager; main fills them with random values when
// they are unset so that the example runs on its own.
const (
	clientSecretEnv = "AHP_EXAMPLE_CLIENT_SECRET" // the OAuth client's secret, named by clientSecretRef
	uploadTokenEnv  = "AHP_EXAMPLE_UPLOAD_TOKEN"  // the upload endpoint's bearer token, named by tokenEnv
)

const clientID = "agent-host"

func main() {
	for _, name := range []string{clientSecretEnv, uploadTokenEnv} {
		if os.Getenv(name) == "" {
			_ = os.Setenv(name, randomSecret())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if _, err := run(ctx, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "http-auth:", err)
		os.Exit(1)
	}
}

func randomSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// summary is what happened, for the example's test.
type summary struct {
	// grants counts the tokens the authorization server issued.
	grants int
	// events are the requests the event endpoint received, in order.
	events []seenRequest
	// uploads are the Authorization fields the upload endpoint received.
	uploads []string
}

// seenRequest is one request the event endpoint received.
type seenRequest struct {
	authz  string
	body   []byte
	status int
}

func run(ctx context.Context, out io.Writer, log *slog.Logger) (*summary, error) {
	sum := &summary{}
	// One deployment CA: it signs the loopback server certificate and the
	// host's client certificate. Both expire within the hour.
	ca, err := testpki.NewCA("example deployment CA", time.Hour)
	if err != nil {
		return nil, err
	}
	serverCert, err := ca.Server("example servers")
	if err != nil {
		return nil, err
	}
	hostCert, err := ca.Client("agent-host workload")
	if err != nil {
		return nil, err
	}
	clientSecret, uploadToken := os.Getenv(clientSecretEnv), os.Getenv(uploadTokenEnv)
	if clientSecret == "" || uploadToken == "" {
		return nil, errors.New("set " + clientSecretEnv + " and " + uploadTokenEnv)
	}

	// The authorization server: HTTPS, the client-credentials grant.
	as := &authServer{clientID: clientID, secret: clientSecret, key: []byte(randomSecret())}
	asLn, err := listenTLS(&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{serverCert.TLS}})
	if err != nil {
		return nil, err
	}
	as.issuer = "https://" + asLn.Addr().String()
	stopAS := serve(asLn, as)
	defer stopAS()

	// The backend: HTTPS with a client certificate required in the
	// handshake; /ahp behind the OAuth bearer check, /upload behind its own
	// static token.
	beLn, err := listenTLS(&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{serverCert.TLS},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()})
	if err != nil {
		return nil, err
	}
	base := "https://" + beLn.Addr().String()
	eventURL, uploadURL := base+"/ahp", base+"/upload"
	storeDir, err := os.MkdirTemp("", "http-auth-uploads")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(storeDir)
	store, err := fsstore.New(storeDir)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	receiver := &server.UploadReceiver{
		Storage: store,
		Authorize: func(r *http.Request) (string, error) {
			authz := r.Header.Get("Authorization")
			mu.Lock()
			sum.uploads = append(sum.uploads, authz)
			mu.Unlock()
			if subtle.ConstantTimeCompare([]byte(authz), []byte("Bearer "+uploadToken)) != 1 || len(r.Header.Values("Authorization")) != 1 {
				return "", server.ErrUnauthenticated
			}
			return "agent-host", nil // the scope of the verified principal
		},
		Logger: log,
	}
	if err := receiver.Validate(); err != nil {
		return nil, err
	}
	policy := &server.Handler{Intercept: guard, Logger: log}
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", &bearerGate{as: as, audience: eventURL, next: policy, seen: func(s seenRequest) {
		mu.Lock()
		sum.events = append(sum.events, s)
		mu.Unlock()
	}})
	mux.Handle("/upload", receiver)
	stopBE := serve(beLn, mux)
	defer stopBE()

	registration := []byte(`{
	  "protocolVersion": "draft",
	  "hooks": [{
	    "id": "com.example.policy",
	    "transport": {"type": "http", "url": "` + eventURL + `"},
	    "authentication": {"type": "oauth", "issuer": "` + as.issuer + `", "resource": "` + eventURL + `",
	      "clientId": "` + clientID + `", "flow": "client_credentials", "clientSecretRef": "` + clientSecretEnv + `"},
	    "subscriptions": [{
	      "events": ["tool.before"], "mode": "intercept",
	      "timeoutMs": 5000, "failurePolicy": "fail-closed",
	      "content": {"default": "body"},
	      "upload": {"endpoint": "` + uploadURL + `", "timeoutMs": 5000, "maxBytes": 1048576,
	        "auth": {"type": "bearer", "tokenEnv": "` + uploadTokenEnv + `"}}
	    }]
	  }]
	}`)

	// The host's HTTP client carries its workload identity: the client
	// certificate, and the deployment CA as the only trust root for the
	// backend. The harness borrows it and never follows a redirect with it.
	hostClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		MinVersion: tls.VersionTLS12, RootCAs: ca.Pool(), Certificates: []tls.Certificate{hostCert.TLS},
	}}}
	defer hostClient.CloseIdleConnections()
	provider := &clientCredentials{
		// Trust policy: the one issuer this host accepts, its token
		// endpoint, and the client that reaches it (server verified against
		// the deployment CA, no redirects).
		issuers: map[string]string{as.issuer: as.issuer + "/token"},
		client: &http.Client{
			Transport:     &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ca.Pool()}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		secret: func(_ context.Context, ref string) (string, error) { return os.Getenv(ref), nil },
	}
	defer provider.client.CloseIdleConnections()

	h, err := hooks.New(registration, hooks.Config{
		Source:       "urn:example:http-auth",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
		HTTPClient:   hostClient,
		AuthProvider: provider,
		Logger:       log,
	})
	if err != nil {
		return nil, err
	}
	defer h.Close()

	call := func(command string) (*hooks.Result, error) {
		return h.ToolBefore(ctx, hooks.ToolBeforeInput{
			Name: "shell", Input: map[string]string{"command": command},
			Origin: gen.ExecutionEventToolOriginNative, CallID: "call-" + command[:2], Path: "native",
		}, hooks.WithInitialState(hooks.InitialState(gen.PermissionNone)))
	}
	res, err := call("ls -la")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "call 1: permission=%s diagnostics=%d tokens issued=%d\n", res.Permission, len(res.Diagnostics), as.issued())

	as.rotate() // the authorization server rotates its key: the cached token is now refused
	res, err = call("rm -rf /")
	if err != nil {
		return nil, err
	}
	mu.Lock()
	refused := 0
	for _, e := range sum.events {
		if e.status == http.StatusUnauthorized {
			refused++
		}
	}
	mu.Unlock()
	fmt.Fprintf(out, "call 2: permission=%s diagnostics=%d tokens issued=%d refused then replayed=%d\n", res.Permission, len(res.Diagnostics), as.issued(), refused)

	// The subscription's upload endpoint has its own binding: the uploader
	// asks the same provider with purpose upload and gets the tokenEnv
	// token, never the event endpoint's. (Until the harness uploads
	// attachments itself, the host calls runtime/content directly.)
	uploader, err := content.NewUploader(content.UploaderConfig{HTTPClient: hostClient, Credentials: provider})
	if err != nil {
		return nil, err
	}
	defer uploader.CloseIdleConnections()
	shot := []byte("\x89PNG\r\n\x1a\n example screenshot bytes")
	att, err := content.FromBytes("image/png", shot)
	if err != nil {
		return nil, err
	}
	defer att.Close()
	reg, err := gen.ParseRegistration(registration)
	if err != nil {
		return nil, err
	}
	backend := reg.Hooks[0]
	conf, err := uploader.Upload(ctx, att, content.Destination{BackendID: string(backend.ID), Upload: *backend.Subscriptions[0].Intercept.Upload})
	if err != nil {
		return nil, err
	}
	rc, _, err := receiver.Open(ctx, "agent-host", conf.Reference.Ref)
	if err != nil {
		return nil, err
	}
	stored, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "upload: verified receipt=%t stored bytes match=%t\n", conf.Receipt.SHA256 == sha256Hex(shot), bytes.Equal(stored, shot))

	sum.grants = as.issued()
	mu.Lock()
	defer mu.Unlock()
	return sum, nil
}

// guard denies destructive shell commands and allows the rest.
func guard(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
	var in struct {
		Command string `json:"command"`
	}
	if tb := req.Params.Event.ToolBefore; tb != nil && json.Unmarshal(tb.Tool.Input, &in) == nil && strings.Contains(in.Command, "rm -rf") {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("destructive command")}}, nil
	}
	return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
}

// authServer is a minimal OAuth authorization server: the
// client-credentials grant (RFC 6749 section 4.4) with the client
// authenticated by HTTP Basic, issuing HS256 JWT access tokens bound to the
// requested resource (RFC 8707) for five minutes.
type authServer struct {
	issuer, clientID, secret string

	mu    sync.Mutex
	key   []byte
	count int
}

func (as *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || r.URL.Path != "/token" || r.ParseForm() != nil {
		http.Error(w, "not a token request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok || id != as.clientID || subtle.ConstantTimeCompare([]byte(secret), []byte(as.secret)) != 1 {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
		return
	}
	resource := r.PostForm.Get("resource")
	if r.PostForm.Get("grant_type") != "client_credentials" || resource == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_request"}`)
		return
	}
	as.mu.Lock()
	key := as.key
	as.count++
	n := as.count
	as.mu.Unlock()
	now := time.Now()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer: as.issuer, Subject: id, Audience: jwt.ClaimStrings{resource}, ID: fmt.Sprint(n),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}).SignedString(key)
	if err != nil {
		http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 300})
}

// rotate replaces the signing key: tokens signed before no longer verify.
func (as *authServer) rotate() {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.key = []byte(randomSecret())
}

func (as *authServer) currentKey() []byte {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.key
}

func (as *authServer) issued() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.count
}

// bearerGate protects the event endpoint: exactly one Authorization field
// carrying a JWT from the authorization server, for this resource,
// unexpired, signed with its current key; anything else is refused with a
// Bearer challenge before the handler sees the event.
type bearerGate struct {
	as       *authServer
	audience string
	next     http.Handler
	seen     func(seenRequest)
}

func (g *bearerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	fields := r.Header.Values("Authorization")
	s := seenRequest{body: body, status: http.StatusOK}
	if len(fields) == 1 {
		s.authz = fields[0]
	}
	token, found := strings.CutPrefix(s.authz, "Bearer ")
	_, err = jwt.Parse(token, func(*jwt.Token) (any, error) { return g.as.currentKey(), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(g.as.issuer), jwt.WithAudience(g.audience), jwt.WithExpirationRequired())
	if len(fields) != 1 || !found || err != nil {
		s.status = http.StatusUnauthorized
		g.seen(s)
		w.Header().Set("WWW-Authenticate", `Bearer realm="policy", error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	g.seen(s)
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.next.ServeHTTP(w, r)
}

// clientCredentials is the host's auth.Provider. For an oauth binding with
// flow client_credentials from a trusted issuer it obtains a token for the
// binding's resource (RFC 8707) with the client secret that
// clientSecretRef names, caches it per issuer, resource and client, and
// drops it when the endpoint refuses it, so that the SDK's one replay gets
// a fresh one. Bearer bindings (tokenEnv, tokenRef) go to
// auth.EnvironmentProvider. Every step runs under the delivery's context.
type clientCredentials struct {
	issuers map[string]string // trusted issuer -> its token endpoint
	client  *http.Client      // for the token endpoints
	secret  func(ctx context.Context, ref string) (string, error)
	env     auth.EnvironmentProvider

	mu    sync.Mutex
	cache map[cacheKey]cached
	n     int // tokens obtained, for the identities
}

type cacheKey struct{ issuer, resource, client string }

type cached struct {
	tok      *oauth2.Token
	identity string
}

// CheckBinding implements auth.BindingChecker: hooks.New rejects bindings
// this provider could never resolve.
func (p *clientCredentials) CheckBinding(b gen.Authentication) error {
	if o := b.Oauth; o != nil {
		if o.Flow != "client_credentials" || o.ClientSecretRef == nil || p.issuers[o.Issuer] == "" {
			return auth.ErrUnsupported
		}
		return nil
	}
	return p.env.CheckBinding(b)
}

// Credential implements auth.Provider.
func (p *clientCredentials) Credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	o := req.Binding.Oauth
	if o == nil {
		return p.env.Credential(ctx, req) // bearer tokenEnv / tokenRef, or none
	}
	if err := p.CheckBinding(req.Binding); err != nil {
		return auth.Credential{}, err
	}
	key := cacheKey{o.Issuer, o.Resource, o.ClientID}
	p.mu.Lock()
	c, ok := p.cache[key]
	p.mu.Unlock()
	if ok && c.tok.Valid() {
		return auth.Bearer(c.tok.AccessToken, c.identity), nil
	}
	secret, err := p.secret(ctx, *o.ClientSecretRef)
	if err != nil || secret == "" {
		return auth.Credential{}, auth.ErrMissingSecret
	}
	cc := clientcredentials.Config{
		ClientID: o.ClientID, ClientSecret: secret, TokenURL: p.issuers[o.Issuer],
		Scopes:         o.Scopes,
		EndpointParams: url.Values{"resource": {o.Resource}},
		AuthStyle:      oauth2.AuthStyleInHeader,
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, p.client))
	if err != nil {
		if ctx.Err() != nil {
			return auth.Credential{}, ctx.Err()
		}
		return auth.Credential{}, errors.New("token request failed") // never the endpoint's answer
	}
	if !strings.EqualFold(tok.TokenType, "bearer") {
		return auth.Credential{}, auth.ErrUnsupported
	}
	p.mu.Lock()
	p.n++
	// The identity names the attempt, never the token.
	c = cached{tok: tok, identity: fmt.Sprintf("%s/%s#%d", o.ClientID, o.Resource, p.n)}
	if p.cache == nil {
		p.cache = map[cacheKey]cached{}
	}
	p.cache[key] = c
	p.mu.Unlock()
	return auth.Bearer(tok.AccessToken, c.identity), nil
}

// Challenge implements auth.Provider: a refusal of the cached token drops
// it and allows the replay; a refusal of an older token leaves the newer
// one. Static bearer secrets are never retried.
func (p *clientCredentials) Challenge(_ context.Context, req auth.Request, ch auth.Challenge) error {
	o := req.Binding.Oauth
	if o == nil {
		return auth.ErrNoReplay
	}
	key := cacheKey{o.Issuer, o.Resource, o.ClientID}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.cache[key]; ok && c.identity == ch.Attempt {
		delete(p.cache, key)
	}
	return nil
}

var _ interface {
	auth.Provider
	auth.BindingChecker
} = (*clientCredentials)(nil)

// listenTLS listens on a loopback port with cfg.
func listenTLS(cfg *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, cfg), nil
}

// serve serves h on ln (with the timeouts of server.NewHTTPServer) until
// the returned function shuts it down and joins the serving goroutine.
func serve(ln net.Listener, h http.Handler) func() {
	srv := server.NewHTTPServer(ln.Addr().String(), h)
	srv.ErrorLog = nil
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		_ = srv.Shutdown(context.Background())
		<-done
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
