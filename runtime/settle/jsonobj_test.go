package settle

import (
	"bytes"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
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
		{`1e99999`, `1E99999`, false},
		{`{"a":{"b":{"c":[true]}}}`, `{"a":{"b":{"c":[true]}}}`, true},
		{`{`, `{`, true},
		{`{"a":1}`, `{"a":}`, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.eq, jsonEqual([]byte(tc.a), []byte(tc.b)), "%s vs %s", tc.a, tc.b)
	}
}

func TestSplitObject(t *testing.T) {
	ms, err := splitObject([]byte(` {"a" : 1, "b\u0022":[1,{"x":"}"}], "a":2 } `), true)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, "a", ms[0].name)
	require.Equal(t, `2`, string(ms[0].value), "the last duplicate wins")
	require.Equal(t, `b"`, ms[1].name)
	require.Equal(t, `{"a":2,"b\u0022":[1,{"x":"}"}]}`, string(encodeObject(ms)))
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":1}x`} {
		_, err := splitObject([]byte(bad), true)
		require.Error(t, err, bad)
	}
	ms, err = splitObject([]byte(`{}`), true)
	require.NoError(t, err)
	require.Empty(t, ms)
}

// FuzzJSONEqual checks jsonEqual against decoding, and splitObject's
// round trip, on arbitrary valid JSON.
func FuzzJSONEqual(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"b":[1,2.0],"a":1}`))
	f.Add([]byte(`"x"`), []byte(`"\u0078"`))
	f.Add([]byte(`[{"a":null}]`), []byte(`[{"a":false}]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if !json.Valid(a) || !json.Valid(b) || !smallNumbers(a) || !smallNumbers(b) {
			return
		}
		require.Equal(t, refEqual(a, b), jsonEqual(a, b), "%s vs %s", a, b)
		require.True(t, jsonEqual(a, a))
		if ms, err := splitObject(a, true); err == nil {
			require.True(t, jsonEqual(a, encodeObject(ms)))
		}
	})
}

// smallNumbers excludes huge exponents, which jsonEqual deliberately
// refuses to expand.
func smallNumbers(b []byte) bool { return !bytes.ContainsAny(b, "eE") }
