package settle

import "strconv"

// numberEqual reports whether two JSON number texts denote the same value.
// It compares exactly, in time linear in the texts and without big
// arithmetic: each text is reduced to its sign, its significant digits
// (leading and trailing zeros stripped) and the decimal exponent of its
// first significant digit. Every zero equals every other zero, -0 included.
// Texts that are not JSON numbers are equal only byte for byte.
func numberEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, okx := parseNumber(a)
	y, oky := parseNumber(b)
	if !okx || !oky {
		return false
	}
	if x.zero || y.zero {
		return x.zero && y.zero
	}
	return x.neg == y.neg && segmentsEqual(x.d1, x.d2, y.d1, y.d2) && exponentsEqual(&x, &y)
}

// number is a nonzero JSON number as 0.D × 10^(exp+shift), where D is the
// concatenation d1+d2 with neither a leading nor a trailing zero.
type number struct {
	neg, zero bool
	d1, d2    string
	// expNeg and expMag are the written exponent: its sign and its digits
	// without leading zeros (empty for zero).
	expNeg bool
	expMag string
	// shift is the position of the first significant digit relative to
	// the decimal point; its magnitude is below the text's length.
	shift int64
}

// maxSmallExp is the largest count of exponent digits computed in int64:
// 10^18 plus any shift (bounded by a text's length) stays below 2^63.
const maxSmallExp = 18

// parseNumber splits a JSON number text; it reports false for any text
// that is not one.
func parseNumber(s string) (number, bool) {
	var n number
	i := 0
	if i < len(s) && s[i] == '-' {
		n.neg = true
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[start:i]
	if len(intPart) == 0 || (len(intPart) > 1 && intPart[0] == '0') {
		return n, false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[start:i]
		if len(frac) == 0 {
			return n, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			n.expNeg = s[i] == '-'
			i++
		}
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return n, false
		}
		n.expMag = trimLeft(s[start:i])
		if n.expMag == "" {
			n.expNeg = false
		}
	}
	if i != len(s) {
		return n, false
	}
	d1, d2 := trimLeft(intPart), frac
	z := len(intPart) - len(d1)
	if d1 == "" {
		d2 = trimLeft(frac)
		z += len(frac) - len(d2)
	}
	d2 = trimRight(d2)
	if d2 == "" {
		d1 = trimRight(d1)
	}
	if d1 == "" && d2 == "" {
		n.zero = true
		return n, true
	}
	n.d1, n.d2 = d1, d2
	n.shift = int64(len(intPart)) - int64(z)
	return n, true
}

// exponentsEqual compares exp+shift of two numbers exactly.
func exponentsEqual(x, y *number) bool {
	if len(x.expMag) <= maxSmallExp && len(y.expMag) <= maxSmallExp {
		return x.smallExp()+x.shift == y.smallExp()+y.shift
	}
	xn, xm := x.adjusted()
	yn, ym := y.adjusted()
	return xn == yn && xm == ym
}

// smallExp is the written exponent of a number whose exponent has at most
// maxSmallExp digits.
func (n *number) smallExp() int64 {
	v, _ := strconv.ParseInt(n.expMag, 10, 64)
	if n.expNeg {
		return -v
	}
	return v
}

// adjusted is exp+shift as a sign and decimal digits without leading
// zeros (zero is positive and empty), in time linear in the exponent.
func (n *number) adjusted() (bool, string) {
	kNeg, k := n.shift < 0, n.shift
	if kNeg {
		k = -k
	}
	return addSigned(n.expNeg, n.expMag, kNeg, strconv.FormatInt(k, 10))
}

// addSigned adds two signed decimal magnitudes.
func addSigned(an bool, a string, bn bool, b string) (bool, string) {
	a, b = trimLeft(a), trimLeft(b)
	if an == bn {
		return an && (a != "" || b != ""), addMag(a, b)
	}
	switch c := cmpMag(a, b); {
	case c == 0:
		return false, ""
	case c > 0:
		return an, subMag(a, b)
	default:
		return bn, subMag(b, a)
	}
}

// addMag adds two decimal magnitudes.
func addMag(a, b string) string {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := make([]byte, len(a)+1)
	carry := byte(0)
	for i := 0; i < len(a); i++ {
		d := a[len(a)-1-i] - '0' + carry
		if i < len(b) {
			d += b[len(b)-1-i] - '0'
		}
		carry = d / 10
		out[len(out)-1-i] = '0' + d%10
	}
	out[0] = '0' + carry
	return trimLeft(string(out))
}

// subMag subtracts decimal magnitude b from a, where a >= b.
func subMag(a, b string) string {
	out := make([]byte, len(a))
	borrow := 0
	for i := 0; i < len(a); i++ {
		d := int(a[len(a)-1-i]-'0') - borrow
		if i < len(b) {
			d -= int(b[len(b)-1-i] - '0')
		}
		borrow = 0
		if d < 0 {
			d += 10
			borrow = 1
		}
		out[len(out)-1-i] = '0' + byte(d)
	}
	return trimLeft(string(out))
}

// cmpMag compares two decimal magnitudes without leading zeros.
func cmpMag(a, b string) int {
	switch {
	case len(a) != len(b):
		if len(a) < len(b) {
			return -1
		}
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// segmentsEqual reports whether a1+a2 equals b1+b2 without concatenating.
func segmentsEqual(a1, a2, b1, b2 string) bool {
	if len(a1)+len(a2) != len(b1)+len(b2) {
		return false
	}
	for len(a1)+len(a2) > 0 {
		if a1 == "" {
			a1, a2 = a2, ""
		}
		if b1 == "" {
			b1, b2 = b2, ""
		}
		m := min(len(a1), len(b1))
		if a1[:m] != b1[:m] {
			return false
		}
		a1, b1 = a1[m:], b1[m:]
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func trimLeft(s string) string {
	for len(s) > 0 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func trimRight(s string) string {
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s
}
