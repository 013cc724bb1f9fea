package jsonrpc

// Member returns the raw JSON value of the member called name in obj, which
// must be one JSON object (surrounding whitespace allowed). Names are
// compared exactly, after unescaping, unlike encoding/json's case-insensitive
// field matching; when a name occurs more than once the last occurrence wins,
// as it does for encoding/json and for schema validation. The returned slice
// aliases obj.
//
// It reports false when obj is not a syntactically valid JSON object or has
// no member called name. It never allocates for names without escapes.
//
// Member lets a server read a few members of params (protocolVersion,
// event.type) to pick the right error code before full validation.
func Member(obj []byte, name string) ([]byte, bool) {
	s := scanner{data: obj}
	s.skipWS()
	if s.peek() != '{' {
		return nil, false
	}
	s.pos++
	s.skipWS()
	var (
		found []byte
		ok    bool
	)
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return nil, false
			}
			keyStart := s.pos
			escaped, valid := s.scanString()
			if !valid {
				return nil, false
			}
			key := obj[keyStart:s.pos]
			s.skipWS()
			if s.peek() != ':' {
				return nil, false
			}
			s.pos++
			s.skipWS()
			valStart := s.pos
			if !s.skipValue(1) {
				return nil, false
			}
			var match bool
			if escaped {
				match = decodeStringToken(key) == name
			} else {
				match = string(key[1:len(key)-1]) == name
			}
			if match {
				found, ok = obj[valStart:s.pos], true
			}
			s.skipWS()
			switch s.peek() {
			case ',':
				s.pos++
				s.skipWS()
				continue
			case '}':
				s.pos++
			default:
				return nil, false
			}
			break
		}
	}
	s.skipWS()
	if s.pos != len(obj) {
		return nil, false
	}
	return found, ok
}

// StringValue decodes tok, the raw JSON text of a value, as a string. It
// reports false when tok is not a valid JSON string token.
func StringValue(tok []byte) (string, bool) {
	tok = trimWS(tok)
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	s := scanner{data: tok}
	if _, ok := s.scanString(); !ok || s.pos != len(tok) {
		return "", false
	}
	return decodeStringToken(tok), true
}
