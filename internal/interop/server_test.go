package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

func corpusServer(t *testing.T, auth AuthConfig) (*scriptServer, *ScenarioFile) {
	t.Helper()
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	s, err := newScriptServer(discardLogger(), TransportHTTP, mustServerAuth(t, auth), f)
	require.NoError(t, err)
	return s, f
}

// mustServerAuth is the HTTP server authentication of a.
func mustServerAuth(t *testing.T, a AuthConfig) *ServerAuth {
	t.Helper()
	sa, err := NewServerAuth(TransportHTTP, a)
	require.NoError(t, err)
	return sa
}

func rpcErrorCode(t *testing.T, reply []byte) int {
	t.Helper()
	env, err := jsonrpc.Classify(reply)
	require.NoError(t, err)
	require.Equal(t, jsonrpc.KindErrorResponse, env.Kind)
	e, err := env.DecodeError()
	require.NoError(t, err)
	return e.Code
}

func TestScriptServerRepliesScriptedResponseUnchanged(t *testing.T) {
	s, f := corpusServer(t, AuthConfig{Mode: AuthNone})
	for _, sc := range f.Scenarios {
		reply := s.handle(context.Background(), sc.Request)
		want, err := CompactJSON(sc.Response)
		require.NoError(t, err)
		require.Equal(t, string(want), string(reply), "%s: invalid scripted responses are not repaired", sc.ID)
	}
	body, err := s.receiptsJSON()
	require.NoError(t, err)
	var got struct {
		Requests []receipt `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Len(t, got.Requests, len(f.Scenarios))
	for i, r := range got.Requests {
		require.Equal(t, f.Scenarios[i].ID, r.ID)
		require.True(t, r.Accepted)
		want, err := CompactJSON(f.Scenarios[i].Request)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(r.Message))
	}
}

func TestScriptServerRefusesInvalidRequests(t *testing.T) {
	s, f := corpusServer(t, AuthConfig{Mode: AuthNone})
	valid := f.Scenarios[0].Request
	var req map[string]any
	require.NoError(t, DecodeJSON(valid, &req))
	mutate := func(fn func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, DecodeJSON(valid, &m))
		fn(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	params := func(m map[string]any) map[string]any { return m["params"].(map[string]any) }
	cases := map[string]struct {
		body []byte
		code int
	}{
		"not-json":          {[]byte(`{"jsonrpc":`), jsonrpc.CodeParseError},
		"unknown-method":    {[]byte(`{"jsonrpc":"2.0","id":1,"method":"hooks/other","params":{}}`), jsonrpc.CodeMethodNotFound},
		"no-capabilities":   {mutate(func(m map[string]any) { delete(params(m), "capabilities") }), jsonrpc.CodeInvalidParams},
		"wrong-version":     {mutate(func(m map[string]any) { params(m)["protocolVersion"] = "v0" }), jsonrpc.CodeUnsupportedProtocolVersion},
		"event-id-differs":  {mutate(func(m map[string]any) { params(m)["event"].(map[string]any)["id"] = "other" }), jsonrpc.CodeInvalidParams},
		"unknown-scenario":  {mutate(func(m map[string]any) { m["id"] = "nope"; params(m)["event"].(map[string]any)["id"] = "nope" }), jsonrpc.CodeInvalidParams},
		"bad-discovery":     {[]byte(`{"jsonrpc":"2.0","id":"d","method":"hooks/capabilities","params":{"protocolVersion":"v0"}}`), jsonrpc.CodeUnsupportedProtocolVersion},
		"response-not-call": {[]byte(`{"jsonrpc":"2.0","id":"x","result":{}}`), jsonrpc.CodeInvalidRequest},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, c.code, rpcErrorCode(t, s.handle(context.Background(), c.body)))
		})
	}
	require.Nil(t, s.handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)), "notifications get no reply")
	body, err := s.receiptsJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"requests":[]}`, string(body), "refused requests leave no receipt")
}

func TestScriptServerDiscovery(t *testing.T) {
	s, _ := corpusServer(t, AuthConfig{Mode: AuthNone})
	reply := s.handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":"d1","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`))
	codec, ok := gen.LookupRoot("capabilities-response.schema.json")
	require.True(t, ok)
	_, err := codec.Parse(reply)
	require.NoError(t, err)
	env, err := jsonrpc.Classify(reply)
	require.NoError(t, err)
	require.True(t, env.ID.Equal(jsonrpc.StringID("d1")))

	srv := httptest.NewServer(s.ahpHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/capabilities")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = codec.Parse(body)
	require.NoError(t, err)
}

func TestScriptServerBearer(t *testing.T) {
	const token = "tok-unit-5d2c"
	s, f := corpusServer(t, AuthConfig{Mode: AuthBearer, Token: token})
	srv := httptest.NewServer(s.ahpHandler())
	defer srv.Close()
	post := func(auth ...string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/intercept", bytes.NewReader(f.Scenarios[0].Request))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for _, a := range auth {
			req.Header.Add("Authorization", a)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	r := post()
	require.Equal(t, http.StatusUnauthorized, r.StatusCode)
	require.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
	require.Equal(t, http.StatusUnauthorized, post("Bearer wrong").StatusCode)
	require.Equal(t, http.StatusUnauthorized, post("Basic "+token).StatusCode)
	require.Equal(t, http.StatusBadRequest, post("Bearer "+token, "Bearer "+token).StatusCode, "duplicate Authorization fields are refused before dispatch")
	require.Equal(t, http.StatusOK, post("Bearer "+token).StatusCode)

	body, err := s.receiptsJSON()
	require.NoError(t, err)
	require.NotContains(t, string(body), token, "receipts are redacted")
	var got struct {
		Requests []receipt `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Len(t, got.Requests, 1, "only the authenticated request was dispatched")
}

func TestScriptServerMediaType(t *testing.T) {
	s, f := corpusServer(t, AuthConfig{Mode: AuthNone})
	srv := httptest.NewServer(s.ahpHandler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/intercept", "text/plain", bytes.NewReader(f.Scenarios[0].Request))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
}

// TestScriptServerBarrier: a barrier holds the scripted reply until POST
// /release names it; ordering uses the barrier, never sleeps.
func TestScriptServerBarrier(t *testing.T) {
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	sc := f.Scenarios[0]
	sc.Barrier = "b1"
	s, err := newScriptServer(discardLogger(), TransportHTTP, mustServerAuth(t, AuthConfig{Mode: AuthNone}), &ScenarioFile{Version: 1, Scenarios: []Scenario{sc}})
	require.NoError(t, err)
	control := httptest.NewServer(s.controlHandler(func() {}))
	defer control.Close()

	done := make(chan []byte, 1)
	go func() { done <- s.handle(context.Background(), sc.Request) }()
	// The receipt is recorded before the barrier is awaited.
	for {
		body, err := s.receiptsJSON()
		require.NoError(t, err)
		if strings.Contains(string(body), sc.ID) {
			break
		}
		select {
		case <-done:
			t.Fatal("replied before the barrier was released")
		default:
			runtime.Gosched()
		}
	}
	select {
	case <-done:
		t.Fatal("replied before the barrier was released")
	default:
	}
	resp, err := http.Post(control.URL+"/release", "application/json", strings.NewReader(`{"barrier":"b1"}`))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	want, err := CompactJSON(sc.Response)
	require.NoError(t, err)
	require.Equal(t, string(want), string(<-done))

	// A cancelled wait answers backend_unavailable instead of hanging.
	sc.Barrier = "b2"
	s2, err := newScriptServer(discardLogger(), TransportHTTP, mustServerAuth(t, AuthConfig{Mode: AuthNone}), &ScenarioFile{Version: 1, Scenarios: []Scenario{sc}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, jsonrpc.CodeBackendUnavailable, rpcErrorCode(t, s2.handle(ctx, sc.Request)))
}

func TestScriptServerControl(t *testing.T) {
	s, _ := corpusServer(t, AuthConfig{Mode: AuthNone})
	stopped := make(chan struct{})
	control := httptest.NewServer(s.controlHandler(func() { close(stopped) }))
	defer control.Close()
	resp, err := http.Get(control.URL + "/health")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.JSONEq(t, `{"ready":true}`, string(body))
	resp, err = http.Post(control.URL+"/release", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, err = http.Post(control.URL+"/shutdown", "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	<-stopped
}

// TestServeStdio: one compact envelope per line in and out, malformed
// frames answered with a parse error, EOF ends serving, the reader
// goroutine is joined.
func TestServeStdio(t *testing.T) {
	s, f := corpusServer(t, AuthConfig{Mode: AuthNone})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- s.serveStdio(context.Background(), inR, outW)
		_ = outW.Close()
	}()
	lines := bufio.NewReader(outR)
	for _, sc := range f.Scenarios[:5] {
		req, err := CompactJSON(sc.Request)
		require.NoError(t, err)
		_, err = inW.Write(append(req, '\n'))
		require.NoError(t, err)
		line, err := lines.ReadBytes('\n')
		require.NoError(t, err)
		want, err := CompactJSON(sc.Response)
		require.NoError(t, err)
		require.Equal(t, string(want)+"\n", string(line))
	}
	_, err := inW.Write([]byte("{\"jsonrpc\":\"2.0\"}\r\n"))
	require.NoError(t, err)
	line, err := lines.ReadBytes('\n')
	require.NoError(t, err)
	require.Equal(t, jsonrpc.CodeParseError, rpcErrorCode(t, bytes.TrimSuffix(line, []byte("\n"))))
	require.NoError(t, inW.Close())
	require.NoError(t, <-served)
	_, err = lines.ReadBytes('\n')
	require.ErrorIs(t, err, io.EOF, "nothing but replies on stdout")

	// Cancellation ends serving even while stdin stays open.
	inR2, inW2 := io.Pipe()
	defer inW2.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.serveStdio(ctx, inR2, io.Discard))
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ready.json")
	require.NoError(t, WriteFileAtomic(p, []byte(`{"a":1}`)))
	require.NoError(t, WriteFileAtomic(p, []byte(`{"a":2}`)))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, `{"a":2}`, string(data))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}
