package content_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

const canary = "tok-CANARY-7f3a91"

// request is what the test receiver saw.
type request struct {
	method, uri, contentType, sha, auth string
	length                              int64
	chunked                             bool
	body                                []byte
}

// receiver is a minimal upload receiver: it checks the framing, hashes the
// body and answers a receipt, or what answer says.
type receiver struct {
	mu   sync.Mutex
	seen []request
	hits atomic.Int32
	// answer, if set, writes the response instead of the receipt.
	answer func(w http.ResponseWriter, r *http.Request, body []byte, sum string) bool
	// hold, if set, blocks each request until it is closed or the request ends.
	hold chan struct{}
	// inflight tracking
	cur, peak atomic.Int32
	next      atomic.Int32
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rv.hits.Add(1)
	n := rv.cur.Add(1)
	defer rv.cur.Add(-1)
	for {
		p := rv.peak.Load()
		if n <= p || rv.peak.CompareAndSwap(p, n) {
			break
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	s := sha256.Sum256(body)
	sum := hex.EncodeToString(s[:])
	rv.mu.Lock()
	rv.seen = append(rv.seen, request{
		method: r.Method, uri: r.RequestURI, contentType: r.Header.Get("Content-Type"), sha: r.Header.Get("AHP-Content-SHA256"),
		auth: r.Header.Get("Authorization"), length: r.ContentLength, chunked: len(r.TransferEncoding) > 0, body: body,
	})
	rv.mu.Unlock()
	if rv.hold != nil {
		select {
		case <-rv.hold:
		case <-r.Context().Done():
			return
		}
	}
	if rv.answer != nil && rv.answer(w, r, body, sum) {
		return
	}
	if r.Header.Get("AHP-Content-SHA256") != sum || r.ContentLength != int64(len(body)) || r.Header.Get("Content-Type") != "application/octet-stream" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"ref":"ref-%d","size":%d,"sha256":"%s"}`, rv.next.Add(1), len(body), sum)
}

func (rv *receiver) requests() []request {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]request(nil), rv.seen...)
}

func newServer(t *testing.T, rv *receiver) *httptest.Server {
	srv := httptest.NewServer(rv)
	t.Cleanup(srv.Close)
	return srv
}

func dest(endpoint string) content.Destination {
	return content.Destination{BackendID: "b1", SubscriptionIndex: 0, Upload: gen.ContentUpload{Endpoint: endpoint, TimeoutMs: "5000", MaxBytes: "4194304"}}
}

func bearerEnv(name string) *gen.Authentication {
	return &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &name}}
}

// recorder is a credential provider that records requests.
type recorder struct {
	mu    sync.Mutex
	reqs  []transport.CredentialRequest
	token string
	err   error
}

func (p *recorder) Credential(_ context.Context, req transport.CredentialRequest) (transport.Credential, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	return transport.Credential{Token: p.token, Identity: "attempt-1"}, p.err
}

// Challenge implements the provider's challenge method; uploads never ask
// for a replay through it.
func (p *recorder) Challenge(context.Context, transport.CredentialRequest, auth.Challenge) error {
	return auth.ErrNoReplay
}

// newUploader returns an uploader for the loopback test receivers: plain
// http to loopback is explicitly allowed (TestUploadLoopbackHTTPIsOptIn
// covers the default).
func newUploader(t *testing.T, cfg content.UploaderConfig) *content.Uploader {
	cfg.AllowLoopbackHTTP = true
	u, err := content.NewUploader(cfg)
	require.NoError(t, err)
	t.Cleanup(u.CloseIdleConnections)
	return u
}

func attach(t *testing.T, data []byte) *content.Attachment {
	a, err := content.FromBytes("image/png", data)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func TestUploadFraming(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	for _, data := range [][]byte{[]byte("abc"), {}, bytes.Repeat([]byte{0, 0xff, '\r', '\n'}, 70000)} {
		u := newUploader(t, content.UploaderConfig{Credentials: transport.EnvCredentials{LookupEnv: func(k string) (string, bool) {
			return canary, k == "UPLOAD_TOKEN"
		}}})
		d := dest(srv.URL + "/up/load;x?b=2&a=%2F1#frag")
		d.Upload.Auth = bearerEnv("UPLOAD_TOKEN")
		c, err := u.Upload(context.Background(), attach(t, data), d)
		require.NoError(t, err)
		require.NotEmpty(t, c.Reference.Ref)
		require.Equal(t, c.Receipt.Ref, c.Reference.Ref)
		require.Equal(t, json.Number(fmt.Sprint(len(data))), c.Receipt.Size)
		require.Equal(t, digest(data), c.Receipt.SHA256)
		ref, err := json.Marshal(c.Reference)
		require.NoError(t, err)
		require.Equal(t, `{"ref":"`+c.Reference.Ref+`"}`, string(ref), "the event reference carries ref only")
	}
	reqs := rv.requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		require.Equal(t, http.MethodPost, r.method)
		require.Equal(t, "/up/load;x?b=2&a=%2F1", r.uri, "exact path and query, no route appended")
		require.Equal(t, "application/octet-stream", r.contentType)
		require.Equal(t, int64(len(r.body)), r.length, "exact Content-Length")
		require.False(t, r.chunked)
		require.Equal(t, digest(r.body), r.sha)
		require.Equal(t, "Bearer "+canary, r.auth)
	}
	require.Zero(t, reqs[1].length, "an empty body still has Content-Length: 0")
}

func TestUploadContentLengthOnTheWire(t *testing.T) {
	// A raw listener sees the request head as sent, before net/http's
	// server interprets it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	heads := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			heads <- ""
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			head.WriteString(line)
			if err != nil || line == "\r\n" {
				break
			}
		}
		heads <- head.String()
		fmt.Fprintf(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			len(emptyReceipt), emptyReceipt)
	}()
	u := newUploader(t, content.UploaderConfig{})
	_, err = u.Upload(context.Background(), attach(t, nil), dest("http://"+ln.Addr().String()+"/p?q=1"))
	require.NoError(t, err)
	head := <-heads
	require.True(t, strings.HasPrefix(head, "POST /p?q=1 HTTP/1.1\r\n"), head)
	require.Contains(t, head, "\r\nContent-Length: 0\r\n")
	require.Contains(t, head, "\r\nContent-Type: application/octet-stream\r\n")
	require.Contains(t, head, "\r\nAhp-Content-Sha256: "+digest(nil)+"\r\n")
	require.NotContains(t, head, "Transfer-Encoding")
}

var emptyReceipt = `{"ref":"r","size":0,"sha256":"` + digest(nil) + `"}`

func TestUploadCredentialsAreIndependent(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	p := &recorder{token: "upload-token"}
	u := newUploader(t, content.UploaderConfig{Credentials: p})
	ref := "vault://upload"
	d := dest(srv.URL + "/u")
	d.BackendID = "policy"
	d.Upload.Auth = &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenRef: &ref}}
	_, err := u.Upload(context.Background(), attach(t, []byte("x")), d)
	require.NoError(t, err)
	require.Len(t, p.reqs, 1)
	require.Equal(t, transport.PurposeUpload, p.reqs[0].Purpose)
	require.Equal(t, "policy", p.reqs[0].BackendID)
	require.Equal(t, srv.URL+"/u", p.reqs[0].URL)
	require.Equal(t, ref, *p.reqs[0].Binding.Bearer.TokenRef)

	// A binding the provider cannot resolve sends nothing.
	p2 := &recorder{err: errors.New("no secret " + canary)}
	u2 := newUploader(t, content.UploaderConfig{Credentials: p2})
	_, err = u2.Upload(context.Background(), attach(t, []byte("x")), d)
	require.ErrorIs(t, err, content.ErrCredential)
	require.NotContains(t, err.Error(), canary)
	u3 := newUploader(t, content.UploaderConfig{Credentials: &recorder{token: "bad\r\nX-Injected: 1"}})
	_, err = u3.Upload(context.Background(), attach(t, []byte("x")), d)
	require.ErrorIs(t, err, content.ErrCredential)
	require.Equal(t, int32(1), rv.hits.Load())
}

// discoverer is a provider that owns protected-resource discovery: it has
// no credential for an endpoint without a binding until its Challenge has
// run discovery (recorded in path) and consented.
type discoverer struct {
	mu         sync.Mutex
	reqs       []auth.Request
	chs        []auth.Challenge
	path       []string // the discovery source used per challenge
	discovered bool
	// refuse, if set, is what Challenge returns instead of consenting.
	refuse error
	// bound is the token for a request with a binding.
	bound string
	// block, if set, makes Challenge wait for its context to end.
	block bool
}

func (p *discoverer) Credential(_ context.Context, req auth.Request) (auth.Credential, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	switch {
	case req.HasBinding():
		return auth.Bearer(p.bound, "bound-1"), nil
	case p.discovered:
		return auth.Bearer("discovered", "discovered-1"), nil
	}
	return auth.Credential{}, nil
}

func (p *discoverer) Challenge(ctx context.Context, req auth.Request, ch auth.Challenge) error {
	if p.block {
		<-ctx.Done()
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chs = append(p.chs, ch)
	src := "well-known" // RFC 9728 locations when the challenge names no metadata
	if b, ok := ch.Bearer(); ok {
		if m, ok := b.Param("resource_metadata"); ok {
			src = m
		}
	}
	p.path = append(p.path, src)
	if p.refuse != nil {
		return p.refuse
	}
	if ch.Replay && !req.HasBinding() {
		p.discovered = true
	}
	return nil
}

func (p *discoverer) challenges() []auth.Challenge {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]auth.Challenge(nil), p.chs...)
}

// challenging answers 401 with the given WWW-Authenticate field lines to
// any request without "Bearer discovered".
func challenging(lines ...string) *receiver {
	return &receiver{answer: func(w http.ResponseWriter, r *http.Request, _ []byte, _ string) bool {
		if r.Header.Get("Authorization") == "Bearer discovered" {
			return false
		}
		for _, l := range lines {
			w.Header().Add("WWW-Authenticate", l)
		}
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}}
}

func TestUploadDiscoveryAfterAnyChallenge(t *testing.T) {
	const meta = "https://rs.example/.well-known/oauth-protected-resource/upload"
	cases := []struct {
		name   string
		lines  []string
		source string
	}{
		{"bearer with resource_metadata", []string{`Bearer resource_metadata="` + meta + `"`}, meta},
		{"basic then bearer in one value", []string{`Basic realm="r", Bearer resource_metadata="` + meta + `"`}, meta},
		{"basic then bearer on two lines", []string{`Basic realm="r"`, `Bearer error="invalid_token", resource_metadata="` + meta + `"`}, meta},
		{"bearer without metadata", []string{`Bearer realm="uploads"`}, "well-known"},
		{"no challenge", nil, "well-known"},
		{"basic only", []string{`Basic realm="r"`}, "well-known"},
		{"malformed", []string{`Bearer ,=,"`}, "well-known"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rv := challenging(c.lines...)
			srv := newServer(t, rv)
			p := &discoverer{}
			u := newUploader(t, content.UploaderConfig{Credentials: p})
			d := dest(srv.URL + "/up?x=1")
			d.BackendID = "policy"
			backend := &gen.Backend{ID: "policy"}
			d.Backend = backend
			conf, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
			require.NoError(t, err)
			require.NotEmpty(t, conf.Reference.Ref)
			reqs := rv.requests()
			require.Len(t, reqs, 2)
			require.Empty(t, reqs[0].auth, "the first attempt carries no credential")
			require.Equal(t, "Bearer discovered", reqs[1].auth)
			require.Equal(t, []byte("abc"), reqs[1].body)

			chs := p.challenges()
			require.Len(t, chs, 1, "the provider is told of the 401")
			ch := chs[0]
			require.Equal(t, http.StatusUnauthorized, ch.Status)
			require.Equal(t, c.lines, ch.Header.Values("WWW-Authenticate"))
			require.Empty(t, ch.Attempt, "the rejected attempt carried no credential")
			require.True(t, ch.Replay, "the credential-free attempt is the discovery case")
			require.Equal(t, []string{c.source}, p.path)
			require.Len(t, p.reqs, 2)
			for _, r := range p.reqs {
				require.Equal(t, auth.PurposeUpload, r.Purpose)
				require.Equal(t, "policy", r.BackendID)
				require.Same(t, backend, r.Backend)
				require.Equal(t, srv.URL+"/up?x=1", r.URL)
				require.False(t, r.HasBinding())
			}
		})
	}
}

func TestUploadReplayNeedsTheProvidersConsent(t *testing.T) {
	rv := challenging(`Bearer resource_metadata="https://rs.example/m"`)
	srv := newServer(t, rv)
	var se *content.StatusError

	// A provider that would have a credential at its next call, but whose
	// Challenge does not consent: never a replay.
	e := &eager{}
	_, err := newUploader(t, content.UploaderConfig{Credentials: e}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.Code)
	require.Len(t, rv.requests(), 1, "replayed without the provider's consent")
	require.Equal(t, int32(1), e.challenges.Load())

	// The provider refuses: no second Credential call, no replay.
	p := &discoverer{refuse: auth.ErrNoReplay}
	_, err = newUploader(t, content.UploaderConfig{Credentials: p}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.Code)
	require.ErrorIs(t, err, content.ErrCredential)
	require.Len(t, p.reqs, 1)
	require.Len(t, rv.requests(), 2)

	// The default provider has nothing for discovery: fail closed with 401.
	_, err = newUploader(t, content.UploaderConfig{}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.Code)
	require.ErrorIs(t, err, content.ErrCredential)
	require.Len(t, rv.requests(), 3)

	// Discovery consents but finds no credential: nothing to replay with.
	none := &consentOnly{}
	_, err = newUploader(t, content.UploaderConfig{Credentials: none}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, content.ErrCredential)
	require.Len(t, rv.requests(), 4)
}

// eager has no credential at its first call and one at every later call;
// its Challenge never consents.
type eager struct {
	calls, challenges atomic.Int32
}

func (p *eager) Credential(context.Context, auth.Request) (auth.Credential, error) {
	if p.calls.Add(1) == 1 {
		return auth.Credential{}, nil
	}
	return auth.Bearer("discovered", "later"), nil
}

func (p *eager) Challenge(context.Context, auth.Request, auth.Challenge) error {
	p.challenges.Add(1)
	return auth.ErrNoReplay
}

// consentOnly consents to every challenge and never has a credential.
type consentOnly struct{}

func (consentOnly) Credential(context.Context, auth.Request) (auth.Credential, error) {
	return auth.Credential{}, nil
}
func (consentOnly) Challenge(context.Context, auth.Request, auth.Challenge) error { return nil }

func TestUploadRejectedCredentialIsNeverReplayed(t *testing.T) {
	rv := &receiver{answer: func(w http.ResponseWriter, _ *http.Request, _ []byte, _ string) bool {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="https://rs.example/m"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}}
	srv := newServer(t, rv)
	var se *content.StatusError

	// An explicit binding: the provider is told (Replay false) and would
	// consent, but a rejected credential is not replayed.
	p := &discoverer{bound: "stale"}
	d := dest(srv.URL)
	d.Upload.Auth = bearerEnv("X")
	_, err := newUploader(t, content.UploaderConfig{Credentials: p}).Upload(context.Background(), attach(t, []byte("abc")), d)
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.Code)
	require.NotErrorIs(t, err, content.ErrCredential)
	require.Len(t, rv.requests(), 1)
	require.Len(t, p.reqs, 1)
	chs := p.challenges()
	require.Len(t, chs, 1)
	require.Equal(t, "bound-1", chs[0].Attempt, "the challenge names the rejected credential")
	require.False(t, chs[0].Replay)
	require.True(t, p.reqs[0].HasBinding())

	// Discovery succeeded, the discovered credential is rejected too: one
	// replay only, and the provider hears of the second 401.
	p2 := &discoverer{}
	_, err = newUploader(t, content.UploaderConfig{Credentials: p2}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.Len(t, rv.requests(), 3)
	chs = p2.challenges()
	require.Len(t, chs, 2)
	require.True(t, chs[0].Replay)
	require.Empty(t, chs[0].Attempt)
	require.False(t, chs[1].Replay)
	require.Equal(t, "discovered-1", chs[1].Attempt)

	// A provider that already holds a credential for the endpoint sends
	// it at once; its rejection is not replayed either.
	_, err = newUploader(t, content.UploaderConfig{Credentials: p2}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
	require.ErrorAs(t, err, &se)
	require.Len(t, rv.requests(), 4)
	chs = p2.challenges()
	require.Len(t, chs, 3)
	require.False(t, chs[2].Replay)
	require.Equal(t, "discovered-1", chs[2].Attempt)
}

func TestUploadDiscoveryWithinTheUploadBudget(t *testing.T) {
	srv := newServer(t, challenging())
	p := &discoverer{block: true}
	d := dest(srv.URL)
	d.Upload.TimeoutMs = "30"
	_, err := newUploader(t, content.UploaderConfig{Credentials: p}).Upload(context.Background(), attach(t, []byte("abc")), d)
	require.ErrorIs(t, err, content.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// rawRejecter is a receiver that judges the request head, answers 401 and
// closes the connection without reading the body, as receivers that
// reject from the headers do.
type rawRejecter struct {
	ln    net.Listener
	heads chan string
	done  chan struct{}
}

func newRawRejecter(t *testing.T) *rawRejecter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &rawRejecter{ln: ln, heads: make(chan string, 64), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(conn)
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				head.WriteString(line)
				if err != nil || line == "\r\n" {
					break
				}
			}
			select {
			case r.heads <- head.String():
			default:
			}
			_, _ = io.WriteString(conn, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"u\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-r.done
	})
	return r
}

func TestUploadRejectedFromTheHeadersKeepsThe401(t *testing.T) {
	data := bytes.Repeat([]byte{0xa5}, 4<<20) // far beyond the socket buffers
	for _, c := range []struct {
		name   string
		client *http.Client
	}{
		{"own client", nil},
		{"borrowed transport without an expect-continue timeout", &http.Client{Transport: &http.Transport{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rj := newRawRejecter(t)
			u := newUploader(t, content.UploaderConfig{HTTPClient: c.client, Credentials: &recorder{}})
			for i := range 20 {
				_, err := u.Upload(context.Background(), attach(t, data), dest("http://"+rj.ln.Addr().String()+"/u"))
				var se *content.StatusError
				require.ErrorAs(t, err, &se, "attempt %d lost the receiver's 401", i)
				require.Equal(t, http.StatusUnauthorized, se.Code)
				require.Contains(t, <-rj.heads, "\r\nExpect: 100-continue\r\n")
			}
		})
	}
}

func TestUploadRejectsUnconfirmedAnswers(t *testing.T) {
	data := []byte("abc")
	sum := digest(data)
	receipt := func(status int, ctype, body string) func(http.ResponseWriter, *http.Request, []byte, string) bool {
		return func(w http.ResponseWriter, _ *http.Request, _ []byte, _ string) bool {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("X-Echo", canary)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return true
		}
	}
	good := fmt.Sprintf(`{"ref":"r1","size":3,"sha256":"%s"}`, sum)
	cases := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request, []byte, string) bool
		err    error
		status int
	}{
		{"202", receipt(http.StatusAccepted, "application/json", good), content.ErrStatus, 202},
		{"204", receipt(http.StatusNoContent, "application/json", ""), content.ErrStatus, 204},
		{"200", receipt(http.StatusOK, "application/json", good), content.ErrStatus, 200},
		{"400 with text", receipt(http.StatusBadRequest, "text/plain", "bad token "+canary), content.ErrStatus, 400},
		{"403", receipt(http.StatusForbidden, "application/json", `{"error":"`+canary+`"}`), content.ErrStatus, 403},
		{"413", receipt(http.StatusRequestEntityTooLarge, "text/plain", canary), content.ErrStatus, 413},
		{"500", receipt(http.StatusInternalServerError, "text/plain", canary), content.ErrStatus, 500},
		{"wrong size", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","size":4,"sha256":"%s"}`, sum)), content.ErrReceipt, 0},
		{"fractional size", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","size":3.5,"sha256":"%s"}`, sum)), content.ErrReceipt, 0},
		{"wrong digest", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","size":3,"sha256":"%s"}`, digest([]byte("abd")))), content.ErrReceipt, 0},
		{"uppercase digest", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","size":3,"sha256":"%s"}`, strings.ToUpper(sum))), content.ErrReceipt, 0},
		{"not json media type", receipt(201, "text/plain", good), content.ErrReceipt, 0},
		{"malformed", receipt(201, "application/json", `{"ref":"r1",`), content.ErrReceipt, 0},
		{"extra member", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","size":3,"sha256":"%s","token":"%s"}`, sum, canary)), content.ErrReceipt, 0},
		{"duplicate member", receipt(201, "application/json", fmt.Sprintf(`{"ref":"r1","ref":"r2","size":3,"sha256":"%s"}`, sum)), content.ErrReceipt, 0},
		{"missing ref", receipt(201, "application/json", fmt.Sprintf(`{"size":3,"sha256":"%s"}`, sum)), content.ErrReceipt, 0},
		{"empty ref", receipt(201, "application/json", fmt.Sprintf(`{"ref":"","size":3,"sha256":"%s"}`, sum)), content.ErrReceipt, 0},
		{"oversized", receipt(201, "application/json", fmt.Sprintf(`{"ref":"%s","size":3,"sha256":"%s"}`, strings.Repeat("r", 70<<10), sum)), content.ErrReceipt, 0},
		{"empty body", receipt(201, "application/json", ""), content.ErrReceipt, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, &receiver{answer: c.answer})
			u := newUploader(t, content.UploaderConfig{Credentials: &recorder{token: canary}})
			d := dest(srv.URL)
			d.Upload.Auth = bearerEnv("X")
			_, err := u.Upload(context.Background(), attach(t, data), d)
			require.ErrorIs(t, err, c.err)
			require.NotContains(t, err.Error(), canary)
			require.NotContains(t, err.Error(), srv.URL)
			if c.status != 0 {
				var se *content.StatusError
				require.ErrorAs(t, err, &se)
				require.Equal(t, c.status, se.Code)
			}
		})
	}
}

func TestUploadAcceptsIntegerSpellings(t *testing.T) {
	for _, size := range []string{"3", "3.0", "3e0", "0.3e1", "300e-2"} {
		srv := newServer(t, &receiver{answer: func(w http.ResponseWriter, _ *http.Request, _ []byte, sum string) bool {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"ref":"r","size":%s,"sha256":"%s"}`, size, sum)
			return true
		}})
		_, err := newUploader(t, content.UploaderConfig{}).Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL))
		require.NoError(t, err, size)
	}
}

func TestUploadNeverFollowsRedirects(t *testing.T) {
	other := &receiver{}
	target := newServer(t, other)
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound, http.StatusSeeOther} {
		srv := newServer(t, &receiver{answer: func(w http.ResponseWriter, r *http.Request, _ []byte, _ string) bool {
			http.Redirect(w, r, target.URL+"/stolen", code)
			return true
		}})
		// Also through a borrowed client that would follow redirects.
		u := newUploader(t, content.UploaderConfig{HTTPClient: &http.Client{}, Credentials: &recorder{token: canary}})
		d := dest(srv.URL)
		d.Upload.Auth = bearerEnv("X")
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
		var se *content.StatusError
		require.ErrorAs(t, err, &se)
		require.Equal(t, code, se.Code)
	}
	require.Zero(t, other.hits.Load())
}

func TestUploadEndpointRules(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	u := newUploader(t, content.UploaderConfig{})
	for _, ep := range []string{
		"http://example.com/upload", "http://10.0.0.1/u", "http://localhost.example.com/u", "ftp://127.0.0.1/u",
		"//127.0.0.1/u", "/upload", "", "http://user:pw@127.0.0.1/u", srv.URL + "/u\r\nX: y", srv.URL + "/u\n",
		"https:opaque", "http://127.0.0.1/a b",
	} {
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), dest(ep))
		require.ErrorIs(t, err, content.ErrEndpoint, ep)
	}
	require.Zero(t, rv.hits.Load())
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, err := u.Upload(context.Background(), attach(t, []byte("abc")), dest(localhost))
	require.NoError(t, err)

	// HTTPS with a verified receiver.
	tls := httptest.NewUnstartedServer(&receiver{})
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	tls.StartTLS()
	defer tls.Close()
	ut := newUploader(t, content.UploaderConfig{HTTPClient: tls.Client()})
	_, err = ut.Upload(context.Background(), attach(t, []byte("abc")), dest(tls.URL))
	require.NoError(t, err)
	// An unverified certificate is a transfer failure.
	_, err = u.Upload(context.Background(), attach(t, []byte("abc")), dest(tls.URL))
	require.ErrorIs(t, err, content.ErrUnreachable)
}

func TestUploadConfigChecks(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	u := newUploader(t, content.UploaderConfig{})
	for _, c := range []struct{ timeout, max string }{{"0", "10"}, {"1.5", "10"}, {"", "10"}, {"-1", "10"}, {"10", "-1"}, {"10", "x"}, {"10", "0.5"}} {
		d := dest(srv.URL)
		d.Upload.TimeoutMs, d.Upload.MaxBytes = json.Number(c.timeout), json.Number(c.max)
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
		require.ErrorIs(t, err, content.ErrInvalid, c)
	}
	// maxBytes: bytes over it fail before sending; integer spellings count.
	for _, max := range []string{"2", "2.0", "0"} {
		d := dest(srv.URL)
		d.Upload.MaxBytes = json.Number(max)
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
		require.ErrorIs(t, err, content.ErrTooLarge, max)
	}
	require.Zero(t, rv.hits.Load())
	for _, max := range []string{"3", "3e0", "1e400"} {
		d := dest(srv.URL)
		d.Upload.MaxBytes = json.Number(max)
		d.Upload.TimeoutMs = "1e30"
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
		require.NoError(t, err, max)
	}
	// A lazy source is not read when the configuration is invalid.
	var opens atomic.Int32
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(strings.NewReader("abc")), nil
	}, nil)
	require.NoError(t, err)
	defer a.Close()
	_, err = u.Upload(context.Background(), a, dest("http://example.com/u"))
	require.ErrorIs(t, err, content.ErrEndpoint)
	require.Zero(t, opens.Load())
}

func TestUploadTimeoutAndCancellation(t *testing.T) {
	rv := &receiver{hold: make(chan struct{})}
	srv := newServer(t, rv)
	defer close(rv.hold)
	u := newUploader(t, content.UploaderConfig{Credentials: &recorder{token: canary}})

	d := dest(srv.URL)
	d.Upload.Auth = bearerEnv("X")
	d.Upload.TimeoutMs = "30"
	_, err := u.Upload(context.Background(), attach(t, []byte("abc")), d)
	require.ErrorIs(t, err, content.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotContains(t, err.Error(), canary)

	// The caller's cancellation mid-upload: a lazy file source is released.
	l := newFileLoader(t, bytes.Repeat([]byte("z"), 5000))
	a, err := content.Lazy("application/octet-stream", l.open, l.cleanup)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	before := rv.hits.Load()
	go func() { _, err := u.Upload(ctx, a, dest(srv.URL)); errc <- err }()
	require.Eventually(t, func() bool { return rv.hits.Load() > before }, 5*time.Second, time.Millisecond)
	cancel()
	err = <-errc
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, content.ErrTimeout)
	require.NoError(t, a.Close())
	l.requireReleased(t)
	u.CloseIdleConnections()
}

func TestLimiter(t *testing.T) {
	_, err := content.NewLimiter(0)
	require.ErrorIs(t, err, content.ErrInvalid)
	_, err = content.NewUploader(content.UploaderConfig{MaxConcurrentUploads: -1})
	require.ErrorIs(t, err, content.ErrInvalid)
	u, err := content.NewUploader(content.UploaderConfig{})
	require.NoError(t, err)
	require.Equal(t, content.DefaultMaxConcurrentUploads, u.Limiter().Limit())
	l, err := content.NewLimiter(1)
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	require.Equal(t, 1, l.InUse())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Acquire(ctx), context.Canceled)
	l.Release()
	require.ErrorIs(t, l.Acquire(ctx), context.Canceled, "an ended context never gets a permit")
	require.Zero(t, l.InUse())
}

func TestUploadSendsNoCookieOfTheBorrowedClient(t *testing.T) {
	var cookies atomic.Pointer[string]
	rv := &receiver{answer: func(w http.ResponseWriter, r *http.Request, _ []byte, _ string) bool {
		c := r.Header.Get("Cookie")
		cookies.Store(&c)
		http.SetCookie(w, &http.Cookie{Name: "upload", Value: "from-upload"})
		return false
	}}
	srv := newServer(t, rv)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u0, err := url.Parse(srv.URL)
	require.NoError(t, err)
	// An event session's cookie on the same host.
	jar.SetCookies(u0, []*http.Cookie{{Name: "session", Value: canary, Path: "/"}})
	client := &http.Client{Jar: jar}
	u := newUploader(t, content.UploaderConfig{HTTPClient: client})
	_, err = u.Upload(context.Background(), attach(t, []byte("abc")), dest(srv.URL+"/u"))
	require.NoError(t, err)
	require.NotNil(t, cookies.Load())
	require.Empty(t, *cookies.Load(), "a cookie of the borrowed client reached the upload endpoint")
	got := jar.Cookies(u0)
	require.Len(t, got, 1, "the upload answer's cookie was stored in the borrowed jar")
	require.Equal(t, "session", got[0].Name)
	require.Same(t, jar, client.Jar, "the borrowed client is left as it was")
}

func TestUploadLoopbackHTTPIsOptIn(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	eps := []string{srv.URL, fmt.Sprintf("http://localhost:%d/u", port)}
	u, err := content.NewUploader(content.UploaderConfig{})
	require.NoError(t, err)
	defer u.CloseIdleConnections()
	for _, ep := range eps {
		_, err := u.Upload(context.Background(), attach(t, []byte("abc")), dest(ep))
		require.ErrorIs(t, err, content.ErrEndpoint, "plain http to loopback without the explicit loopback-test configuration: %s", ep)
	}
	require.Zero(t, rv.hits.Load())
	for _, cfg := range []content.UploaderConfig{{AllowLoopbackHTTP: true}, {AllowInsecureHTTP: true}} {
		u, err := content.NewUploader(cfg)
		require.NoError(t, err)
		for _, ep := range eps {
			_, err := u.Upload(context.Background(), attach(t, []byte("abc")), dest(ep))
			require.NoError(t, err, ep)
		}
		u.CloseIdleConnections()
	}
	require.Equal(t, int32(4), rv.hits.Load())
}
