package lifecycle

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/testpki"
)

// The matrix runs the corpora client ↔ server through real processes, the
// way the protocol's lifecycle runner does: over HTTP (the runner starts the
// server, the client connects) and over stdio (the client spawns and reaps
// the server), with auth none and bearer over HTTP. By default the adapters
// are built once with go build (as the protocol's prepared runs do);
// AHP_LIFECYCLE_LAUNCH=adapter runs the commands of interop/adapter.json
// instead (go run, from the module root), as .ci/run does.
//
// Verification follows the runner's rules: each scenario's actual must equal
// its expected exactly (recomputed here, not taken from the client's
// status), and the server's receipts are checked independently against the
// scenario's proof: exact receipt counts per kind and id, partial orders,
// observed views (receiver references normalized), upload receipts, body
// references confirmed by an earlier upload, and received events equal to
// the fixture's.

const uploadTokenEnv = "AHP_INTEROP_UPLOAD_TOKEN"

type launchers struct {
	root           string
	client, server []string
}

func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return root
}

func adapterLaunchers(t *testing.T) launchers {
	t.Helper()
	root := moduleRoot(t)
	if os.Getenv("AHP_LIFECYCLE_LAUNCH") == "adapter" {
		data, err := os.ReadFile(filepath.Join(root, "interop", "adapter.json"))
		require.NoError(t, err)
		var a struct {
			LifecycleClient []string `json:"lifecycleClient"`
			LifecycleServer []string `json:"lifecycleServer"`
		}
		require.NoError(t, json.Unmarshal(data, &a))
		require.NotEmpty(t, a.LifecycleClient)
		require.NotEmpty(t, a.LifecycleServer)
		return launchers{root: root, client: a.LifecycleClient, server: a.LifecycleServer}
	}
	dir := t.TempDir()
	for _, name := range []string{"lifecycle-client", "lifecycle-server"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return launchers{root: root, client: []string{filepath.Join(dir, "lifecycle-client")}, server: []string{filepath.Join(dir, "lifecycle-server")}}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// TestStdioAuthInapplicable: over stdio only process trust applies; a
// client given another auth label reports every scenario inapplicable
// (never passed) and starts no server.
func TestStdioAuthInapplicable(t *testing.T) {
	dir := t.TempDir()
	path, err := filepath.Abs(corpusPath(chainCorpus))
	require.NoError(t, err)
	report := filepath.Join(dir, "report.json")
	cfg := &ClientConfig{ClientConfig: interop.ClientConfig{Transport: "stdio", ScenarioFile: path, ReportFile: report,
		ServerCommand: []string{"/nonexistent/lifecycle-server"}, ServerConfig: filepath.Join(dir, "server.json"),
		Auth: interop.AuthConfig{Mode: "bearer", Token: "tok"}}}
	require.NoError(t, RunClient(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil))))
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	f, err := Load(path)
	require.NoError(t, err)
	require.Len(t, rep.Results, len(f.Scenarios))
	for _, e := range rep.Results {
		require.Equal(t, "inapplicable", e.Status)
	}
}

// TestLifecycleMatrix runs both corpora over every combination.
func TestLifecycleMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the adapters")
	}
	l := adapterLaunchers(t)
	for _, corpus := range []string{lifecycleCorpus, chainCorpus} {
		path, err := filepath.Abs(corpusPath(corpus))
		require.NoError(t, err)
		f, err := Load(path)
		require.NoError(t, err)
		if only := os.Getenv("AHP_LIFECYCLE_ONLY"); only != "" {
			// A subset, for debugging: scenarios whose id has this prefix.
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var doc struct {
				Version   int               `json:"version"`
				Scenarios []json.RawMessage `json:"scenarios"`
			}
			require.NoError(t, json.Unmarshal(data, &doc))
			var keep []json.RawMessage
			for i, sc := range f.Scenarios {
				if strings.HasPrefix(sc.ID, only) {
					keep = append(keep, doc.Scenarios[i])
				}
			}
			if len(keep) == 0 {
				continue
			}
			path = filepath.Join(t.TempDir(), corpus)
			writeJSON(t, path, map[string]any{"version": 1, "scenarios": keep})
			f, err = Load(path)
			require.NoError(t, err)
		}
		for _, combo := range []struct{ transport, auth string }{{"stdio", "none"}, {"http", "none"}, {"http", "bearer"},
			{"http", "oauth"}, {"http", "mtls"}, {"http", "workload"}} {
			t.Run(strings.TrimSuffix(corpus, ".json")+"/"+combo.transport+"-"+combo.auth, func(t *testing.T) {
				runCombo(t, l, path, f, combo.transport, combo.auth)
			})
		}
	}
}

func runCombo(t *testing.T, l launchers, scenarioFile string, f *File, transport, authMode string) {
	dir := t.TempDir()
	eventToken := "event-token-" + transport
	uploadToken := "upload-token-" + authMode
	serverAuth, clientAuth, secrets := authFixture(t, authMode, eventToken)
	serverCfg := filepath.Join(dir, "server.json")
	readiness := filepath.Join(dir, "ready.json")
	writeJSON(t, serverCfg, map[string]any{"suite": "lifecycle", "transport": transport, "readinessFile": readiness,
		"scenarioFile": scenarioFile, "auth": serverAuth, "uploadAuth": map[string]any{"token": uploadToken, "subscriptions": []string{"body"}}})
	clientCfg := filepath.Join(dir, "client.json")
	report := filepath.Join(dir, "report.json")
	ccfg := map[string]any{"suite": "lifecycle", "transport": transport, "scenarioFile": scenarioFile, "reportFile": report, "auth": clientAuth,
		"upload": map[string]any{"auth": map[string]any{"type": "bearer", "tokenEnv": uploadTokenEnv}, "timeoutMs": 5000, "maxBytes": 1 << 20}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var control string
	var childPid int
	if transport == "http" {
		srv := exec.CommandContext(ctx, l.server[0], append(l.server[1:], "--config", serverCfg)...)
		srv.Dir = l.root
		srv.Stderr = os.Stderr
		srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, srv.Start())
		exited := make(chan error, 1)
		go func() { exited <- srv.Wait() }()
		defer func() {
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}()
		rd := waitReadiness(t, readiness, exited)
		require.NotNil(t, rd.Endpoint)
		require.NotNil(t, rd.UploadEndpoint)
		control = rd.ControlEndpoint
		ccfg["endpoint"], ccfg["controlEndpoint"] = *rd.Endpoint, rd.ControlEndpoint
		ccfg["upload"].(map[string]any)["endpoint"] = *rd.UploadEndpoint
		probeReceiver(t, rd, uploadToken, authMode, eventToken)
	} else {
		ccfg["serverCommand"], ccfg["serverCwd"], ccfg["serverConfig"] = l.server, l.root, serverCfg
		ccfg["childPidFile"] = filepath.Join(dir, "child.pid")
	}
	writeJSON(t, clientCfg, ccfg)
	cl := exec.CommandContext(ctx, l.client[0], append(l.client[1:], "--config", clientCfg)...)
	cl.Dir = l.root
	cl.Env = append(os.Environ(), uploadTokenEnv+"="+uploadToken)
	var stderr bytes.Buffer
	cl.Stderr = &stderr
	if os.Getenv("AHP_LIFECYCLE_VERBOSE") != "" {
		cl.Stderr = os.Stderr
	}
	runErr := cl.Run()
	data, err := os.ReadFile(report)
	require.NoError(t, err, "no report; client: %v\n%s", runErr, stderr.String())
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	var rcpts Receipts
	if transport == "http" {
		rcpts = fetchReceipts(t, control)
		shutdown(t, control)
	} else {
		require.NotNil(t, rep.Receipts, "a stdio report carries the receipts")
		rcpts = *rep.Receipts
		pid, err := os.ReadFile(filepath.Join(dir, "child.pid"))
		require.NoError(t, err, "the stdio client registers its child's pid")
		_, err = fmt.Sscan(string(pid), &childPid)
		require.NoError(t, err)
		require.True(t, gone(childPid), "the stdio server child %d outlived the client", childPid)
	}
	for _, secret := range append(secrets, uploadToken) {
		require.NotContains(t, string(data), secret, "a secret in the report")
		require.NotContains(t, stderr.String(), secret, "a secret in the client's log")
	}
	verifyReport(t, f, transport, &rep, &rcpts)
	if t.Failed() {
		t.Logf("client stderr:\n%s", tail(stderr.String(), 4000))
	}
}

// gone reports, within a bounded watchdog, that pid has ended: it no longer
// exists or is a zombie awaiting its reaper (under go run the server is a
// grandchild of the client, killed with its process group and reaped by
// init).
func gone(pid int) bool {
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
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func waitReadiness(t *testing.T, path string, exited chan error) interop.Readiness {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		data, err := os.ReadFile(path)
		var rd interop.Readiness
		if err == nil && json.Unmarshal(data, &rd) == nil && rd.ControlEndpoint != "" {
			return rd
		}
		select {
		case err := <-exited:
			t.Fatalf("server exited before readiness: %v", err)
		case <-deadline:
			t.Fatal("no readiness")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func fetchReceipts(t *testing.T, control string) Receipts {
	t.Helper()
	resp, err := http.Get(control + "/receipts")
	require.NoError(t, err)
	defer resp.Body.Close()
	var r Receipts
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	return r
}

func shutdown(t *testing.T, control string) {
	resp, err := http.Post(control+"/shutdown", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
	}
}

// probeReceiver runs the runner's raw HTTP receiver probes: a bad upload
// credential is 401, a POST /observe of a canonical notification is 204
// with an empty body, an event referring to an unknown ref is 409, a wrong
// size or hash is 400.
func probeReceiver(t *testing.T, rd interop.Readiness, uploadToken, authMode, eventToken string) {
	t.Helper()
	up := *rd.UploadEndpoint
	post := func(url, ctype string, body []byte, hdr map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", ctype)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	body := []byte("probe")
	resp := post(up, "application/octet-stream", body, map[string]string{"AHP-Content-SHA256": digest(body), "Authorization": "Bearer wrong"})
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp = post(up, "application/octet-stream", body, map[string]string{"AHP-Content-SHA256": digest([]byte("other")), "Authorization": "Bearer " + uploadToken})
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	if authMode != "none" && authMode != "bearer" {
		return // the event endpoint probes need a plain credential
	}
	if authMode == "none" {
		eventToken = ""
	}
	// The event endpoint: an observation is 202/204 with an empty body
	// (never the unsolicited reply stdio gets), an event referring to an
	// unknown ref is 409.
	base := strings.TrimSuffix(*rd.Endpoint, "/intercept")
	hdr := map[string]string{}
	if eventToken != "" {
		hdr["Authorization"] = "Bearer " + eventToken
	}
	ev := toolEvent("probe-observe", obj{"task": 1})
	note, err := json.Marshal(obj{"jsonrpc": "2.0", "method": "hooks/observe", "params": obj{"protocolVersion": "draft", "event": ev}})
	require.NoError(t, err)
	resp = post(base+"/observe", "application/json", note, hdr)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, []int{http.StatusAccepted, http.StatusNoContent}, resp.StatusCode)
	require.Empty(t, data)
	ev = toolEvent("probe-unknown-ref", obj{"task": 1}, refItem("img", "image/png", "never-uploaded"))
	note, err = json.Marshal(obj{"jsonrpc": "2.0", "method": "hooks/observe", "params": obj{"protocolVersion": "draft", "event": ev}})
	require.NoError(t, err)
	resp = post(base+"/observe", "application/json", note, hdr)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	intercept, err := json.Marshal(request(ev, nil))
	require.NoError(t, err)
	resp = post(*rd.Endpoint, "application/json", intercept, hdr)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)
}

// normalizeRefs replaces every attachment body reference with a constant.
func normalizeRefs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range t {
			out[k] = normalizeRefs(c)
		}
		if t["kind"] == "attachment" {
			if b, ok := t["body"].(map[string]any); ok {
				if _, ok := b["ref"]; ok {
					out["body"] = map[string]any{"ref": "<receiver-ref>"}
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = normalizeRefs(c)
		}
		return out
	}
	return v
}

func canon(t *testing.T, raw json.RawMessage) string {
	var v any
	require.NoError(t, interop.DecodeJSON(raw, &v))
	b, err := json.Marshal(normalizeRefs(v))
	require.NoError(t, err)
	return string(b)
}

func refsOf(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	collectRefs(v, &out)
	return out
}

func verifyReport(t *testing.T, f *File, transport string, rep *Report, rc *Receipts) {
	t.Helper()
	require.Equal(t, "go", rep.Language)
	byID := map[string]ReportEntry{}
	for _, e := range rep.Results {
		_, dup := byID[e.ID]
		require.False(t, dup, "two results for %s", e.ID)
		byID[e.ID] = e
	}
	require.Len(t, rep.Results, len(f.Scenarios), "exactly one result per scenario")
	// Every body reference an event carries was confirmed by an earlier
	// 201 upload receipt.
	confirmed := map[string]bool{}
	for _, r := range rc.Entries {
		switch r.Kind {
		case KindUpload:
			if r.Status == http.StatusCreated && r.Ref != nil {
				require.False(t, confirmed[*r.Ref], "a receiver reference was allocated twice")
				confirmed[*r.Ref] = true
			}
		case KindReceived, KindObserved:
			for _, ref := range refsOf(r.Message) {
				require.True(t, confirmed[ref], "%s %s%s refers to content not confirmed before it", r.Kind, r.ID, r.EventID)
			}
		}
	}
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		e := byID[sc.ID]
		if !sc.Runs(transport) {
			require.Equal(t, "inapplicable", e.Status, sc.ID)
			continue
		}
		t.Run(sc.ID, func(t *testing.T) {
			require.Equal(t, "passed", e.Status, "%s: %s\nactual: %s", sc.ID, e.Error, e.Actual)
			require.NoError(t, interop.CompareExact(sc.Expected, e.Actual), "actual: %s", e.Actual)
			verifyProof(t, sc, rc)
		})
	}
}

func verifyProof(t *testing.T, sc *Scenario, rc *Receipts) {
	ids := map[string]string{} // request id → key
	for key, raw := range sc.Requests {
		var head struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal(raw, &head))
		ids[head.ID] = key
	}
	shas := map[string]bool{}
	for _, st := range sc.Steps {
		if st.Op == OpUpload {
			b, err := base64.StdEncoding.DecodeString(st.BodyBase64)
			require.NoError(t, err)
			shas[digest(b)] = true
			if st.DeclaredSHA256 != "" {
				shas[st.DeclaredSHA256] = true
			}
		}
		for _, a := range st.Attachments {
			b, err := base64.StdEncoding.DecodeString(a.BodyBase64)
			require.NoError(t, err)
			shas[digest(b)] = true
		}
	}
	counts := map[string]int{}
	first := map[string]int{}
	var observed []string
	var uploads []UploadProof
	for i, r := range rc.Entries {
		id := r.ID
		if r.Kind == KindObserved {
			id = r.EventID
		}
		if r.Kind == KindUpload {
			if shas[r.SHA256] {
				uploads = append(uploads, UploadProof{Subscription: r.Subscription, Status: r.Status, Size: r.Size, SHA256: r.SHA256})
				if r.Status == http.StatusCreated {
					require.NotNil(t, r.Ref)
					require.NotEmpty(t, *r.Ref)
				}
			}
			continue
		}
		key, ours := ids[id]
		if !ours {
			continue
		}
		if r.Scenario != "" {
			require.Equal(t, sc.ID, r.Scenario, "a mark of another scenario names this scenario's id")
		}
		c := r.Kind + ":" + id
		counts[c]++
		if _, ok := first[c]; !ok {
			first[c] = i
		}
		switch r.Kind {
		case KindReceived:
			var msg struct {
				ID     string `json:"id"`
				Method string `json:"method"`
				Params struct {
					Event json.RawMessage `json:"event"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(r.Message, &msg))
			require.Equal(t, "hooks/intercept", msg.Method)
			require.Equal(t, id, msg.ID)
			if sc.Chain == nil {
				var req struct {
					Params struct {
						Event json.RawMessage `json:"event"`
					} `json:"params"`
				}
				require.NoError(t, json.Unmarshal(sc.Requests[key], &req))
				require.Equal(t, canon(t, req.Params.Event), canon(t, msg.Params.Event), "the received event differs from the fixture's")
			}
		case KindObserved:
			var msg struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
				Params struct {
					Event json.RawMessage `json:"event"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(r.Message, &msg))
			require.Equal(t, "hooks/observe", msg.Method)
			require.Nil(t, msg.ID, "an observation is a notification")
			require.Equal(t, canon(t, msg.Params.Event), canon(t, r.Event))
			observed = append(observed, canon(t, r.Event))
		}
	}
	want := map[string]int{}
	for c, n := range sc.Proof.Counts {
		if n > 0 {
			want[c] = n
		}
	}
	require.Equal(t, want, counts, "receipt counts")
	for _, p := range sc.Proof.Before {
		a, okA := first[p[0]]
		b, okB := first[p[1]]
		require.True(t, okA && okB, "order %v: missing receipts", p)
		require.Less(t, a, b, "%s must precede %s", p[0], p[1])
	}
	var wantObs []string
	for _, o := range sc.Proof.Observed {
		wantObs = append(wantObs, canon(t, o))
	}
	sort.Strings(wantObs)
	sort.Strings(observed)
	require.Equal(t, wantObs, observed, "observed views")
	if sc.Proof.Uploads == nil {
		sc.Proof.Uploads = []UploadProof{}
	}
	if uploads == nil {
		uploads = []UploadProof{}
	}
	require.Equal(t, sc.Proof.Uploads, uploads, "upload receipts")
}

// Synthetic local trust of the signed-token and mtls modes (CONTRACT.md):
// a fixed fixture clock years before the machine's, test-only keys.
const (
	fixtureNow   = 1700000000
	fixtureIss   = "https://issuer.interop.test"
	fixtureAud   = "https://ahp.interop.test/intercept"
	oauthKey     = "oauth-signing-key-lifecycle-CANARY"
	workloadKey  = "workload-signing-key-lifecycle-CANARY"
	clientSecret = "client-secret-lifecycle-CANARY"
)

func signHS256(t *testing.T, key, purpose string) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": fixtureIss, "aud": fixtureAud, "purpose": purpose,
		"iat": fixtureNow, "exp": fixtureNow + 600, "sub": "lifecycle-client"}).SignedString([]byte(key))
	require.NoError(t, err)
	return tok
}

// authFixture returns the server and client auth objects of a mode and the
// secrets that must stay out of reports and logs: a static token, a local
// client-credentials issuer (oauth), a pre-signed assertion (workload), or
// a CA with server and client certificates on disk (mtls).
func authFixture(t *testing.T, mode, token string) (server, client map[string]any, secrets []string) {
	switch mode {
	case "none":
		a := map[string]any{"mode": "none"}
		return a, a, nil
	case "bearer":
		a := map[string]any{"mode": "bearer", "token": token}
		return a, a, []string{token}
	case "oauth":
		issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != "lifecycle-client" ||
				r.PostForm.Get("client_secret") != clientSecret || r.PostForm.Get("audience") != fixtureAud {
				http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": signHS256(t, oauthKey, "ahp-event"), "token_type": "Bearer", "expires_in": 600})
		}))
		t.Cleanup(issuer.Close)
		server = map[string]any{"mode": "oauth", "signingKey": oauthKey, "issuer": fixtureIss, "audience": fixtureAud, "purpose": "ahp-event", "clock": fixtureNow}
		client = map[string]any{"mode": "oauth", "tokenEndpoint": issuer.URL + "/token", "clientId": "lifecycle-client", "clientSecret": clientSecret,
			"signingKey": oauthKey, "issuer": fixtureIss, "audience": fixtureAud, "purpose": "ahp-event", "clock": fixtureNow}
		return server, client, []string{oauthKey, clientSecret, "eyJ"}
	case "workload":
		assertion := signHS256(t, workloadKey, interop.PurposeWorkload)
		server = map[string]any{"mode": "workload", "signingKey": workloadKey, "issuer": fixtureIss, "audience": fixtureAud, "purpose": interop.PurposeWorkload, "clock": fixtureNow}
		client = map[string]any{"mode": "workload", "assertion": assertion, "issuer": fixtureIss, "audience": fixtureAud, "purpose": interop.PurposeWorkload}
		return server, client, []string{workloadKey, assertion, "eyJ"}
	case "mtls":
		dir := t.TempDir()
		ca, err := testpki.NewCA("lifecycle-ca", 10*time.Minute)
		require.NoError(t, err)
		caFile, err := ca.WriteFile(dir, "ca")
		require.NoError(t, err)
		srvLeaf, err := ca.Server("lifecycle-server")
		require.NoError(t, err)
		srvCert, srvKey, err := srvLeaf.WriteFiles(dir, "server")
		require.NoError(t, err)
		cliLeaf, err := ca.Client("lifecycle-client")
		require.NoError(t, err)
		cliCert, cliKey, err := cliLeaf.WriteFiles(dir, "client")
		require.NoError(t, err)
		return map[string]any{"mode": "mtls", "caFile": caFile, "certFile": srvCert, "keyFile": srvKey},
			map[string]any{"mode": "mtls", "caFile": caFile, "certFile": cliCert, "keyFile": cliKey},
			[]string{"PRIVATE KEY"}
	}
	t.Fatalf("no fixture for %s", mode)
	return nil, nil, nil
}
