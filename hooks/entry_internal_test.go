package hooks

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// fixtureEvents returns the events of the protocol's valid HTTP fixtures
// (every catalogue event has one), by event name.
func entryFixtures(t testing.TB) map[gen.EventName][][]byte {
	t.Helper()
	files, err := filepath.Glob("../testdata/fixtures/draft/http/*.valid.json")
	require.NoError(t, err)
	out := map[gen.EventName][][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc struct {
			Params struct {
				Event json.RawMessage `json:"event"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &doc) != nil || doc.Params.Event == nil {
			continue
		}
		var head struct {
			Type gen.EventName `json:"type"`
		}
		require.NoError(t, json.Unmarshal(doc.Params.Event, &head))
		out[head.Type] = append(out[head.Type], doc.Params.Event)
	}
	return out
}

// oldCheck is the check every call made before the entry plan: encode, then
// validate the encoding against the payload schema.
func oldCheck(info gen.EventInfo, ev *gen.Event) ([]byte, error) { return validateEvent(info, ev) }

// requireSameCheck asserts that the entry check (checkEvent) and the
// canonical validation of the encoding agree on ev: the same bytes, or the
// same error. It reports whether the plan itself accepted ev.
func requireSameCheck(t testing.TB, e *eventEntry, ev *gen.Event) bool {
	t.Helper()
	wantData, wantErr := oldCheck(e.info, ev)
	accepted := false
	if data, err := gen.EncodeEvent(ev); err == nil {
		accepted = e.eventPlan().accepts(ev, nil)
		if accepted {
			require.NoError(t, wantErr, "the entry plan accepted an event the canonical validator rejects: %s", data)
		}
	}
	gotData, gotErr := checkEvent(e, ev, nil)
	if wantErr != nil {
		require.Error(t, gotErr)
		require.Equal(t, wantErr.Error(), gotErr.Error())
		var want, got *ValidationError
		require.ErrorAs(t, wantErr, &want)
		require.ErrorAs(t, gotErr, &got)
		require.Equal(t, want.Pointer, got.Pointer)
		require.Equal(t, want.Keyword, got.Keyword)
		require.ErrorIs(t, gotErr, ErrInvalidInput)
		return accepted
	}
	require.NoError(t, gotErr)
	require.Equal(t, string(wantData), string(gotData))
	return accepted
}

// mutator changes one leaf of a typed payload at a time, choosing with r:
// strings from a pool of valid and invalid values (and the strings of the
// fixtures), raw JSON values (including repeated member names and
// malformed text), pointers set to nil or to a zero value, booleans,
// numbers, unknown members, lists dropped or emptied.
type mutator struct {
	r       *rand.Rand
	strings []string
}

var rawPool = []string{"", "null", "{}", "[]", "1", `"s"`, `{"a":1,"a":2}`, `{"path":"/x"}`, `{"a":{"b":[1,{"c":null}]}}`, `{`, `{"a":1}x`, `[1,2,[3]]`, `{"x":"\u0000"}`, `{"a":{"a":1,"a":1}}`, "{\"a\":\"\xff\"}", `"\ud800"`, `{"a\u0000":1,"a\u0000":2}`}

var stringPool = []string{"", "a", "ab", "é", "\x00", "\xff", "x\"y\\z", "2026-09-15T12:00:00Z", "2026-13-45T99:00:00Z", "yesterday",
	"urn:test:harness", "http://exa mple", "https://example.com/a", strings.Repeat("a", 300), "tool.before", "native", "mcp", "evt-1", "\u2028", " "}

var numberPool = []json.Number{"0", "1", "-1", "1.5", "1e400", "12345678901234567890", "x"}

func (m *mutator) mutate(v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[gen.Event]() && m.r.IntN(10) != 0 {
		// Mostly the payload; sometimes the union itself (a second arm).
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
				v = f.Elem()
				break
			}
		}
	}
	leaves := m.leaves(v, nil, depth)
	if len(leaves) == 0 {
		return
	}
	m.change(leaves[m.r.IntN(len(leaves))])
}

// leaves collects the settable values of v a mutation may change.
func (m *mutator) leaves(v reflect.Value, out []reflect.Value, depth int) []reflect.Value {
	if depth > 6 {
		return out
	}
	switch v.Kind() {
	case reflect.Pointer:
		out = append(out, v)
		if !v.IsNil() {
			out = m.leaves(v.Elem(), out, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = m.leaves(v.Field(i), out, depth)
			}
		}
	case reflect.Slice:
		out = append(out, v)
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				out = m.leaves(v.Index(i), out, depth+1)
			}
		}
	case reflect.String, reflect.Bool:
		out = append(out, v)
	}
	return out
}

func (m *mutator) str() string {
	if len(m.strings) > 0 && m.r.IntN(3) == 0 {
		return m.strings[m.r.IntN(len(m.strings))]
	}
	return stringPool[m.r.IntN(len(stringPool))]
}

func (m *mutator) change(v reflect.Value) {
	switch {
	case v.Type() == numberType:
		v.SetString(string(numberPool[m.r.IntN(len(numberPool))]))
	case v.Kind() == reflect.String:
		v.SetString(m.str())
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	case v.Kind() == reflect.Pointer:
		if v.IsNil() || m.r.IntN(2) == 0 {
			nv := reflect.New(v.Type().Elem())
			if nv.Elem().Kind() == reflect.String {
				nv.Elem().SetString(m.str())
			}
			v.Set(nv)
		} else {
			v.Set(reflect.Zero(v.Type()))
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		raw := rawPool[m.r.IntN(len(rawPool))]
		if m.r.IntN(20) == 0 {
			raw = `{"a":"` + strings.Repeat("b", maxRawEntry) + `"}`
		}
		if raw == "" {
			v.Set(reflect.Zero(v.Type()))
		} else {
			v.SetBytes([]byte(raw))
		}
	case v.Type() == memberType:
		name := []string{"zz", "id", "type", "x-vendor"}[m.r.IntN(4)]
		v.Set(reflect.Append(v, reflect.ValueOf(gen.Member{Name: name, Value: json.RawMessage(`1`)})))
	case v.Kind() == reflect.Slice:
		switch m.r.IntN(3) {
		case 0:
			v.Set(reflect.Zero(v.Type()))
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			if v.Len() > 0 {
				v.Set(v.Slice(0, v.Len()-1))
			}
		}
	}
}

// collectStrings gathers the strings of a decoded event, for the pool.
func collectStrings(v reflect.Value, out []string, depth int) []string {
	if depth > 8 {
		return out
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = collectStrings(v.Elem(), out, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = collectStrings(v.Field(i), out, depth)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				out = collectStrings(v.Index(i), out, depth+1)
			}
		}
	case reflect.String:
		out = append(out, v.String())
	}
	return out
}

func entryFor(name gen.EventName) *eventEntry {
	info, _ := gen.LookupEvent(name)
	return &eventEntry{info: info}
}

// TestEntryPlanCoversHotEvents: the entry plan covers the payloads of the
// most called events (and accepts their fixtures), so that they skip the
// validation of their encoding.
func TestEntryPlanCoversHotEvents(t *testing.T) {
	fixtures := entryFixtures(t)
	for _, name := range []gen.EventName{gen.EventToolBefore} {
		e := entryFor(name)
		require.NotNil(t, e.eventPlan(), "%s", name)
		require.NotEmpty(t, fixtures[name], "%s", name)
	}
	var ev gen.Event
	require.NoError(t, ev.UnmarshalJSON([]byte(`{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`)))
	require.True(t, entryFor(gen.EventToolBefore).eventPlan().accepts(&ev, nil))
}

// TestEntryCheckAgrees is the property that lets the host skip the
// validation of the events it encodes: on the fixtures of every catalogue
// event and on thousands of mutations of them (each leaf the caller
// controls set to valid and invalid values), every event the entry plan
// accepts is valid canonically, and checkEvent returns exactly what
// validating the encoding returns (the same bytes, or the same error with
// the same JSON pointer and keyword).
func TestEntryCheckAgrees(t *testing.T) {
	fixtures := entryFixtures(t)
	iterations := 300
	if testing.Short() {
		iterations = 60
	}
	for _, info := range gen.Events() {
		t.Run(string(info.Name), func(t *testing.T) {
			docs := fixtures[info.Name]
			if len(docs) == 0 {
				t.Skip("no valid HTTP fixture carries this event")
			}
			e := &eventEntry{info: info}
			r := rand.New(rand.NewPCG(1, uint64(len(info.Name))))
			var pool []string
			for _, d := range docs {
				var ev gen.Event
				require.NoError(t, ev.UnmarshalJSON(d))
				pool = collectStrings(reflect.ValueOf(&ev), pool, 0)
			}
			accepted, rejected, missed := 0, 0, 0
			for i := 0; i < iterations; i++ {
				var ev gen.Event
				require.NoError(t, ev.UnmarshalJSON(docs[i%len(docs)]))
				m := &mutator{r: r, strings: pool}
				for range i % 4 { // 0 to 3 mutations
					m.mutate(reflect.ValueOf(&ev).Elem(), 0)
				}
				if requireSameCheck(t, e, &ev) {
					accepted++
				} else {
					rejected++
					if _, err := oldCheck(info, &ev); err == nil {
						missed++
					}
				}
			}
			t.Logf("%s: plan %v, accepted %d, left to the canonical validator %d (%d of them valid)", info.Name, e.eventPlan() != nil, accepted, rejected, missed)
		})
	}
}

// FuzzEntryCheck drives the mutations of TestEntryCheckAgrees from the
// fuzzer: the same agreement on any sequence of them.
func FuzzEntryCheck(f *testing.F) {
	fixtures := entryFixtures(f)
	events := gen.Events()
	f.Add(uint8(0), uint64(1), uint8(1))
	f.Add(uint8(1), uint64(7), uint8(3))
	f.Add(uint8(20), uint64(99), uint8(2))
	f.Fuzz(func(t *testing.T, which uint8, seed uint64, n uint8) {
		info := events[int(which)%len(events)]
		docs := fixtures[info.Name]
		if len(docs) == 0 {
			t.Skip()
		}
		var ev gen.Event
		require.NoError(t, ev.UnmarshalJSON(docs[int(seed)%len(docs)]))
		m := &mutator{r: rand.New(rand.NewPCG(seed, uint64(which)))}
		for range n % 8 {
			m.mutate(reflect.ValueOf(&ev).Elem(), 0)
		}
		requireSameCheck(t, &eventEntry{info: info}, &ev)
	})
}

// TestFormatsAgreeWithValidator: the format checks the entry plan makes
// with validate.FormatValid decide as the canonical validator does on the
// members that carry them: event times from any year the time package
// writes (and malformed ones), sources.
func TestFormatsAgreeWithValidator(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	agree := func(format, ref, s string) {
		valid, known := validate.FormatValid(format, s)
		require.True(t, known)
		err := validate.Default().Validate(ref, appendQuoted(nil, s))
		require.Equal(t, valid, err == nil, "%s %q: %v", format, s, err)
	}
	for range 2000 {
		sec := r.Int64N(400*365*86400) - 100*365*86400
		tm := time.Unix(sec, r.Int64N(1e9)).UTC()
		if r.IntN(3) == 0 {
			tm = tm.AddDate(r.IntN(12000)-1000, 0, 0)
		}
		agree("date-time", "tool-before.schema.json#/properties/time", tm.Format(time.RFC3339Nano))
	}
	for _, s := range append([]string{"2026-09-15T12:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2024-02-29T00:00:00Z",
		"2023-02-29T00:00:00Z", "2026-09-15T12:00:60Z", "2026-09-15t12:00:00z", "2026-09-15T12:00:00+00:00", "10000-01-01T00:00:00Z",
		"-0001-01-01T00:00:00Z", "2026-09-15T12:00:00.Z", "2026-09-15T23:59:60Z"}, stringPool...) {
		agree("date-time", "tool-before.schema.json#/properties/time", s)
	}
	for _, s := range append([]string{"urn:test:harness", "https://harness.example/runtime/42", "http://[::1]:80/x", "mailto:a@b", "a:b", "1a:b", "http://a b", "http://%zz", ""}, stringPool...) {
		if utf8.ValidString(s) {
			agree("uri", "tool-before.schema.json#/properties/source", s)
		}
	}
}

// TestSDKTimeIsDateTime: every string sdkTime accepts is a date-time to
// validate.FormatValid (and so to the canonical validator,
// TestFormatsAgreeWithValidator), and it accepts every time the SDK writes
// for years 0 to 9999.
func TestSDKTimeIsDateTime(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		tm := time.Unix(r.Int64N(253402300799+62135596800)-62135596800, r.Int64N(1e9)).UTC()
		s := tm.Format(time.RFC3339Nano)
		require.True(t, sdkTime(s), "%q", s)
		valid, _ := validate.FormatValid("date-time", s)
		require.True(t, valid, "%q", s)
	}
	digits := "0123456789"
	for range 20000 {
		b := []byte("2024-02-29T23:59:59.123456789Z")
		b = b[:20+r.IntN(11)]
		b[len(b)-1] = 'Z'
		for range 1 + r.IntN(3) {
			i := r.IntN(len(b))
			b[i] = (digits + "-:.TZ x")[r.IntN(17)]
		}
		s := string(b)
		if sdkTime(s) {
			valid, _ := validate.FormatValid("date-time", s)
			require.True(t, valid, "%q", s)
		}
	}
	for _, s := range []string{"2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z"} {
		require.False(t, sdkTime(s), "%q", s)
	}
	require.True(t, sdkTime("2000-02-29T00:00:00Z"))
}

// TestSDKValuesTrusted: the entry check takes as they are only the values
// the SDK wrote for this very event (the time formatUTC wrote, tool input
// appendPlainJSON wrote from Go values), recognised by their bytes: a copy
// of them, raw JSON the caller supplied or json.Marshal wrote, and a value
// put in place of the SDK's are checked, so a repeated member name or a
// time that is not a date-time is rejected whatever the SDK wrote beside
// it.
func TestSDKValuesTrusted(t *testing.T) {
	e := entryFor(gen.EventToolBefore)
	build := func(input any) (*gen.Event, *fill) {
		f := &fill{source: "urn:test:harness"}
		in := ToolBeforeInput{ID: "evt-1", Name: "read_file", Input: input, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
		ev, err := in.wire(f)
		require.NoError(t, err)
		return ev, f
	}
	ev, f := build(map[string]any{"path": "/etc/hosts", "opts": map[string]any{"n": 1.5, "tags": []any{"a", true, nil}}})
	tb := ev.ToolBefore
	require.True(t, f.sdk.isTime(tb.Time))
	require.False(t, f.sdk.isTime(strings.Clone(tb.Time)))
	require.False(t, f.sdk.isTime(""))
	require.True(t, f.sdk.isPlain(tb.Tool.Input))
	require.False(t, f.sdk.isPlain(append([]byte(nil), tb.Tool.Input...)))
	require.False(t, (*sdkValues)(nil).isPlain(tb.Tool.Input))
	require.True(t, e.eventPlan().accepts(ev, &f.sdk))
	requireSameCheck(t, e, ev)
	data, err := checkEvent(e, ev, &f.sdk)
	require.NoError(t, err)
	want, err := oldCheck(e.info, ev)
	require.NoError(t, err)
	require.Equal(t, string(want), string(data))

	type wrapped struct {
		V json.RawMessage `json:"v"`
	}
	for _, input := range []any{json.RawMessage(`{"a":1,"a":2}`), json.RawMessage(`{"a":{"b":1,"b":2}}`), wrapped{V: json.RawMessage(`{"b":1,"b":2}`)}} {
		ev, f := build(input)
		require.False(t, f.sdk.isPlain(ev.ToolBefore.Tool.Input), "%v", input)
		_, err := checkEvent(e, ev, &f.sdk)
		require.ErrorIs(t, err, ErrInvalidInput, "%v", input)
	}

	// In place of the SDK's own values: checked.
	tb.Tool.Input = json.RawMessage(`{"a":1,"a":2}`)
	require.False(t, e.eventPlan().accepts(ev, &f.sdk))
	_, err = checkEvent(e, ev, &f.sdk)
	require.ErrorIs(t, err, ErrInvalidInput)
	ev, f = build(map[string]any{"a": 1})
	ev.ToolBefore.Time = "2026-13-01T00:00:00Z"
	require.False(t, e.eventPlan().accepts(ev, &f.sdk))
	_, err = checkEvent(e, ev, &f.sdk)
	require.ErrorIs(t, err, ErrInvalidInput)
}
