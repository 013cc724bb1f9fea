package validate

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen/validation"
)

// TestKnownPatterns holds each hand-written pattern matcher to Go's
// regexp: on every string up to four bytes over an alphabet of the bytes
// the patterns care about, on random longer strings over it, and on edge
// cases; and checks that every known pattern is one the generated program
// uses (so none is dead or misspelled).
func TestKnownPatterns(t *testing.T) {
	srcs := []string{
		`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`,
		`^[a-f0-9]{64}$`,
		`^https?://`,
	}
	used := map[string]bool{}
	for _, d := range validation.Program().Docs {
		for _, n := range d.Nodes {
			used[n.Pattern] = true
			for _, k := range n.PatKeys {
				used[k] = true
			}
		}
	}
	alphabet := []byte("aZf09_-./:hpst\n\xc3\xa9G")
	var all []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(80))
		for k := range b {
			b[k] = alphabet[rng.IntN(len(alphabet))]
		}
		all = append(all, string(b))
	}
	hex := strings.Repeat("0123456789abcdef", 4)
	all = append(all, hex, hex[1:], hex+"0", strings.ToUpper(hex), hex[:63]+"g", hex+"\n",
		"com.example", "com.example.policy", "com..example", ".com.example", "com.example.", "a.b", "a.b\n", "1a.b",
		"a_-.b_-9", "com", "http://", "https://", "https:/", "http:/", "HTTP://x", "httpx://", "https://x", "http")
	for _, src := range srcs {
		require.True(t, used[src], "%s is not used by the program", src)
		kind := knownPattern(src)
		require.NotEqual(t, uint8(patRegexp), kind, src)
		re := regexp.MustCompile(src)
		m := &matcher{src: src, known: kind}
		for _, s := range all {
			require.Equal(t, re.MatchString(s), m.match([]byte(s)), "%s on %q", src, s)
		}
	}
	require.Equal(t, uint8(patRegexp), knownPattern(`^[A-Z]{3}$`))
}
