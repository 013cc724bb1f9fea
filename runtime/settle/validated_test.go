package settle_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// validatedEffects are the effect lists the differential tests admit at
// every event: every family, both operations of every target (with values
// equal to, overlapping and different from the example events' targets),
// invalid shapes and values, and mixes whose first offending effect is not
// the first.
var validatedEffects = []string{
	`[]`,
	`[{"type":"deny","reason":"no"}]`,
	`[{"type":"deny","reason":"no","code":"com.example.policy","extensions":{"com.example.x":{"a":[1,2]}}}]`,
	`[{"type":"deny","reason":"no","extensions":{"not-reverse-dns":1}}]`,
	`[{"type":"allow"}]`,
	`[{"type":"ask"}]`,
	`[{"type":"allow"},{"type":"deny","reason":"no"},{"type":"ask"}]`,
	`[{"type":"message","text":"m"}]`,
	`[{"type":"return","value":1}]`,
	`[{"type":"return","value":{"action":"decline"}}]`,
	`[{"type":"return","value":{"action":"accept","content":{"answer":"x"}}}]`,
	`[{"type":"return","value":[]}]`,
	`[{"type":"flow","operation":"stop","reason":"s"}]`,
	`[{"type":"flow","operation":"continue","instruction":"i"}]`,
	`[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[` + message("inj", "system", "note") + `]}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{"path":"/safe"}}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{}}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{"path":"README.md","content":"example"}}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{"mode":{"append":false},"content":"example","path":"README.md","cmd":"ls"}}]`,
	`[{"type":"modify","target":"input","operation":"replace","value":{}}]`,
	`[{"type":"modify","target":"input","operation":"replace","value":{"path":"README.md","content":"example","mode":{"append":false}}}]`,
	`[{"type":"modify","target":"input","operation":"replace","value":{"cmd":"ls"}}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{"a":1}},{"type":"modify","target":"input","operation":"replace","value":{"b":2}},{"type":"modify","target":"input","operation":"merge","value":{"b":3,"c":4}}]`,
	`[{"type":"modify","target":"input","operation":"merge","value":{"a":1}},{"type":"return","value":1},{"type":"allow"}]`,
	`[{"type":"allow"},{"type":"modify","target":"input","operation":"merge","value":{"x":1}},{"type":"deny","reason":"no"}]`,
	`[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`,
	`[{"type":"modify","target":"content","operation":"replace","value":{"count":1}}]`,
	`[{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/a","/b"]}}]`,
	`[{"type":"modify","target":"workspace","operation":"replace","value":{"cwd":"/new"}}]`,
	`[{"type":"modify","target":"prompt","operation":"merge","value":[` + message("m9", "user", "more") + `]}]`,
	`[{"type":"modify","target":"prompt","operation":"replace","value":[]}]`,
	`[{"type":"modify","target":"output","operation":"replace","value":[` + message("m9", "tool", "other") + `]}]`,
	`[{"type":"modify","target":"instructions","operation":"merge","value":[` + textPart("i9", "more") + `]}]`,
	`[{"type":"modify","target":"summary","operation":"replace","value":[` + textPart("s9", "other") + `]}]`,
	`[{"type":"message","text":"m"},{"type":"deny","reason":"d"},{"type":"return","value":2},{"type":"modify","target":"input","operation":"replace","value":{}},{"type":"flow","operation":"continue"}]`,
}

// validatedGrants returns the grants the differential tests try at an
// event: everything the boundary can grant, that without modify, and
// nothing.
func validatedGrants(t testing.TB, name gen.EventName) []gen.Capabilities {
	t.Helper()
	if _, ok := gen.LookupEvent(name); !ok {
		return []gen.Capabilities{{}}
	}
	full := fullGrant(t, name)
	return []gen.Capabilities{full, without(full, gen.EffectFamilyModify), {}}
}

// requireValidatedAgrees checks that the entry points for a validated
// event give exactly the results of CheckEvent and Admit for ev (which
// must have passed canonical validation), under every grant and effect
// list, and that the state an admission-only occurrence would commit is
// the same (its tool input whenever an effect needs it).
func requireValidatedAgrees(t *testing.T, ev *gen.Event, grants []gen.Capabilities, lists [][]gen.Effect) {
	t.Helper()
	lists = append(slices.Clip(lists), ownTargetEffects(t, ev)...)
	require.Equal(t, settle.CheckEvent(ev), settle.CheckValidated(ev), "CheckValidated")
	require.Equal(t, settle.CheckValidatedByOccurrence(ev), settle.CheckValidated(ev), "CheckValidated by occurrence")
	for gi, g := range grants {
		for li, es := range lists {
			want := settle.Admit(ev, g, es)
			require.Equal(t, want, settle.AdmitValidated(ev, g, es), "AdmitValidated, grant %d, effects %d", gi, li)
			if settle.CheckEvent(ev) == nil {
				if handled, err := settle.AdmitType(gen.EventName(ev.Type()), g, es); handled {
					require.Equal(t, want, err, "AdmitType, grant %d, effects %d", gi, li)
				}
			}
			eagerErr, validatedErr, eager, validated, _ := settle.StageBoth(ev, g, es)
			require.Equal(t, eagerErr, validatedErr, "staging, grant %d, effects %d", gi, li)
			require.Equal(t, eager, validated, "staged state, grant %d, effects %d", gi, li)
		}
	}
	requireHostValidatedAgrees(t, ev, grants, lists)
}

// requireHostValidatedAgrees checks that a host occurrence of ev (which
// must have passed canonical validation) started with NewValidated
// settles exactly as one started with NewEncoded: the same error from the
// start, then, for every grant and effect list applied in turn (each list
// on a fresh pair, and all of them one after the other on one pair), the
// same error, State, request state and effective event after each.
func requireHostValidatedAgrees(t *testing.T, ev *gen.Event, grants []gen.Capabilities, lists [][]gen.Effect) {
	t.Helper()
	enc, err := gen.EncodeEvent(ev)
	if err != nil {
		return
	}
	pair := func() (*settle.Occurrence, *settle.Occurrence, bool) {
		a, errA := settle.NewEncoded(ev, enc, settle.Initial{})
		b, errB := settle.NewValidated(ev, enc, settle.Initial{})
		require.Equal(t, errA, errB, "NewValidated")
		if errA != nil {
			return nil, nil, false
		}
		requireSameHostState(t, a, b, "start")
		return a, b, true
	}
	step := func(a, b *settle.Occurrence, g gen.Capabilities, es []gen.Effect, what string) {
		res := &gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: es}
		errA := a.ApplyContext(t.Context(), g, res, settle.ApplyOptions{})
		errB := b.ApplyContext(t.Context(), g, res, settle.ApplyOptions{})
		require.Equal(t, errA, errB, "%s: Apply", what)
		requireSameHostState(t, a, b, what)
	}
	a, b, ok := pair()
	if !ok {
		return
	}
	for gi, g := range grants {
		for li, es := range lists {
			what := "grant " + strconv.Itoa(gi) + ", effects " + strconv.Itoa(li)
			step(a, b, g, es, what+" (in turn)")
			fa, fb, _ := pair()
			step(fa, fb, g, es, what)
		}
	}
}

// requireSameHostState checks that two host occurrences have the same
// State, request state and effective event.
func requireSameHostState(t *testing.T, a, b *settle.Occurrence, what string) {
	t.Helper()
	require.Equal(t, a.State(), b.State(), "%s: State", what)
	ja, errA := a.RequestStateJSON()
	jb, errB := b.RequestStateJSON()
	require.Equal(t, errA, errB, "%s: RequestStateJSON", what)
	require.Equal(t, string(ja), string(jb), "%s: RequestStateJSON", what)
	ea, errA := a.Event()
	eb, errB := b.Event()
	require.Equal(t, errA, errB, "%s: Event", what)
	require.Equal(t, ea, eb, "%s: Event", what)
}

// ownTargetEffects returns effects that supply the event's own targets
// back (merged, replaced, injected), so that the parts the event
// establishes (attachments, withheld text) are repeated by a response.
func ownTargetEffects(t testing.TB, ev *gen.Event) [][]gen.Effect {
	t.Helper()
	o, err := settle.New(ev, settle.Initial{})
	if err != nil {
		return nil
	}
	var out [][]gen.Effect
	add := func(effect string) {
		var e gen.Effect
		if e.UnmarshalJSON([]byte(effect)) == nil { // an inject of text parts does not decode
			out = append(out, []gen.Effect{e})
		}
	}
	for target, raw := range o.State().Targets {
		for _, op := range []string{"merge", "replace"} {
			add(`{"type":"modify","target":"` + string(target) + `","operation":"` + op + `","value":` + string(raw) + `}`)
		}
		add(`{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":` + string(raw) + `}`)
	}
	return out
}

// parsedEffectLists decodes validatedEffects with the lossless codec,
// without canonical validation, so that invalid effects reach admission.
func parsedEffectLists(t testing.TB) [][]gen.Effect {
	t.Helper()
	out := make([][]gen.Effect, 0, len(validatedEffects))
	for _, s := range validatedEffects {
		out = append(out, decodeEffects(t, s))
	}
	return out
}

// decodeEffects decodes a JSON array of effects with the lossless codec.
func decodeEffects(t testing.TB, data string) []gen.Effect {
	t.Helper()
	var raws []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &raws))
	out := make([]gen.Effect, len(raws))
	for i, r := range raws {
		require.NoError(t, out[i].UnmarshalJSON(r), "effect %s", r)
	}
	return out
}

// validatedToolInputs are tool inputs of the mutated tool events: empty,
// escaped names, numbers in several forms, nested values, thousands of
// members, deep nesting and a large text.
func validatedToolInputs() []string {
	var lines strings.Builder
	lines.WriteString(`{"path":"notes/big.txt","content":"` + strings.Repeat("All work and no play. ", 3000) + `","lines":[`)
	for i := range 400 {
		if i > 0 {
			lines.WriteByte(',')
		}
		lines.WriteString(`{"n":` + strconv.Itoa(i) + `,"text":"line ` + strconv.Itoa(i) + `","flags":[true,false,null]}`)
	}
	lines.WriteString(`]}`)
	return []string{
		`{}`,
		` { "path" : "README.md" , "content" : "example" } `,
		`{"p\u0061th":"README.md","content":"ex\u00e9mple","\ud83d\ude00":1}`,
		`{"n":1.0,"m":-0,"e":1e400,"big":123456789012345678901234567890}`,
		`{"mode":{"append":false},"content":"example","path":"README.md"}`,
		`{"a":{"b":[1,2,{"c":null}]},"cmd":"ls"}`,
		hostile.Object(3000),
		hostile.Deep(100, `{"x":1}`),
		hostile.Deep(600, `{"x":1}`),
		`{"a":` + hostile.DeepArrays(300, "1") + `}`,
		lines.String(),
	}
}

// withToolInput returns the example event of name (tool.before or
// tool.permission.request) with its tool input replaced.
func withToolInput(t testing.TB, name gen.EventName, input string) string {
	t.Helper()
	s := eventJSON[name]
	var from string
	switch name {
	case gen.EventToolBefore:
		from = `"input":{"path":"README.md","content":"example","mode":{"append":false}}`
	case gen.EventToolPermissionRequest:
		from = `"input":{"cmd":"ls"}`
	}
	require.Contains(t, s, from)
	return strings.Replace(s, from, `"input":`+input, 1)
}

// TestValidatedAgrees: for canonically validated events (the example of
// every interceptable event, every event of the fixture corpus that
// validates, and tool events whose input is mutated), CheckValidated and
// AdmitValidated give exactly the results of CheckEvent and Admit, errors
// included, under several grants and effect lists.
func TestValidatedAgrees(t *testing.T) {
	lists := parsedEffectLists(t)
	for _, info := range interceptable() {
		t.Run(string(info.Name), func(t *testing.T) {
			requireValidatedAgrees(t, event(t, info.Name), validatedGrants(t, info.Name), lists)
		})
	}
	for _, name := range []gen.EventName{gen.EventToolBefore, gen.EventToolPermissionRequest} {
		for i, input := range validatedToolInputs() {
			ev, err := gen.ParseEvent([]byte(withToolInput(t, name, input)))
			if err != nil {
				continue // not canonical (too deep for the validator, say): outside the contract
			}
			t.Run(string(name)+"/input"+strconv.Itoa(i), func(t *testing.T) {
				requireValidatedAgrees(t, ev, validatedGrants(t, name), lists)
			})
		}
	}

	cases, err := fixtures.Load()
	require.NoError(t, err)
	checked := 0
	for _, c := range cases {
		data, err := c.Read()
		require.NoError(t, err)
		for mi, msg := range c.Messages(data) {
			var ev *gen.Event
			var own []gen.Capabilities
			var resp []gen.Effect
			if req, err := gen.ParseInterceptRequest(msg); err == nil {
				ev, own = &req.Params.Event, []gen.Capabilities{req.Params.Capabilities}
			} else if n, err := gen.ParseObserveNotification(msg); err == nil {
				ev = &n.Params.Event
			} else if e, err := gen.ParseEvent(msg); err == nil {
				ev = e
			} else if r, err := gen.ParseInterceptResponse(msg); err == nil {
				resp = r.Result.Effects
			}
			if resp != nil {
				lists = append(lists, resp) // the corpus's own answers, tried at every event below
			}
			if ev == nil {
				continue
			}
			checked++
			t.Run(c.ID+"/"+strconv.Itoa(mi), func(t *testing.T) {
				grants := append(own, validatedGrants(t, gen.EventName(ev.Type()))...)
				requireValidatedAgrees(t, ev, grants, lists)
			})
		}
	}
	require.Greater(t, checked, 40, "fixture events checked")
}

// FuzzValidatedAgrees: an arbitrary tool input (and tool name) that makes a
// canonical tool.before or tool.permission.request event gets the same
// results from CheckValidated and AdmitValidated as from CheckEvent and
// Admit, with effects that read and replace the input.
func FuzzValidatedAgrees(f *testing.F) {
	for _, in := range validatedToolInputs() {
		f.Add([]byte(in), false)
	}
	for _, v := range hostile.Values() {
		f.Add([]byte(v), true)
	}
	f.Add([]byte(`{"a":1,"a":2}`), false)
	f.Add([]byte(`{"a":{"b":[{"c":1,"c":2}]}}`), true)
	f.Add([]byte(`[1]`), false)
	f.Add([]byte(`"x"`), false)
	lists := [][]string{
		{`[{"type":"deny","reason":"no"}]`},
		{`[{"type":"modify","target":"input","operation":"merge","value":{"path":"/safe","a":{"b":1}}}]`},
		{`[{"type":"modify","target":"input","operation":"replace","value":{"a":1}},{"type":"allow"}]`},
		{`[{"type":"allow"},{"type":"modify","target":"input","operation":"merge","value":{}}]`},
	}
	f.Fuzz(func(t *testing.T, input []byte, permission bool) {
		name := gen.EventToolBefore
		if permission {
			name = gen.EventToolPermissionRequest
		}
		if !json.Valid(input) {
			return
		}
		ev, err := gen.ParseEvent([]byte(withToolInput(t, name, string(input))))
		if err != nil {
			return
		}
		parsed := make([][]gen.Effect, 0, len(lists))
		for _, l := range lists {
			parsed = append(parsed, decodeEffects(t, l[0]))
		}
		// The input's own members, merged back and replaced.
		if ms := ev.ToolBefore; ms != nil {
			for _, op := range []string{"merge", "replace"} {
				if e, err := gen.ParseEffect([]byte(`{"type":"modify","target":"input","operation":"` + op + `","value":` + string(ms.Tool.Input) + `}`)); err == nil {
					parsed = append(parsed, []gen.Effect{*e})
				}
			}
		}
		requireValidatedAgrees(t, ev, validatedGrants(t, name), parsed)
	})
}

// TestCheckValidatedToolEvents: CheckValidated's direct check of the tool
// events gives an occurrence's result for events of every shape (input
// not an object, items, a type that is not the arm's, several arms set,
// no arm).
func TestCheckValidatedToolEvents(t *testing.T) {
	before := event(t, gen.EventToolBefore)
	permission := event(t, gen.EventToolPermissionRequest)
	after := event(t, gen.EventToolAfter)
	shapes := map[string]func() *gen.Event{
		"tool.before": func() *gen.Event { e := *before; return &e },
		"permission":  func() *gen.Event { e := *permission; return &e },
		"nil":         func() *gen.Event { return nil },
		"no arm":      func() *gen.Event { return &gen.Event{} },
		"input array": func() *gen.Event {
			e := *before
			tb := *e.ToolBefore
			tb.Tool.Input = json.RawMessage(`[1]`)
			e.ToolBefore = &tb
			return &e
		},
		"input empty": func() *gen.Event {
			e := *before
			tb := *e.ToolBefore
			tb.Tool.Input = nil
			e.ToolBefore = &tb
			return &e
		},
		"permission string": func() *gen.Event {
			e := *permission
			tp := *e.ToolPermissionRequest
			tp.Tool.Input = json.RawMessage(` "x"`)
			e.ToolPermissionRequest = &tp
			return &e
		},
		"wrong type": func() *gen.Event {
			e := *before
			tb := *e.ToolBefore
			tb.Type = "tool.after"
			e.ToolBefore = &tb
			return &e
		},
		"permission typed before": func() *gen.Event {
			e := *permission
			tp := *e.ToolPermissionRequest
			tp.Type = string(gen.EventToolBefore)
			e.ToolPermissionRequest = &tp
			return &e
		},
		"before and permission": func() *gen.Event { e := *before; e.ToolPermissionRequest = permission.ToolPermissionRequest; return &e },
		"after and permission":  func() *gen.Event { e := *after; e.ToolPermissionRequest = permission.ToolPermissionRequest; return &e },
		"bad item": func() *gen.Event {
			e := *before
			tb := *e.ToolBefore
			tb.Items = []gen.ContentItem{{}}
			e.ToolBefore = &tb
			return &e
		},
	}
	for name, mk := range shapes {
		want := settle.CheckValidatedByOccurrence(mk())
		require.Equal(t, want, settle.CheckValidated(mk()), name)
	}
	require.NoError(t, settle.CheckValidated(before))
	require.Error(t, settle.CheckValidated(shapes["input array"]()))
	require.Error(t, settle.CheckValidated(shapes["bad item"]()))
}
