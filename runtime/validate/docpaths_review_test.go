package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/schemas"
)

// docVariants returns byte-level variants of doc that read as the same
// value: indented with several runs of whitespace, escaped.
func docVariants(t *testing.T, doc []byte, value any) [][]byte {
	out := [][]byte{doc}
	for _, ind := range []string{"  ", "\t", "       ", "        ", "         ", "                 "} {
		for _, prefix := range []string{"", "\r", " "} {
			var b bytes.Buffer
			if json.Indent(&b, doc, prefix, ind) == nil {
				out = append(out, b.Bytes())
			}
		}
	}
	out = append(out, escapedJSON(value, 0), escapedJSON(value, 1))
	return out
}

// scanStrings are replacements of a string value that exercise Scan's
// string paths (word at a time, escapes, multi-byte, control).
func scanStrings(s string) []string {
	var out []string
	for _, ins := range []string{"\x00", "\"", "\\", "\u00e9", "\x7f", "\U0001F600", "\n", "/", "\u2028", "\ufffd"} {
		for _, at := range []int{0, 1, 7, 8, 9, 15, 16, len(s)} {
			if at > len(s) {
				continue
			}
			out = append(out, s[:at]+ins+s[at:])
		}
	}
	out = append(out, strings.Repeat(s, 3), "", strings.Repeat("a", 8), strings.Repeat("a", 7)+"\"")
	return out
}

func compareDocPaths(t *testing.T, v *testValidator, what, ref string, doc []byte, wantVal any, haveWant bool) {
	t.Helper()
	key, sch, err := v.schema(ref)
	require.NoError(t, err)
	exact := v.Validate(ref, doc)
	if haveWant {
		want := check(key, sch, wantVal)
		require.Equal(t, want, exact, "%s: Validate vs v6 on %q", what, doc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chk := v.Check(ctx, ref, doc)
	require.Equal(t, exact, chk, "%s: Check vs Validate on %q", what, doc)
	d := Scan(ctx, doc)
	defer d.Release()
	require.Equal(t, exact, v.ValidateDoc(ref, d), "%s: ValidateDoc vs Validate on %q", what, doc)
	require.Equal(t, exact, v.CheckDoc(ctx, ref, d), "%s: CheckDoc vs Validate on %q", what, doc)
	d2 := Scan(context.Background(), doc)
	defer d2.Release()
	require.Equal(t, exact, v.CheckDoc(context.Background(), ref, d2), "%s: CheckDoc(bg) vs Validate on %q", what, doc)
	require.Equal(t, exact == nil, v.Valid(ref, doc), "%s: Valid", what)
}

// TestDocPathsAgree holds Validate, Check, ValidateDoc, CheckDoc (with a
// cancellable context, so that Scan polls, and without) and Valid to each
// other and to v6 on every fixture message written in other ways (indented
// with runs of spaces and tabs after line breaks, escaped) and on a sample
// of string values replaced by strings that take Scan's other string paths
// (a quote, a backslash, a control byte, multi-byte characters at and
// around the eight-byte boundaries of the word-at-a-time scan).
func TestDocPathsAgree(t *testing.T) {
	v, err := newValidator(true)
	require.NoError(t, err)
	every := uint32(25)
	if testing.Short() || raceEnabled {
		every = 400
	}
	n := 0
	for _, m := range fixtureMessages(t) {
		value, derr := decode(m.raw)
		if derr != nil {
			continue
		}
		for k, doc := range docVariants(t, m.raw, value) {
			if (testing.Short() || raceEnabled) && !sampled(fmt.Sprintf("%s variant %d", m.id, k), 8) {
				continue
			}
			compareDocPaths(t, v, fmt.Sprintf("%s variant %d", m.id, k), m.ref, doc, value, true)
			n++
		}
		if !m.valid {
			continue
		}
		var ps [][]string
		pointers(value, nil, &ps)
		for _, p := range ps {
			for si, repl := range []func(any) []any{
				func(x any) []any {
					s, ok := x.(string)
					if !ok {
						return nil
					}
					var out []any
					for _, r := range scanStrings(s) {
						out = append(out, r)
					}
					return out
				},
			} {
				cur := value
				for _, tok := range p {
					switch c := cur.(type) {
					case map[string]any:
						cur = c[tok]
					case []any:
						var i int
						fmt.Sscan(tok, &i)
						cur = c[i]
					}
				}
				for ri, r := range repl(cur) {
					mv, ok := mutateAt(value, p, mutation{name: "rev", apply: replaceWith(r)})
					if !ok {
						continue
					}
					raw, err := json.Marshal(mv)
					require.NoError(t, err)
					what := fmt.Sprintf("%s %s %d/%d", m.id, pointer(p), si, ri)
					if !sampled(what, every) {
						continue
					}
					compareDocPaths(t, v, what, m.ref, raw, mv, true)
					compareDocPaths(t, v, what+" esc0", m.ref, escapedJSON(mv, 0), mv, true)
					n++
				}
			}
		}
	}
	t.Logf("%d documents", n)
}

// TestAllOfConditionalEntriesAgreeWithV6 holds the fast path's verdicts on allOf
// entries that apply only if/then/else or only not (run without a visit of
// their own) to v6's, nested, through references, in every position.
func TestAllOfConditionalEntriesAgreeWithV6(t *testing.T) {
	schemas := []string{
		`{"allOf":[{"if":{"required":["a"]},"then":{"required":["b"]}}]}`,
		`{"allOf":[{"if":{"required":["a"]},"else":{"required":["c"]}}]}`,
		`{"allOf":[{"if":{"required":["a"]}}]}`,
		`{"allOf":[{"then":{"required":["b"]}}]}`,
		`{"allOf":[{"not":{"required":["a"]}}]}`,
		`{"allOf":[{"not":{"required":["a"]},"if":{"required":["b"]},"then":false}]}`,
		`{"allOf":[{"not":{"not":{"required":["a"]}}},{"if":{"required":["a"]},"then":{"properties":{"a":{"type":"string"}}},"else":false}]}`,
		`{"allOf":[{"allOf":[{"if":{"required":["a"]},"then":{"required":["b"]}}]},{"not":{"required":["z"]}}]}`,
		`{"$defs":{"c":{"if":{"properties":{"k":{"const":"x"}},"required":["k"]},"then":{"required":["x"]},"else":{"required":["y"]}},"n":{"not":{"type":"string"}}},"allOf":[{"$ref":"#/$defs/c"},{"$ref":"#/$defs/n"}]}`,
		`{"$defs":{"c":{"if":{"$ref":"#/$defs/d"},"then":{"$ref":"#/$defs/d"}},"d":{"required":["d"]}},"properties":{"p":{"allOf":[{"$ref":"#/$defs/c"}]}},"allOf":[{"$ref":"#/$defs/c"}]}`,
		`{"type":"object","allOf":[{"if":{"properties":{"type":{"const":"a"}}},"then":{"required":["x"]}},{"if":{"properties":{"type":{"const":"b"}}},"then":{"required":["y"]}},{"not":{"required":["bad"]}}]}`,
		`{"allOf":[{"if":true,"then":false}]}`,
		`{"allOf":[{"if":false,"else":{"type":"number","minimum":3}}]}`,
		`{"allOf":[{"not":true}]}`,
		`{"allOf":[{"not":false}]}`,
		`{"allOf":[{"if":{"type":"number","multipleOf":2},"then":{"maximum":10},"else":{"minimum":100}}]}`,
		`{"items":{"allOf":[{"if":{"type":"array"},"then":{"$ref":"#"}},{"not":{"const":0}}]}}`,
	}
	docs := []string{`{}`, `{"a":1}`, `{"a":"s"}`, `{"a":1,"b":2}`, `{"b":2}`, `{"c":1}`, `{"z":1}`, `{"a":"x","z":1}`,
		`{"k":"x"}`, `{"k":"x","x":1}`, `{"k":"y","y":1}`, `{"k":"y"}`, `{"d":1}`, `{"p":{"d":1}}`, `{"p":{}}`, `{"d":1,"p":{}}`,
		`{"type":"a"}`, `{"type":"a","x":1}`, `{"type":"b","x":1}`, `{"type":"b","y":1,"bad":1}`, `{"type":"\u0062","y":1}`,
		`1`, `2`, `4`, `12`, `3`, `101`, `100`, `1e400`, `2.0`, `"s"`, `null`, `[]`, `[0]`, `[1,[0]]`, `[1,[2,[3,[0]]]]`, `[[[[]]]]`, `true`, `0`}
	for _, sj := range schemas {
		sch, fs := testSchema(t, sj)
		for _, doc := range docs {
			value, derr := decode([]byte(doc))
			require.Nil(t, derr)
			want := sch.Validate(value) == nil
			tp := new(tape)
			require.True(t, tp.parse([]byte(doc)))
			valid, decided, _ := fs.verdict(tp, watch{})
			if !decided {
				require.False(t, valid)
				continue
			}
			require.Equal(t, want, valid, "%s on %s", sj, doc)
			if !want {
				_, ok := explain("t.json", fs.root, tp, watch{})
				require.True(t, ok, "%s on %s: no explanation", sj, doc)
			}
		}
	}
}

// TestSchemaRefsConcurrentFirstUse resolves every spelling of a few
// references from many goroutines at once on a new validator (run with
// -race): each spelling resolves to the canonical key and the same program.
func TestSchemaRefsConcurrentFirstUse(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	refs := []string{"event.schema.json", "event.schema.json#", schemas.BaseURI + "event.schema.json", schemas.BaseURI + "event.schema.json#",
		"effect.schema.json#/$defs/InjectEffect", schemas.BaseURI + "effect.schema.json#/$defs/InjectEffect"}
	type got struct {
		key string
		fs  *fastSchema
	}
	results := make([][]got, 8)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := range refs {
				ref := refs[(k+g)%len(refs)]
				key, fs, err := v.schema(ref)
				if err != nil {
					key = "error: " + err.Error()
				}
				results[g] = append(results[g], got{key, fs})
			}
		}()
	}
	close(start)
	wg.Wait()
	for g := range results {
		for k, r := range results[g] {
			ref := refs[(k+g)%len(refs)]
			want, wfs, err := v.lookup(ref)
			require.NoError(t, err)
			require.Equal(t, want, r.key, ref)
			require.Same(t, wfs, r.fs, ref)
		}
	}
	_, _, err = v.schema("event.schema.json#/$defs/Nope")
	require.ErrorIs(t, err, ErrUnknownSchema)
	_, ok := v.refs.Load("event.schema.json#/$defs/Nope")
	require.False(t, ok)
}
