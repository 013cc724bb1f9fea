package compaction

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// wireCorpus is testdata/interop/compaction-wire.json.
type wireCorpus struct {
	Canary        string            `json:"canary"`
	Rules         map[string]string `json:"rules"`
	Subscriptions []Subscription    `json:"subscriptions"`
	Cases         []wireCase        `json:"cases"`
}

type wireCase struct {
	Name          string            `json:"name"`
	Rules         []string          `json:"rules"`
	Subscriptions []json.RawMessage `json:"subscriptions,omitempty"`
	Input         json.RawMessage   `json:"input,omitempty"`
	Raw           json.RawMessage   `json:"raw,omitempty"`
	Expect        json.RawMessage   `json:"expect,omitempty"`
	Error         int               `json:"error,omitempty"`
}

// rulesCheckedByCode are wire rules asserted by TestWireCorpus's own code
// over every case rather than by one case.
var rulesCheckedByCode = map[string]bool{"receipts": true, "bearer": true}

func loadWire(t *testing.T) wireCorpus {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "interop", "compaction-wire.json"))
	require.NoError(t, err)
	var c wireCorpus
	require.NoError(t, decodeStrict(raw, &c))
	return c
}

func schemaDir(t *testing.T) string {
	t.Helper()
	// The SDK's embedded copies are byte-exact copies of the protocol's
	// schema/draft directory.
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "schemas"))
	require.NoError(t, err)
	return dir
}

// wireReceiver is a started `compaction-wire ... server`.
type wireReceiver struct {
	endpoint string
	store    string
	subs     string
	stderr   *lockedBuffer
	stop     func()
}

func startWire(t *testing.T, c wireCorpus, tokens map[string]string) *wireReceiver {
	t.Helper()
	dir := t.TempDir()
	subs := filepath.Join(dir, "SUBS.json")
	body, err := json.Marshal(SubsFile{Subscriptions: c.Subscriptions})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(subs, body, 0o600))
	store := filepath.Join(dir, "store")
	cmd := exec.Command(binary(t, "compaction-wire"), schemaDir(t), store, subs, "server")
	tj, err := json.Marshal(tokens)
	require.NoError(t, err)
	cmd.Env = append(os.Environ(), TokensEnv+"="+string(tj))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadBytes('\n')
	require.NoError(t, err, "receiver stderr: %s", stderr.String())
	var ready struct {
		Endpoint string `json:"endpoint"`
	}
	require.NoError(t, decodeStrict(line, &ready))
	return &wireReceiver{endpoint: ready.Endpoint, store: store, subs: subs, stderr: stderr, stop: func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, out)
		require.NoError(t, cmd.Wait())
	}}
}

// receipts reads STORE/receipts.jsonl.
func readReceipts(t *testing.T, store string) []receipt {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(store, ReceiptsFile))
	require.NoError(t, err)
	var out []receipt
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var r receipt
		require.NoError(t, decodeStrict(line, &r))
		out = append(out, r)
	}
	return out
}

// TestWireCorpus runs the wire corpus: the built receiver over loopback
// HTTP with one fresh bearer token per subscription (and a stdio receiver
// process per delivery where a case asks for it), the built host reading
// every case, then the oracle over the host's output and the receipts.
func TestWireCorpus(t *testing.T) {
	c := loadWire(t)
	covered := map[string]bool{}
	for r := range rulesCheckedByCode {
		covered[r] = true
	}
	for _, cs := range c.Cases {
		for _, r := range cs.Rules {
			_, ok := c.Rules[r]
			require.True(t, ok, "%s: unknown rule %q", cs.Name, r)
			covered[r] = true
		}
	}
	for r := range c.Rules {
		require.True(t, covered[r], "rule %q has no case", r)
	}

	tokens := map[string]string{}
	for _, s := range c.Subscriptions {
		tokens[s.Name] = randomToken(t)
	}
	rcv := startWire(t, c, tokens)
	stdioStore := filepath.Join(t.TempDir(), "stdio-store")

	// The host input: the endpoint filled in; a stdio subscription gets
	// the receiver command of its subscription instead.
	var cases []map[string]any
	for _, cs := range c.Cases {
		hc := map[string]any{"name": cs.Name, "endpoint": rcv.endpoint}
		if cs.Raw != nil {
			hc["raw"] = cs.Raw
		} else {
			hc["input"] = cs.Input
			var subs []map[string]any
			for _, raw := range cs.Subscriptions {
				var s map[string]any
				require.NoError(t, json.Unmarshal(raw, &s))
				if s["stdio"] == true {
					delete(s, "stdio")
					s["command"] = []string{binary(t, "compaction-wire"), schemaDir(t), stdioStore, rcv.subs, "stdio", s["name"].(string)}
				}
				subs = append(subs, s)
			}
			hc["subscriptions"] = subs
		}
		cases = append(cases, hc)
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	tj, err := json.Marshal(tokens)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host := exec.CommandContext(ctx, binary(t, "compaction-wire"), "host")
	host.Env = append(os.Environ(), TokensEnv+"="+string(tj))
	host.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	host.Stdout, host.Stderr = &stdout, &stderr
	require.NoError(t, host.Run(), stderr.String())
	rcv.stop()

	var outs []HostOutput
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &outs))
	require.Len(t, outs, len(c.Cases))
	receipts := readReceipts(t, rcv.store)
	receipts = append(receipts, readReceipts(t, stdioStore)...)
	byEvent := map[string][]receipt{} // by event id: each run's own events
	for _, r := range receipts {
		var env struct {
			Params struct {
				Event struct {
					ID string `json:"id"`
				} `json:"event"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(r.Request, &env))
		byEvent[env.Params.Event.ID] = append(byEvent[env.Params.Event.ID], r)
	}

	var deliveries int
	for i, cs := range c.Cases {
		out := outs[i]
		t.Run(cs.Name, func(t *testing.T) {
			require.Equal(t, cs.Name, out.Name)
			if cs.Error != 0 {
				var env struct {
					Error *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(out.Result, &env))
				require.NotNil(t, env.Error)
				require.Equal(t, cs.Error, env.Error.Code)
				return
			}
			got := digest(t, out.Result)
			require.NoError(t, interop.ComparePartial(cs.Expect, got), "expect %s\ngot    %s", cs.Expect, got)
			require.JSONEq(t, string(mustJSON(t, texts(out.Downstream))), string(mustJSON(t, texts(mustRun(t, out.Result).Downstream))))
			var rr RunResult
			require.NoError(t, json.Unmarshal(out.Result, &rr))
			require.Equal(t, rr.Trace, out.Trace)
			deliveries += len(out.Trace)
		})
	}

	// The oracle over the receipts: every delivery of the traces has
	// exactly one receipt; each request is a canonical intercept with
	// inline text and the runner's capabilities (narrowed where the
	// receiver's selection withholds text); metadata/omit receivers never
	// got the canary; accepted traces carry the effects the receipt shows.
	selection := map[string]map[string]string{} // case -> subscription -> selection
	for _, cs := range c.Cases {
		selection[cs.Name] = map[string]string{}
		for _, raw := range cs.Subscriptions {
			var s HostSubscription
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			delete(m, "stdio")
			b, _ := json.Marshal(m)
			require.NoError(t, decodeStrict(b, &s))
			selection[cs.Name][s.Name] = s.Selection
		}
	}
	runReceipts := 0
	for _, r := range receipts {
		req, err := gen.ParseInterceptRequest(r.Request)
		if err != nil || req.Params.Event.ID() == "evt-negative" {
			continue // the raw negative requests
		}
		runReceipts++
		ev := req.Params.Event
		sel := ""
		for _, sels := range selection {
			if s, ok := sels[r.Subscription]; ok && s != "" {
				sel = s
			}
		}
		caps := req.Params.Capabilities
		if caps.Modify == nil {
			caps.Modify = &gen.CapabilitiesModify{}
		}
		switch {
		case ev.ContextCompactBefore != nil:
			require.Equal(t, "context.compact.before", ev.Type())
			require.Nil(t, caps.Modify.Summary)
			if sel == "" {
				require.True(t, caps.Modify.Instructions.Replace, r.Subscription)
			}
			require.False(t, caps.Modify.Instructions != nil && caps.Modify.Instructions.Merge)
		case ev.ContextCompactAfter != nil:
			require.Nil(t, caps.Modify.Instructions)
			if sel == "" {
				require.True(t, caps.Modify.Summary.Replace, r.Subscription)
			}
			require.False(t, caps.Modify.Summary != nil && caps.Modify.Summary.Merge)
		default:
			t.Fatalf("receipt of another event: %s", ev.Type())
		}
		if sel == "metadata" || sel == "omit" {
			require.NotContains(t, string(r.Request), c.Canary, "%s (%s) got body text", r.Subscription, sel)
			require.NotContains(t, string(r.Request), `"text":`, "%s (%s) got a text member", r.Subscription, sel)
			require.Nil(t, caps.Modify.Instructions, "no replacement of hidden text is advertised")
			require.Nil(t, caps.Modify.Summary, "no replacement of hidden text is advertised")
		} else {
			require.Contains(t, string(r.Request), `"selection":"body","text":`, "a body receiver gets inline text parts")
		}
	}
	require.Equal(t, deliveries, runReceipts, "one receipt per traced delivery")

	// Bearer: each token reaches only its own subscription; a wrong one is
	// refused before any receipt is written, and no token reaches a log.
	for _, tok := range tokens {
		require.NotContains(t, rcv.stderr.String(), tok)
		require.NotContains(t, stderr.String(), tok)
	}
}

// TestWireBearer: the receiver refuses a missing or unknown token with 401
// and writes no receipt.
func TestWireBearer(t *testing.T) {
	c := loadWire(t)
	tokens := map[string]string{}
	for _, s := range c.Subscriptions {
		tokens[s.Name] = randomToken(t)
	}
	rcv := startWire(t, c, tokens)
	defer rcv.stop()
	body := `{"jsonrpc":"2.0","id":"e","method":"hooks/intercept","params":{}}`
	for _, auth := range []string{"", "Bearer " + randomToken(t), "Basic " + tokens["names"], "Bearer " + tokens["names"] + " x"} {
		req, err := http.NewRequest(http.MethodPost, rcv.endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, auth)
	}
	http.DefaultClient.CloseIdleConnections()
	raw, err := os.ReadFile(filepath.Join(rcv.store, ReceiptsFile))
	require.NoError(t, err)
	require.Empty(t, raw)
}

// TestWireUsage: bad arguments, a schema that is not the SDK's, and
// missing tokens are usage errors (exit 2).
func TestWireUsage(t *testing.T) {
	dir := t.TempDir()
	subs := filepath.Join(dir, "SUBS.json")
	require.NoError(t, os.WriteFile(subs, []byte(`{"subscriptions":[{"name":"a","boundary":"before","reply":"none"}]}`), 0o600))
	other := filepath.Join(dir, "schema")
	require.NoError(t, os.MkdirAll(other, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(other, "event.schema.json"), []byte(`{}`), 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"subscriptions":[{"name":"a","boundary":"during","reply":"none"}]}`), 0o600))
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{args: []string{}},
		{args: []string{"x", "y", "z", "serve"}},
		{args: []string{schemaDir(t), dir, subs, "server"}, env: TokensEnv + "="},
		{args: []string{schemaDir(t), dir, subs, "server"}, env: TokensEnv + `={"b":"t"}`},
		{args: []string{schemaDir(t), dir, subs, "server"}, env: TokensEnv + `={"a":"t","b":"t"}`},
		{args: []string{other, dir, subs, "server"}, env: TokensEnv + `={"a":"t"}`},
		{args: []string{schemaDir(t), dir, bad, "server"}, env: TokensEnv + `={"a":"t"}`},
		{args: []string{schemaDir(t), dir, subs, "stdio", "nobody"}},
		{args: []string{"host"}, env: TokensEnv + `={"a":"t"}`},
	} {
		cmd := exec.Command(binary(t, "compaction-wire"), tc.args...)
		cmd.Env = append(os.Environ(), tc.env)
		cmd.Stdin = strings.NewReader("not json")
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", tc.args)
		require.Equal(t, interop.ExitUsage, ee.ExitCode(), "%v %s", tc.args, tc.env)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func mustRun(t *testing.T, raw json.RawMessage) RunResult {
	t.Helper()
	var r RunResult
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}
