package validate

// The fast path's format checks. The canonical schemas use two formats,
// "date-time" and "uri", which v6 checks with time.Parse and net/url on a
// string (and which, given an interface value, allocate). The functions
// here accept, without allocating, a strict subset of what v6's own
// checkers accept: the common spellings. Anything outside the subset is
// "undecided" and goes to v6's checker as before, so they can only ever
// save time, never change a verdict (FuzzFastFormats checks the subset
// against v6).

// fastFormat reports whether the string b certainly satisfies the format
// named name; false means "ask v6's checker".
func fastFormat(name string, b []byte) bool {
	switch name {
	case "date-time":
		return fastDateTime(b)
	case "uri":
		return fastURI(b)
	}
	return false
}

// The formats fastFormat knows, as fastNode.fastFmt.
const (
	fmtDateTime = 1 + iota
	fmtURI
)

// fastFormatOf is fastFormat for a format by its fastNode.fastFmt.
func fastFormatOf(f uint8, b []byte) bool {
	switch f {
	case fmtDateTime:
		return fastDateTime(b)
	case fmtURI:
		return fastURI(b)
	}
	return false
}

// fastDateTime accepts RFC 3339 date-times of the form
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM) with a date that
// exists, hours up to 23, minutes and seconds up to 59 (a leap second is
// left to v6), and the separator T or t.
func fastDateTime(b []byte) bool {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return false
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	rest := b[19:]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	switch {
	case len(rest) == 1:
		return rest[0] == 'Z' || rest[0] == 'z'
	case len(rest) == 6:
		if (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
			return false
		}
		zh, ok1 := digits(rest[1:3])
		zm, ok2 := digits(rest[4:6])
		return ok1 && ok2 && zh <= 23 && zm <= 59
	}
	return false
}

// digits parses b, which must consist of ASCII digits only.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn returns the number of days of month in year (proleptic Gregorian
// calendar, as package time).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// fastURI accepts absolute URIs of two common forms: scheme ":" followed by
// an opaque part or a path that does not start with "//" (urn:example:a,
// mailto:a@example.com, file:/a), and scheme "://" host [path] with a host
// of letters, digits, ".", "-", "_" and "~" and no port or user
// (https://example.com/a/b). The opaque part and the path use letters,
// digits and -._~!$&'()*+,;=:@/ only: no percent escapes, query,
// fragment, brackets, spaces or non-ASCII bytes.
func fastURI(b []byte) bool {
	if len(b) == 0 || !isAlpha(b[0]) {
		return false
	}
	i := 1
	for i < len(b) && uriClass[b[i]]&uriScheme != 0 {
		i++
	}
	if i == len(b) || b[i] != ':' {
		return false
	}
	rest := b[i+1:]
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		rest = rest[2:]
		h := 0
		for h < len(rest) && rest[h] != '/' {
			if uriClass[rest[h]]&uriHost == 0 {
				return false
			}
			h++
		}
		if h == 0 {
			return false
		}
		rest = rest[h:]
	}
	for _, c := range rest {
		if uriClass[c]&uriPath == 0 {
			return false
		}
	}
	return true
}

// Classes of bytes in fastURI, as bits of uriClass.
const (
	uriScheme = 1 << iota // after the first byte of a scheme
	uriHost               // in the authority
	uriPath               // uriPathByte
)

// uriClass has the fastURI classes of each byte.
var uriClass = func() (a [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isAlpha(b) || isDigit(b) || b == '+' || b == '-' || b == '.' {
			a[c] |= uriScheme
		}
		if isAlpha(b) || isDigit(b) || b == '.' || b == '-' || b == '_' || b == '~' {
			a[c] |= uriHost
		}
		if uriPathByte(b) {
			a[c] |= uriPath
		}
	}
	return a
}()

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// uriPathByte reports whether c is an unreserved or sub-delimiter byte, ":",
// "@" or "/".
func uriPathByte(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/':
		return true
	}
	return false
}
