package jsonlex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// oracleDup finds the first duplicate member name of doc, a valid JSON
// text, with encoding/json's tokenizer: the pointer of the repeated member
// and whether there is one.
func oracleDup(t testing.TB, doc []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	ptr, found, err := walk(dec, nil)
	require.NoError(t, err)
	return ptr, found
}

func walk(dec *json.Decoder, path []string) (string, bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", false, err
	}
	switch tok {
	case json.Delim('{'):
		names := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return "", false, err
			}
			name := k.(string)
			if names[name] {
				return join(append(path, name)), true, nil
			}
			names[name] = true
			if p, found, err := walk(dec, append(path, name)); found || err != nil {
				return p, found, err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if p, found, err := walk(dec, append(path, fmt.Sprint(i))); found || err != nil {
				return p, found, err
			}
		}
		_, err = dec.Token()
	}
	return "", false, err
}

func scan(doc []byte) (end int, ok bool, dup int, hasDup bool) {
	s := Scanner{Dups: true}
	end, ok = s.Value(doc, SkipSpace(doc, 0), 0)
	ok = ok && SkipSpace(doc, end) == len(doc)
	dup, hasDup = s.Dup()
	return end, ok, dup, hasDup
}

func TestScannerDuplicates(t *testing.T) {
	for _, c := range []struct {
		doc     string
		pointer string // of the duplicate, "-" for none
	}{
		{`{}`, "-"},
		{`{"a":1,"b":2}`, "-"},
		{`{"a":1,"a":2}`, "/a"},
		{`{"type":"deny","type":"allow"}`, "/type"},
		{`{"effects":[{"type":"deny"}],"effects":[{"type":"allow"}]}`, "/effects"},
		{`{"a":{"b":1,"b":2}}`, "/a/b"},
		{`[{"x":1},{"x":1,"y":2,"x":3}]`, "/1/x"},
		{`{"a":1,"\u0061":2}`, "/a"},
		{`{"\ud800":1,"\udc00":2}`, "/\uFFFD"}, // lone surrogates both decode to U+FFFD
		{`{"a/b":1,"a~b":2,"a/b":3}`, "/a~1b"},
		{`{"a":{"x":1},"b":{"x":1}}`, "-"}, // equal names in different objects
		{`{"a":[1,{"k":1}],"b":{"k":{"k":{}}}}`, "-"},
	} {
		t.Run(c.doc, func(t *testing.T) {
			doc := []byte(c.doc)
			end, ok, dup, has := scan(doc)
			require.True(t, ok)
			require.Equal(t, len(doc), end)
			want, wantDup := oracleDup(t, doc)
			if c.pointer == "-" {
				require.False(t, has)
				require.False(t, wantDup)
				return
			}
			require.True(t, has)
			require.True(t, wantDup)
			require.Equal(t, c.pointer, want)
			require.Equal(t, c.pointer, Pointer(doc, dup))
		})
	}
}

// TestScannerLargeObjects covers objects past the pairwise limit, nested
// large objects sharing names, and a duplicate at the very end.
func TestScannerLargeObjects(t *testing.T) {
	obj := func(n int, extra string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		b.WriteString(extra)
		b.WriteByte('}')
		return b.String()
	}
	for _, n := range []int{7, 8, 9, 100, 5000} {
		_, ok, _, has := scan([]byte(obj(n, "")))
		require.True(t, ok)
		require.False(t, has, "n=%d", n)
		doc := []byte(obj(n, `,"k0":0`))
		_, ok, dup, has := scan(doc)
		require.True(t, ok)
		require.True(t, has, "n=%d", n)
		require.Equal(t, "/k0", Pointer(doc, dup))
	}
	// Many large objects with the same names, side by side and nested.
	var b strings.Builder
	b.WriteByte('[')
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(obj(50, `,"nested":`+obj(20, "")))
	}
	b.WriteByte(']')
	_, ok, _, has := scan([]byte(b.String()))
	require.True(t, ok)
	require.False(t, has)
}

func TestScannerSyntax(t *testing.T) {
	for _, doc := range []string{
		``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1 "b":2}`, `01`, `1.`, `1e`, `-`, `tru`, `nul`,
		`"\x"`, `"\u12"`, "\"\x01\"", "\"\xff\"", `{"a":1,"a":2,}`,
	} {
		_, ok, _, _ := scan([]byte(doc))
		require.False(t, ok, "%q", doc)
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	_, ok, _, _ := scan([]byte(deep))
	require.True(t, ok)
	_, ok, _, _ = scan([]byte("[" + deep + "]"))
	require.False(t, ok)
}

func TestTokens(t *testing.T) {
	doc := []byte(`{"a":[1,"x",{"b":null}],"c":true}`)
	s := Scanner{Tokenize: true}
	end, ok := s.Value(doc, 0, 0)
	require.True(t, ok)
	require.Equal(t, len(doc), end)
	var kinds []byte
	for _, tk := range s.Tokens {
		kinds = append(kinds, tk.Kind)
	}
	require.Equal(t, `{"[0"{"n"t`, string(kinds))
	require.Equal(t, int32(len(s.Tokens)), s.Tokens[0].Next)
	require.Equal(t, int32(2), s.Tokens[0].N)
	require.Equal(t, `[1,"x",{"b":null}]`, string(doc[s.Tokens[2].Start:s.Tokens[2].End]))
	require.Equal(t, int32(8), s.Tokens[2].Next) // the "c" name
	require.Equal(t, int32(3), s.Tokens[2].N)
}

func TestAppendUnquote(t *testing.T) {
	for _, tok := range []string{`""`, `"abc"`, `"a\nb\t\"\\\/"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `"é"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(tok), &want))
		require.Equal(t, want, string(AppendUnquote(nil, []byte(tok))), tok)
	}
}

func TestPointer(t *testing.T) {
	doc := []byte(` {"a": [10, {"b~/c": "x"}], "d": {}} `)
	for want, needle := range map[string]string{
		"":            `{"a"`,
		"/a":          `"a"`,
		"/a/0":        `10`,
		"/a/1":        `{"b~`,
		"/a/1/b~0~1c": `"b~`,
		"/d":          `{}}`,
	} {
		require.Equal(t, want, Pointer(doc, bytes.Index(doc, []byte(needle))), needle)
	}
	require.Equal(t, "", Pointer(doc, bytes.Index(doc, []byte(`0,`)))) // inside a number
}

func TestSetRepeat(t *testing.T) {
	var set Set
	for _, n := range []int{0, 1, 2, 8, 9, 100, 3000} {
		names := make([][]byte, n)
		for i := range names {
			names[i] = fmt.Appendf(nil, "k%d", i)
		}
		at := func(i int) []byte { return names[i] }
		_, found := set.Repeat(n, at)
		require.False(t, found, "n=%d", n)
		if n < 2 {
			continue
		}
		// Two repeats: the earlier second occurrence is reported.
		names = append(names, []byte("k1"), []byte("k0"))
		i, found := set.Repeat(len(names), at)
		require.True(t, found)
		require.Equal(t, n, i)
	}
}

// FuzzScanner checks the scanner against encoding/json: the same syntax
// verdict (for valid UTF-8) and the same first duplicate.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `[{"x":{"y":1,"y":2}}]`, `{"a":1,"\u0061":2}`, `"\ud800"`, `[1,2,{"a":[]}]`, `{"a" : 1 , "b" : [ ] }`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(largeObject(3000, true)))
	f.Add([]byte(largeObject(3000, false)))
	f.Add([]byte(strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600)))
	f.Add([]byte(strings.Repeat(`[`, 2000) + strings.Repeat("]", 2000)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, ok, dup, has := scan(doc)
		if utf8.Valid(doc) {
			require.Equal(t, json.Valid(doc), ok)
		} else if ok {
			t.Fatal("accepted invalid UTF-8")
		}
		if !ok {
			return
		}
		want, wantDup := oracleDup(t, doc)
		require.Equal(t, wantDup, has)
		if has {
			require.Equal(t, want, Pointer(doc, dup))
		}
	})
}

// largeObject is an object of n members, the last repeating the first
// when dup is set.
func largeObject(n int, dup bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":[%d]`, i, i)
	}
	if dup {
		b.WriteString(`,"m0":0`)
	}
	b.WriteByte('}')
	return b.String()
}
