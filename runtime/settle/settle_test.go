// Requirement coverage of runtime/settle (spec/draft/requirements.json and
// the normative prose; the prose is newer where they differ):
//
//	AHP-COMP-001  interceptors settle serially; decision-making stops on denial
//	              or flow stop:
//	                TestSerialChains (ordered chains, Done after deny/stop,
//	                a rejected middle response leaves the chain on the last
//	                committed state), TestDone, TestPropertyStepwise (serial
//	                settlement equals re-sent state step by step)
//	AHP-CAP-001   only advertised effects are accepted; an unadvertised effect is
//	              an operational failure, not a no-op:
//	                TestEventFamilyMatrix (every family × 19 events: not granted ⇒
//	                effect_not_granted; outside the boundary's bounds ⇒
//	                boundary_forbidden even when advertised), TestToolBefore
//	                (operation/target/delivery-point grants),
//	                TestElicitationResult (mode grants), TestContinuation
//	                (flow operation grants), TestUnknownAndMalformedEffects
//	AHP-CAP-002   capabilities.effects is always present and deny is enforceable at
//	              tool.before:
//	                TestCapabilitiesEffectsRequired (a deny-only tool.before grant
//	                admits exactly deny; an empty grant admits no effect),
//	                TestToolBefore/deny_only_grant_rejects_return
//	AHP-DEC-001   an ordered effects array whose members are all valid and
//	              advertised; one bad member rejects the whole response:
//	                TestAtomicity, TestResultEnvelope, TestUnknownAndMalformedEffects,
//	                TestContextualFixtures, TestToolBefore (compound lists)
//	AHP-DEC-002   an accepted deny means the operation does not execute:
//	                TestToolBefore/deny*, TestDeniedNeverExecutes,
//	                TestEventFamilyMatrix/*/deny
//	AHP-DEC-003   an empty effect list is not an authorization grant:
//	                TestToolBefore/no_effect_is_not_approval, TestNoEffectIsNotApproval
//
// Related rules also covered: AHP-EDIT-001 (composition.md; absent from
// requirements.json) by TestContextualFixtures, TestToolBefore,
// TestMessageTargets, TestCompaction, TestWorkspace, TestElicitationResult;
// AHP-FAIL-002 (recheck before publishing) by TestContextCancelled;
// AHP-CORE-003 (unknown control-state fields ignored, unknown effects
// rejected) by TestInitialFromState and TestUnknownAndMalformedEffects.
package settle_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestNewEveryEvent builds an occurrence for each interceptable event and
// checks that its initial request state is canonical.
func TestNewEveryEvent(t *testing.T) {
	require.Len(t, interceptable(), 19)
	for _, info := range interceptable() {
		t.Run(string(info.Name), func(t *testing.T) {
			o := newOcc(t, info.Name)
			s := o.State()
			require.Equal(t, gen.PermissionNone, s.Permission)
			require.Equal(t, gen.FlowStateNone, s.Flow)
			require.False(t, o.Done())
			requireCanonicalRequest(t, o, fullGrant(t, info.Name))
			ev, err := o.Event()
			require.NoError(t, err)
			a, err := gen.EncodeEvent(ev)
			require.NoError(t, err)
			require.JSONEq(t, eventJSON[info.Name], string(a), "an untouched event is unchanged")
		})
	}
}

// TestNewInvalidHostInput rejects events that cannot be settled.
func TestNewInvalidHostInput(t *testing.T) {
	observeOnly := parseEvent(t, `{"id":"e",`+envelope+`,"type":"session.end","session":{"id":"s"},"outcome":"completed","reason":"done"}`)
	cases := map[string]struct {
		ev *gen.Event
		in settle.Initial
	}{
		"nil event":          {nil, settle.Initial{}},
		"empty union":        {&gen.Event{}, settle.Initial{}},
		"observe-only event": {observeOnly, settle.Initial{}},
		"unknown permission": {event(t, gen.EventToolBefore), settle.Initial{Permission: "maybe"}},
		"unknown flow":       {event(t, gen.EventToolBefore), settle.Initial{Flow: "pause"}},
		"empty instruction":  {event(t, gen.EventTurnFinishBefore), settle.Initial{Instructions: []string{""}}},
		"input not object":   {event(t, gen.EventToolBefore), settle.Initial{Input: json.RawMessage(`[1]`)}},
		"input malformed":    {event(t, gen.EventToolBefore), settle.Initial{Input: json.RawMessage(`{"a":}`)}},
		"candidate malformed": {event(t, gen.EventToolBefore),
			settle.Initial{Candidate: settle.Candidate{Present: true, Value: json.RawMessage(`{`)}}},
		"messages candidate of wrong type": {event(t, gen.EventModelRequestBefore),
			settle.Initial{Candidate: settle.Candidate{Present: true, Value: json.RawMessage(`{"a":1}`)}}},
		"provenance not object": {event(t, gen.EventToolBefore),
			settle.Initial{Candidate: settle.Candidate{Present: true, Value: json.RawMessage(`1`), Provenance: json.RawMessage(`"x"`)}}},
		"inbound role":                         {decodeEvent(t, strings.Replace(eventJSON[gen.EventUserMessageInbound], `"role":"user"`, `"role":"assistant"`, 1)), settle.Initial{}},
		"elicitation action differs from body": {decodeEvent(t, strings.Replace(eventJSON[gen.EventUserElicitationResult], `"action":"accept","result"`, `"action":"decline","result"`, 1)), settle.Initial{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := settle.New(tc.ev, tc.in)
			require.Nil(t, o)
			require.ErrorIs(t, err, settle.ErrInvalidEvent)
			require.NotErrorIs(t, err, settle.ErrRejected)
			err = settle.Admit(tc.ev, fullGrant(t, gen.EventToolBefore), nil)
			if tc.in.Permission == "" && tc.in.Flow == "" && tc.in.Instructions == nil && tc.in.Input == nil && !tc.in.Candidate.Present {
				require.ErrorIs(t, err, settle.ErrInvalidEvent)
				require.ErrorIs(t, settle.CheckEvent(tc.ev), settle.ErrInvalidEvent)
			}
		})
	}
}

// TestResultEnvelope rejects malformed results as a whole (EffectIndex -1).
func TestResultEnvelope(t *testing.T) {
	g := fullGrant(t, gen.EventToolBefore)
	cases := map[string]struct {
		res    *gen.InterceptResponseResult
		reason string
	}{
		"nil result":       {nil, settle.ReasonMissingResult},
		"wrong version":    {&gen.InterceptResponseResult{ProtocolVersion: "2025-01-01", Effects: []gen.Effect{}}, settle.ReasonUnsupportedVersion},
		"effects absent":   {&gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion}, settle.ReasonMissingEffects},
		"manifest present": {&gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}, Unknown: []gen.Member{{Name: "manifest", Value: json.RawMessage(`{}`)}}}, settle.ReasonInvalidResult},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := newOcc(t, gen.EventToolBefore)
			err := o.Apply(g, tc.res)
			requireRejected(t, err, tc.reason)
			var rej *settle.Rejection
			require.ErrorAs(t, err, &rej)
			require.Equal(t, -1, rej.EffectIndex)
		})
	}
	o := newOcc(t, gen.EventToolBefore)
	res := result(nil)
	res.Unknown = []gen.Member{{Name: "vendor", Value: json.RawMessage(`1`)}}
	require.NoError(t, o.Apply(g, res), "unknown result members are ignored")
}

// TestUnknownAndMalformedEffects rejects unknown families and effects that
// are malformed in ways the typed model can hold (hand-built values).
func TestUnknownAndMalformedEffects(t *testing.T) {
	empty := ""
	cases := map[string]struct {
		eff    gen.Effect
		reason string
	}{
		"no arm (unknown family)": {gen.Effect{}, settle.ReasonUnknownEffect},
		"two arms":                {gen.Effect{Allow: &gen.AllowEffect{}, Ask: &gen.AskEffect{}}, settle.ReasonInvalidEffect},
		"deny without reason":     {gen.Effect{Deny: &gen.DenyEffect{}}, settle.ReasonInvalidEffect},
		"deny with bad code":      {gen.Effect{Deny: &gen.DenyEffect{Reason: "r", Code: &empty}}, settle.ReasonInvalidEffect},
		"deny with bad extension": {gen.Effect{Deny: &gen.DenyEffect{Reason: "r", Extensions: json.RawMessage(`{"plain":1}`)}}, settle.ReasonInvalidEffect},
		"mismatched type":         {gen.Effect{Deny: &gen.DenyEffect{Type: "allow", Reason: "r"}}, settle.ReasonInvalidEffect},
		"stop without reason":     {gen.Effect{StopFlow: &gen.StopFlowEffect{}}, settle.ReasonInvalidEffect},
		"unknown operation":       {gen.Effect{ModifyInput: &gen.ModifyInputEffect{Operation: "patch", Value: json.RawMessage(`{}`)}}, settle.ReasonInvalidEffect},
		"input not object":        {gen.Effect{ModifyInput: &gen.ModifyInputEffect{Operation: gen.EffectOperationMerge, Value: json.RawMessage(`[1]`)}}, settle.ReasonInvalidValue},
		"input malformed":         {gen.Effect{ModifyInput: &gen.ModifyInputEffect{Operation: gen.EffectOperationMerge, Value: json.RawMessage(`{"a":}`)}}, settle.ReasonInvalidValue},
		"input absent":            {gen.Effect{ModifyInput: &gen.ModifyInputEffect{Operation: gen.EffectOperationMerge}}, settle.ReasonInvalidValue},
		"return without value":    {gen.Effect{ReturnTool: &gen.ReturnToolEffect{}}, settle.ReasonInvalidEffect},
		"return malformed value":  {gen.Effect{ReturnTool: &gen.ReturnToolEffect{Value: json.RawMessage(`{`)}}, settle.ReasonInvalidEffect},
		"inject wrong operation":  {gen.Effect{Inject: &gen.InjectEffect{Operation: "prepend", DeliverAt: gen.DeliverAtNow, Value: gen.CanonicalMessages{}}}, settle.ReasonInvalidEffect},
		"inject unknown delivery": {gen.Effect{Inject: &gen.InjectEffect{DeliverAt: "later", Value: gen.CanonicalMessages{}}}, settle.ReasonInvalidEffect},
		"inject malformed message": {gen.Effect{Inject: &gen.InjectEffect{DeliverAt: gen.DeliverAtNow,
			Value: gen.CanonicalMessages{{ID: "", Role: "robot"}}}}, settle.ReasonInvalidValue},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := newOcc(t, gen.EventToolBefore)
			before := o.State()
			msg := gen.Effect{Message: &gen.MessageEffect{Text: "valid message first"}}
			err := o.Apply(fullGrant(t, gen.EventToolBefore), result([]gen.Effect{msg, tc.eff}))
			requireRejected(t, err, tc.reason)
			var rej *settle.Rejection
			require.ErrorAs(t, err, &rej)
			require.Equal(t, 1, rej.EffectIndex)
			require.Equal(t, before, o.State())
		})
	}
}

// TestRejectionTextIsFixed checks that rejection messages carry only the
// fixed vocabulary, never backend text or values.
func TestRejectionTextIsFixed(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	secret := "sk-live-SECRET"
	err := apply(t, o, caps(t, `{"effects":["deny"]}`), `[{"type":"deny","reason":"`+secret+`"},{"type":"return","value":"`+secret+`"}]`)
	requireRejected(t, err, settle.ReasonEffectNotGranted)
	require.NotContains(t, err.Error(), secret)
	require.Equal(t, "settle: response rejected: effect 1: effect_not_granted", err.Error())
	require.True(t, errors.Is(err, settle.ErrRejected))
}

// TestAtomicity checks that one inadmissible effect rejects the whole
// response and the next receiver sees exactly the committed state.
func TestAtomicity(t *testing.T) {
	zero := json.Number("0")
	exhausted := fullGrant(t, gen.EventTurnFinishBefore)
	exhausted.Flow.RemainingContinuations = &zero
	cases := []struct {
		name   string
		event  gen.EventName
		grant  gen.Capabilities
		prior  string // accepted first
		bad    string
		reason string
	}{
		{"tool.before unknown after valid deny/message/return/modify", gen.EventToolBefore, fullGrant(t, gen.EventToolBefore),
			`[{"type":"modify","target":"input","operation":"merge","value":{"a":1}},{"type":"return","value":1}]`,
			`[{"type":"message","text":"m"},{"type":"deny","reason":"d"},{"type":"return","value":2},{"type":"modify","target":"input","operation":"replace","value":{}},{"type":"flow","operation":"continue"}]`,
			settle.ReasonBoundaryForbidden},
		{"turn.start prompt modify with unknown role target", gen.EventTurnStart, fullGrant(t, gen.EventTurnStart),
			`[{"type":"message","text":"first"}]`,
			`[{"type":"modify","target":"prompt","operation":"merge","value":[` + message("n", "user", "x") + `]},{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[]},{"type":"modify","target":"request","operation":"merge","value":[]}]`,
			settle.ReasonBoundaryForbidden},
		{"exhausted continuation is not salvaged by stop", gen.EventTurnFinishBefore, exhausted,
			`[]`,
			`[{"type":"message","text":"m"},{"type":"flow","operation":"stop","reason":"s"},{"type":"flow","operation":"continue","instruction":"i"}]`,
			settle.ReasonContinuationExhausted},
		{"outbound object content", gen.EventUserMessageOutbound, fullGrant(t, gen.EventUserMessageOutbound),
			`[{"type":"deny","reason":"already"}]`,
			`[{"type":"message","text":"m"},{"type":"modify","target":"content","operation":"merge","value":{"a":"b"}}]`,
			settle.ReasonInvalidValue},
		{"workspace change with duplicate roots", gen.EventWorkspaceChangeBefore, fullGrant(t, gen.EventWorkspaceChangeBefore),
			`[]`,
			`[{"type":"message","text":"m"},{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/a","/b"]}}]`,
			settle.ReasonInvalidValue},
		{"elicitation answers failing the form schema", gen.EventUserElicitationResult, fullGrant(t, gen.EventUserElicitationResult),
			`[{"type":"modify","target":"content","operation":"merge","value":{"count":3}}]`,
			`[{"type":"message","text":"m"},{"type":"modify","target":"content","operation":"merge","value":{"answer":"ok"}},{"type":"modify","target":"content","operation":"replace","value":{"count":1}}]`,
			settle.ReasonInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOcc(t, tc.event)
			require.NoError(t, apply(t, o, tc.grant, tc.prior))
			before := o.State()
			beforeReq := o.RequestState()
			beforeEv, err := o.Event()
			require.NoError(t, err)
			bad := effects(t, tc.bad)
			if tc.event == gen.EventWorkspaceChangeBefore {
				// Hand-built: the canonical parser already rejects duplicates.
				bad[1].ModifyWorkspace.Value.WorkspaceRoots[1] = "/a"
			}
			requireRejected(t, o.Apply(tc.grant, result(bad)), tc.reason)
			require.Equal(t, before, o.State())
			require.Equal(t, beforeReq, o.RequestState())
			ev, err := o.Event()
			require.NoError(t, err)
			require.Equal(t, beforeEv, ev)
			// Admit gives the server the same verdict, except for checks that
			// need host-only context (the original elicitation request).
			if tc.event != gen.EventUserElicitationResult {
				requireRejected(t, settle.Admit(beforeEv, tc.grant, bad), tc.reason)
			} else {
				require.NoError(t, settle.Admit(beforeEv, tc.grant, bad))
			}
		})
	}
}

// TestSerialChains settles chains of three or four responses mixing
// modify, message and deny.
func TestSerialChains(t *testing.T) {
	t.Run("tool.before", func(t *testing.T) {
		g := fullGrant(t, gen.EventToolBefore)
		o := newOcc(t, gen.EventToolBefore)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"input","operation":"merge","value":{"a":1}},{"type":"message","text":"m1"},{"type":"allow"}]`))
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":{"r":1}},{"type":"message","text":"m2"}]`))
		s := o.State()
		require.Equal(t, gen.PermissionAllow, s.Permission)
		require.True(t, s.Candidate.Present)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"input","operation":"merge","value":{"a":2}}]`))
		s = o.State()
		require.Equal(t, gen.PermissionNone, s.Permission, "changed input invalidates the earlier approval")
		require.False(t, s.Candidate.Present, "changed input invalidates the earlier candidate")
		require.False(t, o.Done())
		require.NoError(t, apply(t, o, g, `[{"type":"message","text":"m3"},{"type":"deny","reason":"no"}]`))
		s = o.State()
		require.True(t, o.Done())
		require.Equal(t, gen.PermissionDeny, s.Permission)
		require.Equal(t, []string{"m1", "m2", "m3"}, s.Messages)
		requireJSONEq(t, `{"path":"README.md","content":"example","mode":{"append":false},"a":2}`, s.Input)
		require.Len(t, s.Accepted, 4)
		for i, a := range s.Accepted {
			require.Equal(t, i, a.Index)
		}
	})
	t.Run("user.message.inbound with a rejected middle response", func(t *testing.T) {
		g := fullGrant(t, gen.EventUserMessageInbound)
		o := newOcc(t, gen.EventUserMessageInbound)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"merge","value":[`+message("m2", "user", "more")+`]},{"type":"message","text":"a"}]`))
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"replace","value":[`+message("m3", "assistant", "bad role")+`]},{"type":"message","text":"lost"}]`), settle.ReasonInvalidValue)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"replace","value":[`+message("m4", "user", "only")+`]}]`))
		require.NoError(t, apply(t, o, g, `[{"type":"deny","reason":"no"},{"type":"message","text":"b"}]`))
		s := o.State()
		require.Equal(t, []string{"a", "b"}, s.Messages)
		requireJSONEq(t, `[`+message("m4", "user", "only")+`]`, s.Targets[gen.ModifyTargetPrompt])
		require.Equal(t, []int{0, 2, 3}, []int{s.Accepted[0].Index, s.Accepted[1].Index, s.Accepted[2].Index})
		require.True(t, o.Done())
		ev, err := o.Event()
		require.NoError(t, err)
		require.Len(t, ev.UserMessageInbound.Message.Messages, 1)
		require.Equal(t, "m4", ev.UserMessageInbound.Message.Messages[0].ID)
	})
	t.Run("model.request.before", func(t *testing.T) {
		g := fullGrant(t, gen.EventModelRequestBefore)
		o := newOcc(t, gen.EventModelRequestBefore)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":[`+message("r1", "assistant", "cached")+`]},{"type":"message","text":"x"}]`))
		require.True(t, o.State().Candidate.Present)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"request","operation":"merge","value":[`+message("m2", "user", "and more")+`]}]`))
		require.False(t, o.State().Candidate.Present, "changed request invalidates the supplied response")
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":[`+message("r2", "assistant", "fresh")+`]},{"type":"flow","operation":"stop","reason":"enough"}]`))
		s := o.State()
		require.True(t, s.Candidate.Present)
		require.True(t, o.Done())
		_, ok := s.SuppliedResult()
		require.False(t, ok, "stop prevents the candidate from bypassing the decision")
	})
}

// TestDone reports the end of decision-making.
func TestDone(t *testing.T) {
	o := newOcc(t, gen.EventModelSwitchBefore)
	require.False(t, o.Done())
	require.NoError(t, apply(t, o, fullGrant(t, gen.EventModelSwitchBefore), `[{"type":"flow","operation":"stop","reason":"x"}]`))
	require.True(t, o.Done())
	o = newOcc(t, gen.EventConfigChangeBefore)
	require.NoError(t, apply(t, o, fullGrant(t, gen.EventConfigChangeBefore), `[{"type":"message","text":"x"}]`))
	require.False(t, o.Done())
	require.NoError(t, apply(t, o, fullGrant(t, gen.EventConfigChangeBefore), `[{"type":"deny","reason":"x"}]`))
	require.True(t, o.Done())
}

// TestNoEffectIsNotApproval: an empty list grants nothing (AHP-DEC-003).
func TestNoEffectIsNotApproval(t *testing.T) {
	for _, info := range interceptable() {
		o := newOcc(t, info.Name)
		for range 3 {
			require.NoError(t, apply(t, o, fullGrant(t, info.Name), `[]`))
		}
		s := o.State()
		require.Equal(t, gen.PermissionNone, s.Permission, info.Name)
		require.False(t, s.RequiresApproval())
		require.False(t, s.Denied())
		require.Len(t, s.Accepted, 3)
	}
}

// TestDeniedNeverExecutes: after an accepted deny no supplied result or
// later allow reopens execution (AHP-DEC-002).
func TestDeniedNeverExecutes(t *testing.T) {
	g := fullGrant(t, gen.EventToolBefore)
	o := newOcc(t, gen.EventToolBefore)
	require.NoError(t, apply(t, o, g, `[{"type":"deny","reason":"no"}]`))
	require.NoError(t, apply(t, o, g, `[{"type":"allow"},{"type":"return","value":1}]`))
	s := o.State()
	require.True(t, s.Denied())
	_, ok := s.SuppliedResult()
	require.False(t, ok)
	require.False(t, s.Candidate.Present)
}

// TestCapabilitiesEffectsRequired: the grant is the request's
// capabilities.effects; deny at tool.before needs only "deny" (AHP-CAP-002).
func TestCapabilitiesEffectsRequired(t *testing.T) {
	denyOnly := caps(t, `{"effects":["deny"]}`)
	o := newOcc(t, gen.EventToolBefore)
	require.NoError(t, apply(t, o, denyOnly, `[{"type":"deny","reason":"policy"}]`))
	require.True(t, o.State().Denied())
	for _, eff := range []string{`{"type":"allow"}`, `{"type":"ask"}`, `{"type":"message","text":"m"}`,
		`{"type":"flow","operation":"stop","reason":"s"}`, `{"type":"modify","target":"input","operation":"merge","value":{}}`} {
		requireRejected(t, apply(t, newOcc(t, gen.EventToolBefore), denyOnly, `[`+eff+`]`), settle.ReasonEffectNotGranted)
	}
	requireRejected(t, apply(t, newOcc(t, gen.EventToolBefore), gen.Capabilities{}, `[{"type":"deny","reason":"x"}]`), settle.ReasonEffectNotGranted)
	// Option blocks without their family, and unknown extension names, grant nothing.
	c := caps(t, `{"effects":["deny","com.example.audit"],"vendor":{"x":1}}`)
	c.Modify = &gen.CapabilitiesModify{Input: &gen.CapabilitiesModifyInput{Merge: true}}
	requireRejected(t, apply(t, newOcc(t, gen.EventToolBefore), c, `[{"type":"modify","target":"input","operation":"merge","value":{}}]`), settle.ReasonEffectNotGranted)
}

// TestContextCancelled: a cancelled context publishes nothing
// (base/failure.md §Deadlines, AHP-FAIL-002).
func TestContextCancelled(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	before := o.State()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := o.ApplyContext(ctx, fullGrant(t, gen.EventToolBefore), result(effects(t, `[{"type":"allow"}]`)), settle.ApplyOptions{})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, settle.ErrRejected)
	require.Equal(t, before, o.State())
}

// TestInitialFromState converts a received params.state, ignoring unknown
// control-state members (AHP-CORE-003).
func TestInitialFromState(t *testing.T) {
	in, err := settle.InitialFromState(nil)
	require.NoError(t, err)
	require.Equal(t, settle.Initial{}, in)

	var st gen.InterceptState
	require.NoError(t, json.Unmarshal([]byte(`{"permission":"ask","candidate":{"value":null,"provenance":{"requestId":"r1"},"x":1},"flow":"continue","instructions":["go"],"injections":[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[]}],"vendor":true}`), &st))
	in, err = settle.InitialFromState(&st)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionAsk, in.Permission)
	require.True(t, in.Candidate.Present)
	require.Equal(t, `null`, string(in.Candidate.Value))
	require.JSONEq(t, `{"requestId":"r1"}`, string(in.Candidate.Provenance))
	require.Equal(t, gen.FlowStateContinue, in.Flow)
	require.Equal(t, []string{"go"}, in.Instructions)
	require.Len(t, in.Injections, 1)

	o, err := settle.New(event(t, gen.EventToolBefore), in)
	require.NoError(t, err)
	got := o.RequestState()
	require.Equal(t, gen.PermissionAsk, got.Permission)
	require.True(t, got.Candidate.Valid)
	require.Equal(t, `null`, string(got.Candidate.Value.Value))

	st.Permission = "maybe"
	_, err = settle.InitialFromState(&st)
	require.ErrorIs(t, err, settle.ErrInvalidEvent)
}

// TestStateIsDetached: mutating a snapshot or the applied result does not
// reach the occurrence.
func TestStateIsDetached(t *testing.T) {
	o := newOcc(t, gen.EventTurnStart)
	res := result(effects(t, `[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[`+message("i", "system", "x")+`]},{"type":"message","text":"m"},{"type":"modify","target":"prompt","operation":"merge","value":[`+message("n", "user", "y")+`]}]`))
	require.NoError(t, o.Apply(fullGrant(t, gen.EventTurnStart), res))
	want := o.State()
	res.Effects[0].Inject.Value[0].ID = "mutated"
	res.Effects[2].ModifyMessages.Value[0].ID = "mutated"
	s := o.State()
	s.Messages[0] = "mutated"
	s.Injections[0].Value[0].ID = "mutated"
	s.Targets[gen.ModifyTargetPrompt][2] = 'X'
	s.Accepted[0].Effects[1].Message.Text = "mutated"
	require.Equal(t, want, o.State())
}

// TestRequestStateJSON: the shortcut for the default state encodes what
// RequestState encodes, and every other state takes the full encoding;
// AppendRequestStateJSON appends the same bytes.
func TestRequestStateJSON(t *testing.T) {
	ev := event(t, gen.EventToolBefore)
	for name, in := range map[string]settle.Initial{
		"default":      {},
		"explicit":     {Permission: gen.PermissionNone, Flow: gen.FlowStateNone},
		"allow":        {Permission: gen.PermissionAllow},
		"candidate":    {Candidate: settle.Candidate{Present: true, Value: []byte(`{"x":1}`)}},
		"instructions": {Instructions: []string{"be brief"}},
	} {
		occ, err := settle.New(ev, in)
		require.NoError(t, err, name)
		want, err := occ.RequestState().MarshalJSON()
		require.NoError(t, err)
		got, err := occ.RequestStateJSON()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), name)
		appended, err := occ.AppendRequestStateJSON([]byte("prefix:"))
		require.NoError(t, err)
		require.Equal(t, "prefix:"+string(want), string(appended), name)
	}
}

// TestCheckEventAgreesWithAdmit: CheckEvent accepts exactly the events that
// Admit without effects accepts, on every boundary's example and on event
// variants that only the settlement rules reject.
func TestCheckEventAgreesWithAdmit(t *testing.T) {
	events := map[string]*gen.Event{
		"tool input not an object":   decodeEvent(t, strings.Replace(eventJSON[gen.EventToolBefore], `"input":{"path":"README.md","content":"example","mode":{"append":false}}`, `"input":[1]`, 1)),
		"inbound role":               decodeEvent(t, strings.Replace(eventJSON[gen.EventUserMessageInbound], `"role":"user"`, `"role":"assistant"`, 1)),
		"elicitation action differs": decodeEvent(t, strings.Replace(eventJSON[gen.EventUserElicitationResult], `"action":"accept","result"`, `"action":"decline","result"`, 1)),
		"observe only":               parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"session.end","session":{"id":"s1"},"outcome":"completed","reason":"exit"}`),
	}
	for _, info := range interceptable() {
		events[string(info.Name)] = event(t, info.Name)
	}
	for name, ev := range events {
		admitErr := settle.Admit(ev, gen.Capabilities{Effects: []gen.EffectFamily{}}, nil)
		checkErr := settle.CheckEvent(ev)
		require.Equal(t, admitErr == nil, checkErr == nil, "%s: Admit %v, CheckEvent %v", name, admitErr, checkErr)
		if checkErr != nil {
			require.ErrorIs(t, checkErr, settle.ErrInvalidEvent, name)
		}
	}
}

// TestAcceptedDetached: the accepted responses of an occurrence are listed
// in order, and a State taken earlier keeps what it had when later
// responses are accepted or rejected (the first one is held in the
// occurrence's own array).
func TestAcceptedDetached(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	g := fullGrant(t, gen.EventToolBefore)
	require.NoError(t, apply(t, o, g, `[{"type":"allow"}]`))
	first := o.State()
	require.Len(t, first.Accepted, 1)
	requireRejected(t, apply(t, o, gen.Capabilities{}, `[{"type":"allow"}]`), settle.ReasonEffectNotGranted)
	require.NoError(t, apply(t, o, g, `[{"type":"message","text":"m"}]`))
	require.NoError(t, apply(t, o, g, `[]`))
	s := o.State()
	require.Equal(t, []settle.AcceptedResponse{
		{Index: 0, Effects: effects(t, `[{"type":"allow"}]`)},
		{Index: 2, Effects: effects(t, `[{"type":"message","text":"m"}]`)},
		{Index: 3, Effects: []gen.Effect{}},
	}, s.Accepted)
	require.Equal(t, []settle.AcceptedResponse{{Index: 0, Effects: effects(t, `[{"type":"allow"}]`)}}, first.Accepted)
	s.Accepted[0].Index = 9
	require.Equal(t, 0, o.State().Accepted[0].Index)
}
