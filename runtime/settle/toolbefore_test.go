package settle_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

const (
	toolInput    = `{"path":"README.md","content":"example","mode":{"append":false}}`
	changedInput = `{"path":"x","content":"example","mode":{"append":false}}`
)

// TestToolBefore settles single tool.before responses of every family.
func TestToolBefore(t *testing.T) {
	full := func(t *testing.T) gen.Capabilities { return fullGrant(t, gen.EventToolBefore) }
	onlyReplace := func(t *testing.T) gen.Capabilities {
		c := full(t)
		c.Modify = &gen.CapabilitiesModify{Input: &gen.CapabilitiesModifyInput{Replace: true}}
		return c
	}
	onlyNow := func(t *testing.T) gen.Capabilities {
		c := full(t)
		c.Inject = &gen.CapabilitiesInject{Context: gen.CapabilitiesInjectContext{Append: true, DeliverAt: []gen.DeliverAt{gen.DeliverAtNow}}}
		return c
	}
	candidate := settle.Candidate{Present: true, Value: json.RawMessage(`{"cached":1}`), Provenance: json.RawMessage(`{"requestId":"r0"}`)}
	inject := `{"type":"inject","target":"context","operation":"append","deliverAt":"%s","value":[` + message("inj1", "system", "ctx") + `]}`

	cases := []struct {
		name      string
		initial   settle.Initial
		grant     func(*testing.T) gen.Capabilities
		effects   string
		rejected  string // expected rejection reason ("" = admitted)
		perm      gen.Permission
		candidate string // expected candidate value, "" = none
		flow      gen.FlowState
		input     string
		messages  []string
		injected  int
	}{
		{name: "no effect is not approval", effects: `[]`, perm: gen.PermissionNone},
		{name: "deny", effects: `[{"type":"deny","reason":"blocked"}]`, perm: gen.PermissionDeny},
		{name: "allow", effects: `[{"type":"allow"}]`, perm: gen.PermissionAllow},
		{name: "ask", effects: `[{"type":"ask"}]`, perm: gen.PermissionAsk},
		{name: "ask wins over allow in any order", effects: `[{"type":"ask"},{"type":"allow"}]`, perm: gen.PermissionAsk},
		{name: "deny wins over ask and allow", effects: `[{"type":"allow"},{"type":"deny","reason":"no"},{"type":"ask"}]`, perm: gen.PermissionDeny},
		{name: "incoming deny is sticky", initial: settle.Initial{Permission: gen.PermissionDeny}, effects: `[{"type":"allow"}]`, perm: gen.PermissionDeny},
		{name: "incoming ask persists despite allow", initial: settle.Initial{Permission: gen.PermissionAsk}, effects: `[{"type":"allow"}]`, perm: gen.PermissionAsk},
		{name: "modify replace removes omitted fields", effects: `[{"type":"modify","target":"input","operation":"replace","value":{"path":"other.md"}}]`,
			perm: gen.PermissionNone, input: `{"path":"other.md"}`},
		{name: "modify merge is shallow with literal null", effects: `[{"type":"modify","target":"input","operation":"merge","value":{"mode":{"truncate":true},"content":null,"extra":[1]}}]`,
			perm: gen.PermissionNone, input: `{"path":"README.md","content":null,"mode":{"truncate":true},"extra":[1]}`},
		{name: "merges chain in order", effects: `[{"type":"modify","target":"input","operation":"merge","value":{"a":1}},{"type":"modify","target":"input","operation":"replace","value":{"b":2}},{"type":"modify","target":"input","operation":"merge","value":{"b":3,"c":4}}]`,
			perm: gen.PermissionNone, input: `{"b":3,"c":4}`},
		{name: "return supplies a candidate", effects: `[{"type":"return","value":{"ok":true}}]`, perm: gen.PermissionNone, candidate: `{"ok":true}`},
		{name: "return null is a supplied null", effects: `[{"type":"return","value":null}]`, perm: gen.PermissionNone, candidate: `null`},
		{name: "return zero and false are values", effects: `[{"type":"return","value":false},{"type":"return","value":0}]`, perm: gen.PermissionNone, candidate: `0`},
		{name: "return binds after modifications of its response", effects: `[{"type":"return","value":"r"},{"type":"modify","target":"input","operation":"merge","value":{"x":1}}]`,
			perm: gen.PermissionNone, candidate: `"r"`, input: `{"path":"README.md","content":"example","mode":{"append":false},"x":1}`},
		{name: "changed input invalidates incoming candidate and allow", initial: settle.Initial{Permission: gen.PermissionAllow, Candidate: candidate},
			effects: `[{"type":"modify","target":"input","operation":"merge","value":{"path":"x"}}]`, perm: gen.PermissionNone,
			input: changedInput},
		{name: "deeply equal input preserves candidate and allow", initial: settle.Initial{Permission: gen.PermissionAllow, Candidate: candidate},
			effects: `[{"type":"modify","target":"input","operation":"replace","value":{"mode":{"append":false},"content":"example","path":"README.md"}}]`,
			perm:    gen.PermissionAllow, candidate: `{"cached":1}`},
		{name: "numerically equal input preserves candidate", initial: settle.Initial{Candidate: candidate, Input: json.RawMessage(`{"n":1}`)},
			effects: `[{"type":"modify","target":"input","operation":"merge","value":{"n":1.0}}]`, perm: gen.PermissionNone, candidate: `{"cached":1}`, input: `{"n":1.0}`},
		{name: "changed input keeps ask", initial: settle.Initial{Permission: gen.PermissionAsk},
			effects: `[{"type":"modify","target":"input","operation":"merge","value":{"path":"x"}}]`, perm: gen.PermissionAsk, input: changedInput},
		{name: "allow in the modifying response binds to the new input", initial: settle.Initial{Permission: gen.PermissionAllow},
			effects: `[{"type":"allow"},{"type":"modify","target":"input","operation":"merge","value":{"path":"x"}}]`, perm: gen.PermissionAllow, input: changedInput},
		{name: "denial discards a candidate", effects: `[{"type":"return","value":1},{"type":"deny","reason":"no"}]`, perm: gen.PermissionDeny},
		{name: "denial discards an incoming candidate", initial: settle.Initial{Candidate: candidate}, effects: `[{"type":"deny","reason":"no"}]`, perm: gen.PermissionDeny},
		{name: "return cannot bypass ask", effects: `[{"type":"ask"},{"type":"return","value":1}]`, perm: gen.PermissionAsk, candidate: `1`},
		{name: "message", effects: `[{"type":"message","text":"one"},{"type":"message","text":""},{"type":"deny","reason":"not a message"}]`,
			perm: gen.PermissionDeny, messages: []string{"one", ""}},
		{name: "flow stop keeps authorization", effects: `[{"type":"allow"},{"type":"flow","operation":"stop","reason":"budget"}]`, perm: gen.PermissionAllow, flow: gen.FlowStateStop},
		{name: "inject now and next turn", effects: `[` + sprintf(inject, "now") + `,` + sprintf(inject, "next_turn") + `]`, perm: gen.PermissionNone, injected: 2},

		{name: "continue is not a tool.before operation", effects: `[{"type":"flow","operation":"continue"}]`, rejected: settle.ReasonBoundaryForbidden},
		{name: "merge needs the merge operation", grant: onlyReplace, effects: `[{"type":"modify","target":"input","operation":"merge","value":{}}]`, rejected: settle.ReasonOperationNotGranted},
		{name: "modify needs the modify family", grant: func(t *testing.T) gen.Capabilities { return without(full(t), gen.EffectFamilyModify) },
			effects: `[{"type":"modify","target":"input","operation":"replace","value":{}}]`, rejected: settle.ReasonEffectNotGranted},
		{name: "inject needs the exact delivery point", grant: onlyNow, effects: `[` + sprintf(inject, "next_turn") + `]`, rejected: settle.ReasonOperationNotGranted},
		{name: "deny only grant rejects return", grant: func(t *testing.T) gen.Capabilities { return caps(t, `{"effects":["deny"]}`) },
			effects: `[{"type":"return","value":1}]`, rejected: settle.ReasonEffectNotGranted},
		{name: "other targets are not tool.before targets", effects: `[{"type":"modify","target":"prompt","operation":"merge","value":[]}]`, rejected: settle.ReasonBoundaryForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grant := full
			if tc.grant != nil {
				grant = tc.grant
			}
			o, err := settle.New(event(t, gen.EventToolBefore), tc.initial)
			require.NoError(t, err)
			before := o.State()
			err = apply(t, o, grant(t), tc.effects)
			if tc.rejected != "" {
				requireRejected(t, err, tc.rejected)
				require.Equal(t, before, o.State(), "a rejection changes nothing")
				return
			}
			require.NoError(t, err)
			s := o.State()
			require.Equal(t, tc.perm, s.Permission)
			if tc.candidate == "" {
				require.False(t, s.Candidate.Present, "candidate %s", s.Candidate.Value)
			} else {
				require.True(t, s.Candidate.Present)
				requireJSONEq(t, tc.candidate, s.Candidate.Value)
			}
			flow := tc.flow
			if flow == "" {
				flow = gen.FlowStateNone
			}
			require.Equal(t, flow, s.Flow)
			if tc.input != "" {
				requireJSONEq(t, tc.input, s.Input)
			} else {
				requireJSONEq(t, toolInput, s.Input)
			}
			require.Equal(t, tc.messages, s.Messages)
			require.Len(t, s.Injections, tc.injected)
			require.Len(t, s.Accepted, 1)
			require.Nil(t, s.Targets, "tool.before has only the input target")
			requireCanonicalRequest(t, o, full(t))
		})
	}
}

// TestToolBeforeMergeKeepsOrder checks that merge keeps member order:
// existing members in place, new ones appended in supplied order.
func TestToolBeforeMergeKeepsOrder(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	require.NoError(t, apply(t, o, fullGrant(t, gen.EventToolBefore),
		`[{"type":"modify","target":"input","operation":"merge","value":{"z":1,"content":"new","a":2}}]`))
	require.Equal(t, `{"path":"README.md","content":"new","mode":{"append":false},"z":1,"a":2}`, string(o.State().Input))
	ev, err := o.Event()
	require.NoError(t, err)
	require.JSONEq(t, string(o.State().Input), string(ev.ToolBefore.Tool.Input))
}

// TestProvenance records candidate provenance and carries it in state.
func TestProvenance(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	err := o.ApplyContext(t.Context(), fullGrant(t, gen.EventToolBefore), result(effects(t, `[{"type":"return","value":1}]`)),
		settle.ApplyOptions{Provenance: json.RawMessage(`{ "requestId" : "r1" }`)})
	require.NoError(t, err)
	s := o.State()
	require.Equal(t, `{"requestId":"r1"}`, string(s.Candidate.Provenance))
	st := o.RequestState()
	require.True(t, st.Candidate.Valid)
	require.NotNil(t, st.Candidate.Value.Provenance)
	in, err := settle.InitialFromState(st)
	require.NoError(t, err)
	require.Equal(t, s.Candidate, in.Candidate)

	err = o.ApplyContext(t.Context(), fullGrant(t, gen.EventToolBefore), result(nil), settle.ApplyOptions{Provenance: json.RawMessage(`[1]`)})
	require.Error(t, err)
	require.NotErrorIs(t, err, settle.ErrRejected)
}

// TestNewEncodedKeepsTheGivenSnapshot: an occurrence built from an event and
// its encoding settles like one built by New, and an empty encoding is
// invalid host input.
func TestNewEncodedKeepsTheGivenSnapshot(t *testing.T) {
	ev := event(t, gen.EventToolBefore)
	encoded, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	fromEncoded, err := settle.NewEncoded(ev, encoded, settle.Initial{})
	require.NoError(t, err)
	fromEvent, err := settle.New(ev, settle.Initial{})
	require.NoError(t, err)
	res := result(effects(t, `[{"type":"modify","target":"input","operation":"merge","value":{"path":"/safe"}}]`))
	for _, o := range []*settle.Occurrence{fromEncoded, fromEvent} {
		require.NoError(t, o.Apply(fullGrant(t, gen.EventToolBefore), res))
	}
	a, err := fromEncoded.Event()
	require.NoError(t, err)
	b, err := fromEvent.Event()
	require.NoError(t, err)
	require.Equal(t, b, a)
	require.JSONEq(t, `"/safe"`, string(mustMember(t, a.ToolBefore.Tool.Input, "path")))

	_, err = settle.NewEncoded(ev, nil, settle.Initial{})
	require.ErrorIs(t, err, settle.ErrInvalidEvent)
}

func mustMember(t *testing.T, obj []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj, &m))
	require.Contains(t, m, name)
	return m[name]
}
