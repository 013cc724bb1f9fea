package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

const shellEvent = `{"id":"evt_1","source":"urn:example:harness","type":"tool.before","time":"2026-08-24T08:51:14Z",
 "tool":{"name":"Bash","kind":"shell","input":{"command":"rm -rf /"},"origin":"native"},"call":{"id":"call_1"},"path":"example"}`

var listEvent = strings.Replace(shellEvent, "rm -rf /", "ls -l", 1)

// startHTTPBackend starts a backend process that prints "listening on
// http://ADDR" to stderr and returns its URL; cleanup stops and reaps it.
func startHTTPBackend(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(stderr)
	var url string
	for url == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("backend exited before listening: %v", err)
		}
		if _, after, ok := strings.Cut(strings.TrimSpace(line), "listening on "); ok {
			url = after
		}
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, r); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		_ = cmd.Wait()
	})
	return url + "/"
}

func probeJSON(t *testing.T, stdin string, args ...string) (outcome, []attempt) {
	t.Helper()
	// A generous default deadline for a loaded machine; a later --timeout
	// wins.
	o := ahp(t, stdin, append([]string{"probe", "--format", "json", "--timeout", "60s"}, args...)...)
	if strings.TrimSpace(o.stdout) == "" {
		return o, nil
	}
	return o, jsonLines[attempt](t, o.stdout)
}

func TestProbeGuardBackendOverBothBindings(t *testing.T) {
	url := startHTTPBackend(t, guardBin, "-http", "127.0.0.1:0", "-audit", os.DevNull)
	targets := map[string][]string{
		"http":  {url},
		"stdio": {"--", guardBin, "-stdio", "-audit", os.DevNull},
	}
	for binding, target := range targets {
		t.Run(binding, func(t *testing.T) {
			o, atts := probeJSON(t, shellEvent, append([]string{"--event", "-"}, target...)...)
			require.Equal(t, 0, o.code, o.stderr)
			require.Len(t, atts, 1)
			a := atts[0]
			require.Equal(t, "explicit deny", a.Outcome)
			require.Equal(t, []string{"deny"}, a.Effects)
			require.Nil(t, a.Failure)
			require.Equal(t, "deny", a.Settled.Permission)
			require.Equal(t, "shell command blocked by guard policy (rule 0)", a.Settled.DenyReason)

			o, atts = probeJSON(t, listEvent, append([]string{"--event", "-"}, target...)...)
			require.Equal(t, 0, o.code, o.stderr)
			require.Equal(t, "no effect", atts[0].Outcome)
			require.Equal(t, "none", atts[0].Settled.Permission)

			// Human output.
			o = ahp(t, shellEvent, append([]string{"probe", "--timeout", "60s", "--event", "-"}, target...)...)
			require.Equal(t, 0, o.code, o.stderr)
			require.Contains(t, o.stdout, "outcome: explicit deny")
			require.Contains(t, o.stdout, `settled: permission deny ("shell command blocked by guard policy (rule 0)")`)
		})
	}
}

func TestProbeFakeBackendModes(t *testing.T) {
	tests := []struct {
		mode       string
		code       int
		outcome    string
		failure    *failure
		permission string
	}{
		{mode: "no-effect", outcome: "no effect", permission: "none"},
		{mode: "deny", outcome: "explicit deny", permission: "deny"},
		{mode: "allow", outcome: "allow", permission: "allow"},
		{mode: "ask", outcome: "ask", permission: "ask"},
		{mode: "modify-input", outcome: "modification", permission: "none"},
		{mode: "timeout", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "deadline_exceeded", Stage: "receive", Reason: "timeout"}},
		{mode: "slow", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "deadline_exceeded", Stage: "receive", Reason: "timeout"}},
		{mode: "malformed-json", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "protocol_rejection", Stage: "receive", Reason: "not_response"}},
		{mode: "id-mismatch", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "protocol_rejection", Stage: "receive", Reason: "id_mismatch"}},
		{mode: "jsonrpc-error", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "remote_rpc", Stage: "receive", Reason: "jsonrpc_error", Status: -32004}},
		{mode: "crash", code: 1, outcome: "operational failure", permission: "deny",
			failure: &failure{Code: "transport", Stage: "receive", Reason: "process_exit", Status: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			// Only the modes that never answer in time wait for the deadline;
			// the others get a generous one for a loaded machine.
			timeout := "30s"
			if tc.mode == "timeout" || tc.mode == "slow" {
				timeout = "1s"
			}
			o, atts := probeJSON(t, listEvent, "--event", "-", "--timeout", timeout, "--", ahpBin, "fake-backend", "--mode", tc.mode, "--delay", "1m")
			require.Equal(t, tc.code, o.code, o.stderr)
			require.Len(t, atts, 1)
			a := atts[0]
			require.Equal(t, tc.outcome, a.Outcome)
			require.Equal(t, tc.failure, a.Failure)
			require.Equal(t, tc.permission, a.Settled.Permission)
			if tc.failure != nil {
				require.True(t, a.Settled.SyntheticDenial, "fail-closed is the default")
				require.NotNil(t, a.Simulation)
				require.Contains(t, a.Simulation.Note, "simulation")
				require.Contains(t, a.Simulation.FailClosed, "Required policy backend unavailable.")
			} else {
				require.Nil(t, a.Simulation)
			}
			if tc.mode == "modify-input" {
				require.JSONEq(t, `{"ahpFake":"replaced"}`, string(a.Settled.Input))
			}
		})
	}
}

func TestProbeFakeBackendOverHTTP(t *testing.T) {
	tests := []struct {
		mode, outcome string
		failure       *failure
	}{
		{mode: "deny", outcome: "explicit deny"},
		{mode: "id-mismatch", outcome: "operational failure", failure: &failure{Code: "protocol_rejection", Stage: "receive", Reason: "id_mismatch"}},
		{mode: "malformed-json", outcome: "operational failure", failure: &failure{Code: "protocol_rejection", Stage: "receive", Reason: "malformed_json"}},
		{mode: "jsonrpc-error", outcome: "operational failure", failure: &failure{Code: "remote_rpc", Stage: "receive", Reason: "jsonrpc_error", Status: -32004}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			url := startHTTPBackend(t, ahpBin, "fake-backend", "--http", "127.0.0.1:0", "--mode", tc.mode)
			o, atts := probeJSON(t, listEvent, "--event", "-", "--failure-policy", "fail-open", url)
			require.Len(t, atts, 1, o.stderr)
			require.Equal(t, tc.outcome, atts[0].Outcome)
			require.Equal(t, tc.failure, atts[0].Failure)
			if tc.failure != nil {
				require.Equal(t, 1, o.code)
				require.Equal(t, "none", atts[0].Settled.Permission, "fail-open proceeds")
				require.False(t, atts[0].Settled.SyntheticDenial)
			}
		})
	}
}

func TestProbeRetryAndDuplicateDelivery(t *testing.T) {
	o, atts := probeJSON(t, listEvent, "--event", "-", "--retry", "2", "--timeout", "20s", "--", ahpBin, "fake-backend", "--mode", "crash")
	require.Equal(t, 1, o.code, o.stderr)
	require.Len(t, atts, 3)
	for i, a := range atts {
		require.Equal(t, i+1, a.Attempt)
		require.Equal(t, map[bool]string{true: "first", false: "retry"}[i == 0], a.Kind)
		require.Equal(t, "evt_1", a.EventID, "a retry is the same occurrence")
		require.Equal(t, "process_exit", a.Failure.Reason)
	}

	o, atts = probeJSON(t, listEvent, "--event", "-", "--duplicate-delivery", "--", ahpBin, "fake-backend", "--mode", "deny")
	require.Equal(t, 0, o.code, o.stderr)
	require.Len(t, atts, 2)
	require.Equal(t, "duplicate", atts[1].Kind)
	require.Equal(t, []string{"duplicate delivery: same outcome (explicit deny)"}, atts[1].Findings)
}

// tokenBackend is an in-test HTTP backend that denies only when the
// request carries the expected bearer token and header.
func tokenBackend(t *testing.T, token string, hits *atomic.Int32) string {
	t.Helper()
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("token accepted")}}, nil
	}}
	require.NoError(t, h.Validate())
	// Compile the canonical validator before the first request: under the
	// race detector on a loaded machine it takes seconds.
	require.NoError(t, validate.Default().Validate("intercept-request.schema.json", []byte(`{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{"protocolVersion":"draft","event":`+listEvent+`,"capabilities":{"effects":["deny"]},"state":{"permission":"none","candidate":null,"flow":"none"}}}`)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("X-Probe") != "yes" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hooks"
}

func TestProbeBearerTokenAndExport(t *testing.T) {
	const token = "probe-secret-token-value"
	var hits atomic.Int32
	url := tokenBackend(t, token, &hits)
	dir := t.TempDir()
	bundlePath := filepath.Join(dir, "bundle.json")

	cmd := exec.Command(ahpBin, "probe", "--timeout", "60s", "--event", "-", "--bearer-token-env", "PROBE_TOKEN", "--header", "X-Probe: yes", "--export", bundlePath, "--verbose", url)
	cmd.Env = append(os.Environ(), "PROBE_TOKEN="+token)
	cmd.Stdin = strings.NewReader(listEvent)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "outcome: explicit deny")
	require.Contains(t, string(out), `  > {"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept"`, "--verbose prints the raw request")
	require.Contains(t, string(out), `  < {"jsonrpc":"2.0","id":"evt_1","result":`, "--verbose prints the raw response")
	require.NotContains(t, string(out), token)

	data, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	require.NotContains(t, string(data), token)
	var b struct {
		Event    json.RawMessage `json:"event"`
		Attempts []struct {
			Outcome   string     `json:"outcome"`
			Exchanges []exchange `json:"exchanges"`
		} `json:"attempts"`
		Result *settled `json:"result"`
	}
	require.NoError(t, json.Unmarshal(data, &b))
	require.JSONEq(t, listEvent, string(b.Event))
	require.Len(t, b.Attempts, 1)
	require.Equal(t, "explicit deny", b.Attempts[0].Outcome)
	require.Len(t, b.Attempts[0].Exchanges, 1)
	x := b.Attempts[0].Exchanges[0]
	require.Equal(t, "hooks/intercept", x.Method)
	require.Equal(t, 200, x.Status)
	var req struct {
		Method string `json:"method"`
	}
	require.NoError(t, json.Unmarshal(x.Request, &req))
	require.Equal(t, "hooks/intercept", req.Method)
	require.Contains(t, *x.Response, "token accepted")
	require.Equal(t, "deny", b.Result.Permission)

	// The bundle is never overwritten: a second probe refuses before I/O.
	before := hits.Load()
	cmd = exec.Command(ahpBin, "probe", "--event", "-", "--bearer-token-env", "PROBE_TOKEN", "--export", bundlePath, url)
	cmd.Env = append(os.Environ(), "PROBE_TOKEN="+token)
	cmd.Stdin = strings.NewReader(listEvent)
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode(), string(out))
	require.Equal(t, before, hits.Load())
	after, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	require.Equal(t, data, after)

	// Without the token the backend refuses: a transport failure, and the
	// token variable must be set at all.
	o, atts := probeJSON(t, listEvent, "--event", "-", "--header", "X-Probe: yes", url)
	require.Equal(t, 1, o.code)
	require.Equal(t, &failure{Code: "transport", Stage: "receive", Reason: "http_status", Status: 401}, atts[0].Failure)
	require.Equal(t, 2, ahp(t, listEvent, "probe", "--event", "-", "--bearer-token-env", "AHP_SURELY_UNSET_VARIABLE", url).code)
}

func TestProbeValidatesBeforeIO(t *testing.T) {
	var hits atomic.Int32
	url := tokenBackend(t, "x", &hits)
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.json", strings.Replace(listEvent, `"origin":"native"`, `"origin":"native","bogus":1`, 1))
	o := ahp(t, "", "probe", "--event", bad, url)
	require.Equal(t, 1, o.code)
	require.Contains(t, o.stderr, bad+`:/tool/bogus: unexpected member "bogus"`)
	o = ahp(t, `{"type":"tool.before"}`, "probe", "--event", "-", url)
	require.Equal(t, 1, o.code)
	require.Contains(t, o.stderr, `<stdin>:(root): missing required member "id"`)
	o = ahp(t, `{"type":"tool.before"}`, "probe", "--format", "json", "--event", "-", url)
	require.Equal(t, 1, o.code)
	reps := jsonLines[checkReport](t, o.stdout)
	require.Len(t, reps, 1)
	require.False(t, reps[0].Valid)
	members := []string{}
	for _, p := range reps[0].Problems {
		members = append(members, p.Member)
	}
	require.Contains(t, members, "id")
	require.Zero(t, hits.Load())

	usage := [][]string{
		{"probe", url},
		{"probe", "--event", "-"},
		{"probe", "--event", "-", "--method", "poll", url},
		{"probe", "--event", "-", "--failure-policy", "fail-sometimes", url},
		{"probe", "--event", "-", "--timeout", "0s", url},
		{"probe", "--event", "-", "ftp://example.com/"},
		{"probe", "--event", "-", "--capabilities", `{"effects":["teleport"]}`, url},
		{"probe", "--event", "-", "--header", "X-Probe: yes", "--", ahpBin, "fake-backend", "--mode", "deny"},
		{"probe", "--event", "-", "http://policy.example.com/"}, // plain http off loopback: the harness's load-time check
	}
	for _, args := range usage {
		o := ahp(t, listEvent, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
	}
	o = ahp(t, sessionEnd, "probe", "--event", "-", "--method", "intercept", url)
	require.Equal(t, 2, o.code, o.stderr)
	require.Zero(t, hits.Load())
}

const sessionEnd = `{"id":"evt_2","source":"urn:example:harness","type":"session.end","time":"2026-08-24T09:15:00Z","session":{"id":"s1"},"outcome":"completed","reason":"example"}`

func TestProbeObservation(t *testing.T) {
	// session.end is observe-only: the probe observes by default.
	for _, target := range [][]string{
		{"--", ahpBin, "fake-backend", "--mode", "deny"},
		{startHTTPBackend(t, ahpBin, "fake-backend", "--http", "127.0.0.1:0", "--mode", "deny")},
	} {
		o, atts := probeJSON(t, sessionEnd, append([]string{"--event", "-"}, target...)...)
		require.Equal(t, 0, o.code, o.stderr)
		require.Len(t, atts, 1)
		require.Equal(t, "observe", atts[0].Method)
		require.Equal(t, "delivered (observation)", atts[0].Outcome)
		require.Nil(t, atts[0].Failure)
	}
}

func TestProbeCapabilitiesNarrowTheGrant(t *testing.T) {
	// The fake backend denies, but the probe advertises message only: the
	// server's admission refuses the unadvertised effect.
	o, atts := probeJSON(t, listEvent, "--event", "-", "--capabilities", `{"effects":["message"]}`, "--", ahpBin, "fake-backend", "--mode", "deny")
	require.Equal(t, 1, o.code, o.stderr)
	require.Equal(t, "remote_rpc", atts[0].Failure.Code)
}
