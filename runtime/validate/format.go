package validate

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// FormatValid reports whether s satisfies the JSON Schema format named
// name exactly as jsonschema/v6 (v6.0.3) asserts it with format assertions
// on: "date", "date-time", "email" and "uri". known is false for any other
// name, and then valid is true: an unknown format asserts nothing, as in
// v6. It is what checks formats outside the canonical schemas, such as the
// requested schema of an MCP elicitation form.
func FormatValid(name, s string) (valid, known bool) {
	switch name {
	case "date-time":
		return exactDateTime(s), true
	case "uri":
		return exactURI(s), true
	case "date":
		return exactDate(s), true
	case "email":
		return exactEmail(s), true
	}
	return true, false
}

// The checks below transcribe jsonschema/v6's format.go (v6.0.3, Apache
// License 2.0), as formats_exact.go does for the formats the canonical
// schemas use; TestFormatValidAgreesWithV6 holds them to it.

// exactDate is v6's validateDate.
func exactDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// exactEmail is v6's validateEmail.
func exactEmail(s string) bool {
	// entire email address to be no more than 254 characters long
	if len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at == -1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false
	}
	if len(local) > 1 && strings.HasPrefix(local, `"`) && strings.HasSuffix(local, `"`) {
		// quoted
		local := local[1 : len(local)-1]
		if strings.IndexByte(local, '\\') != -1 || strings.IndexByte(local, '"') != -1 {
			return false
		}
	} else {
		// unquoted
		if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
			return false
		}
		for _, ch := range local {
			switch {
			case ch >= 'a' && ch <= 'z':
			case ch >= 'A' && ch <= 'Z':
			case ch >= '0' && ch <= '9':
			case strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", ch):
			default:
				return false
			}
		}
	}
	// domain if enclosed in brackets, must match an IP address
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		domain = domain[1 : len(domain)-1]
		if rem, ok := strings.CutPrefix(domain, "IPv6:"); ok {
			return exactIPv6(rem)
		}
		return exactIPv4(domain)
	}
	return exactHostname(domain)
}

// exactIPv4 is v6's validateIPV4.
func exactIPv4(s string) bool {
	groups := strings.Split(s, ".")
	if len(groups) != 4 {
		return false
	}
	for _, group := range groups {
		if len(group) > 1 && group[0] == '0' {
			return false
		}
		n, err := strconv.Atoi(group)
		if err != nil || n < 0 || n > 255 {
			return false
		}
	}
	return true
}

// exactIPv6 is v6's validateIPV6.
func exactIPv6(s string) bool {
	if !strings.Contains(s, ":") {
		return false
	}
	addr, err := netip.ParseAddr(s)
	return err == nil && addr.Zone() == ""
}

// exactHostname is v6's validateHostname.
func exactHostname(s string) bool {
	// entire hostname (including the delimiting dots but not a trailing
	// dot) has a maximum of 253 ASCII characters
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) < 1 || len(label) > 63 {
			return false
		}
		if strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, ch := range label {
			switch {
			case ch >= 'a' && ch <= 'z':
			case ch >= 'A' && ch <= 'Z':
			case ch >= '0' && ch <= '9':
			case ch == '-':
			default:
				return false
			}
		}
	}
	return true
}
