package content

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJSONInteger(t *testing.T) {
	for _, c := range []struct {
		in       string
		v        int64
		huge, ok bool
	}{
		{"0", 0, false, true}, {"-0", 0, false, true}, {"-0.0e5", 0, false, true}, {"3", 3, false, true},
		{"3.0", 3, false, true}, {"3e0", 3, false, true}, {"0.3e1", 3, false, true}, {"300e-2", 3, false, true},
		{"1E3", 1000, false, true}, {"1e+3", 1000, false, true}, {"4194304", 4194304, false, true},
		{"9223372036854775807", math.MaxInt64, false, true}, {"9223372036854775808", math.MaxInt64, true, true},
		{"9.223372036854775807e18", math.MaxInt64, false, true}, {"1e19", math.MaxInt64, true, true},
		{"1e400000000000000000000", math.MaxInt64, true, true}, {"0e400000000000000000000", 0, false, true},
		{"1e-400000000000000000000", 0, false, false},
		{"3.5", 0, false, false}, {"-1", 0, false, false}, {"-1e0", 0, false, false}, {"3.0000000000000001", 0, false, false},
		{"", 0, false, false}, {"01", 0, false, false}, {"1.", 0, false, false}, {".1", 0, false, false}, {"1e", 0, false, false},
		{"+1", 0, false, false}, {"1 ", 0, false, false}, {"0x10", 0, false, false}, {"--1", 0, false, false}, {"1e+-1", 0, false, false},
	} {
		v, huge, ok := jsonInteger(c.in)
		require.Equal(t, c.ok, ok, c.in)
		require.Equal(t, c.huge, huge, c.in)
		require.Equal(t, c.v, v, c.in)
	}
	// Linear whatever the spelling.
	long := "1" + strings.Repeat("0", 1<<20) + "e-1048576"
	v, _, ok := jsonInteger(long)
	require.True(t, ok)
	require.Equal(t, int64(1), v)
}

// FuzzJSONInteger compares jsonInteger with exact rational arithmetic on
// inputs whose exponent keeps big.Rat cheap.
func FuzzJSONInteger(f *testing.F) {
	for _, s := range []string{"0", "3.0", "0.3e1", "1e19", "-0", "9223372036854775807", "1.5", "01", "1e-3", "12e-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, huge, ok := jsonInteger(s)
		if len(s) > 64 || strings.ContainsAny(s, "eE") && len(s) > 12 {
			return // the oracle would be too slow; jsonInteger itself must not be
		}
		if _, e, found := strings.Cut(strings.ToLower(s), "e"); found && len(strings.TrimLeft(e, "+-0")) > 5 {
			return // big.Rat refuses exponents this large; TestJSONInteger covers them
		}
		if !validJSONNumber(s) {
			require.False(t, ok, "%q", s)
			return
		}
		r, okr := new(big.Rat).SetString(s)
		require.True(t, okr, "%q", s)
		isInt := r.IsInt() && r.Sign() >= 0
		require.Equal(t, isInt, ok, "%q", s)
		if !ok {
			return
		}
		if r.Num().IsInt64() {
			require.Equal(t, r.Num().Int64(), v, "%q", s)
			require.False(t, huge)
		} else {
			require.True(t, huge, "%q", s)
			require.Equal(t, int64(math.MaxInt64), v)
		}
	})
}

// validJSONNumber is the JSON number grammar, spelled out independently.
func validJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}

// FuzzUniqueMembers checks the duplicate scan against a decode into
// ordered members.
func FuzzUniqueMembers(f *testing.F) {
	for _, s := range []string{`{"ref":"a","size":1}`, `{"ref":"a","ref":"b"}`, `{"a":{"b":1},"a":2}`, `{"a":[1,{"a":1}]}`, `[]`, `{`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if uniqueMembers(data) { // never panics; true only for one whole object
			require.True(t, json.Valid(data), "%q", data)
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &m))
		}
	})
}
