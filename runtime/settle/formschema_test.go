package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
)

// The v6 oracle: how the requested form schema was compiled and answers
// were checked while runtime/settle linked jsonschema/v6.

type refusingLoader struct{}

func (refusingLoader) Load(string) (any, error) {
	return nil, errors.New("external schema references are not loaded")
}

func v6CompileForm(p *gen.MCPElicitationElicitRequestFormParams) (*jsonschema.Schema, error) {
	rs := p.RequestedSchema
	rs.Schema = nil
	doc, err := rs.MarshalJSON()
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	const loc = "urn:ahp:settle:requested-form-schema"
	if err := c.AddResource(loc, v); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// errV6Undefined marks an input on which v6 panics.
var errV6Undefined = errors.New("v6 panicked")

func v6CheckAnswers(s *jsonschema.Schema, answers gen.OrderedMap[gen.FormAnswerValue]) (err error) {
	if answers == nil {
		answers = gen.OrderedMap[gen.FormAnswerValue]{}
	}
	doc, err := answers.MarshalJSON()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	defer func() {
		if recover() != nil {
			err = errV6Undefined
		}
	}()
	return s.Validate(v)
}

// v6Defined reports whether every number of doc is one v6 represents
// faithfully: big.Rat parses it, and a length or item-count limit is below
// 2^62 (v6 reads the low 64 bits of larger ones). Outside that domain the
// validator keeps the mathematical value (formschema.go).
func v6Defined(doc string) bool {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return true
	}
	limit := new(big.Rat).SetInt64(1 << 62)
	var walk func(key string, v any) bool
	walk = func(key string, v any) bool {
		switch v := v.(type) {
		case json.Number:
			r, ok := new(big.Rat).SetString(string(v))
			if !ok {
				return false
			}
			switch key {
			case "minLength", "maxLength", "minItems", "maxItems":
				return r.Cmp(limit) < 0
			}
		case []any:
			for _, e := range v {
				if !walk("", e) {
					return false
				}
			}
		case map[string]any:
			for k, e := range v {
				if !walk(k, e) {
					return false
				}
			}
		}
		return true
	}
	return walk("", v)
}

// agree compiles schema (a requestedSchema) both ways and, when it
// compiles, checks answers (an answer object) both ways; it returns the
// verdicts. It skips inputs that are not a valid request or answer object
// (neither path sees them) and inputs outside v6's defined domain.
func agree(t *testing.T, schema, answers string) (compiled, valid bool, skipped bool) {
	t.Helper()
	p, err := parseRequestParams(`{"message":"m","requestedSchema":` + schema + `}`)
	if err != nil || p.Form == nil || !v6Defined(schema) || !v6Defined(answers) {
		return false, false, true
	}
	ours, errOurs := compileForm(p.Form)
	theirs, errTheirs := v6CompileForm(p.Form)
	require.Equal(t, errTheirs == nil, errOurs == nil, "compile verdicts differ for schema %s (v6: %v)", schema, errTheirs)
	if errOurs != nil {
		return false, false, false
	}
	var m gen.OrderedMap[gen.FormAnswerValue]
	if m.UnmarshalJSON([]byte(answers)) != nil {
		return true, false, true
	}
	for _, a := range m {
		if !validAnswerValue(a.Value) {
			return true, false, true
		}
	}
	errTheirs = v6CheckAnswers(theirs, m)
	if errors.Is(errTheirs, errV6Undefined) {
		return true, false, true
	}
	errOurs = checkAnswers(ours, m)
	require.Equal(t, errTheirs == nil, errOurs == nil, "answer verdicts differ for schema %s, answers %s (v6: %v)", schema, answers, errTheirs)
	return true, errOurs == nil, false
}

// TestFormAnswersAgreeWithV6 holds the requested-schema validator to the
// verdicts jsonschema/v6 gave: handpicked schemas and answers with their
// expected verdicts, then generated ones.
func TestFormAnswersAgreeWithV6(t *testing.T) {
	const no, yes = false, true
	cases := []struct {
		name, schema, answers string
		compiles, valid       bool
	}{
		{"empty", `{"type":"object","properties":{}}`, `{}`, yes, yes},
		{"extra answers allowed", `{"type":"object","properties":{}}`, `{"x":1,"y":"a"}`, yes, yes},
		{"required present", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":"x"}`, yes, yes},
		{"required missing", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{}`, yes, no},
		{"required not a property", `{"type":"object","properties":{},"required":["z"]}`, `{"z":true}`, yes, yes},
		{"required repeated", `{"type":"object","properties":{},"required":["z","z"]}`, `{"z":true}`, no, no},
		{"string type", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`, yes, no},
		{"minLength code points", `{"type":"object","properties":{"a":{"type":"string","minLength":3}}}`, `{"a":"日本語"}`, yes, yes},
		{"minLength astral", `{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`, `{"a":"\ud83d\ude00"}`, yes, no},
		{"maxLength lone surrogate", `{"type":"object","properties":{"a":{"type":"string","maxLength":1}}}`, `{"a":"\udc00"}`, yes, yes},
		{"maxLength 1.0", `{"type":"object","properties":{"a":{"type":"string","maxLength":1.0}}}`, `{"a":"ab"}`, yes, no},
		{"maxLength 1e1", `{"type":"object","properties":{"a":{"type":"string","maxLength":1e1}}}`, `{"a":"abcdefghij"}`, yes, yes},
		{"minLength fraction", `{"type":"object","properties":{"a":{"type":"string","minLength":1.5}}}`, `{}`, no, no},
		{"minLength negative", `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, `{}`, no, no},
		{"minLength -0", `{"type":"object","properties":{"a":{"type":"string","minLength":-0}}}`, `{"a":""}`, yes, yes},
		{"format date", `{"type":"object","properties":{"a":{"type":"string","format":"date"}}}`, `{"a":"2024-02-29"}`, yes, yes},
		{"format date invalid", `{"type":"object","properties":{"a":{"type":"string","format":"date"}}}`, `{"a":"2023-02-29"}`, yes, no},
		{"format date-time", `{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}`, `{"a":"2024-01-01T23:59:60Z"}`, yes, yes},
		{"format email", `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, `{"a":"a.b@example.com"}`, yes, yes},
		{"format email ip", `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, `{"a":"a@[IPv6:::1]"}`, yes, yes},
		{"format email bad", `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, `{"a":"a..b@example.com"}`, yes, no},
		{"format uri", `{"type":"object","properties":{"a":{"type":"string","format":"uri"}}}`, `{"a":"relative/path"}`, yes, no},
		{"number", `{"type":"object","properties":{"a":{"type":"number","minimum":0.5,"maximum":1e1}}}`, `{"a":10}`, yes, yes},
		{"number above", `{"type":"object","properties":{"a":{"type":"number","maximum":1e1}}}`, `{"a":10.000000000000000000001}`, yes, no},
		{"number below", `{"type":"object","properties":{"a":{"type":"number","minimum":-1e-400}}}`, `{"a":-1e-399}`, yes, no},
		{"number string", `{"type":"object","properties":{"a":{"type":"number"}}}`, `{"a":"1"}`, yes, no},
		{"integer 1.0", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1.0}`, yes, yes},
		{"integer 1e400", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1e400}`, yes, yes},
		{"integer 1.5", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1.5}`, yes, no},
		{"integer big", `{"type":"object","properties":{"a":{"type":"integer","maximum":9007199254740992}}}`, `{"a":9007199254740993}`, yes, no},
		{"boolean", `{"type":"object","properties":{"a":{"type":"boolean","default":true}}}`, `{"a":false}`, yes, yes},
		{"boolean string", `{"type":"object","properties":{"a":{"type":"boolean"}}}`, `{"a":"true"}`, yes, no},
		{"enum", `{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]}}}`, `{"a":"y"}`, yes, yes},
		{"enum miss", `{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]}}}`, `{"a":"z"}`, yes, no},
		{"enum empty", `{"type":"object","properties":{"a":{"type":"string","enum":[]}}}`, `{"a":"z"}`, yes, no},
		{"enum repeated", `{"type":"object","properties":{"a":{"type":"string","enum":["x","x"]}}}`, `{"a":"x"}`, yes, yes},
		{"legacy enum", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"enumNames":["X"]}}}`, `{"a":"x"}`, yes, yes},
		{"oneOf", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"},{"const":"y","title":"Y"}]}}}`, `{"a":"x"}`, yes, yes},
		{"oneOf repeated const", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"},{"const":"x","title":"Y"}]}}}`, `{"a":"x"}`, yes, no},
		{"oneOf empty", `{"type":"object","properties":{"a":{"type":"string","oneOf":[]}}}`, `{}`, no, no},
		{"multi enum", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]},"minItems":1,"maxItems":2}}}`, `{"a":["x","y"]}`, yes, yes},
		{"multi enum empty answer", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]},"minItems":1}}}`, `{"a":[]}`, yes, no},
		{"multi enum too many", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}}}`, `{"a":["x","x"]}`, yes, no},
		{"multi enum miss", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]}}}}`, `{"a":["x","z"]}`, yes, no},
		{"multi enum not array", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]}}}}`, `{"a":"x"}`, yes, no},
		{"multi anyOf", `{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"},{"const":"x","title":"X2"}]}}}}`, `{"a":["x"]}`, yes, yes},
		{"multi anyOf empty", `{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[]}}}}`, `{}`, no, no},
		{"multi minItems fraction", `{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]},"minItems":0.5}}}`, `{}`, no, no},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			compiled, valid, skipped := agree(t, tc.schema, tc.answers)
			require.False(t, skipped)
			require.Equal(t, tc.compiles, compiled)
			require.Equal(t, tc.valid, valid)
		})
	}

	t.Run("generated", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 5))
		checked := 0
		verdicts := map[[2]bool]int{}
		for range 3000 {
			data := make([]byte, 8+rng.IntN(120))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			schema, answers := genForm(data)
			compiled, valid, skipped := agree(t, schema, answers)
			if skipped {
				continue
			}
			checked++
			verdicts[[2]bool{compiled, valid}]++
		}
		// Every verdict is well represented.
		require.Greater(t, checked, 2000)
		t.Logf("checked %d: %v", checked, verdicts)
		for _, v := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			require.Greater(t, verdicts[v], checked/20, "verdict %v: %v", v, verdicts)
		}
	})

	t.Run("repeated answer names", func(t *testing.T) {
		// Answer objects with repeated names are rejected on decoding; the
		// validator still reads them as v6 does, the last value counting.
		p, err := parseRequestParams(`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}`)
		require.NoError(t, err)
		ours, err := compileForm(p.Form)
		require.NoError(t, err)
		theirs, err := v6CompileForm(p.Form)
		require.NoError(t, err)
		for _, vals := range [][]string{{`1`, `"x"`}, {`"x"`, `1`}, {`"x"`, `"y"`}, {`1`, `2`}} {
			for _, n := range []int{2, 12} { // scanned, and indexed
				var m gen.OrderedMap[gen.FormAnswerValue]
				for i := range n {
					m = append(m, gen.MapEntry[gen.FormAnswerValue]{Name: fmt.Sprint("o", i), Value: gen.FormAnswerValue("true")})
				}
				m[0] = gen.MapEntry[gen.FormAnswerValue]{Name: "a", Value: gen.FormAnswerValue(vals[0])}
				m[n-1] = gen.MapEntry[gen.FormAnswerValue]{Name: "a", Value: gen.FormAnswerValue(vals[1])}
				require.Equal(t, v6CheckAnswers(theirs, m) == nil, checkAnswers(ours, m) == nil, "%v of %d", vals, n)
			}
		}
	})

	t.Run("large", func(t *testing.T) {
		schema, answers := largeForm(400)
		compiled, valid, skipped := agree(t, schema, answers)
		require.False(t, skipped)
		require.True(t, compiled)
		require.True(t, valid)
		// One bad answer among many.
		_, valid, _ = agree(t, schema, strings.Replace(answers, `"p7":"v7"`, `"p7":"nope"`, 1))
		require.False(t, valid)
	})
}

// largeForm is a schema of n enum properties with n values each, all
// required, and the answers choosing one value each.
func largeForm(n int) (schema, answers string) {
	var s, a strings.Builder
	s.WriteString(`{"type":"object","properties":{`)
	a.WriteString(`{`)
	req := make([]string, n)
	for i := range n {
		if i > 0 {
			s.WriteByte(',')
			a.WriteByte(',')
		}
		vals := make([]string, n)
		for j := range n {
			vals[j] = fmt.Sprintf(`"v%d"`, j)
		}
		fmt.Fprintf(&s, `"p%d":{"type":"string","enum":[%s]}`, i, strings.Join(vals, ","))
		fmt.Fprintf(&a, `"p%d":"v%d"`, i, i)
		req[i] = fmt.Sprintf(`"p%d"`, i)
	}
	fmt.Fprintf(&s, `},"required":[%s]}`, strings.Join(req, ","))
	a.WriteString(`}`)
	return s.String(), a.String()
}

// Pools of interesting keyword and answer values (JSON texts).
var (
	formNumbers = []string{"0", "-0", "1", "1.0", "1e1", "10E-1", "2", "3", "-1", "0.5", "2.5", "5", "64", "100", "1e2",
		"0.1e1", "-2.5e0", "1.5e3", "1e400", "-1e400", "1e-400", "9007199254740993", "9223372036854775807",
		"9223372036854775808", "18446744073709551617", "12345678901234567890e-10", "1e1000001", "0.000", "-0.0e5"}
	formStrings = []string{`""`, `"a"`, `"b"`, `"ab"`, `"é"`, `"日本語"`, `"\ud83d\ude00"`, `"\udc00"`, `"a\"b"`,
		`"2024-02-29"`, `"2023-02-29"`, `"2024-01-01T00:00:00Z"`, `"2024-01-01T23:59:60Z"`, `"2024-01-01t10:00:00.5+01:00"`,
		`"a@b.c"`, `"\"x\"@[IPv6:::1]"`, `"u@[127.0.0.1]"`, `"u@[127.0.0.01]"`, `"x@-a.com"`, `".a@b"`,
		`"https://example.com/a"`, `"urn:x"`, `"not a uri"`, `"http://[::1]:80"`, `"http://[fe80::1%25eth0]/"`, `"a b"`}
	formNames   = []string{"a", "é", "", "b c", "a~1/0"}
	formFormats = []string{"date", "date-time", "email", "uri"}
)

// formName is the name of property i: a few odd ones, then p5, p6...
func formName(i int) string {
	if i < len(formNames) {
		return formNames[i]
	}
	return fmt.Sprintf("p%d", i)
}

// genForm builds a requested schema and an answer object from data: it
// reads choices byte by byte (zero once data is used up), and the longer
// data is, the more properties it describes; each property, and two names
// that are none, is answered or not.
func genForm(data []byte) (schema, answers string) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	pick := func(pool []string) string { return pool[next()%len(pool)] }
	maybe := func(w *strings.Builder, key string, pool []string) {
		if next()%2 == 1 {
			fmt.Fprintf(w, `,%q:%s`, key, pick(pool))
		}
	}
	strList := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = pick(formStrings)
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	options := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = `{"const":` + pick(formStrings) + `,"title":"t"}`
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	var s strings.Builder
	s.WriteString(`{"type":"object","properties":{`)
	nProps := 1 + next()%4 + len(data)/32
	for i := range nProps {
		if i > 0 {
			s.WriteByte(',')
		}
		fmt.Fprintf(&s, `%q:{`, formName(i))
		switch next() % 8 {
		case 0:
			s.WriteString(`"type":"string"`)
			maybe(&s, "minLength", formNumbers)
			maybe(&s, "maxLength", formNumbers)
			if next()%2 == 1 {
				fmt.Fprintf(&s, `,"format":%q`, pick(formFormats))
			}
			maybe(&s, "default", formStrings)
		case 1:
			if next()%2 == 1 {
				s.WriteString(`"type":"integer"`)
			} else {
				s.WriteString(`"type":"number"`)
			}
			maybe(&s, "minimum", formNumbers)
			maybe(&s, "maximum", formNumbers)
		case 2:
			s.WriteString(`"type":"boolean"`)
		case 3:
			s.WriteString(`"type":"string","enum":` + strList(next()%4))
		case 4:
			s.WriteString(`"type":"string","oneOf":` + options(next()%4))
		case 5:
			s.WriteString(`"type":"array","items":{"type":"string","enum":` + strList(next()%4) + `}`)
			maybe(&s, "minItems", formNumbers)
			maybe(&s, "maxItems", formNumbers)
		case 6:
			s.WriteString(`"type":"array","items":{"anyOf":` + options(next()%4) + `}`)
			maybe(&s, "minItems", formNumbers)
			maybe(&s, "maxItems", formNumbers)
		case 7:
			s.WriteString(`"type":"string","enum":` + strList(next()%4) + `,"enumNames":["n"]`)
		}
		s.WriteByte('}')
	}
	s.WriteString(`}`)
	if n := next() % 4; n > 0 {
		// Distinct names (one more than the properties), rarely a repeat.
		req := make([]string, n)
		for i := range req {
			req[i] = fmt.Sprintf("%q", formName(next()%(nProps+1)))
			if i > 0 && next()%8 != 0 && req[i] == req[i-1] {
				req[i] = fmt.Sprintf("%q", formName(nProps+i))
			}
		}
		s.WriteString(`,"required":[` + strings.Join(req, ",") + `]`)
	}
	s.WriteString(`}`)

	var a strings.Builder
	a.WriteString(`{`)
	first := true
	for i := range nProps + 2 {
		if next()%4 == 0 {
			continue
		}
		if !first {
			a.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&a, `%q:`, formName(i))
		switch next() % 4 {
		case 0:
			a.WriteString(pick(formStrings))
		case 1:
			a.WriteString(pick(formNumbers))
		case 2:
			a.WriteString([]string{"true", "false"}[next()%2])
		case 3:
			a.WriteString(strList(next() % 4))
		}
	}
	a.WriteString(`}`)
	return s.String(), a.String()
}

// FuzzFormAnswersAgreeWithV6 builds a requested schema and answers from
// the fuzz input (genForm) and requires the verdicts of v6.
func FuzzFormAnswersAgreeWithV6(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 1, 3, 7})
	f.Add(bytes.Repeat([]byte{5, 1, 2, 3, 250, 17}, 40))
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 4096) // over 100 properties
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	f.Add(big)
	f.Fuzz(func(t *testing.T, data []byte) {
		schema, answers := genForm(data)
		agree(t, schema, answers)
	})
}

// BenchmarkCheckAnswers measures compiling a requested schema and checking
// answers against it, beside the v6 baseline doing the same.
func BenchmarkCheckAnswers(b *testing.B) {
	const schema = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":50},"email":{"type":"string","format":"email"},"age":{"type":"integer","minimum":0,"maximum":150},"color":{"type":"string","enum":["red","green","blue"]},"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"maxItems":3},"ok":{"type":"boolean"}},"required":["name","email"]}`
	const answers = `{"name":"Ada","email":"ada@example.com","age":36,"color":"red","tags":["a","c"],"ok":true}`
	p, err := parseRequestParams(`{"message":"m","requestedSchema":` + schema + `}`)
	require.NoError(b, err)
	var m gen.OrderedMap[gen.FormAnswerValue]
	require.NoError(b, m.UnmarshalJSON([]byte(answers)))
	b.Run("formschema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := compileForm(p.Form)
			if err != nil || checkAnswers(s, m) != nil {
				b.Fatal("rejected")
			}
		}
	})
	b.Run("v6", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := v6CompileForm(p.Form)
			if err != nil || v6CheckAnswers(s, m) != nil {
				b.Fatal("rejected")
			}
		}
	})
}
