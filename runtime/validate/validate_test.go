package validate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/schemas"
)

const testdata = "../../testdata"

type fixtureCase struct {
	ID            string `json:"id"`
	Path          string `json:"path"`
	Binding       string `json:"binding"`
	Schema        string `json:"schema"`
	ExpectedValid bool   `json:"expectedValid"`
}

func loadManifest(t testing.TB) []fixtureCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, "fixtures", "draft", "manifest.json"))
	require.NoError(t, err)
	var m struct {
		Cases []fixtureCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.NotEmpty(t, m.Cases)
	return m.Cases
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return b
}

func newValidator(t testing.TB) *validate.Validator {
	t.Helper()
	v, err := validate.New()
	require.NoError(t, err)
	return v
}

// schemaRef maps a manifest schema path such as
// "schema/draft/intercept-request.schema.json" to a validator reference.
func schemaRef(manifestSchema string) string { return path.Base(manifestSchema) }

// schemaOnlyValid lists cases that the manifest marks invalid for a reason
// no JSON Schema can express; they must still pass the schema.
var schemaOnlyValid = map[string]string{
	// The response id must equal the request's id: a rule across two
	// messages, checked by the runtime, not by the message schema.
	"http.intercept-request-id-mismatch.invalid": "id correlation needs the request",
}

func TestFixtures(t *testing.T) {
	v := newValidator(t)
	for _, tc := range loadManifest(t) {
		t.Run(tc.ID, func(t *testing.T) {
			doc := readFixture(t, tc.Path)
			ref := schemaRef(tc.Schema)
			want := tc.ExpectedValid
			if reason, ok := schemaOnlyValid[tc.ID]; ok {
				t.Logf("expected schema-valid: %s", reason)
				want = true
			}

			if tc.Binding != "stdio-jsonl" {
				err := v.Validate(ref, doc)
				if want {
					require.NoError(t, err)
					return
				}
				require.Error(t, err)
				require.ErrorIs(t, err, validate.ErrInvalid)
				var verr *validate.Error
				require.ErrorAs(t, err, &verr)
				require.Equal(t, ref, verr.Schema)
				require.NotEmpty(t, verr.Keyword)
				return
			}

			// stdio-jsonl: each non-empty line is one message. A
			// pretty-printed message split over lines is invalid because
			// its lines are not complete JSON values.
			var lineErrs []error
			lines := 0
			for line := range bytes.SplitSeq(doc, []byte("\n")) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				lines++
				if err := v.Validate(ref, line); err != nil {
					require.ErrorIs(t, err, validate.ErrInvalid)
					lineErrs = append(lineErrs, err)
				}
			}
			require.Positive(t, lines)
			if want {
				require.Empty(t, lineErrs)
			} else {
				require.NotEmpty(t, lineErrs)
			}
		})
	}
}

// TestFixtureErrors pins the reported failure of a few invalid fixtures, so
// that the choice of the most useful cause stays stable.
func TestFixtureErrors(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		path, ref, pointer, keyword string
		missing                     []string
	}{
		{"fixtures/draft/http/intercept-request-effects-missing.invalid.json", "intercept-request.schema.json",
			"/params/capabilities", "required", []string{"effects"}},
		{"fixtures/draft/http/no-effect-response-version.invalid.json", "intercept-no-effect-response.schema.json",
			"/result/protocolVersion", "const", nil},
		{"fixtures/draft/http/stop-no-reason.invalid.json", "intercept-response.schema.json",
			"/result/effects/1", "required", []string{"reason"}},
		{"fixtures/draft/http/inject-wrong-operation.invalid.json", "intercept-response.schema.json",
			"/result/effects/1/operation", "const", nil},
		{"fixtures/draft/http/atomic-unknown.invalid.json", "intercept-response.schema.json",
			"/result/effects/1", "oneOf", nil},
		{"fixtures/draft/http/observe-session-end-outcome.invalid.json", "observe-notification.schema.json",
			"/params/event/outcome", "enum", nil},
		{"fixtures/draft/http/timestamp-compact.invalid.json", "schema.json",
			"/params/event/time", "format", nil},
		{"fixtures/draft/http/mcp-http-location-missing.invalid.json", "schema.json",
			"/params/event/tool/mcp/connection", "required", []string{"url"}},
		{"fixtures/draft/http/error-response-result.invalid.json", "json-rpc-message.schema.json",
			"", "not", nil},
	}
	for _, tc := range tests {
		t.Run(path.Base(tc.path), func(t *testing.T) {
			err := v.Validate(tc.ref, readFixture(t, tc.path))
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tc.pointer, verr.Pointer)
			require.Equal(t, tc.keyword, verr.Keyword)
			require.Equal(t, tc.missing, verr.Missing)
			require.NotEmpty(t, verr.SchemaLocation)
			require.NotEmpty(t, verr.Causes)
			require.Equal(t, tc.pointer, verr.Causes[0].Pointer)
			require.Equal(t, tc.keyword, verr.Causes[0].Keyword)
		})
	}
}

func TestErrorText(t *testing.T) {
	v := newValidator(t)
	doc := mutate(t, readFixture(t, "fixtures/draft/http/observe-session-end.valid.json"), func(m map[string]any) {
		event(m)["time"] = "yesterday"
	})
	err := v.Validate("observe-notification.schema.json", doc)
	require.EqualError(t, err,
		`ahp: schema observe-notification.schema.json: /params/event/time: keyword "format" failed`)

	doc = mutate(t, readFixture(t, "fixtures/draft/http/intercept-request-effects-missing.invalid.json"), nil)
	err = v.Validate(schemas.BaseURI+"intercept-request.schema.json", doc)
	require.EqualError(t, err,
		`ahp: schema intercept-request.schema.json: /params/capabilities: keyword "required" failed (missing "effects")`)

	err = v.Validate("content-selection.schema.json", []byte(`[]`))
	require.EqualError(t, err,
		`ahp: schema content-selection.schema.json: (root): keyword "type" failed`)

	err = v.Validate("content-selection.schema.json", []byte(`{"default":"metadata","a/b~c":1,"x\ny":2}`))
	require.EqualError(t, err,
		`ahp: schema content-selection.schema.json: /a~1b~0c: keyword "enum" failed (allowed "body", "metadata", "omit") (and 1 more)`)
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "/x\ny", verr.Causes[1].Pointer)
}

func TestDefsPointer(t *testing.T) {
	v := newValidator(t)
	inject := map[string]any{
		"type":      "inject",
		"target":    "context",
		"operation": "append",
		"deliverAt": "next_turn",
		"value": []any{map[string]any{
			"id":   "m1",
			"role": "system",
			"parts": []any{map[string]any{
				"id": "p1", "kind": "text", "mediaType": "text/plain",
				"selection": "body", "text": "run the tests",
			}},
		}},
	}
	const ref = "effect.schema.json#/$defs/InjectEffect"
	require.NoError(t, v.Validate(ref, marshal(t, inject)))
	require.NoError(t, v.Validate(schemas.BaseURI+ref, marshal(t, inject)))
	require.NoError(t, v.Validate("effect.schema.json", marshal(t, inject)))

	inject["operation"] = "replace"
	err := v.Validate(ref, marshal(t, inject))
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.ErrorIs(t, err, validate.ErrInvalid)
	require.Equal(t, ref, verr.Schema)
	require.Equal(t, "/operation", verr.Pointer)
	require.Equal(t, "const", verr.Keyword)
	require.Equal(t, "effect.schema.json#/$defs/InjectEffect/properties/operation/const", verr.SchemaLocation)

	// A valid document for another definition is rejected by this one.
	stop := `{"type":"flow","operation":"stop","reason":"done"}`
	require.NoError(t, v.Validate("effect.schema.json", []byte(stop)))
	require.ErrorIs(t, v.Validate(ref, []byte(stop)), validate.ErrInvalid)
}

func TestUnknownSchema(t *testing.T) {
	v := newValidator(t)
	for _, ref := range []string{
		"",
		"#",
		"nope.schema.json",
		"manifest.json",
		"effect.schema.json#/$defs/NoSuchEffect",
		"effect.schema.json#/no/such/pointer",
		"https://example.com/schemas/effect.schema.json",
		schemas.BaseURI + "nope.schema.json",
		"schema/draft/effect.schema.json",
		"../schemas/effect.schema.json",
	} {
		t.Run(ref, func(t *testing.T) {
			err := v.Validate(ref, []byte(`{}`))
			require.ErrorIs(t, err, validate.ErrUnknownSchema)
			require.NotErrorIs(t, err, validate.ErrInvalid)
			require.ErrorIs(t, v.ValidateValue(ref, map[string]any{}), validate.ErrUnknownSchema)
		})
	}
}

func TestFormatAssertion(t *testing.T) {
	v := newValidator(t)
	base := readFixture(t, "fixtures/draft/http/observe-session-end.valid.json")
	require.NoError(t, v.Validate("observe-notification.schema.json", base))

	tests := []struct {
		name    string
		field   string
		value   any
		pointer string
	}{
		{"date-time without zone", "time", "2026-08-24T09:15:00", "/params/event/time"},
		{"date-time compact", "time", "20260824T091500Z", "/params/event/time"},
		{"date only", "time", "2026-08-24", "/params/event/time"},
		{"uri relative", "source", "not a uri", "/params/event/source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := mutate(t, base, func(m map[string]any) { event(m)[tc.field] = tc.value })
			err := v.Validate("observe-notification.schema.json", doc)
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tc.pointer, verr.Pointer)
			require.Equal(t, "format", verr.Keyword)
		})
	}
}

func TestErrorsNeverContainValues(t *testing.T) {
	v := newValidator(t)
	const canary = "SECRET-CANARY-123"
	observe := readFixture(t, "fixtures/draft/http/observe-session-end.valid.json")
	metadataPart := `{"id":"p1","kind":"text","mediaType":"text/plain","selection":"metadata",` +
		`"sha256":"%s","category":"tool_result"}`
	require.NoError(t, v.Validate("content-item.schema.json#/$defs/textMetadataPart",
		fmt.Appendf(nil, metadataPart, strings.Repeat("a", 64))))

	tests := []struct {
		name, ref string
		doc       []byte
		keyword   string
	}{
		{"const", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) { m["jsonrpc"] = canary }), "const"},
		{"format date-time", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) { event(m)["time"] = canary }), "format"},
		{"format uri", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) { event(m)["source"] = canary }), "format"},
		{"enum", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) { event(m)["outcome"] = canary }), "enum"},
		{"type", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) { event(m)["session"] = canary }), "type"},
		{"additionalProperties", "effect.schema.json#/$defs/StopFlowEffect",
			[]byte(`{"type":"flow","operation":"stop","reason":"done","token":"` + canary + `"}`), "additionalProperties"},
		{"propertyNames", "observe-notification.schema.json",
			mutate(t, observe, func(m map[string]any) {
				event(m)["extensions"] = map[string]any{canary: canary}
			}), "propertyNames"},
		{"minLength", "content-item.schema.json#/$defs/textMetadataPart",
			fmt.Appendf(nil, metadataPart, canary), "minLength"},
		{"pattern", "registration.schema.json#/$defs/authentication",
			[]byte(`{"type":"bearer","tokenEnv":"` + canary + `"}`), "pattern"},
		{"malformed value", "observe-notification.schema.json",
			[]byte(`{"jsonrpc":` + canary + `}`), validate.KeywordJSON},
		{"truncated", "observe-notification.schema.json",
			[]byte(`{"token":"` + canary), validate.KeywordJSON},
		{"trailing data", "observe-notification.schema.json",
			append(observe, canary...), validate.KeywordJSON},
		{"invalid utf-8", "observe-notification.schema.json",
			[]byte("{\"token\":\"" + canary + "\xff\"}"), validate.KeywordJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(tc.ref, tc.doc)
			require.Error(t, err)
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.ErrorIs(t, err, validate.ErrInvalid)
			if tc.keyword == validate.KeywordJSON {
				require.Equal(t, validate.KeywordJSON, verr.Keyword)
				require.ErrorIs(t, err, validate.ErrMalformedJSON)
			} else {
				require.Contains(t, causeKeywords(verr), tc.keyword)
				require.NotErrorIs(t, err, validate.ErrMalformedJSON)
			}
			for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
				require.NotContains(t, s, canary)
				require.NotContains(t, s, "SECRET")
			}
			for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
				require.NotContains(t, e.Error(), canary)
			}

			// The same holds for already decoded values.
			if tc.keyword != validate.KeywordJSON {
				value, derr := jsonschema.UnmarshalJSON(bytes.NewReader(tc.doc))
				require.NoError(t, derr)
				err := v.ValidateValue(tc.ref, value)
				require.ErrorIs(t, err, validate.ErrInvalid)
				require.NotContains(t, fmt.Sprintf("%+v", err), canary)
			}
		})
	}
}

func causeKeywords(e *validate.Error) []string {
	var kws []string
	for _, c := range e.Causes {
		kws = append(kws, c.Keyword)
	}
	return kws
}

func TestStrictJSON(t *testing.T) {
	v := newValidator(t)
	const ref = "capabilities-request.schema.json"
	valid := readFixture(t, "fixtures/draft/http/capabilities-request.valid.json")
	require.NoError(t, v.Validate(ref, valid))
	require.NoError(t, v.Validate(ref, append([]byte("\n\t "), append(valid, " \r\n"...)...)))

	tests := []struct {
		name   string
		doc    []byte
		offset int64
	}{
		{"empty", nil, 0},
		{"whitespace only", []byte(" \n"), 2},
		{"two values", append(append([]byte{}, valid...), valid...), int64(len(valid))},
		{"trailing garbage", append(append([]byte{}, valid...), " x"...), int64(len(valid)) + 1},
		{"truncated", valid[:len(valid)/2], int64(len(valid) / 2)},
		{"syntax error", []byte(`{"a" 1}`), 6},
		{"invalid utf-8", []byte("{\"a\":\"\xc3\x28\"}"), 6},
		{"single quotes", []byte(`{'a':1}`), 2},
		{"NaN", []byte(`{"a":NaN}`), 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(ref, tc.doc)
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.ErrorIs(t, err, validate.ErrMalformedJSON)
			require.ErrorIs(t, err, validate.ErrInvalid)
			require.Equal(t, validate.KeywordJSON, verr.Keyword)
			require.Equal(t, ref, verr.Schema)
			require.Equal(t, tc.offset, verr.Offset)
			require.Empty(t, verr.Causes)
			require.Equal(t, fmt.Sprintf("ahp: schema %s: malformed JSON at byte offset %d", ref, tc.offset), err.Error())
		})
	}
}

func TestValidateValue(t *testing.T) {
	v := newValidator(t)
	raw := readFixture(t, "fixtures/draft/http/intercept-request.valid.json")
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	require.NoError(t, v.ValidateValue("intercept-request.schema.json", value))

	value.(map[string]any)["jsonrpc"] = "1.0"
	err = v.ValidateValue("intercept-request.schema.json", value)
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "/jsonrpc", verr.Pointer)
	require.Equal(t, "const", verr.Keyword)

	// Values that are not decoded JSON are reported, not panicked on.
	for _, bad := range []any{struct{}{}, []string{"body"}, map[string]string{}} {
		err = v.ValidateValue("content-selection.schema.json", map[string]any{"default": bad})
		require.ErrorIs(t, err, validate.ErrInvalid)
		require.ErrorAs(t, err, &verr)
		require.Equal(t, validate.KeywordJSON, verr.Keyword, "%T", bad)
		require.Equal(t, "/default", verr.Pointer)
	}
}

func TestPointerEscaping(t *testing.T) {
	v := newValidator(t)
	// Property names containing "/" and "~" are escaped per RFC 6901.
	doc := []byte(`{"default":"metadata","a/b~c":"everything"}`)
	err := v.Validate("content-selection.schema.json", doc)
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "/a~1b~0c", verr.Pointer)
	require.Equal(t, "enum", verr.Keyword)
	require.Equal(t, "content-selection.schema.json#/additionalProperties/enum", verr.SchemaLocation)
}

func TestDefault(t *testing.T) {
	v := validate.Default()
	require.NotNil(t, v)
	require.Same(t, v, validate.Default())
	require.NoError(t, v.Validate("intercept-request.schema.json",
		readFixture(t, "fixtures/draft/http/intercept-request.valid.json")))
}

func TestNilValidator(t *testing.T) {
	var v *validate.Validator
	require.Error(t, v.Validate("effect.schema.json", []byte(`{}`)))
	require.Error(t, v.ValidateValue("effect.schema.json", map[string]any{}))
}

func TestEveryDocumentCompiles(t *testing.T) {
	v := newValidator(t)
	for _, name := range schemas.Documents() {
		err := v.Validate(name, []byte(`null`))
		if err != nil {
			require.ErrorIs(t, err, validate.ErrInvalid, name)
		}
	}
}

// TestConcurrent validates from many goroutines at once, including refs
// that are compiled lazily on first use. Run with -race.
func TestConcurrent(t *testing.T) {
	v := newValidator(t)
	type job struct {
		ref   string
		doc   []byte
		valid bool
	}
	var jobs []job
	for _, tc := range loadManifest(t) {
		if tc.Binding == "stdio-jsonl" {
			continue
		}
		_, schemaOnly := schemaOnlyValid[tc.ID]
		jobs = append(jobs, job{schemaRef(tc.Schema), readFixture(t, tc.Path), tc.ExpectedValid || schemaOnly})
	}
	defs := []job{
		{"effect.schema.json#/$defs/InjectEffect", []byte(`{"type":"flow"}`), false},
		{"effect.schema.json#/$defs/StopFlowEffect", []byte(`{"type":"flow","operation":"stop","reason":"x"}`), true},
		{schemas.BaseURI + "effect.schema.json#/$defs/StopFlowEffect", []byte(`{"type":"flow","operation":"stop","reason":"x"}`), true},
		{"common.schema.json#/$defs/jsonRpcId", []byte(`"abc"`), true},
		{"common.schema.json#/$defs/jsonRpcId", []byte(`[]`), false},
	}

	const goroutines, perGoroutine = 32, 16
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			// Every goroutine starts with the lazily compiled refs, so
			// that their first compilation races.
			mine := slices.Clone(defs)
			for i := range perGoroutine {
				mine = append(mine, jobs[(g*perGoroutine+i)%len(jobs)])
			}
			for _, j := range mine {
				err := v.Validate(j.ref, j.doc)
				if (err == nil) != j.valid {
					errs <- fmt.Errorf("%s: valid=%v err=%v", j.ref, j.valid, err)
					return
				}
				if err != nil && !errors.Is(err, validate.ErrInvalid) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// mutate decodes doc, applies f (if not nil) and re-encodes it.
func mutate(t testing.TB, doc []byte, f func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	if f != nil {
		f(m)
	}
	return marshal(t, m)
}

func event(m map[string]any) map[string]any {
	return m["params"].(map[string]any)["event"].(map[string]any)
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestPropertyNamesPointerIsStable: a propertyNames failure is reported at
// the failing object on every run. jsonschema/v6 hands that error a
// location slice it goes on reusing for the siblings it validates after it,
// in map order, so without the parent's copy the pointer named whichever
// member came last.
func TestPropertyNamesPointerIsStable(t *testing.T) {
	v := validate.Default()
	doc := []byte(`{"jsonrpc":"2.0","id":"x","result":{"protocolVersion":"draft","effects":[],"extensions":{"x":1}}}`)
	for range 200 {
		err := v.Validate("intercept-response.schema.json", doc)
		var verr *validate.Error
		require.ErrorAs(t, err, &verr)
		require.Equal(t, "/result/extensions", verr.Pointer)
		require.Equal(t, "propertyNames", verr.Keyword)
	}
}

// TestErrorDetail pins that an error names what is wrong (the missing
// members, the unexpected ones, the allowed values), taking allowed values
// from the schema, and that no instance value appears anywhere in it.
func TestErrorDetail(t *testing.T) {
	v := newValidator(t)
	const secret = "sk-live-SECRET-4f9a2b7c"
	reg := func(f func(hook, sub map[string]any)) []byte {
		doc := mutate(t, readFixture(t, "fixtures/draft/registration/portable.valid.json"), func(m map[string]any) {
			hook := m["hooks"].([]any)[0].(map[string]any)
			f(hook, hook["subscriptions"].([]any)[0].(map[string]any))
		})
		return doc
	}
	tests := []struct {
		name, ref string
		doc       []byte
		pointer   string
		keyword   string
		missing   []string
		unexpect  []string
		allowed   []string
		text      string
	}{
		{
			name: "required", ref: "registration.schema.json",
			doc: reg(func(_, sub map[string]any) {
				delete(sub, "timeoutMs")
				sub["failurePolicy"] = "fail-closed"
				sub["events"] = []any{"tool.before"}
			}),
			pointer: "/hooks/0/subscriptions/0", keyword: "required", missing: []string{"timeoutMs"},
			text: `(missing "timeoutMs")`,
		},
		{
			name: "additionalProperties", ref: "deny-effect.schema.json",
			doc:     []byte(`{"type":"deny","reason":"` + secret + `","zeta":"` + secret + `","apiKey":"` + secret + `"}`),
			pointer: "", keyword: "additionalProperties", unexpect: []string{"apiKey", "zeta"},
			text: `(unexpected "apiKey", "zeta")`,
		},
		{
			name: "enum", ref: "registration.schema.json",
			doc: reg(func(_, sub map[string]any) {
				sub["failurePolicy"] = secret
			}),
			pointer: "/hooks/0/subscriptions/0/failurePolicy", keyword: "enum",
			allowed: []string{`"fail-open"`, `"fail-closed"`},
			text:    `(allowed "fail-open", "fail-closed")`,
		},
		{
			name: "const", ref: "registration.schema.json",
			doc: mutate(t, readFixture(t, "fixtures/draft/registration/portable.valid.json"), func(m map[string]any) {
				m["protocolVersion"] = secret
			}),
			pointer: "/protocolVersion", keyword: "const", allowed: []string{`"draft"`},
			text: `(allowed "draft")`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(tc.ref, tc.doc)
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tc.pointer, verr.Pointer)
			require.Equal(t, tc.keyword, verr.Keyword)
			require.Equal(t, tc.missing, verr.Missing)
			require.Equal(t, tc.unexpect, verr.Unexpected)
			require.Equal(t, tc.allowed, verr.Allowed)
			require.Contains(t, err.Error(), tc.text)
			require.Equal(t, verr.Causes[0].Detail(), tc.text[1:len(tc.text)-1])
			require.NotContains(t, err.Error(), "SECRET")
			require.NotContains(t, fmt.Sprintf("%#v", *verr), "SECRET")
			// The same detail from Check, the path for peer documents.
			cerr := v.Check(context.Background(), tc.ref, tc.doc)
			require.Equal(t, err.Error(), cerr.Error())
		})
	}
}

// TestErrorDetailBounded shows that a long list of allowed values or a
// long member name is shortened in the text while the fields stay whole.
func TestErrorDetailBounded(t *testing.T) {
	v := newValidator(t)
	long := strings.Repeat("n", 500)
	err := v.Validate("deny-effect.schema.json", []byte(`{"type":"deny","reason":"r","`+long+`":1}`))
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.Equal(t, []string{long}, verr.Unexpected)
	require.Contains(t, err.Error(), `(unexpected "`+long[:64]+`"…)`)
	require.Less(t, len(err.Error()), 300)
}
