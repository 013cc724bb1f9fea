package validate

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The exact format checks, for what fastFormat (formats.go) leaves
// undecided. They follow jsonschema/v6 (v6.0.3, Apache License 2.0, whose
// format.go they transcribe) so that verdicts stay exactly those the
// validator had when it ran v6; TestExactFormatsAgreeWithV6 and
// FuzzExactFormats hold them to it.

var errFormat = errors.New("format mismatch")

// formatCheck returns the checker of an asserted format, or nil for a name
// the run time does not implement.
func formatCheck(name string) func(any) error {
	var f func(string) bool
	switch name {
	case "date-time":
		f = exactDateTime
	case "uri":
		f = exactURI
	default:
		return nil
	}
	return func(v any) error {
		s, ok := v.(string)
		if !ok || f(s) {
			return nil
		}
		return errFormat
	}
}

// exactDateTime is v6's validateDateTime.
func exactDateTime(s string) bool {
	if len(s) < 20 {
		return false
	}
	if s[10] != 't' && s[10] != 'T' {
		return false
	}
	if _, err := time.Parse("2006-01-02", s[:10]); err != nil {
		return false
	}
	return exactTime(s[11:])
}

// exactTime is v6's validateTime.
func exactTime(str string) bool {
	if len(str) < 9 {
		return false
	}
	if str[2] != ':' || str[5] != ':' {
		return false
	}
	var hms [3]int
	for k, tok := range strings.SplitN(str[:8], ":", 3) {
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 {
			return false
		}
		hms[k] = i
	}
	h, m, s := hms[0], hms[1], hms[2]
	if h > 23 || m > 59 || s > 60 {
		return false
	}
	str = str[8:]
	if rem, ok := strings.CutPrefix(str, "."); ok {
		numDigits := 0
		for _, ch := range rem {
			if ch >= '0' && ch <= '9' {
				numDigits++
			} else {
				break
			}
		}
		if numDigits == 0 {
			return false
		}
		str = rem[numDigits:]
	}
	if str != "z" && str != "Z" {
		if len(str) != 6 {
			return false
		}
		var sign int
		switch str[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return false
		}
		str = str[1:]
		if str[2] != ':' {
			return false
		}
		var zhm []int
		for _, tok := range strings.SplitN(str, ":", 2) {
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 {
				return false
			}
			zhm = append(zhm, i)
		}
		zh, zm := zhm[0], zhm[1]
		if zh > 23 || zm > 59 {
			return false
		}
		hm := (h*60 + m) + sign*(zh*60+zm)
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	if s >= 60 && (h != 23 || m != 59) {
		return false
	}
	return true
}

// exactURI is v6's validateURI.
func exactURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	hostName := u.Hostname()
	if strings.Contains(hostName, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return false
		}
		addr, err := netip.ParseAddr(hostName)
		if err != nil || addr.Zone() != "" {
			return false
		}
	}
	return u.IsAbs()
}
