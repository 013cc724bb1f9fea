package settle_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestContinuation covers flow continue/stop and continuation allowance
// (base/composition.md; interop README §7).
func TestContinuation(t *testing.T) {
	grant := func(remaining string, ops ...gen.FlowOperation) gen.Capabilities {
		c := fullGrant(t, gen.EventTurnFinishBefore)
		r, n := json.Number(remaining), json.Number("5")
		c.Flow = &gen.CapabilitiesFlow{Operations: ops, RemainingContinuations: &r, ContinuationCount: &n}
		return c
	}
	both := []gen.FlowOperation{gen.FlowOperationStop, gen.FlowOperationContinue}
	t.Run("several continues request one step and consume one unit", func(t *testing.T) {
		o := newOcc(t, gen.EventTurnFinishBefore)
		require.NoError(t, apply(t, o, grant("2", both...), `[{"type":"flow","operation":"continue","instruction":"one"},{"type":"flow","operation":"continue"},{"type":"flow","operation":"continue","instruction":"two"}]`))
		s := o.State()
		require.Equal(t, gen.FlowStateContinue, s.Flow)
		require.Equal(t, []string{"one", "two"}, s.Instructions)
		require.Equal(t, "one\n\ntwo", s.ContinueInstruction)
		require.Equal(t, 1, s.RemainingContinuations)
		require.Equal(t, 6, s.ContinuationCount)
		// A later receiver sees continue pending; its continue is the same step.
		require.Equal(t, gen.FlowStateContinue, *o.RequestState().Flow)
		require.NoError(t, apply(t, o, grant("2", both...), `[{"type":"flow","operation":"continue","instruction":"three"}]`))
		s = o.State()
		require.Equal(t, 1, s.RemainingContinuations)
		require.Equal(t, []string{"one", "two", "three"}, s.Instructions)
	})
	t.Run("stop wins over continue in either order and consumes nothing", func(t *testing.T) {
		for _, effs := range []string{
			`[{"type":"flow","operation":"continue","instruction":"i"},{"type":"flow","operation":"stop","reason":"s"}]`,
			`[{"type":"flow","operation":"stop","reason":"s"},{"type":"flow","operation":"continue","instruction":"i"}]`,
		} {
			o := newOcc(t, gen.EventTurnFinishBefore)
			require.NoError(t, apply(t, o, grant("2", both...), effs))
			s := o.State()
			require.Equal(t, gen.FlowStateStop, s.Flow)
			require.Equal(t, "s", s.StopReason)
			require.Equal(t, []string{"i"}, s.Instructions, "instructions are retained but imply nothing")
			require.Empty(t, s.ContinueInstruction)
			require.Equal(t, 2, s.RemainingContinuations)
			require.Equal(t, 5, s.ContinuationCount)
		}
	})
	t.Run("a later stop overrides a pending continue", func(t *testing.T) {
		o := newOcc(t, gen.EventToolAfter)
		g := fullGrant(t, gen.EventToolAfter)
		require.NoError(t, apply(t, o, g, `[{"type":"flow","operation":"continue"}]`))
		require.Equal(t, 2, o.State().RemainingContinuations)
		require.NoError(t, apply(t, o, g, `[{"type":"flow","operation":"stop","reason":"done"}]`))
		require.Equal(t, gen.FlowStateStop, o.State().Flow)
		require.Equal(t, 3, o.State().RemainingContinuations)
	})
	t.Run("exhausted allowance rejects", func(t *testing.T) {
		o := newOcc(t, gen.EventTurnFinishBefore)
		requireRejected(t, apply(t, o, grant("0", both...), `[{"type":"flow","operation":"continue"}]`), settle.ReasonContinuationExhausted)
		require.NoError(t, apply(t, o, grant("0", both...), `[{"type":"flow","operation":"stop","reason":"s"}]`))
	})
	t.Run("missing allowance rejects", func(t *testing.T) {
		c := fullGrant(t, gen.EventTurnFinishBefore)
		c.Flow.RemainingContinuations = nil
		requireRejected(t, apply(t, newOcc(t, gen.EventTurnFinishBefore), c, `[{"type":"flow","operation":"continue"}]`), settle.ReasonContinuationExhausted)
	})
	t.Run("continue needs the continue operation", func(t *testing.T) {
		requireRejected(t, apply(t, newOcc(t, gen.EventTurnFinishBefore), grant("3", gen.FlowOperationStop), `[{"type":"flow","operation":"continue"}]`), settle.ReasonOperationNotGranted)
		requireRejected(t, apply(t, newOcc(t, gen.EventTurnFinishBefore), grant("3", gen.FlowOperationContinue), `[{"type":"flow","operation":"stop","reason":"r"}]`), settle.ReasonOperationNotGranted)
	})
}

// TestInject covers inject delivery points and value rules.
func TestInject(t *testing.T) {
	g := fullGrant(t, gen.EventModelRequestBefore)
	ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"model.request.before","model":{"id":"m","provider":"p"},"attempt":{"id":"a","number":1},"params":{},"items":[{"id":"u1","role":"user","parts":[`+textPart("u1t", "look")+`,{"id":"img1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"upload1"}}]}]}`)
	o, err := settle.New(ev, settle.Initial{})
	require.NoError(t, err)
	knownAttachment := `{"id":"img1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"upload1"}}`
	otherAttachment := `{"id":"img2","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"upload2"}}`
	inj := func(at, parts string) string {
		return `{"type":"inject","target":"context","operation":"append","deliverAt":"` + at + `","value":[{"id":"n1","role":"system","parts":[` + parts + `]}]}`
	}
	require.NoError(t, apply(t, o, g, `[`+inj("now", textPart("a", "x"))+`,`+inj("next_turn", knownAttachment)+`]`))
	s := o.State()
	require.Len(t, s.Injections, 2)
	require.Equal(t, gen.DeliverAtNow, s.Injections[0].DeliverAt)
	require.Equal(t, gen.DeliverAtNextTurn, s.Injections[1].DeliverAt)
	require.Len(t, o.RequestState().Injections, 2)
	requireRejected(t, apply(t, o, g, `[`+inj("now", otherAttachment)+`]`), settle.ReasonInvalidValue)
	require.Len(t, o.State().Injections, 2)
	c := fullGrant(t, gen.EventModelRequestBefore)
	c.Inject.Context.Append = false
	requireRejected(t, apply(t, o, c, `[`+inj("now", textPart("a", "x"))+`]`), settle.ReasonOperationNotGranted)
}

// TestMessageTargets covers list replace/merge, roles, withheld content and
// attachment identity on message-list targets.
func TestMessageTargets(t *testing.T) {
	t.Run("replace substitutes the list and merge appends duplicates", func(t *testing.T) {
		for _, name := range []gen.EventName{gen.EventTurnStart, gen.EventTurnFinishBefore, gen.EventModelRequestBefore,
			gen.EventModelResponseAfter, gen.EventToolAfter, gen.EventUserMessageInbound, gen.EventUserMessageOutbound} {
			info, _ := gen.LookupEvent(name)
			target := info.ModifyTargets[0]
			o := newOcc(t, name)
			g := fullGrant(t, name)
			m := message("x1", targetRole(name), "new")
			require.NoError(t, apply(t, o, g, fmt.Sprintf(`[{"type":"modify","target":%q,"operation":"replace","value":[%s]},{"type":"modify","target":%q,"operation":"merge","value":[%s,%s]}]`, target, m, target, m, m)), name)
			requireJSONEq(t, `[`+m+`,`+m+`,`+m+`]`, o.State().Targets[target])
			ev, err := o.Event()
			require.NoError(t, err)
			raw, err := gen.EncodeEvent(ev)
			require.NoError(t, err)
			require.Equal(t, 3, strings.Count(string(raw), `"id":"x1"`), name)
			requireCanonicalRequest(t, o, g)
		}
	})
	t.Run("roles are enforced at user message boundaries", func(t *testing.T) {
		requireRejected(t, apply(t, newOcc(t, gen.EventUserMessageInbound), fullGrant(t, gen.EventUserMessageInbound),
			`[{"type":"modify","target":"prompt","operation":"merge","value":[`+message("x", "assistant", "no")+`]}]`), settle.ReasonInvalidValue)
		requireRejected(t, apply(t, newOcc(t, gen.EventUserMessageOutbound), fullGrant(t, gen.EventUserMessageOutbound),
			`[{"type":"modify","target":"content","operation":"replace","value":[`+message("x", "user", "no")+`]}]`), settle.ReasonInvalidValue)
	})
	t.Run("withheld text forbids whole replacement but allows append", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"turn.start","turn":{"id":"t"},"trigger":"user","items":[{"id":"m1","role":"user","parts":[{"id":"p1","kind":"text","mediaType":"text/plain","selection":"omit"}]}]}`)
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		g := fullGrant(t, gen.EventTurnStart)
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"replace","value":[`+message("m1", "user", "guess")+`]}]`), settle.ReasonHiddenContent)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"merge","value":[`+message("m2", "user", "more")+`]}]`))
		// Re-supplying the withheld part unchanged is allowed; inventing one is not.
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"prompt","operation":"merge","value":[{"id":"m3","role":"user","parts":[{"id":"p9","kind":"text","mediaType":"text/plain","selection":"omit"}]}]}]`), settle.ReasonInvalidValue)
	})
	t.Run("an event gap on the target forbids whole replacement", func(t *testing.T) {
		ev := parseEvent(t, strings.Replace(eventJSON[gen.EventToolAfter], `"path":"example"`, `"path":"example","gaps":[{"path":"items","reason":"truncated"}]`, 1))
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		requireRejected(t, apply(t, o, fullGrant(t, gen.EventToolAfter), `[{"type":"modify","target":"output","operation":"replace","value":[]}]`), settle.ReasonHiddenContent)
	})
	t.Run("attachments keep their identity", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"model.request.before","model":{"id":"m","provider":"p"},"attempt":{"id":"a","number":1},"params":{},"items":[{"id":"u1","role":"user","parts":[`+textPart("u1t", "look")+`,{"id":"img1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"upload1"}}]}]}`)
		g := fullGrant(t, gen.EventModelRequestBefore)
		reorder := `[{"id":"u1","role":"user","parts":[{"id":"img1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"upload1"}},` + textPart("u1t", "look again") + `]}]`
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"request","operation":"replace","value":`+reorder+`}]`))
		edited := strings.Replace(reorder, "upload1", "upload-evil", 1)
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"request","operation":"replace","value":`+edited+`}]`), settle.ReasonInvalidValue)
		requireRejected(t, apply(t, o, g, `[{"type":"return","value":`+edited+`}]`), settle.ReasonInvalidValue)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":`+reorder+`}]`))
	})
}

// TestCompaction covers the compaction boundaries: instructions and
// summary are text-part lists; changed instructions invalidate a supplied
// summary (accepted-boundary-apis.md §Compaction).
func TestCompaction(t *testing.T) {
	g := fullGrant(t, gen.EventContextCompactBefore)
	summary := `[` + textPart("sum", "the summary") + `]`
	t.Run("changed instructions invalidate a supplied summary", func(t *testing.T) {
		o := newOcc(t, gen.EventContextCompactBefore)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":`+summary+`}]`))
		require.True(t, o.State().Candidate.Present)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"instructions","operation":"replace","value":[`+textPart("i1", "Keep decisions.")+`]}]`))
		require.True(t, o.State().Candidate.Present, "unchanged instructions keep the summary")
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"instructions","operation":"merge","value":[`+textPart("i2", "And names.")+`]}]`))
		require.False(t, o.State().Candidate.Present)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":`+summary+`},{"type":"modify","target":"instructions","operation":"merge","value":[`+textPart("i3", "Short.")+`]}]`))
		require.True(t, o.State().Candidate.Present, "a return binds after its own response's modifications")
		requireCanonicalRequest(t, o, g)
	})
	t.Run("absent instructions merge as an empty list", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"context.compact.before","trigger":"manual","items":[]}`)
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		require.Nil(t, o.State().Targets)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"instructions","operation":"merge","value":[`+textPart("i", "x")+`]}]`))
		requireJSONEq(t, `[`+textPart("i", "x")+`]`, o.State().Targets[gen.ModifyTargetInstructions])
		out, err := o.Event()
		require.NoError(t, err)
		require.Len(t, out.ContextCompactBefore.Instructions, 1)
	})
	t.Run("summary must be text parts", func(t *testing.T) {
		o := newOcc(t, gen.EventContextCompactBefore)
		requireRejected(t, apply(t, o, g, `[{"type":"return","value":[`+message("m", "assistant", "x")+`]}]`), settle.ReasonInvalidValue)
		requireRejected(t, apply(t, o, g, `[{"type":"return","value":"text"}]`), settle.ReasonInvalidValue)
	})
	t.Run("after boundary modifies the summary only", func(t *testing.T) {
		ga := fullGrant(t, gen.EventContextCompactAfter)
		o := newOcc(t, gen.EventContextCompactAfter)
		require.NoError(t, apply(t, o, ga, `[{"type":"modify","target":"summary","operation":"replace","value":[`+textPart("s2", "better")+`]}]`))
		requireJSONEq(t, `[`+textPart("s2", "better")+`]`, o.State().Targets[gen.ModifyTargetSummary])
		requireRejected(t, apply(t, o, forceGrant(ga, probe{"return", gen.EffectFamilyReturn, ""}), `[{"type":"return","value":`+summary+`}]`), settle.ReasonBoundaryForbidden)
		requireRejected(t, apply(t, o, ga, `[{"type":"modify","target":"instructions","operation":"merge","value":[]}]`), settle.ReasonBoundaryForbidden)
		ev, err := o.Event()
		require.NoError(t, err)
		require.Equal(t, "better", ev.ContextCompactAfter.Summary[0].Body.Text)
	})
	t.Run("metadata summary forbids replacement", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"context.compact.after","summary":[{"id":"item1","kind":"text","mediaType":"text/plain","selection":"metadata"}],"removed":[],"execution":{"status":"executed"}}`)
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		requireRejected(t, apply(t, o, fullGrant(t, gen.EventContextCompactAfter), `[{"type":"modify","target":"summary","operation":"replace","value":[]}]`), settle.ReasonHiddenContent)
	})
}

// TestWorkspace covers the workspace object target.
func TestWorkspace(t *testing.T) {
	g := fullGrant(t, gen.EventWorkspaceChangeBefore)
	o := newOcc(t, gen.EventWorkspaceChangeBefore)
	require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":[]}}]`))
	requireJSONEq(t, `{"cwd":"/new","workspaceRoots":[]}`, o.State().Targets[gen.ModifyTargetWorkspace])
	require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"workspace","operation":"replace","value":{"workspaceRoots":["/a"]}}]`))
	requireJSONEq(t, `{"workspaceRoots":["/a"]}`, o.State().Targets[gen.ModifyTargetWorkspace])
	ev, err := o.Event()
	require.NoError(t, err)
	require.Nil(t, ev.WorkspaceChangeBefore.Workspace.Change.Cwd)
	requireCanonicalRequest(t, o, g)
	empty := gen.Effect{ModifyWorkspace: &gen.ModifyWorkspaceEffect{Operation: gen.EffectOperationReplace}}
	requireRejected(t, o.Apply(g, result([]gen.Effect{empty})), settle.ReasonInvalidValue)
}

// TestElicitationResult covers modify(content) on an MCP form answer object
// (interaction-payloads.md §Elicitation modification target).
func TestElicitationResult(t *testing.T) {
	g := fullGrant(t, gen.EventUserElicitationResult)
	t.Run("replace, merge and re-serialization", func(t *testing.T) {
		o := newOcc(t, gen.EventUserElicitationResult)
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"content","operation":"merge","value":{"tags":["a","b"]}}]`))
		requireJSONEq(t, `{"answer":"yes","count":2,"tags":["a","b"]}`, o.State().Targets[gen.ModifyTargetContent])
		require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"content","operation":"replace","value":{"answer":"no"}}]`))
		requireJSONEq(t, `{"answer":"no"}`, o.State().Targets[gen.ModifyTargetContent])
		ev, err := o.Event()
		require.NoError(t, err)
		el := ev.UserElicitationResult.Elicitation
		require.Equal(t, gen.InteractionEventUserElicitationResultElicitationActionAccept, el.Action)
		require.Equal(t, "mcp-result-item", el.Result.Body.ID, "logical identity is kept")
		require.JSONEq(t, `{"action":"accept","content":{"answer":"no"},"_meta":{"k":"v"}}`, el.Result.Body.Text)
		requireCanonicalRequest(t, o, g)
	})
	rejected := map[string]struct {
		effects string
		reason  string
	}{
		"missing required answer": {`[{"type":"modify","target":"content","operation":"replace","value":{"count":1}}]`, settle.ReasonInvalidValue},
		"wrong answer type":       {`[{"type":"modify","target":"content","operation":"merge","value":{"count":"many"}}]`, settle.ReasonInvalidValue},
		"value outside the enum":  {`[{"type":"modify","target":"content","operation":"merge","value":{"tags":["c"]}}]`, settle.ReasonInvalidValue},
		"answer below minLength":  {`[{"type":"modify","target":"content","operation":"merge","value":{"answer":""}}]`, settle.ReasonInvalidValue},
		"list value":              {`[{"type":"modify","target":"content","operation":"merge","value":[` + message("m", "assistant", "x") + `]}]`, settle.ReasonInvalidValue},
	}
	for name, tc := range rejected {
		t.Run(name, func(t *testing.T) {
			o := newOcc(t, gen.EventUserElicitationResult)
			requireRejected(t, apply(t, o, g, tc.effects), tc.reason)
		})
	}
	t.Run("mode must be advertised", func(t *testing.T) {
		c := g
		c.Elicitation = &gen.CapabilitiesElicitation{URL: json.RawMessage(`{}`)}
		requireRejected(t, apply(t, newOcc(t, gen.EventUserElicitationResult), c, `[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`), settle.ReasonModeNotGranted)
		c.Elicitation = &gen.CapabilitiesElicitation{}
		requireRejected(t, apply(t, newOcc(t, gen.EventUserElicitationResult), c, `[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`), settle.ReasonModeNotGranted)
	})
	t.Run("the original request is host context", func(t *testing.T) {
		o, err := settle.New(event(t, gen.EventUserElicitationResult), settle.Initial{})
		require.NoError(t, err)
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`), settle.ReasonContextUnavailable)
		require.NoError(t, settle.Admit(event(t, gen.EventUserElicitationResult), g, effects(t, `[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`)))
		other := event(t, gen.EventUserElicitationRequest).UserElicitationRequest
		other.ID = "someone-else"
		_, err = settle.New(event(t, gen.EventUserElicitationResult), settle.Initial{ElicitationRequest: other})
		require.ErrorIs(t, err, settle.ErrInvalidEvent)
	})
	t.Run("metadata selection exposes no answer target", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"user.elicitation.result","session":{"id":"s1"},"parentEventId":"req1","elicitation":{"server":"example","mode":"form","action":"accept","result":{"id":"r","kind":"text","mediaType":"text/plain","selection":"metadata"}}}`)
		o, err := settle.New(ev, initialFor(t, gen.EventUserElicitationResult))
		require.NoError(t, err)
		requireRejected(t, apply(t, o, g, `[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`), settle.ReasonTargetUnavailable)
		require.Nil(t, o.State().Targets)
		require.NoError(t, apply(t, o, g, `[{"type":"message","text":"ok"}]`))
	})
}

// TestElicitationRequest covers return/deny at user.elicitation.request;
// its body is immutable.
func TestElicitationRequest(t *testing.T) {
	g := fullGrant(t, gen.EventUserElicitationRequest)
	cases := map[string]struct {
		effects string
		reason  string
	}{
		"accept with valid content": {`[{"type":"return","value":{"action":"accept","content":{"answer":"yes","tags":["b"]}}}]`, ""},
		"decline":                   {`[{"type":"return","value":{"action":"decline"}}]`, ""},
		"accept failing the schema": {`[{"type":"return","value":{"action":"accept","content":{"count":-1}}}]`, settle.ReasonInvalidValue},
		"decline with content":      {`[{"type":"return","value":{"action":"decline","content":{"answer":"x"}}}]`, settle.ReasonInvalidValue},
		"not an ElicitResult":       {`[{"type":"return","value":{"answer":"yes"}}]`, settle.ReasonInvalidValue},
		"body is immutable":         {`[{"type":"modify","target":"request","operation":"replace","value":[]}]`, settle.ReasonBoundaryForbidden},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := newOcc(t, gen.EventUserElicitationRequest)
			c := g
			if tc.reason == settle.ReasonBoundaryForbidden {
				c = forceGrant(g, probe{"modify", gen.EffectFamilyModify, ""})
			}
			err := apply(t, o, c, tc.effects)
			if tc.reason != "" {
				requireRejected(t, err, tc.reason)
				return
			}
			require.NoError(t, err)
			require.True(t, o.State().Candidate.Present)
			requireCanonicalRequest(t, o, g)
		})
	}
	t.Run("deny discards a supplied result", func(t *testing.T) {
		o := newOcc(t, gen.EventUserElicitationRequest)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":{"action":"decline"}},{"type":"deny","reason":"no"}]`))
		require.False(t, o.State().Candidate.Present)
		require.True(t, o.State().Denied())
	})
	t.Run("url mode: accept is consent without content", func(t *testing.T) {
		body := `{"mode":"url","message":"Sign in","url":"https://example.com/a","elicitationId":"e1"}`
		ev := parseEvent(t, fmt.Sprintf(`{"id":"req2",`+envelope+`,"type":"user.elicitation.request","elicitation":{"server":"s","mode":"url","request":{"id":"q","kind":"text","mediaType":"text/plain","selection":"body","text":%q}}}`, body))
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		requireRejected(t, apply(t, o, g, `[{"type":"return","value":{"action":"accept","content":{"a":"b"}}}]`), settle.ReasonInvalidValue)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":{"action":"accept"}}]`))
		c := g
		c.Elicitation = &gen.CapabilitiesElicitation{Form: json.RawMessage(`{}`)}
		requireRejected(t, apply(t, o, c, `[{"type":"return","value":{"action":"accept"}}]`), settle.ReasonModeNotGranted)
	})
	t.Run("metadata-selected request cannot take form content", func(t *testing.T) {
		ev := parseEvent(t, `{"id":"req3",`+envelope+`,"type":"user.elicitation.request","elicitation":{"server":"s","mode":"form","request":{"id":"q","kind":"text","mediaType":"text/plain","selection":"metadata"}}}`)
		o, err := settle.New(ev, settle.Initial{})
		require.NoError(t, err)
		requireRejected(t, apply(t, o, g, `[{"type":"return","value":{"action":"accept","content":{"answer":"x"}}}]`), settle.ReasonContentUnavailable)
		require.NoError(t, apply(t, o, g, `[{"type":"return","value":{"action":"cancel"}}]`))
	})
	t.Run("mode mismatch between envelope and body is invalid host input", func(t *testing.T) {
		ev := decodeEvent(t, strings.Replace(eventJSON[gen.EventUserElicitationRequest], `"mode":"form"`, `"mode":"url"`, 1))
		_, err := settle.New(ev, settle.Initial{})
		require.ErrorIs(t, err, settle.ErrInvalidEvent)
	})
}
