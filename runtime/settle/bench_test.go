package settle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// benchChain is a 4-response tool.before chain with input merges, as the
// backends would send it (full JSON-RPC responses).
var benchChain = [][]byte{
	[]byte(`{"jsonrpc":"2.0","id":"evt1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"path":"a.md","mode":{"append":true}}},{"type":"message","text":"rewrote path"}]}}`),
	[]byte(`{"jsonrpc":"2.0","id":"evt1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"content":"hello world","extra":[1,2,3]}},{"type":"allow"}]}}`),
	[]byte(`{"jsonrpc":"2.0","id":"evt1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"path":"b.md"}},{"type":"return","value":{"ok":true}}]}}`),
	[]byte(`{"jsonrpc":"2.0","id":"evt1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"flags":{"dry":false}}},{"type":"message","text":"done"}]}}`),
}

// BenchmarkSettleToolBeforeChain settles the chain: "apply" over responses
// already decoded into the typed model, "decode+apply" including the typed
// decode of each response (gen codecs, no schema validation), beside the
// baseline that only decodes the same responses into map[string]any.
func BenchmarkSettleToolBeforeChain(b *testing.B) {
	ev := event(b, gen.EventToolBefore)
	g := fullGrant(b, gen.EventToolBefore)
	decoded := make([]*gen.InterceptResponse, len(benchChain))
	for i, raw := range benchChain {
		r, err := gen.ParseInterceptResponse(raw)
		require.NoError(b, err)
		decoded[i] = r
	}
	var bytesPerChain int64
	for _, raw := range benchChain {
		bytesPerChain += int64(len(raw))
	}
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			o, err := settle.New(ev, settle.Initial{})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range decoded {
				if err := o.Apply(g, &r.Result); err != nil {
					b.Fatal(err)
				}
			}
			_ = o.State()
		}
	})
	b.Run("decode+apply", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(bytesPerChain)
		for b.Loop() {
			o, err := settle.New(ev, settle.Initial{})
			if err != nil {
				b.Fatal(err)
			}
			for _, raw := range benchChain {
				var r gen.InterceptResponse
				if err := r.UnmarshalJSON(raw); err != nil {
					b.Fatal(err)
				}
				if err := o.Apply(g, &r.Result); err != nil {
					b.Fatal(err)
				}
			}
			_ = o.State()
		}
	})
	b.Run("baseline-map-decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(bytesPerChain)
		for b.Loop() {
			for _, raw := range benchChain {
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkSettleToolBeforeValidated is the host's settlement of a
// tool.before occurrence with one receiver: NewValidated of the encoded
// event, one response (no effect, an approval, a denial with a message)
// applied under a context that can end, as a delivery's, and the State
// the Result reads.
func BenchmarkSettleToolBeforeValidated(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	ev := event(b, gen.EventToolBefore)
	encoded, err := gen.EncodeEvent(ev)
	require.NoError(b, err)
	g := fullGrant(b, gen.EventToolBefore)
	for _, tc := range []struct{ name, effects string }{
		{"none", `[]`},
		{"allow", `[{"type":"allow"}]`},
		{"deny", `[{"type":"deny","reason":"no"},{"type":"message","text":"denied"}]`},
	} {
		res := result(effects(b, tc.effects))
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o, err := settle.NewValidated(ev, encoded, settle.Initial{})
				if err != nil {
					b.Fatal(err)
				}
				if err := o.ApplyContext(ctx, g, res, settle.ApplyOptions{}); err != nil {
					b.Fatal(err)
				}
				_ = o.State()
			}
		})
	}
}

// TestBenchChainSettles keeps the benchmark honest: the chain is admissible
// and settles to the expected state.
func TestBenchChainSettles(t *testing.T) {
	o := newOcc(t, gen.EventToolBefore)
	for _, raw := range benchChain {
		r, err := gen.ParseInterceptResponse(raw)
		require.NoError(t, err)
		require.NoError(t, o.Apply(fullGrant(t, gen.EventToolBefore), &r.Result))
	}
	s := o.State()
	requireJSONEq(t, `{"path":"b.md","content":"hello world","mode":{"append":true},"extra":[1,2,3],"flags":{"dry":false}}`, s.Input)
	require.Equal(t, gen.PermissionNone, s.Permission, "the third merge changed the input after the allow")
	require.False(t, s.Candidate.Present, "the fourth merge changed the input after the return")
	require.Equal(t, []string{"rewrote path", "done"}, s.Messages)
}

// BenchmarkSettleLargeInput settles a tool.before whose input has n
// members against a merge and then a replace of n members each (the
// replace in another order, so equality is structural): ns/member should
// stay flat from 4k to 40k members. The baseline decodes the same
// responses into map[string]any.
func BenchmarkSettleLargeInput(b *testing.B) {
	for _, n := range []int{4000, 40000} {
		ev := event(b, gen.EventToolBefore)
		ev.ToolBefore.Tool.Input = json.RawMessage(hostile.Object(n))
		g := fullGrant(b, gen.EventToolBefore)
		reversed := make([]string, n)
		for i := range n {
			reversed[n-1-i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		raws := [][]byte{
			[]byte(`{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":` + hostile.Object(n) + `}]}}`),
			[]byte(`{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace","value":{` + strings.Join(reversed, ",") + `}}]}}`),
		}
		var results []*gen.InterceptResponse
		for _, raw := range raws {
			r, err := gen.ParseInterceptResponse(raw)
			require.NoError(b, err)
			results = append(results, r)
		}
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o, err := settle.New(ev, settle.Initial{})
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range results {
					if err := o.Apply(g, &r.Result); err != nil {
						b.Fatal(err)
					}
				}
				_ = o.State()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
		b.Run(fmt.Sprintf("members=%d/baseline-map-decode", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, raw := range raws {
					var m map[string]any
					if err := json.Unmarshal(raw, &m); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}
