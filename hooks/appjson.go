package hooks

import (
	"math"
	"slices"
	"strconv"
)

// maxPlainDepth bounds the nesting appendPlainJSON encodes itself; deeper
// values (and cycles) are left to json.Marshal.
const maxPlainDepth = 32

// appendPlainJSON appends the encoding of v, the JSON value a host
// typically hands over as tool input (maps, slices, strings, numbers,
// booleans and nil of the shapes encoding/json decodes into), exactly as
// json.Marshal writes it, without reflection. ok is false, and b is to be
// discarded, when v holds anything else: a type of another shape, a string
// or member name that json.Marshal would escape (any byte outside
// printable ASCII, '"', '\\', and the HTML-escaped '<', '>', '&'), a float
// that it writes in exponent form or rejects, or nesting deeper than
// maxPlainDepth. The caller then uses json.Marshal, which decides.
// TestAppendPlainJSONAgrees and FuzzAppendPlainJSON hold the two to the
// same bytes.
func appendPlainJSON(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxPlainDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendPlainString(b, x)
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendPlainFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case map[string]any:
		return appendPlainObject(b, x, func(b []byte, v any) ([]byte, bool) { return appendPlainJSON(b, v, depth+1) })
	case []any:
		return appendPlainArray(b, x, func(b []byte, v any) ([]byte, bool) { return appendPlainJSON(b, v, depth+1) })
	case map[string]string:
		return appendPlainObject(b, x, appendPlainString)
	case []string:
		return appendPlainArray(b, x, appendPlainString)
	}
	return b, false
}

// appendPlainObject appends m with its members in json.Marshal's order (the
// member names' bytes), each value written by elem; a nil map is null.
func appendPlainObject[V any](b []byte, m map[string]V, elem func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if len(m) == 1 { // the common tool input: no order to establish
		for k, v := range m {
			b = append(b, '{')
			var ok bool
			if b, ok = appendPlainString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = elem(b, v); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendPlainString(b, k); !ok {
			return b, false
		}
		b = append(b, ':')
		if b, ok = elem(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendPlainArray appends s, each element written by elem; a nil slice is
// null.
func appendPlainArray[V any](b []byte, s []V, elem func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	if s == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, e := range s {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = elem(b, e); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendPlainString appends s quoted when json.Marshal writes it without
// escapes: printable ASCII other than '"', '\\', '<', '>' and '&'.
func appendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// appendPlainFloat appends f as json.Marshal does when it writes it in
// plain decimal form (zero, or a magnitude in [1e-6, 1e21)); other values
// are not plain.
func appendPlainFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return b, false
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}
