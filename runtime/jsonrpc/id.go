package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ID is a JSON-RPC id that keeps its exact JSON type and text.
//
// The zero ID is absent (a notification has no id). Other IDs hold the JSON
// text of a string, an integer, or null (null is only valid in responses).
// Because the text is kept verbatim, a response built from a received ID
// echoes the request id byte for byte.
//
// Comparing IDs with == compares their exact JSON text; [ID.Equal] compares
// JSON values, so "a" equals "\u0061" and a string never equals an integer.
//
// Integer ids must match -?(0|[1-9][0-9]*). JSON Schema (and so
// common.schema.json's jsonRpcId) would also accept 1.0 or 1e2 as integers,
// and JSON-RPC 2.0 only says ids SHOULD NOT contain fractional parts; this
// package rejects every fraction or exponent form so that an integer id is
// always an exact integer with a single canonical text (except -0, which is
// accepted and equals 0). Integers of any magnitude are accepted; see
// [ID.Int64].
type ID struct {
	raw string
}

// StringID returns a string id for s. An empty s yields an id that the
// schema forbids (jsonRpcId has minLength 1): [ID.MarshalJSON] rejects it and
// peers reject messages carrying it.
func StringID(s string) ID {
	return ID{raw: string(appendString(make([]byte, 0, len(s)+2), s))}
}

// IntID returns an integer id for n.
func IntID(n int64) ID {
	return ID{raw: strconv.FormatInt(n, 10)}
}

// NullID returns the null id, which a response carries when the request id
// could not be determined.
func NullID() ID {
	return ID{raw: "null"}
}

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether the id is JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return id.raw != "" && id.raw[0] == '"' }

// IsInteger reports whether the id is a JSON integer.
func (id ID) IsInteger() bool {
	return id.raw != "" && (id.raw[0] == '-' || (id.raw[0] >= '0' && id.raw[0] <= '9'))
}

// String returns a debug form: the JSON text of the id, or "<absent>" for
// the zero id. It never panics and, because JSON strings escape control
// characters, the result is safe to log on one line.
func (id ID) String() string {
	if id.raw == "" {
		return "<absent>"
	}
	return id.raw
}

// Int64 returns the value of an integer id and true, or 0 and false when the
// id is not an integer or does not fit in an int64.
func (id ID) Int64() (int64, bool) {
	if !id.IsInteger() {
		return 0, false
	}
	return parseInt64(id.raw)
}

// StringValue returns the decoded value of a string id and true, or "" and
// false when the id is not a string.
func (id ID) StringValue() (string, bool) {
	if !id.IsString() {
		return "", false
	}
	return decodeStringToken(id.raw), true
}

// Equal reports whether id and other denote the same JSON value: strings are
// compared after decoding escapes, integers numerically (-0 equals 0), and a
// string never equals an integer. Two absent ids are equal, as are two null
// ids.
func (id ID) Equal(other ID) bool {
	if id.raw == other.raw {
		return true
	}
	switch {
	case id.IsString() && other.IsString():
		// Texts differ, so at least one uses escapes.
		if !strings.Contains(id.raw, `\`) && !strings.Contains(other.raw, `\`) {
			return false
		}
		return decodeStringToken(id.raw) == decodeStringToken(other.raw)
	case id.IsInteger() && other.IsInteger():
		return canonicalInt(id.raw) == canonicalInt(other.raw)
	default:
		return false
	}
}

// MarshalJSON returns the exact JSON text of the id. It fails for the absent
// id (use the omitzero struct tag for optional ids) and for an empty string
// id.
func (id ID) MarshalJSON() ([]byte, error) {
	switch id.raw {
	case "":
		return nil, fmt.Errorf("%w: absent id cannot be encoded", ErrInvalidID)
	case `""`:
		return nil, fmt.Errorf("%w: empty string", ErrInvalidID)
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON sets the id from JSON text, keeping the text exactly
// (surrounding whitespace excluded). It accepts a non-empty string, an
// integer matching -?(0|[1-9][0-9]*), or null, and returns [ErrInvalidID]
// for any other JSON value (fractions, exponents, booleans, objects, arrays,
// the empty string) or [ErrParse] for text that is not one JSON value. On
// error the id is left unchanged.
func (id *ID) UnmarshalJSON(data []byte) error {
	tok := trimWS(data)
	s := scanner{data: tok}
	if len(tok) == 0 || !s.skipValue(0) || s.pos != len(tok) {
		return ErrParse
	}
	if !validIDToken(tok, true) {
		return ErrInvalidID
	}
	id.raw = string(tok)
	return nil
}

// validIDToken reports whether tok, a valid JSON value, is a valid id: a
// non-empty string, an integer without fraction or exponent, or (if
// allowNull) null.
func validIDToken(tok []byte, allowNull bool) bool {
	if len(tok) == 0 {
		return false
	}
	switch c := tok[0]; {
	case c == '"':
		return len(tok) > 2
	case c == 'n':
		return allowNull
	case c == '-' || (c >= '0' && c <= '9'):
		return isIntegerToken(tok)
	default:
		return false
	}
}

// isIntegerToken reports whether tok, a valid JSON number, has neither a
// fraction nor an exponent.
func isIntegerToken[T string | []byte](tok T) bool {
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

// canonicalInt maps the text of a JSON integer to its canonical text; only
// "-0" differs from its canonical form.
func canonicalInt(s string) string {
	if s == "-0" {
		return "0"
	}
	return s
}

// parseInt64 parses a JSON integer token into an int64.
func parseInt64[T string | []byte](tok T) (int64, bool) {
	neg := false
	i := 0
	if i < len(tok) && tok[i] == '-' {
		neg = true
		i++
	}
	if i == len(tok) {
		return 0, false
	}
	// Accumulate as a negative number so that math.MinInt64 fits.
	const minInt64 = -1 << 63
	var n int64
	for ; i < len(tok); i++ {
		c := tok[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n < (minInt64+d)/10 {
			return 0, false
		}
		n = n*10 - d
	}
	if neg {
		return n, true
	}
	if n == minInt64 {
		return 0, false
	}
	return -n, true
}

// decodeStringToken decodes a valid JSON string token.
func decodeStringToken[T string | []byte](tok T) string {
	if len(tok) < 2 {
		return ""
	}
	inner := tok[1 : len(tok)-1]
	escaped := false
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' {
			escaped = true
			break
		}
	}
	if !escaped {
		return string(inner)
	}
	var s string
	if err := json.Unmarshal([]byte(tok), &s); err != nil {
		return ""
	}
	return s
}
