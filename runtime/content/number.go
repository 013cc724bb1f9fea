package content

import "math"

// jsonInteger reads s, the text of a JSON number, as a nonnegative integer.
// JSON Schema counts integer-valued spellings (3.0, 3e0, 0.3e1) as
// integers, so they are read exactly, in time linear in len(s) whatever
// the exponent. ok is false for a fraction, a negative value or malformed
// text; a value over math.MaxInt64 reads as math.MaxInt64 with huge true.
func jsonInteger(s string) (v int64, huge, ok bool) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	digits := func() (int, int) { // start, end of a run of digits
		st := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return st, i
	}
	is, ie := digits()
	if ie == is || (s[is] == '0' && ie-is > 1) {
		return 0, false, false // JSON: one or more digits, no leading zero
	}
	fs, fe := i, i
	if i < len(s) && s[i] == '.' {
		i++
		if fs, fe = digits(); fe == fs {
			return 0, false, false
		}
	}
	exp := 0 // saturated: far beyond any int64 in either direction
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es, ee := digits()
		if ee == es {
			return 0, false, false
		}
		for _, c := range s[es:ee] {
			if exp < 1<<40 {
				exp = exp*10 + int(c-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false, false
	}
	// The value is mant × 10^exp, mant the integer and fraction digits.
	mant := s[is:ie] + s[fs:fe]
	exp -= fe - fs
	for len(mant) > 0 && mant[0] == '0' {
		mant = mant[1:]
	}
	if mant == "" {
		return 0, false, true // zero, -0 included
	}
	if neg {
		return 0, false, false
	}
	for len(mant) > 0 && mant[len(mant)-1] == '0' {
		mant = mant[:len(mant)-1]
		exp++
	}
	if exp < 0 {
		return 0, false, false // a nonzero fraction remains
	}
	if len(mant)+exp > 19 {
		return math.MaxInt64, true, true
	}
	var u uint64
	for _, c := range mant {
		u = u*10 + uint64(c-'0')
	}
	for range exp {
		u *= 10
	}
	if u > math.MaxInt64 { // 19 digits fit uint64, not always int64
		return math.MaxInt64, true, true
	}
	return int64(u), false, true
}
