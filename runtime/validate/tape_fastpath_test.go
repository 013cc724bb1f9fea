package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// The tests in this file cover what is specific to running the fast path
// over a parsed tape rather than a decoded tree: escaped keys and strings,
// duplicate keys, nesting limits, number spellings, large and truncated
// input.

// testSchema compiles one schema document for v6 and for the fast path.
func testSchema(t testing.TB, sj string) (*jsonschema.Schema, *fastSchema) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(sj))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource("mem://t.json", doc))
	sch, err := c.Compile("mem://t.json")
	require.NoError(t, err, sj)
	root, err := compileFast(sch)
	require.NoError(t, err, sj)
	return sch, &fastSchema{root: root}
}

// tapeCase is one document checked against one schema. want is v6's
// verdict; the fast verdict on the parsed document must equal it, unless
// deferred, when the fast path must leave the document to v6.
type tapeCase struct {
	schema   string
	doc      string
	want     bool
	deferred bool
}

func runTapeCases(t *testing.T, cases []tapeCase) {
	t.Helper()
	compiled := map[string]*fastSchema{}
	oracle := map[string]*jsonschema.Schema{}
	tp := new(tape)
	for _, tc := range cases {
		name := tc.schema + " " + tc.doc
		if len(name) > 120 {
			name = name[:120]
		}
		t.Run(name, func(t *testing.T) {
			fs, ok := compiled[tc.schema]
			if !ok {
				oracle[tc.schema], fs = testSchema(t, tc.schema)
				compiled[tc.schema] = fs
			}
			value, derr := decode([]byte(tc.doc))
			require.Nil(t, derr)
			require.Equal(t, tc.want, oracle[tc.schema].Validate(value) == nil, "v6 verdict")
			require.True(t, tp.parse([]byte(tc.doc)), "tape refused the document")
			got := fs.validTape(tp)
			if tc.deferred {
				require.False(t, got, "the fast path decided a case it must defer")
				return
			}
			require.Equal(t, tc.want, got, "fast verdict")
		})
	}
}

func TestTapeEscapedKeys(t *testing.T) {
	const (
		path    = `{"properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
		wide    = `{"properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"d":{"type":"integer"},"e":{"type":"integer"},"path":{"type":"string"}},"required":["path","e"],"additionalProperties":false}`
		addl    = `{"properties":{"path":true},"additionalProperties":{"type":"integer"}}`
		pattern = `{"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false}`
		names   = `{"propertyNames":{"pattern":"^[a-z]+$"}}`
		reqOnly = `{"required":["a/b","é"]}`
		kinds   = `{"allOf":[{"if":{"required":["kind"],"properties":{"kind":{"const":"a"}}},"then":{"required":["v"]}},{"if":{"required":["kind"],"properties":{"kind":{"const":"b"}}},"then":{"properties":{"v":{"type":"string"}}}},{"if":{"required":["kind"],"properties":{"kind":{"const":"c"}}},"then":{"maxProperties":1}}]}`
		nested  = `{"allOf":[{"if":{"properties":{"ev":{"properties":{"type":{"const":"x"}}}}},"then":{"required":["x"]}},{"if":{"properties":{"ev":{"properties":{"type":{"const":"y"}}}}},"then":{"required":["y"]}},{"if":{"properties":{"ev":{"properties":{"type":{"const":"z"}}}}},"then":{"required":["z"]}}]}`
	)
	runTapeCases(t, []tapeCase{
		{path, `{"\u0070ath":"x"}`, true, false},
		{path, `{"p\u0061th":"x"}`, true, false},
		{path, `{"pat\u0068":"x"}`, true, false},
		{path, `{"\u0070\u0061\u0074\u0068":"x"}`, true, false},
		{path, `{"\u0070ath":1}`, false, false},
		{path, `{"\u0050ath":"x"}`, false, false},
		{path, `{"p\u0061th":"x","extra":1}`, false, false},
		{path, `{"path\u0000":"x"}`, false, false},
		{wide, `{"\u0070ath":"x","\u0065":1,"a":2}`, true, false},
		{wide, `{"path":"x","\u0065":"1"}`, false, false},
		{wide, `{"\u0070ath":"x"}`, false, false},
		{wide, `{"path":"x","e":1,"\u0066":1}`, false, false},
		{addl, `{"\u0070ath":"s","q":1}`, true, false},
		{addl, `{"\u0070ath":"s","\u0071":"s"}`, false, false},
		{pattern, `{"\u0078-a":1}`, true, false},
		{pattern, `{"\u0078-a":"s"}`, false, false},
		{pattern, `{"y\u002d":1}`, false, false},
		{names, `{"\u0061b":1}`, true, false},
		{names, `{"\u0041":1}`, false, false},
		{reqOnly, `{"a\/b":1,"\u00e9":2}`, true, false},
		{reqOnly, `{"a\/b":1,"e\u0301":2}`, false, false},
		{kinds, `{"\u006bind":"\u0061","v":1}`, true, false},
		{kinds, `{"\u006bind":"\u0061"}`, false, false},
		{kinds, `{"kind":"\u0062","v":1}`, false, false},
		{kinds, `{"k\u0069nd":"c","\u0076":1}`, false, false},
		{nested, `{"\u0065v":{"\u0074ype":"\u0079"},"y":1}`, true, false},
		{nested, `{"\u0065v":{"\u0074ype":"\u0079"},"x":1}`, false, false},
	})
}

func TestTapeEscapedValues(t *testing.T) {
	const (
		pattern  = `{"pattern":"^[a-z]+$"}`
		dateTime = `{"format":"date-time"}`
		uri      = `{"format":"uri"}`
		constS   = `{"const":"hooks/intercept"}`
		enum     = `{"enum":["é","😀","a\"b","\n"]}`
		length   = `{"minLength":2,"maxLength":2}`
		constO   = `{"const":{"a/b":"x","c":[1,"é"]}}`
		unique   = `{"uniqueItems":true}`
	)
	runTapeCases(t, []tapeCase{
		{pattern, `"\u0061bc"`, true, false},
		{pattern, `"ab\u0043"`, false, false},
		{pattern, `"a\nb"`, false, false},
		{pattern, `"abc\u0000"`, false, false},
		{dateTime, `"2024-01-01T00:00:00\u005a"`, true, false},
		{dateTime, `"\u0032024-01-01T00:00:00Z"`, true, false},
		{dateTime, `"2024-01-01T25:00:00\u005a"`, false, false},
		{dateTime, `"2024-01-01T00:00:00\u0000"`, false, false},
		{uri, `"https:\/\/a.example\/x"`, true, false},
		{uri, `"\u0068ttps://a.example/x"`, true, false},
		{uri, `"rel\/path"`, false, false},
		{constS, `"hooks\/intercept"`, true, false},
		{constS, `"hooks\u002fintercept"`, true, false},
		{constS, `"hooks/intercep\u0074"`, true, false},
		{constS, `"hooks/intercept\u0000"`, false, false},
		{constS, `"hooks\\intercept"`, false, false},
		{enum, `"\u00e9"`, true, false},
		{enum, `"\ud83d\ude00"`, true, false},
		{enum, `"\uD83D\uDE00"`, true, false},
		{enum, `"a\"b"`, true, false},
		{enum, `"a\u0022b"`, true, false},
		{enum, `"\u000a"`, true, false},
		{enum, `"\u00e8"`, false, false},
		{length, `"\u00e9\u00e9"`, true, false},
		{length, `"\ud83d\ude00"`, false, false},
		{length, `"\ud83d\ude00x"`, true, false},
		{length, `"\u0000\u0000"`, true, false},
		{length, `"\u00e9"`, false, false},
		{constO, `{"c":[1.0,"\u00e9"],"a\/b":"\u0078"}`, true, false},
		{constO, `{"c":[1,"é"],"a/b":"x","d":1}`, false, false},
		{constO, `{"c":[1,"e"],"a/b":"x"}`, false, false},
		{unique, `["a","\u0061"]`, false, false},
		{unique, `["a","b","\u0063"]`, true, false},
		{unique, `["a","b","c","d","e","f","g","h","i","\u0061"]`, false, false},
		{unique, `["a","b","c","d","e","f","g","h","i","j"]`, true, false},
		{unique, `[{"\u0061":1},{"a":1.0}]`, false, false},
		{unique, `[{"a":1,"b":2},{"b":2,"a":1}]`, false, false},
		{unique, `[{"a":1,"b":2},{"b":2,"c":1}]`, true, false},
	})
}

func TestTapeDuplicateKeys(t *testing.T) {
	many := func(dup bool) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range 100 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		if dup {
			b.WriteString(`"k\u0037":0,`)
		}
		b.WriteString(`"end":0}`)
		return b.String()
	}
	for _, tc := range []struct {
		doc string
		dup bool
	}{
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"a":1,"b":2,"a":3}`, true},
		{`{"a":{"b":1},"c":{"b":2}}`, false},
		{`[{"a":1},{"a":1}]`, false},
		{`{"a":{"a":1}}`, false},
		{`{"a":[{"x":1,"y":{"z":1,"z":2}}]}`, true},
		{`{"":1,"":2}`, true},
		{`{"":1,"a":2}`, false},
		{many(false), false},
		{many(true), true},
	} {
		tp := new(tape)
		require.True(t, tp.parse([]byte(tc.doc)), tc.doc)
		require.Equal(t, tc.dup, tp.dup, tc.doc)
		checkTape(t, []byte(tc.doc))
	}

	// encoding/json, and so v6, keeps the last of duplicate members; the
	// fast path leaves every document with a duplicate key to v6.
	runTapeCases(t, []tapeCase{
		{`{"properties":{"a":{"type":"string"}}}`, `{"a":1,"a":"x"}`, true, true},
		{`{"properties":{"a":{"type":"string"}}}`, `{"a":"x","a":1}`, false, true},
		{`{"minProperties":2}`, `{"a":1,"a":2}`, false, true},
		{`{"maxProperties":1}`, `{"a":1,"a":2}`, true, true},
		{`{"not":{"minProperties":2}}`, `{"a":1,"\u0061":2}`, true, true},
		{`{"const":{"a":1}}`, `{"a":2,"a":1}`, true, true},
		{`{"items":{"required":["b"]}}`, `[{"b":1},{"a":1,"a":2}]`, false, true},
	})

	// Through Validate: a duplicate is an error whichever occurrence would
	// be valid, named by the pointer of the second occurrence.
	v, err := newValidator(true)
	require.NoError(t, err)
	const ref = "intercept-request.schema.json"
	raw, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	body := bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("{"))
	lastValid := append([]byte(`{"jsonrpc":"1.0",`), body...)
	lastInvalid := append(append([]byte{}, bytes.TrimSuffix(bytes.TrimSpace(raw), []byte("}"))...), `,"jsonrpc":"1.0"}`...)
	for _, doc := range [][]byte{lastValid, lastInvalid} {
		err = v.Validate(ref, doc)
		var verr *Error
		require.ErrorAs(t, err, &verr)
		require.ErrorIs(t, err, ErrDuplicateMember)
		require.ErrorIs(t, err, ErrInvalid)
		require.NotErrorIs(t, err, ErrMalformedJSON)
		require.Equal(t, "/jsonrpc", verr.Pointer)
		require.Equal(t, KeywordDuplicateMember, verr.Keyword)
		require.Equal(t, `"jsonrpc"`, string(doc[verr.Offset:verr.Offset+9]))
	}
}

func TestTapeDepth(t *testing.T) {
	arrays := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	objects := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tp := new(tape)
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{arrays(maxTapeDepth), true},
		{arrays(maxTapeDepth + 1), false},
		{objects(maxTapeDepth), true},
		{objects(maxTapeDepth + 1), false},
		{`{"a":` + arrays(maxTapeDepth-1) + `}`, true},
		{`{"a":` + arrays(maxTapeDepth) + `}`, false},
	} {
		require.Equal(t, tc.ok, tp.parse([]byte(tc.doc)), "%.20s… (%d bytes)", tc.doc, len(tc.doc))
		// The bound is encoding/json's: deeper documents are malformed
		// for both.
		value, derr := decode([]byte(tc.doc))
		want, stdOK := stdDecode([]byte(tc.doc))
		require.Equal(t, tc.ok, stdOK)
		if tc.ok {
			require.Nil(t, derr)
			require.Equal(t, want, value)
		} else {
			require.NotNil(t, derr)
		}
	}

	// With a bare reference skipped, each level costs the run one step;
	// through allOf it costs two. Both stay within the run's bound up to
	// the tape's.
	for _, tc := range []struct {
		schema string
		limit  int
	}{
		{`{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`, maxTapeDepth},
		{`{"$defs":{"n":{"type":"array","items":{"allOf":[{"$ref":"#/$defs/n"}]}}},"$ref":"#/$defs/n"}`, maxFastDepth / 2},
	} {
		sch, fs := testSchema(t, tc.schema)
		for _, depth := range []int{1, 10, 100, 255, 256, 257, 2000, maxTapeDepth} {
			doc := []byte(arrays(depth))
			value, derr := decode(doc)
			require.Nil(t, derr)
			require.NoError(t, sch.Validate(value))
			got := tp.parse(doc) && fs.validTape(tp)
			require.Equal(t, depth <= tc.limit, got, "%s depth %d", tc.schema, depth)
		}
	}

	// Through Validate, deep documents get v6's verdict.
	v, err := newValidator(true)
	require.NoError(t, err)
	for _, depth := range []int{512, 513, 5000, maxTapeDepth - 1} {
		doc := []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":` + arrays(depth) + `}`)
		err := v.Validate("observe-notification.schema.json", doc)
		var verr *Error
		require.ErrorAs(t, err, &verr)
		require.NotEqual(t, KeywordJSON, verr.Keyword)
		require.Equal(t, "/params", verr.Pointer)
	}
}

func TestTapeNumbers(t *testing.T) {
	const (
		integer = `{"type":"integer"}`
		one     = `{"const":1}`
		zero    = `{"const":0}`
		enum    = `{"enum":[100,"a"]}`
		mult2   = `{"multipleOf":2}`
		multDec = `{"multipleOf":0.1}`
		minimum = `{"minimum":1}`
		maximum = `{"maximum":100}`
		exMin   = `{"exclusiveMinimum":0}`
	)
	runTapeCases(t, []tapeCase{
		{integer, `1`, true, false},
		{integer, `1.0`, true, false},
		{integer, `1e2`, true, false},
		{integer, `1E+2`, true, false},
		{integer, `-0`, true, false},
		{integer, `-0.0`, true, false},
		{integer, `100e-2`, true, false},
		{integer, `0.5e1`, true, false},
		{integer, `1e-1`, false, false},
		{integer, `1.5`, false, false},
		{integer, `12345678901234567890`, true, false},
		{integer, `-12345678901234567890.000`, true, false},
		{integer, `1.0000000000000000001`, false, false},
		{integer, `1e1001`, true, true},
		{integer, `1` + strings.Repeat("0", maxNumberLen), true, true},
		{one, `1.0`, true, false},
		{one, `1e0`, true, false},
		{one, `10e-1`, true, false},
		{one, `100E-2`, true, false},
		{one, `1.5`, false, false},
		{one, `"1"`, false, false},
		{one, `[1]`, false, false},
		{zero, `-0`, true, false},
		{zero, `-0.0`, true, false},
		{zero, `0e5`, true, false},
		{zero, `-0E-5`, true, false},
		{zero, `1e-400`, false, false},
		{enum, `1e2`, true, false},
		{enum, `100.0`, true, false},
		{enum, `1E2`, true, false},
		{enum, `99.99`, false, false},
		{mult2, `4.0`, true, false},
		{mult2, `1e2`, true, false},
		{mult2, `-0`, true, false},
		{mult2, `3`, false, false},
		{mult2, `2.5e0`, false, false},
		{mult2, `12345678901234567890`, true, false},
		{multDec, `0.3`, true, false},
		{multDec, `1e-1`, true, false},
		{multDec, `0.05`, false, false},
		{minimum, `1.0`, true, false},
		{minimum, `1e0`, true, false},
		{minimum, `0.99`, false, false},
		{minimum, `1e-400`, false, false},
		{maximum, `1e2`, true, false},
		{maximum, `1.00e2`, true, false},
		{maximum, `100.0000001`, false, false},
		{exMin, `-0`, false, false},
		{exMin, `0.0`, false, false},
		{exMin, `1e-10`, true, false},
	})
}

func TestTapeLargeInputs(t *testing.T) {
	// A long array of small objects.
	var b bytes.Buffer
	b.WriteByte('[')
	const n = 100000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"a":"x\u00e9%d","b":%d}`, i, i)
	}
	b.WriteByte(']')
	sch, fs := testSchema(t, `{"items":{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"integer"}}},"minItems":100000}`)
	tp := new(tape)
	require.True(t, tp.parse(b.Bytes()))
	require.Len(t, tp.toks, 1+5*n)
	require.False(t, reusable(tp), "a tape this large is not pooled")
	require.True(t, fs.validTape(tp))
	value, derr := decode(b.Bytes())
	require.Nil(t, derr)
	require.NoError(t, sch.Validate(value))

	// A long string with escapes: lengths count code points.
	long := `"` + strings.Repeat(`a\u00e9\n😀`, 1<<18) + `"`
	runes := 4 << 18
	runTapeCases(t, []tapeCase{
		{fmt.Sprintf(`{"minLength":%d,"maxLength":%d}`, runes, runes), long, true, false},
		{fmt.Sprintf(`{"maxLength":%d}`, runes-1), long, false, false},
	})

	// A large request through Validate.
	v, err := newValidator(true)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	big := bytes.Replace(raw, []byte(`"content": "example"`), []byte(`"content": "`+strings.Repeat(`line\n\"q\" é`, 1<<17)+`"`), 1)
	require.Greater(t, len(big), 1<<20)
	require.NoError(t, v.Validate("intercept-request.schema.json", big))
	broken := bytes.Replace(big, []byte(`é`), []byte{0xff}, 1)
	err = v.Validate("intercept-request.schema.json", broken)
	var verr *Error
	require.ErrorAs(t, err, &verr)
	require.Equal(t, KeywordJSON, verr.Keyword)
	require.Equal(t, int64(bytes.IndexByte(broken, 0xff)), verr.Offset)
}

func TestTapeTruncatedAndMalformed(t *testing.T) {
	v, err := newValidator(true)
	require.NoError(t, err)
	const ref = "intercept-request.schema.json"
	raw, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	value := mustDecode(t, raw)
	tp := new(tape)
	for _, doc := range [][]byte{raw, escapedJSON(value, 0), []byte(`{"a":[1,-2.5e+3,true,false,null,"\ud83d\ude00é"]}`)} {
		for end := range len(doc) {
			prefix := doc[:end]
			_, stdOK := stdDecode(prefix)
			require.Equal(t, stdOK, tp.parse(prefix), "%q", prefix)
			if stdOK {
				continue
			}
			_, want := decodeStd(prefix)
			require.NotNil(t, want)
			err := v.Validate(ref, prefix)
			var verr *Error
			require.ErrorAs(t, err, &verr, "%q", prefix)
			require.Equal(t, KeywordJSON, verr.Keyword)
			require.Equal(t, want.Offset, verr.Offset, "%q", prefix)
		}
	}

	for _, tc := range []struct {
		name string
		doc  string
	}{
		{"invalid UTF-8 in a string", "{\"a\":\"\xc3\x28\"}"},
		{"invalid UTF-8 in a key", "{\"\xff\":1}"},
		{"invalid UTF-8 after an escape", "{\"a\":\"\\n\xe2\x82\"}"},
		{"invalid UTF-8 outside strings", "{\"a\":1\xff}"},
		{"control character", "\"a\x01\""},
		{"bad escape", `"\x"`},
		{"short unicode escape", `"\u12"`},
		{"leading zero", `01`},
		{"bare minus", `-`},
		{"trailing comma", `[1,]`},
		{"two values", `1 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.False(t, tp.parse([]byte(tc.doc)))
			_, want := decodeStd([]byte(tc.doc))
			require.NotNil(t, want)
			var verr *Error
			require.ErrorAs(t, v.Validate(ref, []byte(tc.doc)), &verr)
			require.Equal(t, want.Offset, verr.Offset)
		})
	}

	// Lone surrogate escapes are valid JSON that encoding/json decodes to
	// U+FFFD; the tape leaves them to it.
	for _, doc := range []string{`"\ud800"`, `"\udc00\ud800"`, `"\ud83dx"`, `"\ud83d😀"`, `"\ud83d\u0041"`, `{"\ud800":1}`} {
		require.False(t, tp.parse([]byte(doc)), doc)
		value, derr := decode([]byte(doc))
		require.Nil(t, derr)
		want, _ := stdDecode([]byte(doc))
		require.Equal(t, want, value)
	}
	sch, _ := testSchema(t, `{"const":"\ufffd"}`)
	value, derr := decode([]byte(`"\ud800"`))
	require.Nil(t, derr)
	require.NoError(t, sch.Validate(value))
}

// TestTapeReuse parses documents of different shapes into one tape in turn:
// nothing of an earlier document may leak into a later one.
func TestTapeReuse(t *testing.T) {
	docs := []string{
		`{"a\u00e9":"x\ny","b":[1,{"c":"\u0041"}]}`,
		`{"a":"plain","b":[]}`,
		`{"k":1,"k":2}`,
		`{"k":1,"l":2}`,
		`"\ud83d\ude00"`,
		`[null,true,false,-1.5e3]`,
	}
	tp := new(tape)
	for range 3 {
		for _, doc := range docs {
			require.True(t, tp.parse([]byte(doc)), doc)
			want, ok := stdDecode([]byte(doc))
			require.True(t, ok)
			require.Equal(t, want, tp.value(0), doc)
			require.Equal(t, strings.Contains(doc, `"k":1,"k"`), tp.dup, doc)
		}
	}
	// A pooled tape is handed back without its document.
	pt := getTape()
	require.True(t, pt.parse([]byte(docs[0])))
	putTape(pt)
	require.Nil(t, pt.src)
}

// TestValidateValueOnTape covers ValidateValue's conversion of a value to a
// tape: everything decoded JSON holds is accepted as Validate accepts its
// encoding, anything else is left to v6.
func TestValidateValueOnTape(t *testing.T) {
	v, err := newValidator(true)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	const ref = "intercept-request.schema.json"
	value := mustDecode(t, raw)
	require.True(t, v.fastSchema(ref).valid(value))
	require.NoError(t, v.ValidateValue(ref, value))

	tp := new(tape)
	for _, bad := range []any{
		float64(1), int(1), json.Number("1.") /* grammar */, json.Number("1e1001"), /* limit */
		map[string]string{}, []string{}, struct{}{}, errors.New("x"),
	} {
		require.False(t, tp.fromValue(map[string]any{"a": []any{bad}}), "%T %v", bad, bad)
	}
	var deep any = "x"
	for range maxTapeDepth {
		deep = []any{deep}
	}
	require.True(t, tp.fromValue(deep))
	require.False(t, tp.fromValue([]any{deep}))
}
