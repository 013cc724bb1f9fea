package interop

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// inProcessClient runs the client against the scripted server's HTTP
// handler through the SDK's in-process transport (same bytes, no socket).
func inProcessClient(t *testing.T, f *ScenarioFile) *interopClient {
	t.Helper()
	s, err := newScriptServer(discardLogger(), TransportHTTP, mustServerAuth(t, AuthConfig{Mode: AuthNone}), f)
	require.NoError(t, err)
	tr := transport.NewInProcess(s.ahpHandler(), transport.InProcessOptions{Path: "/intercept"})
	c := &interopClient{cfg: &ClientConfig{Transport: TransportHTTP}, log: discardLogger(), tr: tr, startup: time.Minute, perRow: 10 * time.Second}
	require.NoError(t, c.startHooks(f))
	t.Cleanup(func() { require.NoError(t, c.close()) })
	return c
}

// TestCorpusHostInvariants runs every row in process and checks what the
// report cannot show: a rejected response leaves the host's pending state
// and side-effect counters exactly as they were, and that retained state
// is the scenario's hostExpected; an accepted one publishes side effects
// consistent with its result.
func TestCorpusHostInvariants(t *testing.T) {
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	c := inProcessClient(t, f)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.ID, func(t *testing.T) {
			out := c.runScenario(context.Background(), sc)
			require.Equal(t, statusPassed, out.entry.Status, out.entry.Error)
			require.NotNil(t, out.before)
			require.NotNil(t, out.after)
			if sc.ExpectError {
				require.NotNil(t, out.rejection)
				require.Equal(t, *out.before, *out.after, "nothing partial escapes a rejected response")
				require.Zero(t, out.after.Executions)
				require.Zero(t, out.after.Prompts)
				require.Zero(t, out.after.Delivered)
				require.Zero(t, out.after.Injected)
				snap, err := json.Marshal(out.after)
				require.NoError(t, err)
				require.NoError(t, ComparePartial(sc.HostExpected, snap), "retained host state")
				return
			}
			require.Nil(t, out.rejection)
			var res actualResult
			require.NoError(t, json.Unmarshal(out.entry.Actual, &res))
			want := 0
			if res.Executed {
				want = 1
			}
			require.Equal(t, want, out.after.Executions, "execution happens once exactly when selected")
			if res.Decision == "ask" {
				require.Equal(t, 1, out.after.Prompts)
			} else {
				require.Zero(t, out.after.Prompts)
			}
			require.Equal(t, len(res.Messages), out.after.Delivered)
			if res.Injections != nil {
				require.Equal(t, len(*res.Injections), out.after.Injected)
			}
		})
	}
}

func scenarioByID(t *testing.T, f *ScenarioFile, id string) *Scenario {
	t.Helper()
	for i := range f.Scenarios {
		if f.Scenarios[i].ID == id {
			return &f.Scenarios[i]
		}
	}
	t.Fatalf("no scenario %s", id)
	return nil
}

// TestRejectedResponsesLeaveHostUntouched offers the host a rejected
// response at every stage (handed in as a host-obtained response:
// hooks.Invocation.Receive), then a valid one: the incoming candidate and
// allow survive every rejection, no message, prompt, injection or execution
// escapes, and the accepted response composes on the untouched state.
func TestRejectedResponsesLeaveHostUntouched(t *testing.T) {
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	c := inProcessClient(t, f)
	// Incoming allow + candidate, capabilities deny/allow/ask/modify/message/return.
	sc := scenarioByID(t, f, "go-appinvalid-10-keeps-incoming-candidate")
	req, err := gen.ParseInterceptRequest(sc.Request)
	require.NoError(t, err)
	h, err := newSyntheticHost(req, sc.Request)
	require.NoError(t, err)
	before := h.snapshot()
	require.Equal(t, "allow", before.Permission)
	require.NotNil(t, before.Candidate)

	id := `"` + sc.ID + `"`
	bad := []struct {
		stage string
		body  string
	}{
		{stageEnvelope, `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32004,"message":"x"}}`},
		{stageEnvelope, `not json`},
		{stageCorrelation, `{"jsonrpc":"2.0","id":"other","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"r"}]}}`},
		{stageSchema, `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"r"},{"type":"message","text":"leak"},{"type":"escalate"}]}}`},
		{stageAdmission, `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"draft","effects":[{"type":"message","text":"leak"},{"type":"return","value":1},{"type":"flow","operation":"stop","reason":"r"}]}}`},
		{stageApplication, `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"r"},{"type":"message","text":"leak"},{"type":"return","value":"leak"},{"type":"modify","target":"input","operation":"merge","value":{"task":0}}]}}`},
		// A result without effects: the harness refuses it when it is
		// received (before, with the runtime driven directly, settlement
		// refused it at staging).
		{stageSchema, `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"draft"}}`},
	}
	receive := func(body string) func(context.Context, *hooks.Invocation) error {
		return func(_ context.Context, inv *hooks.Invocation) error { return inv.Receive([]byte(body)) }
	}
	neg := *sc
	neg.ExpectError = true
	for _, b := range bad {
		out := c.settleRow(context.Background(), &neg, receive(b.body))
		require.Equal(t, statusPassed, out.entry.Status, "%s: %s", b.stage, out.entry.Error)
		require.NotNil(t, out.rejection, b.stage)
		require.Equal(t, b.stage, out.rejection.stage, out.rejection.Error())
		require.NotContains(t, out.rejection.Error(), "leak", "rejections carry no backend text")
		require.Equal(t, before, *out.before)
		require.Equal(t, before, *out.after, "stage %s leaked", b.stage)
	}

	good := `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"draft","effects":[{"type":"message","text":"kept"}]}}`
	pos := *sc
	pos.ExpectError, pos.Expected = false, json.RawMessage(`{"decision":"allow","executed":false,"messages":["kept"],"result":{"status":"cached","lines":3}}`)
	out := c.settleRow(context.Background(), &pos, receive(good))
	require.Nil(t, out.rejection)
	require.Equal(t, statusPassed, out.entry.Status, out.entry.Error)
	var res actualResult
	require.NoError(t, json.Unmarshal(out.entry.Actual, &res))
	require.Equal(t, "allow", res.Decision)
	require.False(t, res.Executed, "the surviving candidate is selected")
	require.JSONEq(t, `{"status":"cached","lines":3}`, string(res.Result))
	require.Equal(t, []string{"kept"}, res.Messages)
	require.Equal(t, 0, out.after.Executions)
	require.Equal(t, 1, out.after.Delivered)
}

// TestDeliveryFailureIsNotARejection: a negative row whose delivery fails
// (here: the per-row deadline expires against a backend that never
// answers) is failed, never passed.
func TestDeliveryFailureIsNotARejection(t *testing.T) {
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	sc := *scenarioByID(t, f, "go-schemainvalid-01-unknown-effect")
	sc.Barrier = "never-released"
	one := &ScenarioFile{Version: 1, Scenarios: []Scenario{sc}}
	s, err := newScriptServer(discardLogger(), TransportHTTP, mustServerAuth(t, AuthConfig{Mode: AuthNone}), one)
	require.NoError(t, err)
	tr := transport.NewInProcess(s.ahpHandler(), transport.InProcessOptions{Path: "/intercept"})
	c := &interopClient{cfg: &ClientConfig{Transport: TransportHTTP}, log: discardLogger(), tr: tr, startup: time.Minute, perRow: 50 * time.Millisecond}
	require.NoError(t, c.startHooks(one))
	out := c.runScenario(context.Background(), &sc)
	require.Equal(t, statusFailed, out.entry.Status)
	require.Contains(t, out.entry.Error, "delivery failed")
	require.Nil(t, out.rejection)
	s.release("never-released") // let the handler return so Close can join it
	require.NoError(t, c.close())
}

func TestPositiveInteger(t *testing.T) {
	for raw, want := range map[string]bool{
		`1`: true, `42`: true, `1.0`: true, `1e2`: true,
		`0`: false, `-1`: false, `1.5`: false, `"1"`: false, `true`: false, `null`: false, `{}`: false, ``: false,
	} {
		require.Equal(t, want, positiveInteger(json.RawMessage(raw)), raw)
	}
}
