package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// stdDecode is the reference: encoding/json with UseNumber, one value,
// whitespace only after it.
func stdDecode(doc []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if off := dec.InputOffset(); off < int64(len(doc)) && len(bytes.TrimLeft(doc[off:], " \t\r\n")) > 0 {
		return nil, false
	}
	return v, true
}

// tapeDecode parses doc onto a fresh tape and returns the tree it holds.
func tapeDecode(doc []byte) (any, *tape, bool) {
	tp := new(tape)
	if !tp.parse(doc) {
		return nil, tp, false
	}
	return tp.value(0), tp, true
}

// checkTape asserts the tape's contract on doc: when it parses, doc is
// valid UTF-8, encoding/json succeeds with the identical tree, and the
// tape is marked dup exactly when some object repeats a key.
func checkTape(t testing.TB, doc []byte) {
	got, tp, ok := tapeDecode(doc)
	want, wantOK := stdDecode(doc)
	if ok {
		require.True(t, utf8.Valid(doc), "tape accepted invalid UTF-8: %q", doc)
		require.True(t, wantOK, "tape accepted what encoding/json rejects: %q", doc)
		require.Equal(t, want, got, "trees differ for %q", doc)
		require.Equal(t, hasDuplicateKey(tp, 0), tp.dup, "dup flag for %q", doc)
		// The tape and the shared lexer name the same first repeat.
		at, dup := findDuplicate(doc)
		require.Equal(t, dup, tp.dup, "shared lexer's dup for %q", doc)
		if dup {
			require.Equal(t, at, tp.dupAt, "first repeat of %q", doc)
		}
	}
}

// hasDuplicateKey reports, the slow way, whether some object under token i
// repeats a key.
func hasDuplicateKey(tp *tape, i uint32) bool {
	k := tp.toks[i]
	switch k.kind {
	case tArray:
		for c := i + 1; c < k.end; c = tp.toks[c].end {
			if hasDuplicateKey(tp, c) {
				return true
			}
		}
	case tObject:
		seen := map[string]bool{}
		for c := i + 1; c < k.end; c = tp.toks[c+1].end {
			key := string(tp.bytes(c))
			if seen[key] || hasDuplicateKey(tp, c+1) {
				return true
			}
			seen[key] = true
		}
	}
	return false
}

func TestTapeMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.50`, `1e2`, `-1E-7`, `true`, `false`, `null`, ` {"a" : [1, {"b":null}] } `,
		`{"a":1,"a":2}`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\u12"`, `01`, `1.`, `.5`, `-`,
		`{"a":1,}`, `[1,]`, `{"a" 1}`, `[1 2]`, "\"\x01\"", `tru`, `nul`, `{"a":1}x`, `{"a":1} `, ``, `   `, `"unterminated`,
		`"\x"`, `{"k\u0041y":"v"}`, `[[[[[]]]]]`, `1e`, `1e+`, `-a`, `"é"`, `{"a":"\ud800\udc00"}`,
	}
	for _, c := range cases {
		checkTape(t, []byte(c))
		_, _, tapeOK := tapeDecode([]byte(c))
		_, stdOK := stdDecode([]byte(c))
		if stdOK && !strings.Contains(c, `\ud83d"`) && !strings.Contains(c, `\ude00x`) {
			// Everything valid except lone surrogates goes on a tape.
			require.True(t, tapeOK, "tape refused %q", c)
		}
	}
	// Nesting is bounded as encoding/json bounds it.
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	_, _, ok := tapeDecode([]byte(deep))
	require.True(t, ok, "deep nesting within encoding/json's bound")
	deeper := strings.Repeat("[", maxTapeDepth+1) + strings.Repeat("]", maxTapeDepth+1)
	_, _, ok = tapeDecode([]byte(deeper))
	require.False(t, ok, "nesting beyond encoding/json's bound")
	_, stdOK := stdDecode([]byte(deeper))
	require.False(t, stdOK, "encoding/json's bound")
	root := filepath.Join("..", "..", "testdata", "fixtures", "draft")
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checkTape(t, data)
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkTape(t, line)
		}
		return nil
	})
	require.NoError(t, err)
}

func FuzzTape(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"],"b":{"c":null,"d":true}}`, `"\ud83d\ude00"`, `[{"":""}]`, `-0.0e-0`} {
		f.Add([]byte(s))
	}
	for _, h := range hostile.Values() {
		f.Add([]byte(h))
	}
	root := filepath.Join("..", "..", "testdata", "fixtures", "draft", "http")
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(root, e.Name())); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkTape(t, doc)
	})
}

// BenchmarkTapeParseMembers parses an object of 4k and of 40k members onto
// a fresh tape each time (no pooled storage, as for any document beyond the
// pool's bounds): ns/member stays flat, duplicate detection included.
// The baseline is json.Valid on the same bytes.
func BenchmarkTapeParseMembers(b *testing.B) {
	for _, n := range []int{4000, 40000} {
		doc := []byte(hostile.Object(n))
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if tp := new(tape); !tp.parse(doc) || tp.dup {
					b.Fatal("parse failed")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
		b.Run(fmt.Sprintf("members=%d/json.Valid", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !json.Valid(doc) {
					b.Fatal("invalid")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}
