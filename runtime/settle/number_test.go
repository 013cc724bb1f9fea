package settle

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ratEqual is the former comparison: exact through big.Rat, which is
// quadratic in the digits and allocates rationals of about 3.3 bits per
// unit of exponent, and refuses exponents of more than four digits.
func ratEqual(a, b string) bool {
	if a == b {
		return true
	}
	small := func(n string) bool {
		i := strings.IndexAny(n, "eE")
		if i < 0 {
			return true
		}
		e := strings.TrimLeft(n[i+1:], "+-")
		return len(e) <= 4
	}
	if !small(a) || !small(b) {
		return false
	}
	rx, okx := new(big.Rat).SetString(a)
	ry, oky := new(big.Rat).SetString(b)
	return okx && oky && rx.Cmp(ry) == 0
}

func TestNumberEqual(t *testing.T) {
	cases := []struct {
		a, b string
		eq   bool
	}{
		{`1`, `1.0`, true},
		{`1e2`, `100`, true},
		{`100`, `1E+2`, true},
		{`0.001`, `1e-3`, true},
		{`0.0010`, `10e-4`, true},
		{`123.45`, `12345e-2`, true},
		{`123.45`, `12345e-3`, false},
		{`-1.5`, `-15e-1`, true},
		{`-1.5`, `1.5`, false},
		{`0`, `-0`, true},
		{`0`, `0.000e99`, true},
		{`-0.0`, `0E-5`, true},
		{`0`, `1e-99`, false},
		{`10`, `1`, false},
		{`1e9999`, `10e9998`, true},
		{`1e9999`, `1e9998`, false},
		{`1e99999`, `1E99999`, true},
		{`1e10000`, `10e9999`, true},
		{`1e00000000000000000000000007`, `10000000`, true},
		{`1e100000000000000000005`, `100000e100000000000000000000`, true},
		{`1e100000000000000000005`, `10000e100000000000000000000`, false},
		{`1e-100000000000000000005`, `0.00001e-100000000000000000000`, true},
		{`1e-100000000000000000000`, `-1e-100000000000000000000`, false},
		{`1e100000000000000000000`, `1e-100000000000000000000`, false},
		{`1e1000000000000000000`, `1e999999999999999999`, false},
		{`1e1000000000000000000`, `10e999999999999999999`, true},
		{`0.1e-999999999999999999`, `1e-1000000000000000000`, true},
		{`1`, `01`, false},
		{`1`, `1.`, false},
		{`1`, `+1`, false},
		{`1`, `1e`, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.eq, numberEqual(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		require.Equal(t, tc.eq, numberEqual(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
		if tc.eq {
			require.True(t, jsonEqual([]byte(`[`+tc.a+`]`), []byte(`[`+tc.b+`]`)), "%s vs %s", tc.a, tc.b)
		}
	}
}

// FuzzNumberEqual checks numberEqual against big.Rat on numbers whose
// exponents big.Rat expands cheaply.
func FuzzNumberEqual(f *testing.F) {
	f.Add(false, "1", "", false, "2", true, "1", "10", "", false, "1")
	f.Add(true, "0", "0", true, "", false, "0", "", "00", true, "7")
	f.Add(false, "12", "340", false, "1", false, "1234", "", "", true, "1")
	f.Fuzz(func(t *testing.T, an bool, ai, af string, aen bool, ae string,
		bn bool, bi, bf, be string, ben bool, bx string) {
		a, okA := fuzzNumber(an, ai, af, aen, ae)
		b, okB := fuzzNumber(bn, bi, bf, ben, be+bx)
		if !okA || !okB {
			return
		}
		require.Equal(t, ratEqual(a, b), numberEqual(a, b), "%s vs %s", a, b)
		require.Equal(t, numberEqual(a, b), numberEqual(b, a), "%s vs %s", a, b)
		require.True(t, numberEqual(a, a))
	})
}

// fuzzNumber builds a JSON number text from digit strings, keeping only
// short mantissas and exponents of at most four digits.
func fuzzNumber(neg bool, i, f string, eneg bool, e string) (string, bool) {
	digits := func(s string) bool {
		return strings.Trim(s, "0123456789") == "" && len(s) <= 40
	}
	if !digits(i) || !digits(f) || !digits(e) || i == "" || (len(i) > 1 && i[0] == '0') || len(e) > 4 {
		return "", false
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	sb.WriteString(i)
	if f != "" {
		sb.WriteString("." + f)
	}
	if e != "" {
		sb.WriteString("e")
		if eneg {
			sb.WriteByte('-')
		}
		sb.WriteString(e)
	}
	return sb.String(), true
}

// longMantissas are two spellings of one number with n significant digits.
func longMantissas(n int) (string, string) {
	d := strings.Repeat("123456789", n/9+1)[:n]
	return d[:1] + "." + d[1:], d[:1] + "." + d[1:] + "000e0"
}

// hugeExponents are two arrays of n numbers that are equal element by element.
func hugeExponents(n int) ([]byte, []byte) {
	return []byte("[" + strings.TrimSuffix(strings.Repeat("1e9999,", n), ",") + "]"),
		[]byte("[" + strings.TrimSuffix(strings.Repeat("10e9998,", n), ",") + "]")
}

func TestNumberBenchInputs(t *testing.T) {
	a, b := longMantissas(1000)
	require.True(t, numberEqual(a, b))
	require.True(t, ratEqual(a, b))
	x, y := hugeExponents(3)
	require.True(t, jsonEqual(x, y))
}

// BenchmarkNumberEqual compares the linear comparison with the former
// big.Rat one (the baseline) at two sizes each: the cost per digit and per
// element must stay flat for numberEqual.
func BenchmarkNumberEqual(b *testing.B) {
	impls := []struct {
		name string
		eq   func(a, b string) bool
	}{{"linear", numberEqual}, {"baseline-rat", ratEqual}}
	for _, impl := range impls {
		for _, n := range []int{20_000, 200_000} {
			x, y := longMantissas(n)
			b.Run(fmt.Sprintf("%s/digits=%d", impl.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(x) + len(y)))
				for b.Loop() {
					if !impl.eq(x, y) {
						b.Fatal("unequal")
					}
				}
			})
		}
		for _, n := range []int{200, 2000} {
			b.Run(fmt.Sprintf("%s/elements=%d", impl.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for k := 0; k < n; k++ {
						if !impl.eq("1e9999", "10e9998") {
							b.Fatal("unequal")
						}
					}
				}
			})
		}
	}
}

// BenchmarkJSONEqualHugeExponents runs the whole comparison on arrays of
// 1e9999 against 10e9998.
func BenchmarkJSONEqualHugeExponents(b *testing.B) {
	for _, n := range []int{200, 2000} {
		xs, ys := hugeExponents(n)
		b.Run(fmt.Sprintf("elements=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(xs) + len(ys)))
			for b.Loop() {
				if !jsonEqual(xs, ys) {
					b.Fatal("unequal")
				}
			}
		})
	}
}
