package validate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHashTab: a table laid out by newHashTab finds every entry, in one
// probe when it is direct, and nothing else; entries whose keyHash
// collides (no multiplier separates them) are found by probing.
func TestHashTab(t *testing.T) {
	sets := map[string][]string{
		"one":       {"type"},
		"event":     {"id", "source", "type", "time", "session", "tool", "call", "path", "turn", "extensions"},
		"colliding": {"abcdefgh", "abZdefgh", "x"},
	}
	var many []string
	for k := range 300 {
		many = append(many, fmt.Sprintf("name%03d", k))
	}
	sets["many"] = many
	for name, vals := range sets {
		t.Run(name, func(t *testing.T) {
			set := newStrSet(vals)
			if name == "colliding" {
				require.Equal(t, keyHash("abcdefgh"), keyHash("abZdefgh"))
				require.False(t, set.tab.direct)
			}
			if name == "event" {
				require.True(t, set.tab.direct)
			}
			n := &fastNode{}
			for _, v := range vals {
				n.propList = append(n.propList, namedNode{keyName: keyName{name: v}})
			}
			n.setOps()
			var doc []byte
			doc = append(doc, '{')
			for k, v := range vals {
				if k > 0 {
					doc = append(doc, ',')
				}
				doc = fmt.Appendf(doc, "%q:0,%q:1", v, v+"~")
			}
			doc = append(doc, '}')
			tp := new(tape)
			require.True(t, tp.parse(doc))
			for k, v := range vals {
				require.Equal(t, k, set.find([]byte(v)), v)
				require.Equal(t, -1, set.find([]byte(v+"~")), v)
				require.Equal(t, -1, set.find([]byte(v[:len(v)-1])), v)
				require.Equal(t, k, n.propIndex([]byte(v), keyHash(v)), v)
				key := uint32(1 + 4*k)
				require.Equal(t, v, string(tp.bytes(key)))
				require.Equal(t, k, n.propAt(tp, key), v)
				require.Equal(t, -1, n.propAt(tp, key+2), v+"~")
			}
		})
	}
}
