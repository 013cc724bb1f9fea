package validate

// Hand-written matchers for the regular expressions the canonical schemas
// use most, which Go's regexp matches with its backtracker in thousands of
// instructions per string: each accepts exactly the strings its pattern
// matches (TestKnownPatterns holds them to regexp), so that using one
// never changes a verdict.

// Known patterns, as matcher.known.
const (
	patRegexp     = iota // none: regexp
	patReverseDNS        // ^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$
	patHex64             // ^[a-f0-9]{64}$
	patHTTPPrefix        // ^https?://
)

// knownPattern returns the matcher kind of the pattern src.
func knownPattern(src string) uint8 {
	switch src {
	case `^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`:
		return patReverseDNS
	case `^[a-f0-9]{64}$`:
		return patHex64
	case `^https?://`:
		return patHTTPPrefix
	}
	return patRegexp
}

// matchKnown reports whether b matches the known pattern kind.
func matchKnown(kind uint8, b []byte) bool {
	switch kind {
	case patReverseDNS:
		return reverseDNS(b)
	case patHex64:
		if len(b) != 64 {
			return false
		}
		for _, c := range b {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	case patHTTPPrefix:
		return len(b) >= 7 && string(b[:4]) == "http" &&
			(string(b[4:7]) == "://" || len(b) >= 8 && string(b[4:8]) == "s://")
	}
	return false
}

// reverseDNS reports whether b is two or more labels separated by single
// dots, each a letter followed by letters, digits, '_' or '-'.
func reverseDNS(b []byte) bool {
	labels := 0
	for i := 0; ; i++ {
		if i >= len(b) || !isAlpha(b[i]) {
			return false
		}
		for i++; i < len(b) && (isAlpha(b[i]) || isDigit(b[i]) || b[i] == '_' || b[i] == '-'); i++ {
		}
		labels++
		if i == len(b) {
			return labels >= 2
		}
		if b[i] != '.' {
			return false
		}
	}
}
