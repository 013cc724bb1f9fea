package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
)

// errNotObject reports a JSON value that is not an object where one is
// required; errMalformed reports bytes that are not one JSON value;
// errDuplicate reports an object with two members of the same name.
var (
	errNotObject = errors.New("not a JSON object")
	errMalformed = errors.New("malformed JSON")
	errDuplicate = errors.New("duplicate member name")
	// errStopped reports a scan that its stop flag interrupted (see
	// Occurrence.stop); it says nothing about the text.
	errStopped = errors.New("scan stopped")
)

// stopEvery is the number of members merged between two looks at the stop
// flag of an occurrence, as the lexer's scans look at it every
// jsonlex.StopEvery values.
const stopEvery = jsonlex.StopEvery

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
// The result aliases data. It rejects malformed text and an object with
// two members of the same name, at the top or (when validate is set) at
// any depth below (RFC 7493), in time linear in the size of data. Callers
// clear validate for text that was already checked once, such as
// json.RawMessage from a codec.
func splitObject(data []byte, validate bool) ([]member, error) {
	return splitObjectStop(data, validate, nil)
}

// splitObjectStop is splitObject, interrupted once stop (if not nil) is
// set: it looks at stop every jsonlex.StopEvery values and then fails with
// errStopped.
func splitObjectStop(data []byte, validate bool, stop *atomic.Bool) ([]member, error) {
	b := data
	i := jsonlex.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		if validate && !validJSON(b) {
			return nil, errMalformed
		}
		return nil, errNotObject
	}
	sc := jsonlex.Acquire(validate)
	defer sc.Release()
	sc.Stop = stop
	var out []member
	i = jsonlex.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, errMalformed
			}
			end, esc, ok := jsonlex.String(b, i)
			if !ok {
				return nil, errMalformed
			}
			key := b[i:end]
			name := string(key[1 : len(key)-1])
			if esc {
				name = string(jsonlex.AppendUnquote(nil, key))
			}
			i = jsonlex.SkipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return nil, errMalformed
			}
			v := jsonlex.SkipSpace(b, i+1)
			if i, ok = sc.Value(b, v, 1); !ok {
				if sc.Stopped() {
					return nil, errStopped
				}
				return nil, errMalformed
			}
			out = append(out, member{name: name, key: key, value: b[v:i]})
			i = jsonlex.SkipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = jsonlex.SkipSpace(b, i+1)
				continue
			}
			if i >= len(b) || b[i] != '}' {
				return nil, errMalformed
			}
			i++
			break
		}
	}
	if jsonlex.SkipSpace(b, i) != len(b) {
		return nil, errMalformed
	}
	if stop != nil && stop.Load() {
		return nil, errStopped
	}
	if _, dup := sc.Dup(); dup || repeatsName(out) {
		return nil, errDuplicate
	}
	return out, nil
}

// validJSON reports whether b is one JSON value with optional surrounding
// whitespace.
func validJSON(b []byte) bool {
	sc := jsonlex.Acquire(false)
	defer sc.Release()
	end, ok := sc.Value(b, jsonlex.SkipSpace(b, 0), 0)
	return ok && jsonlex.SkipSpace(b, end) == len(b)
}

// checkJSON checks that b is one JSON value with optional surrounding
// whitespace (errMalformed) without a repeated member name at any depth
// (errDuplicate).
func checkJSON(b []byte) error { return checkJSONStop(b, nil) }

// checkJSONStop is checkJSON, interrupted once stop (if not nil) is set
// (errStopped).
func checkJSONStop(b []byte, stop *atomic.Bool) error {
	sc := jsonlex.Acquire(true)
	defer sc.Release()
	sc.Stop = stop
	end, ok := sc.Value(b, jsonlex.SkipSpace(b, 0), 0)
	if sc.Stopped() {
		return errStopped
	}
	if !ok || jsonlex.SkipSpace(b, end) != len(b) {
		return errMalformed
	}
	if _, dup := sc.Dup(); dup {
		return errDuplicate
	}
	return nil
}

// repeatsName reports whether two of ms have the same name.
func repeatsName(ms []member) bool {
	var set jsonlex.Set
	_, dup := set.RepeatString(len(ms), func(i int) string { return ms[i].name })
	return dup
}

// smallMembers is the number of members up to which objects are searched
// by name linearly rather than through an index.
const smallMembers = 8

// memberIndex indexes ms by name (the last of repeated names) when it is
// large enough to need it, and returns nil otherwise.
func memberIndex(ms []member) map[string]int {
	if len(ms) <= smallMembers {
		return nil
	}
	idx := make(map[string]int, len(ms))
	for i, m := range ms {
		idx[m.name] = i
	}
	return idx
}

// findMember returns the index of the member of ms called name, using idx
// (from memberIndex) when it is not nil, or -1.
func findMember(ms []member, idx map[string]int, name string) int {
	if idx != nil {
		if i, ok := idx[name]; ok {
			return i
		}
		return -1
	}
	for i := range ms {
		if ms[i].name == name {
			return i
		}
	}
	return -1
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

// cloneMembers returns members whose bytes do not alias their source. The
// copies share one allocation (each capped at its own end), so that an
// object of many members costs two allocations rather than two per member.
func cloneMembers(ms []member) []member {
	if ms == nil {
		return nil
	}
	n := 0
	for _, m := range ms {
		n += len(m.key) + len(m.value)
	}
	buf := make([]byte, 0, n)
	out := make([]member, len(ms))
	for i, m := range ms {
		k := len(buf)
		buf = append(buf, m.key...)
		v := len(buf)
		buf = append(buf, m.value...)
		out[i] = member{name: m.name, key: buf[k:v:v], value: buf[v:len(buf):len(buf)]}
	}
	return out
}

// membersEqual reports whether two objects are deeply equal, ignoring
// member order (interop §5: key order is irrelevant). Neither may repeat a
// name.
func membersEqual(a, b []member) bool {
	if len(a) != len(b) {
		return false
	}
	idx := memberIndex(b)
	for i := range a {
		j := i
		if b[j].name != a[i].name {
			if j = findMember(b, idx, a[i].name); j < 0 {
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
// values are equal only when their texts are, which only ever invalidates
// (the safe side).
const maxEqualDepth = 1000

// jsonEqual reports whether two JSON texts denote the same value: object
// member order and insignificant whitespace are ignored and numbers compare
// by value. Malformed text (invalid UTF-8 included), and text with a
// repeated member name, is never equal to anything but its own bytes. Each text is scanned once, so the
// comparison is linear in their sizes whatever their nesting.
func jsonEqual(a, b []byte) bool {
	a, b = trimWS(a), trimWS(b)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if bytes.Equal(a, b) {
		return true
	}
	sa, sb := jsonlex.Acquire(true), jsonlex.Acquire(true)
	defer sa.Release()
	defer sb.Release()
	if !tokenize(sa, a) || !tokenize(sb, b) {
		return false
	}
	e := equality{a: a, b: b, ta: sa.Tokens, tb: sb.Tokens}
	return e.equal(0, 0, 0)
}

// tokenize scans one JSON value (trimmed) into the tokens of sc; it fails
// for malformed text and for repeated member names.
func tokenize(sc *jsonlex.Scanner, v []byte) bool {
	sc.Tokenize = true
	end, ok := sc.Value(v, 0, 0)
	_, dup := sc.Dup()
	return ok && !dup && end == len(v)
}

// equality compares the values of two scanned texts.
type equality struct {
	a, b   []byte
	ta, tb []jsonlex.Token
}

func (e *equality) equal(i, j int32, depth int) bool {
	x, y := &e.ta[i], &e.tb[j]
	if x.Kind != y.Kind {
		return false
	}
	xs, ys := e.a[x.Start:x.End], e.b[y.Start:y.End]
	switch x.Kind {
	case jsonlex.KindString:
		if !x.Escaped && !y.Escaped {
			return bytes.Equal(xs, ys)
		}
		return bytes.Equal(jsonlex.AppendUnquote(nil, xs), jsonlex.AppendUnquote(nil, ys))
	case jsonlex.KindNumber:
		return numberEqual(string(xs), string(ys))
	case jsonlex.KindArray:
		if x.N != y.N {
			return false
		}
		if depth >= maxEqualDepth {
			return bytes.Equal(xs, ys)
		}
		for c, d := i+1, j+1; c < x.Next; c, d = e.ta[c].Next, e.tb[d].Next {
			if !e.equal(c, d, depth+1) {
				return false
			}
		}
		return true
	case jsonlex.KindObject:
		if x.N != y.N {
			return false
		}
		if depth >= maxEqualDepth {
			return bytes.Equal(xs, ys)
		}
		var idx map[string]int32
		if y.N > smallMembers {
			idx = make(map[string]int32, y.N)
			for d := j + 1; d < y.Next; d = e.tb[d+1].Next {
				idx[e.name(e.b, &e.tb[d])] = d
			}
		}
		for c := i + 1; c < x.Next; c = e.ta[c+1].Next {
			name := e.name(e.a, &e.ta[c])
			d := int32(-1)
			if idx != nil {
				if k, ok := idx[name]; ok {
					d = k
				}
			} else {
				for k := j + 1; k < y.Next; k = e.tb[k+1].Next {
					if e.name(e.b, &e.tb[k]) == name {
						d = k
						break
					}
				}
			}
			if d < 0 || !e.equal(c+1, d+1, depth+1) {
				return false
			}
		}
		return true
	}
	return true // null, true and false: the kind is the value
}

// name decodes the member name at token k of text v.
func (e *equality) name(v []byte, k *jsonlex.Token) string {
	s := v[k.Start:k.End]
	if k.Escaped {
		return string(jsonlex.AppendUnquote(nil, s))
	}
	return string(s[1 : len(s)-1])
}
