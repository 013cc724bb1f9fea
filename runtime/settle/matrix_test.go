package settle_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// probe is one effect family exercised by the matrix.
type probe struct {
	name   string
	family gen.EffectFamily
	op     string // flow operation for the flow probes
}

var probes = []probe{
	{"deny", gen.EffectFamilyDeny, ""},
	{"allow", gen.EffectFamilyAllow, ""},
	{"ask", gen.EffectFamilyAsk, ""},
	{"modify", gen.EffectFamilyModify, ""},
	{"message", gen.EffectFamilyMessage, ""},
	{"return", gen.EffectFamilyReturn, ""},
	{"flow-stop", gen.EffectFamilyFlow, "stop"},
	{"flow-continue", gen.EffectFamilyFlow, "continue"},
	{"inject", gen.EffectFamilyInject, ""},
}

// targetRole is the role a supplied message must carry at a boundary.
func targetRole(name gen.EventName) string {
	switch name {
	case gen.EventUserMessageInbound:
		return "user"
	case gen.EventToolAfter:
		return "tool"
	}
	return "assistant"
}

// returnValue is a valid supplied result for a boundary.
func returnValue(name gen.EventName) string {
	switch name {
	case gen.EventModelRequestBefore:
		return `[` + message("r1", "assistant", "answer") + `]`
	case gen.EventContextCompactBefore:
		return `[` + textPart("sum1", "supplied summary") + `]`
	case gen.EventUserElicitationRequest:
		return `{"action":"accept","content":{"answer":"yes"}}`
	case gen.EventToolBefore:
		return `{"ok":1}`
	}
	return `1`
}

// modifyEffect is a valid merge on the boundary's target (or an input
// merge where the boundary has no target).
func modifyEffect(name gen.EventName) string {
	info, _ := gen.LookupEvent(name)
	if len(info.ModifyTargets) == 0 {
		return `{"type":"modify","target":"input","operation":"merge","value":{"x":1}}`
	}
	switch t := info.ModifyTargets[0]; t {
	case gen.ModifyTargetInput:
		return `{"type":"modify","target":"input","operation":"merge","value":{"x":1}}`
	case gen.ModifyTargetInstructions, gen.ModifyTargetSummary:
		return `{"type":"modify","target":"` + string(t) + `","operation":"merge","value":[` + textPart("new1", "more") + `]}`
	case gen.ModifyTargetWorkspace:
		return `{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/r"]}}`
	case gen.ModifyTargetContent:
		if name == gen.EventUserElicitationResult {
			return `{"type":"modify","target":"content","operation":"merge","value":{"answer":"no"}}`
		}
	}
	return `{"type":"modify","target":"` + string(info.ModifyTargets[0]) + `","operation":"merge","value":[` + message("new1", targetRole(name), "added") + `]}`
}

// probeEffect renders the probe's effect at a boundary.
func probeEffect(name gen.EventName, p probe) string {
	switch p.name {
	case "deny":
		return `{"type":"deny","reason":"no"}`
	case "allow", "ask":
		return `{"type":"` + p.name + `"}`
	case "modify":
		return modifyEffect(name)
	case "message":
		return `{"type":"message","text":"hi"}`
	case "return":
		return `{"type":"return","value":` + returnValue(name) + `}`
	case "flow-stop":
		return `{"type":"flow","operation":"stop","reason":"r"}`
	case "flow-continue":
		return `{"type":"flow","operation":"continue","instruction":"again"}`
	case "inject":
		return `{"type":"inject","target":"context","operation":"append","deliverAt":"next_turn","value":[` + message("inj1", "system", "ctx") + `]}`
	}
	return ""
}

// allowedAt reports whether the probe exists at the boundary, per the
// generated catalogue.
func allowedAt(info gen.EventInfo, p probe) bool {
	if !slices.Contains(info.EffectFamilies, p.family) {
		return false
	}
	return p.op == "" || slices.Contains(info.FlowOperations, p.op)
}

// forceGrant advertises the probe even where the boundary cannot grant it.
func forceGrant(c gen.Capabilities, p probe) gen.Capabilities {
	if !slices.Contains(c.Effects, p.family) {
		c.Effects = append(slices.Clone(c.Effects), p.family)
	}
	switch p.family {
	case gen.EffectFamilyModify:
		if c.Modify == nil {
			c.Modify = &gen.CapabilitiesModify{Input: &gen.CapabilitiesModifyInput{Replace: true, Merge: true}}
		}
	case gen.EffectFamilyFlow:
		n := json.Number("3")
		c.Flow = &gen.CapabilitiesFlow{Operations: []gen.FlowOperation{gen.FlowOperationStop, gen.FlowOperationContinue}, RemainingContinuations: &n, ContinuationCount: &n}
	case gen.EffectFamilyInject:
		c.Inject = &gen.CapabilitiesInject{Context: gen.CapabilitiesInjectContext{Append: true, DeliverAt: []gen.DeliverAt{gen.DeliverAtNextTurn}}}
	}
	return c
}

// TestEventFamilyMatrix applies every effect family at every one of the 19
// interceptable events: admitted (with the resulting state) where the
// boundary grants it, rejected without the grant, and rejected as
// boundary_forbidden where the boundary can never grant it, even when
// advertised. A rejection never changes state.
func TestEventFamilyMatrix(t *testing.T) {
	events := interceptable()
	require.Len(t, events, 19)
	for _, info := range events {
		for _, p := range probes {
			t.Run(string(info.Name)+"/"+p.name, func(t *testing.T) {
				eff := `[` + probeEffect(info.Name, p) + `]`
				if !allowedAt(info, p) {
					o := newOcc(t, info.Name)
					before := o.State()
					requireRejected(t, apply(t, o, forceGrant(fullGrant(t, info.Name), p), eff), settle.ReasonBoundaryForbidden)
					require.Equal(t, before, o.State())
					requireRejected(t, settle.Admit(event(t, info.Name), forceGrant(fullGrant(t, info.Name), p), effects(t, eff)), settle.ReasonBoundaryForbidden)
					return
				}
				// Not advertised: rejected, nothing changes.
				o := newOcc(t, info.Name)
				before := o.State()
				requireRejected(t, apply(t, o, without(fullGrant(t, info.Name), p.family), eff), settle.ReasonEffectNotGranted)
				require.Equal(t, before, o.State())

				// Advertised: admitted and applied.
				require.NoError(t, settle.Admit(event(t, info.Name), fullGrant(t, info.Name), effects(t, eff)))
				require.NoError(t, apply(t, o, fullGrant(t, info.Name), eff))
				s := o.State()
				require.Len(t, s.Accepted, 1)
				require.Equal(t, 1, s.Accepted[0].Index, "the rejected response was offered first")
				checkProbeState(t, info, p, before, s)
				requireCanonicalRequest(t, o, fullGrant(t, info.Name))
			})
		}
	}
}

// checkProbeState asserts the state one accepted probe produces.
func checkProbeState(t *testing.T, info gen.EventInfo, p probe, before, s settle.State) {
	t.Helper()
	wantPerm := gen.PermissionNone
	switch p.name {
	case "deny":
		wantPerm = gen.PermissionDeny
		require.True(t, s.Denied())
	case "allow":
		wantPerm = gen.PermissionAllow
	case "ask":
		wantPerm = gen.PermissionAsk
		require.True(t, s.RequiresApproval())
	}
	require.Equal(t, wantPerm, s.Permission)
	if p.name == "message" {
		require.Equal(t, []string{"hi"}, s.Messages)
	} else {
		require.Empty(t, s.Messages)
	}
	switch p.name {
	case "flow-stop":
		require.Equal(t, gen.FlowStateStop, s.Flow)
		require.Equal(t, "r", s.StopReason)
		require.True(t, s.Stopped())
	case "flow-continue":
		require.Equal(t, gen.FlowStateContinue, s.Flow)
		require.Equal(t, []string{"again"}, s.Instructions)
		require.Equal(t, "again", s.ContinueInstruction)
		require.Equal(t, 2, s.RemainingContinuations)
		require.Equal(t, 1, s.ContinuationCount, "granted count 0 plus the pending step")
	default:
		require.Equal(t, gen.FlowStateNone, s.Flow)
	}
	if p.name == "inject" {
		require.Len(t, s.Injections, 1)
		require.Equal(t, gen.DeliverAtNextTurn, s.Injections[0].DeliverAt)
	} else {
		require.Empty(t, s.Injections)
	}
	if p.name == "return" {
		require.True(t, s.Candidate.Present)
		requireJSONEq(t, returnValue(info.Name), s.Candidate.Value)
	} else {
		require.False(t, s.Candidate.Present)
	}
	if p.name != "modify" {
		require.Equal(t, before.Input, s.Input)
		require.Equal(t, before.Targets, s.Targets)
		return
	}
	target := info.ModifyTargets[0]
	if target == gen.ModifyTargetInput {
		var in map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(s.Input, &in))
		require.Equal(t, `1`, string(in["x"]))
		return
	}
	got := s.Targets[target]
	require.NotNil(t, got, "target %s", target)
	switch target {
	case gen.ModifyTargetWorkspace:
		requireJSONEq(t, `{"cwd":"/new","workspaceRoots":["/r"]}`, got)
	case gen.ModifyTargetContent:
		if info.Name == gen.EventUserElicitationResult {
			requireJSONEq(t, `{"answer":"no","count":2}`, got)
			break
		}
		fallthrough
	default:
		var was, now []json.RawMessage
		require.NoError(t, json.Unmarshal(before.Targets[target], &was))
		require.NoError(t, json.Unmarshal(got, &now))
		require.Len(t, now, len(was)+1, "merge appends")
		require.Equal(t, was, now[:len(was)], "existing entries survive")
	}
}
