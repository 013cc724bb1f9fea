package hooks

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type (
	namedMap   map[string]any
	namedSlice []any
	namedStr   string
	textKey    struct{ s string }
)

func (k textKey) MarshalText() ([]byte, error) { return []byte("k-" + k.s), nil }

// requireAppJSONAsMarshal asserts that appJSON writes what json.Marshal
// writes for v, or fails exactly when it fails.
func requireAppJSONAsMarshal(t *testing.T, v any) {
	t.Helper()
	got, err := appJSON(v, "/tool/input")
	want, werr := json.Marshal(v)
	if werr != nil {
		require.Error(t, err, "%#v", v)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// TestAppJSONAsMarshalHostile: tool input the plain encoder must leave to
// json.Marshal (named types, values with their own encoding nested in
// plain maps and slices, non-string keys, typed nils, float32, floats at
// the edges of the plain decimal form, DEL and separators, nesting just
// past the plain encoder's bound and far past it, cycles through slices)
// is written as json.Marshal writes it or rejected as it rejects it.
func TestAppJSONAsMarshalHostile(t *testing.T) {
	cycle := []any{nil}
	cycle[0] = cycle
	deep := func(n int, leaf any) any {
		v := leaf
		for i := range n {
			if i%2 == 0 {
				v = []any{v}
			} else {
				v = map[string]any{"a": v}
			}
		}
		return v
	}
	values := []any{
		namedMap{"a": 1.0}, namedSlice{"x"}, namedStr("<"), map[string]any{"n": namedStr("a")},
		map[string]any{"t": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}, []any{json.Number("1e999")},
		map[string]any{"r": json.RawMessage(" { \"b\" : 1 } ")}, map[string]any{"b": []byte("<&>")},
		map[int]any{2: "b", 10: "a"}, map[textKey]any{{"b"}: 1, {"a"}: 2}, map[float64]any{1.5: 1},
		map[string]any{"p": (*int)(nil)}, []any{(*string)(nil), map[string]any(nil), []any(nil), []string(nil)},
		float32(0.1), []any{float32(1e-7)}, uint8(1), int8(-1), uint(7),
		math.Nextafter(1e21, 0), math.Nextafter(1e-6, 0), math.Nextafter(1e-6, 1), -math.Nextafter(1e21, 0),
		math.SmallestNonzeroFloat64, -math.MaxFloat64, math.Copysign(0, -1), []any{math.Inf(-1)}, map[string]any{"x": math.NaN()},
		"\x7f", "a\u2028b", "\u2029", map[string]any{"\x7f": 1.0}, map[string]string{"a": "\xff"}, []string{"<", ">"},
		deep(32, "x"), deep(33, "x"), deep(34, 1.0), deep(5000, true), cycle,
	}
	for _, v := range values {
		requireAppJSONAsMarshal(t, v)
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		requireAppJSONAsMarshal(t, map[string]any{"f": f, "g": []any{f / 1e10, f * 1e-300}})
	}
}

// TestFormatUTCZoneBoundaries: times whose zone moves their UTC date across
// the years formatUTC writes itself (0 and 9999) and the last nanosecond
// are formatted as time.RFC3339Nano formatting of the UTC time.
func TestFormatUTCZoneBoundaries(t *testing.T) {
	east, west := time.FixedZone("e", 14*3600), time.FixedZone("w", -12*3600-1)
	for _, tm := range []time.Time{
		time.Date(0, 1, 1, 5, 0, 0, 0, east), time.Date(0, 1, 1, 20, 0, 0, 0, east), time.Date(-1, 12, 31, 20, 0, 0, 0, west),
		time.Date(9999, 12, 31, 20, 0, 0, 999999999, west), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 5, 0, 0, 1, east), time.Date(2024, 2, 29, 23, 59, 59, 1, west), time.Time{}.In(east),
		time.Date(2026, 6, 1, 0, 0, 0, 10, time.Local), time.Unix(0, 1).In(west),
	} {
		requireFormatUTC(t, tm)
	}
}
