package hooks

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// rawMarshaler is a caller type whose MarshalJSON writes s as it is.
type rawMarshaler struct{ s string }

func (m rawMarshaler) MarshalJSON() ([]byte, error) { return []byte(m.s), nil }

// requireHostEntryAgrees checks a tool.before event the way the host
// starts a call: the entry check with the values the SDK recorded (sdk)
// agrees with canonical validation of the encoding, and an accepted event
// settles under NewValidated exactly as under NewEncoded (the same error,
// State input and effective event).
func requireHostEntryAgrees(t *testing.T, ev *gen.Event, sdk *sdkValues, what string) {
	t.Helper()
	e := entryFor(gen.EventToolBefore)
	want, wantErr := oldCheck(e.info, ev)
	got, gotErr := checkEvent(e, ev, sdk)
	require.Equal(t, wantErr == nil, gotErr == nil, "%s: canonical %v, entry check %v", what, wantErr, gotErr)
	if gotErr != nil {
		require.ErrorIs(t, gotErr, ErrInvalidInput, what)
		return
	}
	require.Equal(t, string(want), string(got), what)
	a, errA := settle.NewEncoded(ev, got, settle.Initial{})
	b, errB := settle.NewValidated(ev, got, settle.Initial{})
	require.Equal(t, errA, errB, "%s: NewValidated", what)
	if errA != nil {
		return
	}
	require.Equal(t, string(a.State().Input), string(b.State().Input), "%s: State input", what)
	ea, errA := a.Event()
	eb, errB := b.Event()
	require.Equal(t, errA, errB, what)
	require.Equal(t, ea, eb, "%s: Event", what)
}

// TestHostEntryAgreesOnCallerValues: whatever Go value or raw JSON a
// caller gives as tool input (keys that json.Marshal writes alike, invalid
// UTF-8, NaN and infinities, non-string keys, MarshalJSON writing repeated
// names or whitespace, escaped repeated names, hostile sizes and depths),
// the entry check that trusts the SDK's own values rejects exactly what
// canonical validation rejects, and NewValidated settles what it accepts
// as NewEncoded does.
func TestHostEntryAgreesOnCallerValues(t *testing.T) {
	inputs := []any{
		map[string]any{"\xff": 1, "\xfe": 2}, // json.Marshal writes both as "\ufffd"
		map[string]string{"\xff": "a", "\xfe": "b"},
		map[string]any{"a": "\xff"},
		map[string]any{"a": math.NaN()},
		map[string]any{"a": math.Inf(1)},
		map[int]any{1: 2},
		map[any]any{1: 2},
		rawMarshaler{`{"a":1,"a":2}`},
		rawMarshaler{`{"a":{"b":1,"\u0062":2}}`},
		rawMarshaler{`  {"a" : 1}  `},
		json.RawMessage(`  {"a" : [1 , 2]}  `),
		json.RawMessage("{\"a\":\"\xff\"}"),
		json.RawMessage(`{"a":1,"\u0061":2}`),
		json.RawMessage(`{"a":"\ud800"}`),
		json.RawMessage(`[1]`),
		json.RawMessage(`null`),
		json.RawMessage(hostile.Deep(20000, "1")),
		json.RawMessage(hostile.ObjectDup(3000)),
		&json.RawMessage{'{', '}'},
		[]byte(`{"a":1}`),
		"not an object",
		map[string]any{"a": map[string]any{"b": []any{1, 2.5, nil, "x", true}}, "c": []string{"d"}},
	}
	for _, v := range hostile.Values() {
		inputs = append(inputs, json.RawMessage(v))
	}
	for i, input := range inputs {
		f := &fill{source: "urn:test:harness"}
		in := ToolBeforeInput{ID: "evt-1", Name: "read_file", Input: input, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
		ev, err := in.wire(f)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput, "%d %T", i, input)
			continue
		}
		requireHostEntryAgrees(t, ev, &f.sdk, fmt.Sprintf("%d %T", i, input))
	}
}

// TestHostEntryAgreesOnGivenRaw: raw tool input put into an event after
// it was built (as Dispatch and Begin take a caller's event) is checked as
// canonical validation checks it, also where the SDK wrote its own.
func TestHostEntryAgreesOnGivenRaw(t *testing.T) {
	raws := []string{`{"a":`, `{"a":1}x`, `{"a":1} `, "\n{\"a\":1}", `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, "{\"a\":\"\xff\"}",
		`{"a":"\ud800"}`, `{"\u0061":1,"a":2}`, `[]`, ``, `{"a":1e999}`, `{"a":-0}`, `{"a" : [1 , 2]}`}
	raws = append(raws, hostile.Values()...)
	for _, r := range raws {
		for _, sdk := range []bool{false, true} {
			f := &fill{source: "urn:test:harness"}
			in := ToolBeforeInput{ID: "evt-1", Name: "read_file", Input: map[string]any{"path": "/x"}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
			ev, err := in.wire(f)
			require.NoError(t, err)
			ev.ToolBefore.Tool.Input = json.RawMessage(r)
			vals := (*sdkValues)(nil)
			if sdk {
				vals = &f.sdk
			}
			requireHostEntryAgrees(t, ev, vals, r)
		}
	}
}
