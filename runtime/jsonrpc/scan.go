package jsonrpc

import (
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
)

// maxDepth is the maximum nesting depth of arrays and objects, the same limit
// encoding/json applies, so that Classify and json.Valid agree.
const maxDepth = jsonlex.MaxDepth

// getLexer returns a scanner of the shared lexer, from its pool, that finds
// repeated member names; putLexer gives it back.
func getLexer() *jsonlex.Scanner {
	s := jsonlex.Acquire(true)
	s.MaxDepth = maxDepth
	return s
}

func putLexer(s *jsonlex.Scanner) { s.Release() }

// scanner is a validating JSON scanner over a byte slice. It never allocates.
type scanner struct {
	data []byte
	pos  int
}

func isWS(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// trimWS removes leading and trailing JSON whitespace.
func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func (s *scanner) skipWS() {
	for s.pos < len(s.data) && isWS(s.data[s.pos]) {
		s.pos++
	}
}

// peek returns the byte at the current position, or 0 at the end.
func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanString scans a string token starting at the opening quote. It reports
// whether the token contains escapes and whether it is valid (including its
// UTF-8). On success pos is just past the closing quote.
func (s *scanner) scanString() (escaped, ok bool) {
	d := s.data
	i := s.pos + 1
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return false, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return false, false
				}
				i += 6
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return false, false
			}
			i += size
		}
	}
	return false, false
}

// scanNumber scans a number token. On success pos is just past it.
func (s *scanner) scanNumber() bool {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return false
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	s.pos = i
	return true
}

func (s *scanner) scanLiteral(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// skipValue validates and skips one JSON value starting at pos (no leading
// whitespace). depth is the nesting depth of the enclosing container.
func (s *scanner) skipValue(depth int) bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; c {
	case '{':
		if depth+1 > maxDepth {
			return false
		}
		s.pos++
		s.skipWS()
		if s.peek() == '}' {
			s.pos++
			return true
		}
		for {
			if s.peek() != '"' {
				return false
			}
			if _, ok := s.scanString(); !ok {
				return false
			}
			s.skipWS()
			if s.peek() != ':' {
				return false
			}
			s.pos++
			s.skipWS()
			if !s.skipValue(depth + 1) {
				return false
			}
			s.skipWS()
			switch s.peek() {
			case ',':
				s.pos++
				s.skipWS()
			case '}':
				s.pos++
				return true
			default:
				return false
			}
		}
	case '[':
		if depth+1 > maxDepth {
			return false
		}
		s.pos++
		s.skipWS()
		if s.peek() == ']' {
			s.pos++
			return true
		}
		for {
			if !s.skipValue(depth + 1) {
				return false
			}
			s.skipWS()
			switch s.peek() {
			case ',':
				s.pos++
				s.skipWS()
			case ']':
				s.pos++
				return true
			default:
				return false
			}
		}
	case '"':
		_, ok := s.scanString()
		return ok
	case 't':
		return s.scanLiteral("true")
	case 'f':
		return s.scanLiteral("false")
	case 'n':
		return s.scanLiteral("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return s.scanNumber()
		}
		return false
	}
}

// memberNames tracks the member names of one object to detect duplicates.
// The known names of an envelope or error object use a bit set; other names
// are kept only when they occur, so the common case does not allocate.
type memberNames struct {
	known  uint32
	others []string
	set    map[string]struct{}
}

// addKnown records known member number i and reports whether it is new.
func (m *memberNames) addKnown(i int) bool {
	bit := uint32(1) << i
	if m.known&bit != 0 {
		return false
	}
	m.known |= bit
	return true
}

// addOther records an unknown member name and reports whether it is new.
func (m *memberNames) addOther(name string) bool {
	if m.set != nil {
		if _, dup := m.set[name]; dup {
			return false
		}
		m.set[name] = struct{}{}
		return true
	}
	for _, n := range m.others {
		if n == name {
			return false
		}
	}
	m.others = append(m.others, name)
	if len(m.others) > 16 {
		m.set = make(map[string]struct{}, 2*len(m.others))
		for _, n := range m.others {
			m.set[n] = struct{}{}
		}
		m.others = nil
	}
	return true
}

func (m *memberNames) has(i int) bool { return m.known&(uint32(1)<<i) != 0 }
