// Package hostile builds hostile JSON for tests, benchmarks and fuzz seeds:
// objects with thousands of members, long arrays, deep nesting and
// repeated member names, plus an encoding/json oracle for repeated names.
package hostile

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Members returns n object members "k0":0,"k1":1,… separated by commas.
func Members(n int) string {
	var b strings.Builder
	b.Grow(n * 10)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":`)
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// Object returns an object of n members (see Members).
func Object(n int) string { return "{" + Members(n) + "}" }

// ObjectDup returns an object of n members whose last member repeats the
// first name: the repeat is found only by looking at every member.
func ObjectDup(n int) string { return "{" + Members(n) + `,"k0":0}` }

// Array returns an array of n small objects.
func Array(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"i":`)
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// Deep returns inner nested in depth objects {"a":…}.
func Deep(depth int, inner string) string {
	return strings.Repeat(`{"a":`, depth) + inner + strings.Repeat("}", depth)
}

// DeepArrays returns depth nested arrays around inner.
func DeepArrays(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

// Values returns hostile JSON values for seeding parsers: thousands of
// members and elements, deep nesting, and repeated member names at the
// top, at the end of a large object, deep down and behind an escape.
func Values() []string {
	return []string{
		Object(3000),
		ObjectDup(3000),
		Array(3000),
		Deep(600, `{"x":1}`),
		Deep(600, `{"x":1,"x":2}`),
		DeepArrays(2000, "1"),
		`{"a":1,"a":2}`,
		`{"type":"deny","type":"allow"}`,
		`{"a":{"b":[{"c":1,"c":2}]}}`,
		`{"a":1,"\u0061":2}`,
		`{"` + strings.Repeat("x", 100) + `":1,"` + strings.Repeat("x", 100) + `":2}`,
	}
}

// HasDuplicate reports whether doc, one valid JSON value in valid UTF-8,
// holds an object with two members of the same name, as encoding/json
// decodes names. It reports false for anything else.
func HasDuplicate(doc []byte) bool {
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dup, err := walk(dec)
	return err == nil && dup
}

func walk(dec *json.Decoder) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case json.Delim('{'):
		names := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false, err
			}
			name, _ := k.(string)
			if names[name] {
				return true, nil
			}
			names[name] = true
			if dup, err := walk(dec); dup || err != nil {
				return dup, err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for dec.More() {
			if dup, err := walk(dec); dup || err != nil {
				return dup, err
			}
		}
		_, err = dec.Token()
	}
	return false, err
}
