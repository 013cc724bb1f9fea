package validate

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// quickDecode parses doc (already known to be valid UTF-8) into the same
// tree encoding/json builds with UseNumber: map[string]any, []any, string,
// json.Number, bool and nil, the last duplicate member winning. It reports
// ok=false for anything it does not handle exactly like encoding/json
// (syntax errors, lone surrogate escapes, very deep nesting), and the caller
// then decodes with encoding/json, which also produces the error.
func quickDecode(doc []byte) (v any, ok bool) {
	d := quickDecoder{data: doc}
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.pos == len(d.data)
}

type quickDecoder struct {
	data []byte
	pos  int
}

const quickMaxDepth = 512

func (d *quickDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *quickDecoder) value(depth int) (any, bool) {
	if depth > quickMaxDepth {
		return nil, false
	}
	d.space()
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, false
}

func (d *quickDecoder) literal(word string) bool {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

func (d *quickDecoder) object(depth int) (any, bool) {
	d.pos++ // {
	m := make(map[string]any)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, true
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *quickDecoder) array(depth int) (any, bool) {
	d.pos++ // [
	a := make([]any, 0, 4)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, true
		default:
			return nil, false
		}
	}
}

func (d *quickDecoder) number() (any, bool) {
	start := d.pos
	i := d.pos
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	if i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			return nil, false
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			return nil, false
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return json.Number(d.data[start:i]), true
}

// string decodes a JSON string starting at the opening quote.
func (d *quickDecoder) string() (any, bool) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for i := start; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			d.pos = i + 1
			return string(d.data[start:i]), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, false
		}
	}
	buf := make([]byte, 0, 32)
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(buf), true
		case c < 0x20:
			return nil, false
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		// escape
		if i+1 >= len(d.data) {
			return nil, false
		}
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
			i += 2
		case 'b':
			buf, i = append(buf, '\b'), i+2
		case 'f':
			buf, i = append(buf, '\f'), i+2
		case 'n':
			buf, i = append(buf, '\n'), i+2
		case 'r':
			buf, i = append(buf, '\r'), i+2
		case 't':
			buf, i = append(buf, '\t'), i+2
		case 'u':
			r, ok := hex4(d.data, i+2)
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a well-formed pair is handled here; anything else
				// is left to encoding/json's replacement rules.
				if i+6 > len(d.data) || d.data[i] != '\\' || d.data[i+1] != 'u' {
					return nil, false
				}
				r2, ok := hex4(d.data, i+2)
				if !ok {
					return nil, false
				}
				dec := utf16.DecodeRune(r, r2)
				if dec == utf8.RuneError {
					return nil, false
				}
				r = dec
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, false
		}
	}
	return nil, false
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
