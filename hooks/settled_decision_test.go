package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// TestReplaceNotAdvertisedOverWithheldText: "A whole-list replacement MUST
// NOT be advertised or accepted when the target contains text withheld by
// metadata/omit selection or a content gap" (base/composition.md). The
// request advertises merge only; a prompt without withheld text keeps
// replace.
func TestReplaceNotAdvertisedOverWithheldText(t *testing.T) {
	const withheld = `[{"id":"m1","role":"user","parts":[{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"metadata"}]}]`
	const visible = `[{"id":"m1","role":"user","parts":[{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"hi"}]}]`
	cases := []struct {
		name    string
		items   string
		gaps    []gen.Gap
		replace bool
	}{
		{name: "metadata selection", items: withheld},
		{name: "content gap", items: visible, gaps: []gen.Gap{{Path: "/items/1", Reason: "withheld"}}},
		{name: "nothing withheld", items: visible, replace: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var items []gen.ModelVisibleItem
			require.NoError(t, json.Unmarshal([]byte(tc.items), &items))
			rec := &recorder{}
			h := inproc(t, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
				gen.EventTurnStart: hooks.Intercept().ModifyPrompt(hooks.Replace, hooks.Merge),
			}}, map[string]*recorder{"com.example.a": rec}, registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), interceptSub(`"turn.start"`, 5000, "fail-closed"))))
			res, err := h.TurnStart(context.Background(), hooks.TurnStartInput{Items: items, Gaps: tc.gaps, Turn: gen.ExecutionEventTurn{ID: "t1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser})
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			require.Len(t, rec.intercept, 1)
			caps := rec.intercept[0].Params.Capabilities
			require.NotNil(t, caps.Modify)
			require.NotNil(t, caps.Modify.Prompt)
			require.Equal(t, tc.replace, caps.Modify.Prompt.Replace)
			require.True(t, caps.Modify.Prompt.Merge)
			require.Contains(t, caps.Effects, gen.EffectFamilyModify)
		})
	}

	// With replace as the only operation, nothing of the modify family is
	// left to advertise.
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(withheld), &items))
	rec := &recorder{}
	h := inproc(t, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventTurnStart: hooks.Intercept().Deny().ModifyPrompt(hooks.Replace),
	}}, map[string]*recorder{"com.example.a": rec}, registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), interceptSub(`"turn.start"`, 5000, "fail-closed"))))
	_, err := h.TurnStart(context.Background(), hooks.TurnStartInput{Items: items, Turn: gen.ExecutionEventTurn{ID: "t1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser})
	require.NoError(t, err)
	require.Len(t, rec.intercept, 1)
	caps := rec.intercept[0].Params.Capabilities
	require.Nil(t, caps.Modify)
	require.Equal(t, []gen.EffectFamily{gen.EffectFamilyDeny}, caps.Effects)
}

// TestInitialDenialAsksNoInterceptor: decision-making stops on denial
// (AHP-COMP-001), also when the denial is the host's initial state: no
// interceptor is asked, and every one of them is owed an observation.
func TestInitialDenialAsksNoInterceptor(t *testing.T) {
	a, b := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": a, "com.example.b": b}, registration(
		backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 1000, "fail-open")),
		backendJSON("com.example.b", u, interceptSub(`"tool.before"`, 1000, "fail-open"))))
	res, err := h.ToolBefore(context.Background(), toolInput(), hooks.WithInitialState(hooks.InitialState(gen.PermissionDeny)))
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	for _, r := range []*recorder{a, b} {
		intercepted, observed := r.counts()
		require.Zero(t, intercepted)
		require.Equal(t, 1, observed)
	}
}

// TestCandidateDroppedByStop: "Deny, stop and fail-closed prevent a
// candidate from bypassing the settled decision" (base/composition.md): a
// result supplied by one interceptor is not presented after a later one
// stops the flow.
func TestCandidateDroppedByStop(t *testing.T) {
	a := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{server.Return(map[string]any{"ok": true})}
	}}
	b := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.StopFlow("halt")} }}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": a, "com.example.b": b}, registration(
		backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 1000, "fail-open")),
		backendJSON("com.example.b", u, interceptSub(`"tool.before"`, 1000, "fail-open"))))
	res, err := h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	require.Equal(t, gen.FlowStateStop, res.Flow)
	require.Len(t, res.Accepted, 2)
	require.False(t, res.Candidate.Present)

	// Without the stop, the candidate is presented.
	h = inproc(t, baseConfig(), map[string]*recorder{"com.example.a": a}, registration(
		backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 1000, "fail-open"))))
	res, err = h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	require.True(t, res.Candidate.Present)
	require.JSONEq(t, `{"ok":true}`, string(res.Candidate.Value))
}

// TestContinuationAllowanceFromEvent: the allowance advertised on
// turn.finish.before is what is left after the event's own
// continuationCount, so a turn that used its one continuation is not
// offered another (capability-auth.md: the per-request advertisement
// narrows to the remaining allowance).
func TestContinuationAllowanceFromEvent(t *testing.T) {
	cases := []struct {
		name      string
		count     string
		opts      []hooks.CallOption
		remaining int // -1: continue not advertised
	}{
		{name: "none used", count: "0", remaining: 2},
		{name: "one used", count: "1", remaining: 1},
		{name: "all used", count: "2", remaining: -1},
		{name: "WithContinuations raises it", count: "0", opts: []hooks.CallOption{hooks.WithContinuations(1)}, remaining: 1},
		{name: "WithContinuations cannot lower it", count: "2", opts: []hooks.CallOption{hooks.WithContinuations(0)}, remaining: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.ContinueFlow("again")} }}
			h := inproc(t, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
				gen.EventTurnFinishBefore: hooks.Intercept().Stop().Continue(2),
			}}, map[string]*recorder{"com.example.a": rec}, registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), interceptSub(`"turn.finish.before"`, 5000, "fail-open"))))
			res, err := h.TurnFinishBefore(context.Background(), hooks.TurnFinishBeforeInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"},
				Outcome: gen.OutcomeCompleted, ContinuationCount: json.Number(tc.count)}, tc.opts...)
			require.NoError(t, err)
			require.Len(t, rec.intercept, 1)
			flow := rec.intercept[0].Params.Capabilities.Flow
			require.NotNil(t, flow)
			if tc.remaining < 0 {
				require.NotContains(t, flow.Operations, gen.FlowOperationContinue)
				require.Nil(t, flow.RemainingContinuations)
				require.Equal(t, gen.FlowStateNone, res.Flow, "the continue was not granted")
				require.Len(t, res.Diagnostics, 1)
				return
			}
			require.Contains(t, flow.Operations, gen.FlowOperationContinue)
			require.NotNil(t, flow.RemainingContinuations)
			require.Equal(t, json.Number(fmt.Sprint(tc.remaining)), *flow.RemainingContinuations)
			require.Equal(t, gen.FlowStateContinue, res.Flow)
		})
	}
}

// TestWithCapabilitiesContinuationsNarrowOnly: a per-call grant may not
// raise the continuation allowance of a manifest that states it only as
// remainingContinuations (schema-valid: maxContinuations is optional).
func TestWithCapabilitiesContinuationsNarrowOnly(t *testing.T) {
	tmp, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), observeSub(`"turn.finish.before"`))), hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventTurnFinishBefore: hooks.Intercept().Continue(1),
	}})
	require.NoError(t, err)
	m := tmp.Manifest()
	require.NoError(t, tmp.Close())
	stripped := false
	for i := range m.Events {
		if f := m.Events[i].Capabilities; f != nil && f.Flow != nil && f.Flow.MaxContinuations != nil {
			f.Flow.MaxContinuations = nil
			stripped = true
		}
	}
	require.True(t, stripped)
	rec := &recorder{}
	h := inproc(t, hooks.Config{Source: "urn:test:harness", Manifest: &m}, map[string]*recorder{"com.example.a": rec},
		registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), interceptSub(`"turn.finish.before"`, 5000, "fail-open"))))
	in := hooks.TurnFinishBeforeInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"}, Outcome: gen.OutcomeCompleted, ContinuationCount: "0"}
	_, err = h.TurnFinishBefore(context.Background(), in, hooks.WithCapabilities(hooks.Intercept().Continue(50)))
	require.ErrorIs(t, err, hooks.ErrWidening)
	_, err = h.TurnFinishBefore(context.Background(), in, hooks.WithCapabilities(hooks.Intercept().Continue(1)))
	require.NoError(t, err)
	require.Len(t, rec.intercept, 1)
}

// metadataPreparer applies a metadata selection to every text part of
// turn.start items, as for a subscription with content.default metadata.
type metadataPreparer struct{}

func (metadataPreparer) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	b, err := gen.EncodeEvent(d.Event)
	if err != nil {
		return nil, err
	}
	ev, err := gen.ParseEvent(b)
	if err != nil {
		return nil, err
	}
	if ev.TurnStart != nil {
		for i := range ev.TurnStart.Items {
			for j := range ev.TurnStart.Items[i].Parts {
				if p := &ev.TurnStart.Items[i].Parts[j]; p.TextBodyPart != nil {
					*p = gen.ContentItem{TextMetadataPart: &gen.TextMetadataPart{ID: p.TextBodyPart.ID, Kind: "text", MediaType: "text/plain", Selection: "metadata"}}
				}
			}
		}
	}
	return ev, nil
}

// TestReplaceNotAdvertisedAfterSelection: text withheld by the receiver's
// content selection (done by the Preparer, after the canonical event was
// settled) narrows that delivery's advertisement, and a replace returned
// anyway is not admitted: the prompt the backend never saw is kept.
func TestReplaceNotAdvertisedAfterSelection(t *testing.T) {
	const replace = `{"type":"modify","target":"prompt","operation":"replace","value":[{"id":"n","role":"user","parts":[{"id":"n-t","kind":"text","mediaType":"text/plain","selection":"body","text":"replaced"}]}]}`
	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
		e, err := gen.ParseEffect([]byte(replace))
		if err != nil {
			panic(err)
		}
		return []gen.Effect{*e}
	}}
	cfg := baseConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().ModifyPrompt(hooks.Replace, hooks.Merge)
	cfg.Preparer = metadataPreparer{}
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		`{"events":["turn.start"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-open","content":{"default":"metadata"}}`))
	h := inproc(t, cfg, map[string]*recorder{"com.example.a": rec}, reg)
	var msg gen.ModelVisibleItem
	require.NoError(t, msg.UnmarshalJSON([]byte(`{"id":"m1","role":"user","parts":[{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"secret prompt"}]}`)))
	res, err := h.TurnStart(context.Background(), hooks.TurnStartInput{Items: []gen.ModelVisibleItem{msg}, Turn: gen.ExecutionEventTurn{ID: "t1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser})
	require.NoError(t, err)
	require.Len(t, rec.intercept, 1)
	caps := rec.intercept[0].Params.Capabilities
	require.NotNil(t, caps.Modify)
	require.NotNil(t, caps.Modify.Prompt)
	require.False(t, caps.Modify.Prompt.Replace)
	require.True(t, caps.Modify.Prompt.Merge)
	require.Empty(t, res.Accepted)
	require.Len(t, res.Diagnostics, 1)
	require.Contains(t, string(res.Targets[gen.ModifyTargetPrompt]), "secret prompt")
}

// answering is a custom transport whose backend answers every request
// with the same effects, whatever it was granted (no server-side
// admission).
type answering struct{ effects string }

func (a answering) Exchange(_ context.Context, msg transport.Message) ([]byte, error) {
	id, err := msg.ID.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"draft","effects":` + a.effects + `}}`), nil
}
func (answering) Notify(context.Context, transport.Message) error { return nil }
func (answering) Close() error                                    { return nil }

// TestReplaceAfterSelectionNotAdmitted: the harness itself refuses the
// replace that the narrowed advertisement did not grant, from a backend
// that sends it anyway.
func TestReplaceAfterSelectionNotAdmitted(t *testing.T) {
	cfg := baseConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().ModifyPrompt(hooks.Replace, hooks.Merge)
	cfg.Preparer = metadataPreparer{}
	cfg.Transports = map[string]transport.Transport{"com.example.a": answering{`[{"type":"modify","target":"prompt","operation":"replace","value":[{"id":"n","role":"user","parts":[{"id":"n-t","kind":"text","mediaType":"text/plain","selection":"body","text":"replaced"}]}]}]`}}
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		`{"events":["turn.start"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-open","content":{"default":"metadata"}}`)), cfg)
	require.NoError(t, err)
	defer h.Close()
	var msg gen.ModelVisibleItem
	require.NoError(t, msg.UnmarshalJSON([]byte(`{"id":"m1","role":"user","parts":[{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"secret prompt"}]}`)))
	res, err := h.TurnStart(context.Background(), hooks.TurnStartInput{Items: []gen.ModelVisibleItem{msg}, Turn: gen.ExecutionEventTurn{ID: "t1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser})
	require.NoError(t, err)
	require.Empty(t, res.Accepted)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, transport.CodeProtocolRejection, res.Diagnostics[0].Code)
	require.Contains(t, string(res.Targets[gen.ModifyTargetPrompt]), "secret prompt")
}

// TestReplaceNotAdvertisedAfterWithheldMerge: once an interceptor's merge
// brought withheld text into the target, later interceptors are no longer
// offered a whole-list replace of it.
func TestReplaceNotAdvertisedAfterWithheldMerge(t *testing.T) {
	const meta = `{"id":"r1","kind":"text","mediaType":"text/plain","selection":"metadata"}`
	merge := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		// The part as this receiver sees it (a body receiver: a body gap).
		seen, err := req.Params.Event.ContextCompactAfter.Items[0].Parts[0].MarshalJSON()
		if err != nil {
			panic(err)
		}
		e, err := gen.ParseEffect([]byte(`{"type":"modify","target":"summary","operation":"merge","value":[` + string(seen) + `]}`))
		if err != nil {
			panic(err)
		}
		return []gen.Effect{*e}
	}}
	later := &recorder{}
	cfg := baseConfig()
	cfg.Capabilities[gen.EventContextCompactAfter] = hooks.Intercept().ModifySummary(hooks.Replace, hooks.Merge)
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.a": merge, "com.example.b": later}, registration(
		backendJSON("com.example.a", u, interceptSub(`"context.compact.after"`, 1000, "fail-closed")),
		backendJSON("com.example.b", u, interceptSub(`"context.compact.after"`, 1000, "fail-closed"))))
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m1","role":"assistant","parts":[`+meta+`]}]`), &items))
	var summary gen.TextParts
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"s1","kind":"text","mediaType":"text/plain","selection":"body","text":"Summary."}]`), &summary))
	var execution gen.ExecutionEventExecution
	require.NoError(t, json.Unmarshal([]byte(`{"status":"executed"}`), &execution))
	res, err := h.ContextCompactAfter(context.Background(), hooks.ContextCompactAfterInput{Items: items, Summary: summary,
		Removed: []gen.ExecutionEventContextCompactAfterRemovedItem{}, Execution: execution})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, res.Accepted, 2)
	require.Len(t, merge.intercept, 1)
	require.True(t, merge.intercept[0].Params.Capabilities.Modify.Summary.Replace)
	require.Len(t, later.intercept, 1)
	require.False(t, later.intercept[0].Params.Capabilities.Modify.Summary.Replace)
	require.True(t, later.intercept[0].Params.Capabilities.Modify.Summary.Merge)
}

// TestContinuationCountersWithoutAdmission: the counters after settlement
// are the advertised ones when nothing resolves to continue, also when no
// response was admitted at all (a failed or empty delivery): "otherwise
// unchanged", never zero; a continuation consumes one unit.
func TestContinuationCountersWithoutAdmission(t *testing.T) {
	cases := []struct {
		name             string
		effects          func(*gen.InterceptRequest) []gen.Effect
		remaining, count int
	}{
		{name: "no effects", remaining: 2, count: 0},
		// An ungranted deny: the backend's admission refuses it and answers
		// with a JSON-RPC error, a failed delivery.
		{name: "failed delivery", effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }, remaining: 2, count: 0},
		{name: "message only", effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Message("hi")} }, remaining: 2, count: 0},
		{name: "continue", effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.ContinueFlow("again")} }, remaining: 1, count: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{effects: tc.effects}
			h := inproc(t, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
				gen.EventTurnFinishBefore: hooks.Intercept().Stop().Continue(2).Message(),
			}}, map[string]*recorder{"com.example.a": rec}, registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:9/x"), interceptSub(`"turn.finish.before"`, 5000, "fail-open"))))
			res, err := h.TurnFinishBefore(context.Background(), hooks.TurnFinishBeforeInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"},
				Outcome: gen.OutcomeCompleted, ContinuationCount: "0"})
			require.NoError(t, err)
			require.Equal(t, tc.remaining, res.RemainingContinuations)
			require.Equal(t, tc.count, res.ContinuationCount)
		})
	}
}
