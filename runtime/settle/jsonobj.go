package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"unicode/utf8"
)

// errNotObject reports a JSON value that is not an object where one is
// required; errMalformed reports bytes that are not one JSON value.
var (
	errNotObject = errors.New("not a JSON object")
	errMalformed = errors.New("malformed JSON")
)

// member is one top-level member of a JSON object: its decoded name, its
// name exactly as written (quoted) and its exact value text.
type member struct {
	name  string
	key   []byte
	value json.RawMessage
}

// isWS reports JSON insignificant whitespace.
func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trimWS trims JSON whitespace from both ends.
func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// jsonKind returns the first significant byte of a JSON value, or 0.
func jsonKind(b []byte) byte {
	b = trimWS(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// splitObject splits a JSON object into its members, in document order.
// A name that occurs more than once keeps its first position and its last
// value, as a JSON decoder would. The result aliases data; it validates the
// whole text when validate is set (callers skip that for text that was
// already decoded once, such as json.RawMessage from a codec).
func splitObject(data []byte, validate bool) ([]member, error) {
	if validate && !json.Valid(data) {
		return nil, errMalformed
	}
	b := trimWS(data)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, errNotObject
	}
	b = trimWS(b[1 : len(b)-1])
	var out []member
	for len(b) > 0 {
		if b[0] != '"' {
			return nil, errMalformed
		}
		n, err := scanString(b)
		if err != nil {
			return nil, err
		}
		key := b[:n]
		b = trimWS(b[n:])
		if len(b) == 0 || b[0] != ':' {
			return nil, errMalformed
		}
		b = trimWS(b[1:])
		m, err := scanValue(b)
		if err != nil {
			return nil, err
		}
		value := b[:m]
		b = trimWS(b[m:])
		if len(b) > 0 {
			if b[0] != ',' {
				return nil, errMalformed
			}
			b = trimWS(b[1:])
			if len(b) == 0 {
				return nil, errMalformed
			}
		}
		name, err := decodeKey(key)
		if err != nil {
			return nil, err
		}
		dup := false
		for i := range out {
			if out[i].name == name {
				out[i].value = value
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, member{name: name, key: key, value: value})
		}
	}
	return out, nil
}

// setMember replaces the value of the member called m.name, or appends m.
// It never writes into the backing array of ms: a replacement copies first.
func setMember(ms []member, m member) []member {
	for i := range ms {
		if ms[i].name == m.name {
			out := make([]member, len(ms))
			copy(out, ms)
			out[i].value = m.value
			return out
		}
	}
	return append(ms[:len(ms):len(ms)], m)
}

// decodeKey decodes a quoted JSON string.
func decodeKey(q []byte) (string, error) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", errMalformed
	}
	if inner := q[1 : len(q)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", errMalformed
	}
	return s, nil
}

// scanString returns the length of the quoted string at the start of b.
func scanString(b []byte) (int, error) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errMalformed
}

// scanValue returns the length of the JSON value at the start of b. It
// tracks nesting and strings only; full validity is checked elsewhere.
func scanValue(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errMalformed
	}
	switch b[0] {
	case '"':
		return scanString(b)
	case '{', '[':
		depth := 0
		for i := 0; i < len(b); i++ {
			switch b[i] {
			case '"':
				n, err := scanString(b[i:])
				if err != nil {
					return 0, err
				}
				i += n - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errMalformed
	default:
		i := 0
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isWS(b[i]) {
			i++
		}
		if i == 0 {
			return 0, errMalformed
		}
		return i, nil
	}
}

// encodeObject writes members as a JSON object.
func encodeObject(ms []member) json.RawMessage {
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.value) + 2
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.key...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}

// cloneMembers returns members whose bytes do not alias their source.
func cloneMembers(ms []member) []member {
	if ms == nil {
		return nil
	}
	out := make([]member, len(ms))
	for i, m := range ms {
		out[i] = member{name: m.name, key: bytes.Clone(m.key), value: bytes.Clone(m.value)}
	}
	return out
}

// membersEqual reports whether two objects are deeply equal, ignoring
// member order (interop §5: key order is irrelevant).
func membersEqual(a, b []member) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		j := i
		if j >= len(b) || b[j].name != a[i].name {
			j = -1
			for k := range b {
				if b[k].name == a[i].name {
					j = k
					break
				}
			}
			if j < 0 {
				return false
			}
		}
		if !jsonEqual(a[i].value, b[j].value) {
			return false
		}
	}
	return true
}

// maxEqualDepth bounds the nesting jsonEqual compares structurally; deeper
// values compare unequal, which only ever invalidates (the safe side).
const maxEqualDepth = 1000

// jsonEqual reports whether two JSON texts denote the same value: object
// member order and insignificant whitespace are ignored and numbers compare
// by value. Malformed text is never equal to anything.
func jsonEqual(a, b []byte) bool { return rawEqual(a, b, 0) }

func rawEqual(a, b []byte, depth int) bool {
	a, b = trimWS(a), trimWS(b)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if bytes.Equal(a, b) {
		return true
	}
	if depth > maxEqualDepth {
		return false
	}
	switch a[0] {
	case '"':
		if b[0] != '"' {
			return false
		}
		sa, err := decodeKey(a)
		if err != nil {
			return false
		}
		sb, err := decodeKey(b)
		return err == nil && sa == sb
	case '{':
		if b[0] != '{' {
			return false
		}
		ma, err := splitObject(a, false)
		if err != nil {
			return false
		}
		mb, err := splitObject(b, false)
		if err != nil || len(ma) != len(mb) {
			return false
		}
		for i := range ma {
			j := i
			if mb[j].name != ma[i].name {
				j = -1
				for k := range mb {
					if mb[k].name == ma[i].name {
						j = k
						break
					}
				}
				if j < 0 {
					return false
				}
			}
			if !rawEqual(ma[i].value, mb[j].value, depth+1) {
				return false
			}
		}
		return true
	case '[':
		if b[0] != '[' {
			return false
		}
		ea, err := splitArray(a)
		if err != nil {
			return false
		}
		eb, err := splitArray(b)
		if err != nil || len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if !rawEqual(ea[i], eb[i], depth+1) {
				return false
			}
		}
		return true
	case 't', 'f', 'n':
		return false // literals are equal only byte for byte
	default:
		if b[0] != '-' && (b[0] < '0' || b[0] > '9') {
			return false
		}
		x, y := string(a), string(b)
		if !smallExponent(x) || !smallExponent(y) {
			return false
		}
		rx, okx := new(big.Rat).SetString(x)
		ry, oky := new(big.Rat).SetString(y)
		return okx && oky && rx.Cmp(ry) == 0
	}
}

// splitArray splits a JSON array into its element texts.
func splitArray(data []byte) ([]json.RawMessage, error) {
	b := trimWS(data)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, errMalformed
	}
	b = trimWS(b[1 : len(b)-1])
	var out []json.RawMessage
	for len(b) > 0 {
		n, err := scanValue(b)
		if err != nil {
			return nil, err
		}
		out = append(out, b[:n])
		b = trimWS(b[n:])
		if len(b) > 0 {
			if b[0] != ',' {
				return nil, errMalformed
			}
			b = trimWS(b[1:])
			if len(b) == 0 {
				return nil, errMalformed
			}
		}
	}
	return out, nil
}

// smallExponent reports whether a number's exponent is small enough to
// compare exactly without allocating a huge rational.
func smallExponent(n string) bool {
	i := bytes.IndexAny([]byte(n), "eE")
	if i < 0 {
		return true
	}
	e := n[i+1:]
	if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
		e = e[1:]
	}
	return len(e) <= 4
}
