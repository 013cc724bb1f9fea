package hooks

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// requirePlainAgrees asserts that appendPlainJSON either declines v or
// writes exactly what json.Marshal writes for it, and reports whether it
// encoded v itself.
func requirePlainAgrees(t testing.TB, v any) bool {
	t.Helper()
	got, ok := appendPlainJSON(nil, v, 0)
	want, err := json.Marshal(v)
	if !ok {
		return false
	}
	require.NoError(t, err, "appendPlainJSON encoded a value json.Marshal rejects: %#v", v)
	require.Equal(t, string(want), string(got), "%#v", v)
	return true
}

func TestAppendPlainJSONAgrees(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, tc := range []struct {
		name  string
		v     any
		plain bool // appendPlainJSON encodes it itself
	}{
		{"nil", nil, true},
		{"string", "/etc/hosts", true},
		{"empty string", "", true},
		{"quote", `a"b`, false},
		{"backslash", `a\b`, false},
		{"html", "<a href='x'>&</a>", false},
		{"control", "a\nb", false},
		{"non-ascii", "é", false},
		{"invalid utf-8", "\xff", false},
		{"line separator", "\u2028", false},
		{"true", true, true},
		{"false", false, true},
		{"zero", 0.0, true},
		{"negative zero", math.Copysign(0, -1), true},
		{"float", 1.5, true},
		{"integral float", 3.0, true},
		{"large float", 1e20, true},
		{"exponent float", 1e21, false},
		{"tiny float", 1e-7, false},
		{"small float", 1e-6, true},
		{"nan", math.NaN(), false},
		{"inf", math.Inf(1), false},
		{"int", -42, true},
		{"int64", int64(math.MinInt64), true},
		{"int32", int32(7), true},
		{"uint64", uint64(math.MaxUint64), true},
		{"uint", uint(1), false},
		{"map", map[string]any{"path": "/etc/hosts", "b": []any{1.0, "x", nil, true}, "a": map[string]any{}}, true},
		{"nil map", map[string]any(nil), true},
		{"empty slice", []any{}, true},
		{"nil slice", []any(nil), true},
		{"strings", []string{"a", "b"}, true},
		{"nil strings", []string(nil), true},
		{"string map", map[string]string{"z": "1", "a": "2"}, true},
		{"nil string map", map[string]string(nil), true},
		{"escaped key", map[string]any{"a<": 1.0}, false},
		{"escaped nested", map[string]any{"a": []any{"\n"}}, false},
		{"struct", struct{ A int }{1}, false},
		{"raw inside", map[string]any{"a": json.RawMessage(`1`)}, false},
		{"number inside", []any{json.Number("1")}, false},
		{"cycle", cyclic, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.plain, requirePlainAgrees(t, tc.v))
		})
	}
}

// randomPlain returns a random value of the shapes appendPlainJSON takes,
// with strings and floats that it sometimes declines.
func randomPlain(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "path", "/etc/hosts", "<", "&amp;", "x\"y", "\t", "é", "\xff", "Z", "b c"}
	floats := []float64{0, -1, 1.25, 1e20, 1e21, 1e-6, 5e-7, 123456789.125, -0.5, 1 / 3.0}
	n := 9
	if depth > 4 {
		n = 6
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return strs[r.IntN(len(strs))]
	case 2:
		return r.IntN(2) == 0
	case 3:
		return floats[r.IntN(len(floats))]
	case 4:
		return r.IntN(1000) - 500
	case 5:
		return []string{strs[r.IntN(len(strs))], strs[r.IntN(len(strs))]}
	case 6, 7:
		m := map[string]any{}
		for range r.IntN(4) {
			m[strs[r.IntN(len(strs))]] = randomPlain(r, depth+1)
		}
		return m
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomPlain(r, depth+1)
		}
		return l
	}
}

func TestAppendPlainJSONRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	plain := 0
	for range 5000 {
		if requirePlainAgrees(t, randomPlain(r, 0)) {
			plain++
		}
	}
	require.Greater(t, plain, 1000, "most random values are encoded without json.Marshal")
}

// FuzzAppendPlainJSON: any value encoding/json decodes (maps, slices,
// strings, float64, booleans, nil) is encoded by appendPlainJSON as
// json.Marshal encodes it, or left to it.
func FuzzAppendPlainJSON(f *testing.F) {
	for _, s := range []string{`{"path":"/etc/hosts"}`, `[1,2.5,"x",null,true,{"a":[]}]`, `"<&>"`, `1e300`, `{"b":1,"a":2}`, `-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		requirePlainAgrees(t, v)
	})
}

// An id plainID accepts is written by quoting it, as
// gen.JSONRPCIDFromString writes it.
func TestPlainIDAgrees(t *testing.T) {
	ids := []string{"evt-bench", "", "a b", "~", "evt_0123456789abcdef", "x\"y", `x\y`, "\x7f", "é", "\n", "\xff", "\u2028", "<&>"}
	for c := 0; c < 256; c++ {
		ids = append(ids, "id"+string(rune(c)), "id"+string([]byte{byte(c)}))
	}
	for _, id := range ids {
		if plainID(id) {
			require.Equal(t, `"`+id+`"`, string(gen.JSONRPCIDFromString(id)), "%q", id)
		}
	}
	require.True(t, plainID("evt-bench"))
	require.False(t, plainID(`x"y`))
}

// formatUTC writes what time.RFC3339Nano formatting of the UTC time does.
func TestFormatUTCAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	times := []time.Time{{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 3, 4, 5, 6, 100, time.FixedZone("x", 3600)), time.Now()}
	for range 20000 {
		ns := r.Int64N(1e9)
		switch r.IntN(3) {
		case 0:
			ns = ns / 1e6 * 1e6
		case 1:
			ns = 0
		}
		times = append(times, time.Unix(r.Int64N(253402300799+62135596800+1e9)-62135596800-5e8, ns).In(time.FixedZone("z", r.IntN(50000)-25000)))
	}
	for _, tm := range times {
		requireFormatUTC(t, tm)
	}
}

// requireFormatUTC checks formatUTC at tm: the string of
// t.UTC().Format(time.RFC3339Nano), reported as the SDK's own exactly for
// a four-digit year, and then an RFC 3339 date-time (the entry check takes
// it as one without checking it).
func requireFormatUTC(t *testing.T, tm time.Time) {
	t.Helper()
	s, own := formatUTC(tm)
	require.Equal(t, tm.UTC().Format(time.RFC3339Nano), s, "%v", tm)
	year := tm.UTC().Year()
	require.Equal(t, year >= 0 && year <= 9999, own, "%v", tm)
	if own {
		valid, known := validate.FormatValid("date-time", s)
		require.True(t, known)
		require.True(t, valid, "%q", s)
	}
}

// TestClockAgrees: a Hooks' clock formats every time as formatUTC does,
// when the second repeats (its kept date and time of day), changes, goes
// back, or holds a year formatUTC does not call its own, and when used
// concurrently.
func TestClockAgrees(t *testing.T) {
	var c clock
	base := time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC)
	var times []time.Time
	for _, ns := range []int{0, 1, 10, 100000000, 999999999, 5000, 0} {
		times = append(times, base.Add(time.Duration(ns)), base.Add(time.Second+time.Duration(ns)), base.Add(2*time.Second+time.Duration(ns)))
	}
	times = append(times, base.Add(-time.Hour), base, time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 6, time.UTC),
		base.In(time.FixedZone("z", 3600)), time.Date(1969, 12, 31, 23, 59, 59, 7, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 8, time.UTC))
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		times = append(times, base.Add(time.Duration(r.Int64N(int64(3*time.Second)))))
	}
	for _, tm := range times {
		wantS, wantOwn := formatUTC(tm)
		s, own := c.format(tm)
		require.Equal(t, wantS, s, "%v", tm)
		require.Equal(t, wantOwn, own, "%v", tm)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				tm := base.Add(time.Duration(g*500+i) * 3 * time.Millisecond)
				s, _ := c.format(tm)
				want, _ := formatUTC(tm)
				if s != want {
					t.Errorf("%v: %q, want %q", tm, s, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
