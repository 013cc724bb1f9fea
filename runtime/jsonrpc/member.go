package jsonrpc

// Member returns the raw JSON value of the member called name in obj, which
// must be one JSON object (surrounding whitespace allowed). Names are
// compared exactly, after unescaping, unlike encoding/json's case-insensitive
// field matching; when a name occurs more than once the last occurrence wins,
// as it does for encoding/json (Classify rejects a message with a repeated
// name at any depth, so the params of a classified message repeat none).
// The returned slice aliases obj.
//
// It reports false when obj is not a syntactically valid JSON object or has
// no member called name. It never allocates for names without escapes.
//
// Member lets a server read a few members of params (protocolVersion,
// event.type) to pick the right error code before full validation.
func Member(obj []byte, name string) ([]byte, bool) {
	var v [1][]byte
	var found [1]bool
	if !Members(obj, []string{name}, v[:], found[:]) || !found[0] {
		return nil, false
	}
	return v[0], true
}

// Members is [Member] for several names in one pass over obj: for each i,
// values[i] and found[i] are what Member(obj, names[i]) returns. values and
// found must be as long as names. It reports false, leaving found all
// false, when obj is not a syntactically valid JSON object.
func Members(obj []byte, names []string, values [][]byte, found []bool) bool {
	clear(values)
	clear(found)
	s := scanner{data: obj}
	s.skipWS()
	if s.peek() != '{' {
		return false
	}
	s.pos++
	s.skipWS()
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return fail(values, found)
			}
			keyStart := s.pos
			escaped, valid := s.scanString()
			if !valid {
				return fail(values, found)
			}
			key := obj[keyStart:s.pos]
			s.skipWS()
			if s.peek() != ':' {
				return fail(values, found)
			}
			s.pos++
			s.skipWS()
			valStart := s.pos
			if !s.skipValue(1) {
				return fail(values, found)
			}
			var decoded string
			if escaped {
				decoded = decodeStringToken(key)
			}
			for i, name := range names {
				var match bool
				if escaped {
					match = decoded == name
				} else {
					match = string(key[1:len(key)-1]) == name
				}
				if match {
					values[i], found[i] = obj[valStart:s.pos], true
				}
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
				return fail(values, found)
			}
			break
		}
	}
	s.skipWS()
	if s.pos != len(obj) {
		return fail(values, found)
	}
	return true
}

// fail clears what Members found and reports false.
func fail(values [][]byte, found []bool) bool {
	clear(values)
	clear(found)
	return false
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
