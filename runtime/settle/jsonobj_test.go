package settle

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// refEqual is the reference semantics of jsonEqual: decode and compare,
// numbers by value.
func refEqual(a, b []byte) bool {
	va, errA := decodeRef(a)
	vb, errB := decodeRef(b)
	return errA == nil && errB == nil && refAnyEqual(va, vb)
}

func decodeRef(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func refAnyEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !refAnyEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !refAnyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, _ := new(big.Rat).SetString(string(x))
		ry, _ := new(big.Rat).SetString(string(y))
		return rx != nil && ry != nil && rx.Cmp(ry) == 0
	default:
		return a == b
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		eq   bool
	}{
		{`{"a":1,"b":[1,2]}`, ` { "b" : [1, 2], "a" : 1.0 } `, true},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`"\u0061"`, `"a"`, true},
		{`[1,2]`, `[2,1]`, false},
		{`null`, `false`, false},
		{`1e2`, `100`, true},
		{`1e99999`, `1e99999`, true},
		{`1e99999`, `1E99999`, true},
		{`1e99999`, `1E99998`, false},
		{`{"a":{"b":{"c":[true]}}}`, `{"a":{"b":{"c":[true]}}}`, true},
		{`{`, `{`, true},
		{`{"a":1}`, `{"a":}`, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.eq, jsonEqual([]byte(tc.a), []byte(tc.b)), "%s vs %s", tc.a, tc.b)
	}
}

func TestSplitObject(t *testing.T) {
	ms, err := splitObject([]byte(` {"a" : 1, "b\u0022":[1,{"x":"}"}], "c":2 } `), true)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	require.Equal(t, "a", ms[0].name)
	require.Equal(t, `b"`, ms[1].name)
	require.Equal(t, `2`, string(ms[2].value))
	require.Equal(t, `{"a":1,"b\u0022":[1,{"x":"}"}],"c":2}`, string(encodeObject(ms)))
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":1}x`, "{\"a\":\"\xff\"}"} {
		_, err := splitObject([]byte(bad), true)
		require.Error(t, err, bad)
	}
	ms, err = splitObject([]byte(`{}`), true)
	require.NoError(t, err)
	require.Empty(t, ms)
	// A repeated name is an error, at the top and below, escaped or not,
	// in small and large objects.
	for _, dup := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"b":1,"b":2}}`, `{"x":[{"b":1,"b":2}]}`,
		hostile.ObjectDup(5000), `{"x":` + hostile.ObjectDup(5000) + `}`} {
		_, err := splitObject([]byte(dup), true)
		require.ErrorIs(t, err, errDuplicate, "%.40s", dup)
	}
	ms, err = splitObject([]byte(hostile.Object(5000)), true)
	require.NoError(t, err)
	require.Len(t, ms, 5000)
}

// TestJSONEqualLarge compares objects of thousands of members in another
// order, and deep nesting with different spacing at every level.
func TestJSONEqualLarge(t *testing.T) {
	a := hostile.Object(20000)
	ms, err := splitObject([]byte(a), true)
	require.NoError(t, err)
	slices.Reverse(ms)
	require.True(t, jsonEqual([]byte(a), encodeObject(ms)))
	ms[0].value = json.RawMessage(`-1`)
	require.False(t, jsonEqual([]byte(a), encodeObject(ms)))
	require.True(t, membersEqual(ms, ms))

	deep := hostile.Deep(900, hostile.Object(100))
	spaced := strings.ReplaceAll(deep, ":", " : ")
	require.True(t, jsonEqual([]byte(deep), []byte(spaced)))
	require.False(t, jsonEqual([]byte(deep), []byte(strings.Replace(spaced, `"k99" : 99`, `"k99" : 98`, 1))))
	// Beyond maxEqualDepth only identical texts are equal.
	deeper := hostile.Deep(maxEqualDepth+5, "1")
	require.True(t, jsonEqual([]byte(deeper), []byte(deeper)))
	require.False(t, jsonEqual([]byte(deeper), []byte(strings.ReplaceAll(deeper, ":", " :"))))
	// Repeated names are never equal to other text.
	require.False(t, jsonEqual([]byte(`{"a":1,"a":1}`), []byte(`{"a":1}`)))
}

// FuzzJSONEqual checks jsonEqual against decoding, and splitObject's
// round trip, on arbitrary valid JSON.
func FuzzJSONEqual(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"b":[1,2.0],"a":1}`))
	f.Add([]byte(`"x"`), []byte(`"\u0078"`))
	f.Add([]byte(`[{"a":null}]`), []byte(`[{"a":false}]`))
	for _, h := range hostile.Values() {
		f.Add([]byte(h), []byte(strings.ReplaceAll(h, ",", " , ")))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if !json.Valid(a) || !json.Valid(b) || !smallNumbers(a) || !smallNumbers(b) {
			return
		}
		if !utf8.Valid(a) || !utf8.Valid(b) || hostile.HasDuplicate(a) || hostile.HasDuplicate(b) {
			// Not I-JSON: equal only to the same bytes.
			require.Equal(t, bytes.Equal(trimWS(a), trimWS(b)), jsonEqual(a, b), "%s vs %s", a, b)
			return
		}
		require.Equal(t, refEqual(a, b), jsonEqual(a, b), "%s vs %s", a, b)
		require.True(t, jsonEqual(a, a))
		if ms, err := splitObject(a, true); err == nil {
			require.True(t, jsonEqual(a, encodeObject(ms)))
		}
	})
}

// smallNumbers excludes exponents, which the big.Rat reference would
// expand into huge rationals (FuzzNumberEqual covers them).
func smallNumbers(b []byte) bool { return !bytes.ContainsAny(b, "eE") }
