package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExplainJudgedLevelsAgreeWithV6: the explainer asks the interpreter
// about members and items first only down to maxJudgedLevels levels of
// failing values; below that it explains everything. Failures (one or
// several, beside valid siblings) above, at and below that depth give v6's
// error.
func TestExplainJudgedLevelsAgreeWithV6(t *testing.T) {
	const sj = `{"$defs":{"n":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"},"l":{"type":"array","items":{"$ref":"#/$defs/n"}},"s":{"type":"string","minLength":2}},"additionalProperties":false}},"$ref":"#/$defs/n"}`
	sch, fs := testSchema(t, sj)
	// nest wraps inner in depth levels of {"a": …}, each with a valid
	// sibling s and, every third level, an item list with a valid item.
	nest := func(depth int, inner string) string {
		var b strings.Builder
		for k := range depth {
			b.WriteString(`{"s":"ok",`)
			if k%3 == 0 {
				b.WriteString(`"l":[{"s":"fine"}],`)
			}
			b.WriteString(`"a":`)
		}
		b.WriteString(inner)
		for range depth {
			b.WriteString(`}`)
		}
		return b.String()
	}
	for _, depth := range []int{0, 1, 5, maxJudgedLevels - 2, maxJudgedLevels - 1, maxJudgedLevels, maxJudgedLevels + 1, maxJudgedLevels + 7, 3 * maxJudgedLevels} {
		for _, inner := range []string{`{"s":"x"}`, `{"zz":1}`, `{"s":"x","zz":1,"l":[{},{"s":1},"no"]}`, `{"a":{"s":"ok"},"l":[{"a":{"y":1}}]}`, `[]`} {
			doc := nest(depth, inner)
			value, derr := decode([]byte(doc))
			require.Nil(t, derr)
			want := check("t.json", sch, value)
			require.Error(t, want, doc)
			tp := new(tape)
			require.True(t, tp.parse([]byte(doc)))
			valid, decided, _ := fs.verdict(tp, watch{})
			require.True(t, decided)
			require.False(t, valid)
			got, ok := explain("t.json", fs.root, tp, watch{})
			require.True(t, ok, doc)
			require.Equal(t, want, got, "depth %d, %s", depth, inner)
		}
	}
}
