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

// TestManyEffectsSettleAsFew: a response settles the same whether its
// effects fit the staging room kept on the stack (four) or not: n input
// merges, each adding a member and then overwriting the one before, and a
// message each, for n around that room; a rejection at the last effect is
// reported at its index and publishes none of the others.
func TestManyEffectsSettleAsFew(t *testing.T) {
	g := fullGrant(t, gen.EventToolBefore)
	for _, n := range []int{1, 3, 4, 5, 8, 33} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var es []string
			for i := range n {
				es = append(es,
					fmt.Sprintf(`{"type":"modify","target":"input","operation":"merge","value":{"k%d":%d,"last":%d}}`, i, i, i),
					fmt.Sprintf(`{"type":"message","text":"m%d"}`, i))
			}
			o := newOcc(t, gen.EventToolBefore)
			require.NoError(t, apply(t, o, g, "["+strings.Join(es, ",")+"]"))
			s := o.State()
			require.Len(t, s.Messages, n)
			require.Equal(t, fmt.Sprintf("m%d", n-1), s.Messages[n-1])
			want := map[string]any{"path": "README.md", "content": "example", "mode": map[string]any{"append": false}, "last": n - 1}
			for i := range n {
				want[fmt.Sprintf("k%d", i)] = i
			}
			requireJSONEq(t, mustJSON(t, want), s.Input)
			require.NoError(t, settle.Admit(event(t, gen.EventToolBefore), g, effects(t, "["+strings.Join(es, ",")+"]")))

			// The same effects and an invalid one last: nothing is published.
			bad := append(es, `{"type":"flow","operation":"continue"}`)
			before := o.State()
			err := apply(t, o, g, "["+strings.Join(bad, ",")+"]")
			requireRejected(t, err, settle.ReasonBoundaryForbidden)
			var rej *settle.Rejection
			require.ErrorAs(t, err, &rej)
			require.Equal(t, 2*n, rej.EffectIndex)
			after := o.State()
			require.Equal(t, before, after)
		})
	}
}

// mustJSON encodes v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
