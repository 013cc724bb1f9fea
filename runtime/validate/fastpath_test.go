package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"

	"github.com/agenthooks/agenthooks-go/schemas"
)

// The tests in this file hold the fast path (fastpath.go) to the v6
// oracle: the fast verdict must equal v6's on every fixture and on
// systematic mutations of them; a fast accept of something v6 rejects is
// the bug that matters.

const fastTestdata = "../../testdata"

// fixtureMessage is one JSON message of a fixture (a jsonl fixture has one
// per non-empty line).
type fixtureMessage struct {
	id    string
	ref   string
	raw   []byte
	valid bool // the manifest's expectedValid
}

func fixtureMessages(t testing.TB) []fixtureMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "manifest.json"))
	require.NoError(t, err)
	var m struct {
		Cases []struct {
			ID            string `json:"id"`
			Path          string `json:"path"`
			Binding       string `json:"binding"`
			Schema        string `json:"schema"`
			ExpectedValid bool   `json:"expectedValid"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.NotEmpty(t, m.Cases)
	var out []fixtureMessage
	for _, c := range m.Cases {
		doc, err := os.ReadFile(filepath.Join(fastTestdata, filepath.FromSlash(c.Path)))
		require.NoError(t, err)
		ref := path.Base(c.Schema)
		if c.Binding != "stdio-jsonl" {
			out = append(out, fixtureMessage{c.ID, ref, doc, c.ExpectedValid})
			continue
		}
		for i, line := range bytes.Split(doc, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				out = append(out, fixtureMessage{fmt.Sprintf("%s#%d", c.ID, i), ref, line, c.ExpectedValid})
			}
		}
	}
	return out
}

// verdicts runs the oracle and the fast path on one value.
type verdicts struct {
	t      testing.TB
	oracle *testValidator // the generated program (with the dispatch rewrite) and v6, as shipped before
	plain  *testValidator // a program compiled without the rewrite, and v6 without it
}

func newVerdicts(t testing.TB) *verdicts {
	t.Helper()
	oracle, err := newValidator(true)
	require.NoError(t, err)
	plain, err := newValidator(false)
	require.NoError(t, err)
	return &verdicts{t: t, oracle: oracle, plain: plain}
}

func (vs *verdicts) v6(ref string, value any) bool {
	key, sch, err := vs.oracle.schema(ref)
	require.NoError(vs.t, err)
	return check(key, sch, value) == nil
}

// fast returns the fast verdicts of the shipped validator and of the one
// compiled without the dispatch rewrite.
func (vs *verdicts) fast(ref string, value any) (bool, bool) {
	return fastVerdict(vs.t, vs.oracle, ref, value), fastVerdict(vs.t, vs.plain, ref, value)
}

// fastVerdict returns the fast verdict on value, which must be the same
// whether the value is put on a tape directly (as ValidateValue does) or
// encoded and parsed (as Validate does), plainly or with escapes.
func fastVerdict(t testing.TB, v *testValidator, ref string, value any) bool {
	key, _, err := v.schema(ref)
	require.NoError(t, err)
	fs := v.fastSchema(key)
	require.NotNil(t, fs, key)
	require.NotNil(t, fs.root, "%s falls back to v6", key)
	got := fs.valid(value)
	plain, err := json.Marshal(value)
	require.NoError(t, err)
	tp := new(tape)
	for _, doc := range [][]byte{plain, escapedJSON(value, 0), escapedJSON(value, 1)} {
		require.True(t, tp.parse(doc), "%s", doc)
		require.Equal(t, got, fs.validTape(tp), "verdict on the parsed %s differs from the value's", doc)
	}
	return got
}

// escapedJSON encodes a decoded JSON value with escapes in its strings and
// keys: every character for which (its index + phase) is even is written as
// an escape (\uXXXX, a surrogate pair, or a short escape), the others as
// they are, so both fully and partly escaped strings occur.
func escapedJSON(v any, phase int) []byte {
	var b []byte
	var enc func(v any)
	str := func(s string) {
		b = append(b, '"')
		i := phase
		for _, r := range s {
			escape := i%2 == 0
			i++
			switch {
			case r == '"' || r == '\\':
				b = append(b, '\\', byte(r))
			case r == '/' && escape:
				b = append(b, '\\', '/')
			case r == '\n' && escape:
				b = append(b, '\\', 'n')
			case r < 0x20 || escape:
				if r >= 0x10000 {
					r1, r2 := utf16.EncodeRune(r)
					b = fmt.Appendf(b, "\\u%04x\\u%04X", r1, r2)
				} else {
					b = fmt.Appendf(b, "\\u%04x", r)
				}
			default:
				b = utf8.AppendRune(b, r)
			}
		}
		b = append(b, '"')
	}
	enc = func(v any) {
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case bool:
			b = strconv.AppendBool(b, x)
		case json.Number:
			b = append(b, x...)
		case string:
			str(x)
		case []any:
			b = append(b, '[')
			for i, e := range x {
				if i > 0 {
					b = append(b, ',')
				}
				enc(e)
			}
			b = append(b, ']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				str(k)
				b = append(b, ':')
				enc(x[k])
			}
			b = append(b, '}')
		default:
			panic(fmt.Sprintf("escapedJSON: %T", v))
		}
	}
	enc(v)
	return b
}

// agree requires both fast verdicts to equal v6's and returns it.
func (vs *verdicts) agree(what, ref string, value any) bool {
	want := vs.v6(ref, value)
	got, gotPlain := vs.fast(ref, value)
	require.Equal(vs.t, want, got, "%s against %s: v6 says %v", what, ref, want)
	require.Equal(vs.t, want, gotPlain, "%s against %s (no dispatch): v6 says %v", what, ref, want)
	return want
}

func mustDecode(t testing.TB, raw []byte) any {
	t.Helper()
	v, derr := decode(raw)
	require.Nil(t, derr)
	return v
}

// eventOf returns params.event of a message, if any.
func eventOf(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	p, ok := m["params"].(map[string]any)
	if !ok {
		return nil, false
	}
	e, ok := p["event"]
	return e, ok
}

func TestFastPathFixtures(t *testing.T) {
	vs := newVerdicts(t)
	var n, valid, checks int
	for _, m := range fixtureMessages(t) {
		value, derr := decode(m.raw)
		if derr != nil {
			continue // malformed JSON never reaches either validator
		}
		n++
		ok := vs.agree(m.id, m.ref, value)
		checks++
		if ok {
			valid++
		}
		vs.agree(m.id, "schema.json", value)
		checks++
		if ev, ok := eventOf(value); ok {
			vs.agree(m.id+" params.event", "event.schema.json", ev)
			checks++
		}
		// And against every other root document, to exercise mismatches.
		for _, doc := range schemas.Documents() {
			vs.agree(m.id, doc, value)
			checks++
		}
	}
	t.Logf("%d fixture messages (%d valid against their schema), %d verdict comparisons", n, valid, checks)
	require.Positive(t, valid)
}

// mutation is one systematic change to a document.
type mutation struct {
	name  string
	apply func(old any, parentIsObject bool) (any, bool) // new value; false: delete
	when  func(old any) bool                             // nil: always
}

func replaceWith(v any) func(any, bool) (any, bool) {
	return func(any, bool) (any, bool) { return v, true }
}

func isString(v any) bool { _, ok := v.(string); return ok }

var mutations = []mutation{
	{name: "delete", apply: func(any, bool) (any, bool) { return nil, false }},
	{name: "null", apply: replaceWith(nil)},
	{name: "true", apply: replaceWith(true)},
	{name: "false", apply: replaceWith(false)},
	{name: "0", apply: replaceWith(json.Number("0"))},
	{name: "-1", apply: replaceWith(json.Number("-1"))},
	{name: "1.5", apply: replaceWith(json.Number("1.5"))},
	{name: "1.0", apply: replaceWith(json.Number("1.0"))},
	{name: "1e400", apply: replaceWith(json.Number("1e400"))},
	{name: `""`, apply: replaceWith("")},
	{name: `"x"`, apply: replaceWith("x")},
	{name: "[]", apply: replaceWith([]any{})},
	{name: "{}", apply: replaceWith(map[string]any{})},
	{name: "bad date-time", apply: replaceWith("2024-02-30T25:61:00Z"), when: isString},
	{name: "short date-time", apply: replaceWith("2024-01-01T00:00Z"), when: isString},
	{name: "date-time", apply: replaceWith("2024-01-01T00:00:00.5+01:00"), when: isString},
	{name: "relative uri", apply: replaceWith("relative/path?q=1"), when: isString},
	{name: "http uri", apply: replaceWith("http://example.com/x"), when: isString},
	{name: "https uri", apply: replaceWith("https://example.com/x"), when: isString},
	{name: "non-ascii", apply: replaceWith("é"), when: isString},
	{name: "upper", apply: func(old any, _ bool) (any, bool) { return strings.ToUpper(old.(string)), true }, when: isString},
	{name: "append x", apply: func(old any, _ bool) (any, bool) { return old.(string) + "x", true }, when: isString},
	{name: "drop first char", apply: func(old any, _ bool) (any, bool) {
		s := old.(string)
		if s == "" {
			return s, true
		}
		return s[1:], true
	}, when: isString},
	{name: "duplicate element", when: func(old any) bool { a, ok := old.([]any); return ok && len(a) > 0 },
		apply: func(old any, _ bool) (any, bool) {
			a := old.([]any)
			return append(slices.Clone(a), a[0]), true
		}},
	{name: "drop element", when: func(old any) bool { a, ok := old.([]any); return ok && len(a) > 0 },
		apply: func(old any, _ bool) (any, bool) { return slices.Clone(old.([]any)[1:]), true }},
	{name: "extra member", when: func(old any) bool { _, ok := old.(map[string]any); return ok },
		apply: func(old any, _ bool) (any, bool) {
			m := cloneMap(old.(map[string]any))
			m["zzUnknown"] = "x"
			return m, true
		}},
	{name: "extension member", when: func(old any) bool { _, ok := old.(map[string]any); return ok },
		apply: func(old any, _ bool) (any, bool) {
			m := cloneMap(old.(map[string]any))
			m["_ext"] = map[string]any{}
			return m, true
		}},
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// pointers lists the paths to every value in v (the root excluded), in a
// deterministic order.
func pointers(v any, prefix []string, out *[][]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(slices.Clone(prefix), k)
			*out = append(*out, p)
			pointers(x[k], p, out)
		}
	case []any:
		for i, e := range x {
			p := append(slices.Clone(prefix), strconv.Itoa(i))
			*out = append(*out, p)
			pointers(e, p, out)
		}
	}
}

// mutateAt returns a copy of root (sharing everything off the path) with
// the value at path changed by m; false when m does not apply.
// eachMutation calls f with every mutation (mutations) of value at every
// pointer of it (pointers) that mutateAt can apply.
func eachMutation(value any, f func(p []string, mu mutation, mv any)) {
	var ps [][]string
	pointers(value, nil, &ps)
	for _, p := range ps {
		for _, mu := range mutations {
			if mv, ok := mutateAt(value, p, mu); ok {
				f(p, mu, mv)
			}
		}
	}
}

func mutateAt(root any, p []string, m mutation) (any, bool) {
	if len(p) == 0 {
		return nil, false
	}
	switch x := root.(type) {
	case map[string]any:
		old, ok := x[p[0]]
		if !ok {
			return nil, false
		}
		c := cloneMap(x)
		if len(p) > 1 {
			nv, ok := mutateAt(old, p[1:], m)
			if !ok {
				return nil, false
			}
			c[p[0]] = nv
			return c, true
		}
		if m.when != nil && !m.when(old) {
			return nil, false
		}
		nv, keep := m.apply(old, true)
		if keep {
			c[p[0]] = nv
		} else {
			delete(c, p[0])
		}
		return c, true
	case []any:
		i, err := strconv.Atoi(p[0])
		if err != nil || i >= len(x) {
			return nil, false
		}
		c := slices.Clone(x)
		if len(p) > 1 {
			nv, ok := mutateAt(x[i], p[1:], m)
			if !ok {
				return nil, false
			}
			c[i] = nv
			return c, true
		}
		if m.when != nil && !m.when(x[i]) {
			return nil, false
		}
		nv, keep := m.apply(x[i], false)
		if keep {
			c[i] = nv
		} else {
			c = slices.Delete(c, i, i+1)
		}
		return c, true
	}
	return nil, false
}

// sampled deterministically keeps one in every `every` fast rejections for
// the v6 comparison; every fast accept is always compared.
func sampled(key string, every uint32) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return h.Sum32()%every == 0
}

func TestFastPathMutations(t *testing.T) {
	shared := newVerdicts(t)
	every := uint32(10)
	if testing.Short() {
		every = 50
	}
	var docs, total, accepts, rejectsChecked, v6Valid atomic.Int64
	t.Run("fixtures", func(t *testing.T) {
		for _, m := range fixtureMessages(t) {
			value, derr := decode(m.raw)
			if derr != nil || !shared.v6(m.ref, value) {
				continue
			}
			docs.Add(1)
			t.Run(m.id, func(t *testing.T) {
				t.Parallel()
				vs := *shared
				vs.t = t
				// compare checks one mutated value against ref: every fast
				// accept, and a deterministic sample of fast rejections.
				compare := func(what, ref string, mv any) {
					total.Add(1)
					if raceEnabled && !sampled("race "+what, 5) {
						return
					}
					got, gotPlain := vs.fast(ref, mv)
					if !got && !gotPlain && !sampled(what, every) {
						return
					}
					if vs.agree(what, ref, mv) {
						v6Valid.Add(1)
					}
					if got {
						accepts.Add(1)
					} else {
						rejectsChecked.Add(1)
					}
				}
				eachMutation(value, func(p []string, mu mutation, mv any) {
					what := m.id + " " + pointer(p) + " " + mu.name
					compare(what, m.ref, mv)
					if len(p) > 2 && p[0] == "params" && p[1] == "event" {
						// The event on its own against the event union.
						if ev, ok := eventOf(mv); ok {
							compare(what+" params.event", "event.schema.json", ev)
						}
					}
				})
			})
		}
	})
	t.Logf("%d valid fixture documents, %d mutated documents: %d fast accepts (all compared with v6), %d fast rejections compared (1 in %d sampled), %d v6-valid among the compared",
		docs.Load(), total.Load(), accepts.Load(), rejectsChecked.Load(), every, v6Valid.Load())
	require.Positive(t, docs.Load())
	require.Positive(t, accepts.Load())
}

// TestFastPathKeywords compiles small schemas exercising every modelled
// keyword, including those the canonical schemas do not use, and compares
// the fast verdict with v6 on instances around each boundary.
func TestFastPathKeywords(t *testing.T) {
	instances := []string{
		`null`, `true`, `false`, `0`, `-0`, `1`, `1.0`, `1.5`, `-1`, `2`, `3`, `10`, `1e2`, `1E-2`, `100.000`,
		`12345678901234567890`, `-12345678901234567890.0`, `1e400`, `0.1`, `0.30000000000000004`,
		`""`, `"a"`, `"ab"`, `"abc"`, `"é"`, `"éé"`, `"😀"`, `"😀😀😀"`, `"x_y"`, `"2024-01-01T00:00:00Z"`,
		`"2024-01-01T23:59:60Z"`, `"2024-01-01T00:00:60Z"`, `"2024-02-30T00:00:00Z"`, `"2024-01-01t00:00:00z"`,
		`"https://a.example/x"`, `"a/b"`, `"mailto:x@y"`, `"http://[::1]:80/"`, `"http://[zz]/"`,
		`[]`, `[1]`, `[1,2]`, `[1,1]`, `[1,1.0]`, `["a","a"]`, `[{"a":1},{"a":1.0}]`, `[[1],[1]]`, `[1,"a",null]`,
		`["a","b","c","d","e","f","g","h","i","a"]`, `[0,"x"]`, `["x",0]`,
		`{}`, `{"a":1}`, `{"a":1,"b":2}`, `{"a":"x","b":null}`, `{"_x":1}`, `{"A":1}`, `{"a":{"a":{"a":{}}}}`,
		`{"kind":"a","v":1}`, `{"kind":"b","v":"s"}`, `{"kind":"c"}`, `{"é":1}`,
	}
	schemasJSON := []string{
		`true`, `false`, `{}`,
		`{"type":"integer"}`, `{"type":["integer","string"]}`, `{"type":"number"}`, `{"type":["null","boolean"]}`,
		`{"type":"array"}`, `{"type":"object"}`, `{"type":"string"}`,
		`{"const":1}`, `{"const":1.0}`, `{"const":"a"}`, `{"const":null}`, `{"const":[1]}`, `{"const":{"a":1}}`,
		`{"enum":[1,"a",null,[1],{"a":1}]}`, `{"enum":[]}`, `{"enum":[false]}`,
		`{"minimum":1}`, `{"maximum":1.5}`, `{"exclusiveMinimum":0}`, `{"exclusiveMaximum":10}`, `{"minimum":-0.5,"maximum":1e3}`,
		`{"multipleOf":2}`, `{"multipleOf":0.1}`, `{"multipleOf":1.5}`,
		`{"minLength":2}`, `{"maxLength":1}`, `{"minLength":1,"maxLength":2}`, `{"pattern":"^[a-z]+$"}`, `{"pattern":"b"}`,
		`{"format":"date-time"}`, `{"format":"uri"}`, `{"format":"date-time","type":"string"}`,
		`{"minItems":1}`, `{"maxItems":1}`, `{"uniqueItems":true}`, `{"contains":{"type":"string"}}`,
		`{"items":{"type":"integer"}}`, `{"prefixItems":[{"type":"integer"}],"items":false}`, `{"prefixItems":[{"const":0},{"type":"string"}]}`,
		`{"minProperties":1}`, `{"maxProperties":1}`, `{"required":["a"]}`, `{"required":["a","b"]}`,
		`{"properties":{"a":{"type":"integer"}}}`, `{"properties":{"a":{"type":"integer"}},"additionalProperties":false}`,
		`{"properties":{"a":true},"additionalProperties":{"type":"integer"}}`,
		`{"patternProperties":{"^_":{"type":"integer"}},"additionalProperties":false}`,
		`{"patternProperties":{"^[a-z]$":{"minimum":2},"^a":{"maximum":1}}}`,
		`{"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"propertyNames":{"maxLength":1}}`, `{"propertyNames":false}`,
		`{"not":{"type":"string"}}`, `{"allOf":[{"type":"number"},{"minimum":2}]}`,
		`{"anyOf":[{"type":"string"},{"minimum":2}]}`, `{"oneOf":[{"type":"number"},{"type":"integer"}]}`,
		`{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`,
		`{"if":{"properties":{"kind":{"const":"a"}},"required":["kind"]},"then":{"properties":{"v":{"type":"integer"}}},"else":{"required":["v"]}}`,
		`{"if":{"type":"string"},"then":{"minLength":2}}`, `{"if":{"type":"string"},"else":{"type":"null"}}`,
		`{"allOf":[{"if":{"required":["kind"],"properties":{"kind":{"const":"a"}}},"then":{"required":["v"]}},{"if":{"required":["kind"],"properties":{"kind":{"enum":["b","c"]}}},"then":{"properties":{"v":{"type":"string"}}}},{"if":{"required":["kind"],"properties":{"kind":{"const":"c"}}},"then":{"minProperties":2}},{"type":["object","string","integer"]}]}`,
		`{"allOf":[{"if":{"required":["kind"],"properties":{"kind":{"const":"a"}}},"then":{"type":"object"}},{"if":{"required":["kind"],"properties":{"kind":{"const":"b"}}},"then":true},{"if":{"required":["kind"],"properties":{"kind":{"const":"c"}}},"then":{"minProperties":2}}]}`,
		`{"$defs":{"n":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"$defs":{"s":{"type":"string"}},"items":{"$ref":"#/$defs/s"},"properties":{"a":{"$ref":"#/$defs/s"}}}`,
	}
	for i, sj := range schemasJSON {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(sj))
		require.NoError(t, err)
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		url := fmt.Sprintf("mem://s%d.json", i)
		require.NoError(t, c.AddResource(url, doc))
		sch, err := c.Compile(url)
		require.NoError(t, err, sj)
		root, err := compileFast(sch)
		require.NoError(t, err, sj)
		fs := &fastSchema{root: root}
		if strings.HasPrefix(sj, `{"allOf":[{"if"`) {
			require.Len(t, root.switches, 1, "dispatch switch built")
		}
		tp := new(tape)
		for _, ij := range instances {
			inst := mustDecode(t, []byte(ij))
			want := sch.Validate(inst) == nil
			require.Equal(t, want, fs.valid(inst), "schema %s instance %s", sj, ij)
			for _, doc := range [][]byte{[]byte(ij), escapedJSON(inst, 0), escapedJSON(inst, 1)} {
				require.True(t, tp.parse(doc), "%s", doc)
				require.Equal(t, want, fs.validTape(tp), "schema %s instance %s", sj, doc)
			}
		}
	}
}

// TestFastPathUnsupported checks that a schema using a keyword outside the
// modelled set, or an in-place reference cycle, is not compiled for the
// fast path and falls back to v6.
func TestFastPathUnsupported(t *testing.T) {
	for _, sj := range []string{
		`{"dependentRequired":{"a":["b"]}}`,
		`{"dependentSchemas":{"a":{"required":["b"]}}}`,
		`{"unevaluatedProperties":false}`,
		`{"unevaluatedItems":false}`,
		`{"contains":{"type":"string"},"minContains":2}`,
		`{"contains":{"type":"string"},"maxContains":2}`,
		`{"$dynamicRef":"#x","$dynamicAnchor":"x"}`,
		`{"properties":{"a":{"dependentRequired":{"a":["b"]}}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(sj))
		require.NoError(t, err)
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		require.NoError(t, c.AddResource("mem://u.json", doc))
		sch, err := c.Compile("mem://u.json")
		require.NoError(t, err, sj)
		_, err = compileFast(sch)
		require.ErrorIs(t, err, errFastUnsupported, sj)
		require.False(t, newFastSchema(sch).valid(map[string]any{}), sj)
	}
}

// TestFastPathSchemaFields pins the fields of jsonschema.Schema that
// compileFast knows about: a v6 upgrade adding a keyword field must be
// reviewed here (and in fastCompiler.fill) before the fast path trusts it.
func TestFastPathSchemaFields(t *testing.T) {
	known := []string{
		"DraftVersion", "Location", "Bool", "ID", "Ref", "Anchor", "RecursiveRef", "RecursiveAnchor",
		"DynamicRef", "DynamicAnchor", "Types", "Enum", "Const", "Not", "AllOf", "AnyOf", "OneOf",
		"If", "Then", "Else", "Format", "MaxProperties", "MinProperties", "Required", "PropertyNames",
		"Properties", "PatternProperties", "AdditionalProperties", "Dependencies",
		"DependentRequired", "DependentSchemas", "UnevaluatedProperties", "MinItems", "MaxItems",
		"UniqueItems", "Contains", "MinContains", "MaxContains", "Items", "AdditionalItems",
		"PrefixItems", "Items2020", "UnevaluatedItems", "MinLength", "MaxLength", "Pattern",
		"ContentEncoding", "ContentMediaType", "ContentSchema", "Maximum", "Minimum",
		"ExclusiveMaximum", "ExclusiveMinimum", "MultipleOf", "Extensions", "Title", "Description",
		"Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated",
	}
	var got []string
	typ := reflect.TypeFor[jsonschema.Schema]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			got = append(got, f.Name)
		}
	}
	require.ElementsMatch(t, known, got)
}

// TestSchemaPatternsCompileWithGoRegexp checks that every pattern and
// patternProperties key in the embedded schemas is a Go regular expression,
// so the fast path and v6 (which both use Go's regexp) see the same
// language, and that every root document is compiled for the fast path.
func TestSchemaPatternsCompileWithGoRegexp(t *testing.T) {
	var patterns []string
	var walk func(n any, key string)
	walk = func(n any, key string) {
		switch x := n.(type) {
		case map[string]any:
			if key == "patternProperties" {
				for k := range x {
					patterns = append(patterns, k)
				}
			}
			for k, v := range x {
				if k == "pattern" {
					if s, ok := v.(string); ok {
						patterns = append(patterns, s)
					}
				}
				if k != "const" && k != "enum" && k != "examples" && k != "default" {
					walk(v, k)
				}
			}
		case []any:
			for _, v := range x {
				walk(v, "")
			}
		}
	}
	for _, name := range schemas.Documents() {
		raw, err := schemas.Read(name)
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc))
		walk(doc, "")
	}
	require.NotEmpty(t, patterns)
	for _, p := range patterns {
		_, err := regexp.Compile(p)
		require.NoError(t, err, p)
	}

	v, err := New()
	require.NoError(t, err)
	for _, name := range schemas.Documents() {
		_, fs, err := v.schema(name)
		require.NoError(t, err, name)
		require.NotNil(t, fs.root, name)
	}
}

// TestFastPathValues covers ValidateValue inputs the fast path does not
// model: they must fall back to v6 (never accept on their own).
func TestFastPathValues(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	ref := "content-selection.schema.json"
	_, fs, err := v.schema(ref)
	require.NoError(t, err)
	for _, bad := range []any{struct{}{}, []string{"body"}, map[string]string{}, float64(1), int(1), json.Number("0x10"), json.Number("1e99999")} {
		require.False(t, fs.valid(map[string]any{"default": bad}), "%T", bad)
		// Negations do not turn an unmodelled value into an accept.
		not := &fastNode{types: tString}
		not.setOps()
		root := &fastNode{not: not}
		root.setOps()
		require.False(t, (&fastSchema{root: root}).valid(bad), "%T", bad)
	}
	// Deep nesting defers to v6 instead of recursing without bound.
	var deep any = map[string]any{}
	for range maxFastDepth + 10 {
		deep = []any{deep}
	}
	items := &fastNode{array: true, minItems: -1, maxItems: -1}
	items.items = items
	items.setOps()
	require.True(t, (&fastSchema{root: items}).valid([]any{[]any{}}))
	require.False(t, (&fastSchema{root: items}).valid(deep))
}

func TestParseNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "123456789012345678", "1.0", "1e2", "1E+2", "-1.5e-3", "12345678901234567890"} {
		_, ok := parseNumber(s)
		require.True(t, ok, s)
	}
	for _, s := range []string{"", "-", "01", "1.", ".1", "1e", "1e+", "+1", "0x10", "1/2", "Inf", "NaN", " 1", "1 ", "1e1001", strings.Repeat("1", maxNumberLen+1)} {
		_, ok := parseNumber(s)
		require.False(t, ok, s)
	}
	n, _ := parseNumber("-123")
	require.True(t, n.small)
	require.Equal(t, int64(-123), n.i)
	a, _ := parseNumber("1.0")
	b, _ := parseNumber("1")
	require.Zero(t, a.cmpNum(b))
}

// FuzzFastPathAgreesWithV6 asserts that the fast path never accepts what
// v6 rejects, for arbitrary documents against every root schema and every
// $defs entry, and that neither path panics.
func FuzzFastPathAgreesWithV6(f *testing.F) {
	v, err := newValidator(true)
	require.NoError(f, err)
	refs := fuzzRefs(f)
	index := map[string]int{}
	for i, r := range refs {
		index[r] = i
	}
	for _, m := range fixtureMessages(f) {
		f.Add(m.raw, uint16(index[m.ref]))
		if value, derr := decode(m.raw); derr == nil {
			f.Add(escapedJSON(value, 0), uint16(index[m.ref]))
			if ev, ok := eventOf(value); ok {
				b, err := json.Marshal(ev)
				require.NoError(f, err)
				f.Add(b, uint16(index["event.schema.json"]))
				f.Add(escapedJSON(ev, 1), uint16(index["event.schema.json"]))
			}
		}
	}
	// Duplicate keys, which v6 sees last-wins.
	f.Add([]byte(`{"jsonrpc":"1.0","jsonrpc":"2.0","method":"hooks/observe","params":{}}`), uint16(index["observe-notification.schema.json"]))
	f.Add([]byte(`{"kind":"text","kind":"nope","text":"x"}`), uint16(index["content-item.schema.json"]))
	// Thousands of members and elements, deep nesting, repeated names.
	for _, h := range hostile.Values() {
		f.Add([]byte(h), uint16(index["event.schema.json"]))
		f.Add([]byte(`{"jsonrpc":"2.0","id":"r","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace","value":`+h+`}]}}`),
			uint16(index["intercept-response.schema.json"]))
	}
	f.Fuzz(func(t *testing.T, doc []byte, which uint16) {
		ref := refs[int(which)%len(refs)]
		key, sch, err := v.schema(ref)
		require.NoError(t, err)
		value, derr := decode(doc)
		if derr != nil {
			require.Error(t, v.Validate(ref, doc))
			return
		}
		fs := v.fastSchema(key)
		require.NotNil(t, fs)
		wantErr := check(key, sch, value)
		want := wantErr == nil
		tp := new(tape)
		if tp.parse(doc) {
			if fs.validTape(tp) {
				require.True(t, want, "fast path accepted a document v6 rejects")
			}
			// Where the fast path decides (Check and Valid rely on it),
			// its verdict is v6's, rejections included.
			if valid, decided, _ := fs.verdict(tp, watch{}); decided {
				require.Equal(t, want, valid, "fast path decided against v6")
				// A rejection is explained as v6 explains it.
				if !valid && !tp.dup {
					if got, ok := explain(key, fs.root, tp, watch{}); ok {
						require.Equal(t, wantErr, error(got), "explanation differs from v6's")
					}
				}
			}
			require.Equal(t, want && !tp.dup, v.Valid(ref, doc))
		}
		if fs.valid(value) {
			require.True(t, want, "fast path accepted a value v6 rejects")
		}
		// The wired path must agree with v6 exactly, but for repeated
		// member names, which v6 reads last-wins and Validate rejects.
		if hostile.HasDuplicate(doc) {
			require.ErrorIs(t, v.Validate(ref, doc), ErrDuplicateMember)
			return
		}
		require.Equal(t, want, v.Validate(ref, doc) == nil)
	})
}

// fuzzRefs lists every root document and every $defs entry.
func fuzzRefs(t testing.TB) []string {
	var refs []string
	for _, name := range schemas.Documents() {
		refs = append(refs, name)
		raw, err := schemas.Read(name)
		require.NoError(t, err)
		var doc struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		keys := make([]string, 0, len(doc.Defs))
		for k := range doc.Defs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			refs = append(refs, name+"#/$defs/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
		}
	}
	return refs
}

// TestFastPathDefs compares verdicts for every $defs entry on every fixture
// message and on its params.event.
func TestFastPathDefs(t *testing.T) {
	vs := newVerdicts(t)
	refs := fuzzRefs(t)
	var values []any
	for _, m := range fixtureMessages(t) {
		if value, derr := decode(m.raw); derr == nil {
			values = append(values, value)
			if ev, ok := eventOf(value); ok {
				values = append(values, ev)
				if em, ok := ev.(map[string]any); ok {
					for _, k := range []string{"input", "targets", "content", "context"} {
						if x, ok := em[k]; ok {
							values = append(values, x)
						}
					}
				}
			}
		}
	}
	checks, valid := 0, 0
	for _, ref := range refs {
		for i, value := range values {
			if raceEnabled && !sampled(fmt.Sprintf("race %s %d", ref, i), 5) {
				continue
			}
			if vs.agree(fmt.Sprintf("value %d", i), ref, value) {
				valid++
			}
			checks++
		}
	}
	t.Logf("%d refs x %d values: %d comparisons, %d v6-valid", len(refs), len(values), checks, valid)
}
