package settle_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// injectNow is an inject effect admissible at tool.before and
// model.request.before under fullGrant.
var injectNow = `{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[` + message("inj1", "system", "ctx") + `]}`

// TestDiscardedCandidateStaysDiscarded: a candidate that a later response
// discards (a changed effective operation invalidates it, a denial
// discards it; base/composition.md) is gone from the committed state even
// when the same response also sets state that lives beside the candidate
// (an injection, a stop reason, a continuation instruction). The
// candidate comes from an earlier response or from the host's initial
// state.
func TestDiscardedCandidateStaysDiscarded(t *testing.T) {
	toolReturn := `[{"type":"return","value":{"ok":true}}]`
	modelReturn := `[{"type":"return","value":[` + message("r1", "assistant", "cached") + `]}]`
	for _, tc := range []struct {
		name    string
		event   gen.EventName
		initial settle.Initial
		first   string // a response that supplies the candidate ("" when the initial state has it)
		second  string // the response that discards it
	}{
		{"tool.before: changed input and an injection", gen.EventToolBefore, settle.Initial{}, toolReturn,
			`[{"type":"modify","target":"input","operation":"merge","value":{"path":"other.md"}},` + injectNow + `]`},
		{"tool.before: changed input and a stop", gen.EventToolBefore, settle.Initial{}, toolReturn,
			`[{"type":"modify","target":"input","operation":"merge","value":{"path":"other.md"}},{"type":"flow","operation":"stop","reason":"s"}]`},
		{"tool.before: denial and an injection", gen.EventToolBefore, settle.Initial{}, toolReturn,
			`[{"type":"deny","reason":"no"},` + injectNow + `]`},
		{"tool.before: denial and a stop", gen.EventToolBefore, settle.Initial{}, toolReturn,
			`[{"type":"deny","reason":"no"},{"type":"flow","operation":"stop","reason":"s"}]`},
		{"tool.before: initial candidate, changed input and an injection", gen.EventToolBefore,
			settle.Initial{Candidate: settle.Candidate{Present: true, Value: []byte(`{"ok":true}`)}}, "",
			`[{"type":"modify","target":"input","operation":"merge","value":{"path":"other.md"}},` + injectNow + `]`},
		{"model.request.before: changed request and an injection", gen.EventModelRequestBefore, settle.Initial{}, modelReturn,
			`[{"type":"modify","target":"request","operation":"merge","value":[` + message("m2", "user", "more") + `]},` + injectNow + `]`},
		{"model.request.before: denial and a stop", gen.EventModelRequestBefore, settle.Initial{}, modelReturn,
			`[{"type":"deny","reason":"no"},{"type":"flow","operation":"stop","reason":"s"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := settle.New(event(t, tc.event), tc.initial)
			require.NoError(t, err)
			g := fullGrant(t, tc.event)
			if tc.first != "" {
				require.NoError(t, apply(t, o, g, tc.first))
			}
			require.True(t, o.State().Candidate.Present, "the candidate is set before the second response")
			require.NoError(t, apply(t, o, g, tc.second))
			s := o.State()
			_, supplied := s.SuppliedResult()
			require.False(t, supplied, "the discarded candidate would replace execution")
			require.False(t, s.Candidate.Present, "the discarded candidate is back: %s", s.Candidate.Value)
			require.False(t, o.RequestState().Candidate.Valid, "the next receiver is sent the discarded candidate")
		})
	}
}
