package validate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTapeWhitespaceBetweenTokens: whitespace of every kind at any one
// boundary between tokens, or at all of them, reads as encoding/json reads
// it, with each value's position and extent as written; a missing or
// doubled separator is refused by both.
func TestTapeWhitespaceBetweenTokens(t *testing.T) {
	base := []string{`{`, `"a"`, `:`, `"x"`, `,`, `"b"`, `:`, `[`, `1`, `,`, `{`, `"c"`, `:`, `"y"`, `}`, `,`, `"e\n"`, `]`, `,`, `"d"`, `:`, `{`, `}`, `,`, `"f"`, `:`, `true`, `}`}
	join := func(sep func(k int) string) []byte {
		var b []byte
		for k, tok := range base {
			b = append(b, sep(k)...)
			b = append(b, tok...)
		}
		return append(b, sep(len(base))...)
	}
	check := func(doc []byte) {
		want, wantOK := stdDecode(doc)
		got, tp, ok := tapeDecode(doc)
		require.Equal(t, wantOK, ok, "%q", doc)
		if !ok {
			return
		}
		require.Equal(t, want, got, "%q", doc)
		for i := range tp.toks {
			k := &tp.toks[i]
			raw := doc[k.pos:k.stop]
			require.NotEmpty(t, raw)
			require.NotContains(t, " \t\r\n", string(raw[:1]), "token %d of %q starts with whitespace", i, doc)
			require.NotContains(t, " \t\r\n", string(raw[len(raw)-1:]), "token %d of %q ends with whitespace", i, doc)
		}
	}
	for _, ws := range []string{" ", "\n  ", "\t", "\r\n", "\n\t\t\t\t\t\t\t\t\t "} {
		check(join(func(int) string { return ws }))
		for at := 0; at <= len(base); at++ {
			check(join(func(k int) string {
				if k == at {
					return ws
				}
				return ""
			}))
		}
	}
	for k, tok := range base {
		if tok != ":" && tok != "," {
			continue
		}
		for _, repl := range []string{"", " ", tok + tok, tok + " " + tok} {
			var b []byte
			for j, other := range base {
				if j == k {
					other = repl
				}
				b = append(b, other...)
			}
			check(b)
		}
	}
}
