package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// A requested form schema is a closed subset of JSON Schema
// (interaction-payloads.md §MCP elicitation binding; the pinned MCP
// ElicitRequestFormParams.requestedSchema): an object whose "properties"
// are primitive definitions (string, number/integer, boolean, and the
// single- and multi-select enumerations) and whose "required" lists names.
// The canonical schema has already validated the request, so the typed
// model holds exactly the keywords present. formSchema applies those
// keywords with the Draft 2020-12 semantics jsonschema/v6 gave them with
// format assertions on (the tests keep v6 as the oracle), without
// compiling anything: lengths count code points, "integer" admits
// integer-valued spellings such as 1.0 and 1e3, numbers compare exactly,
// "oneOf" needs exactly one matching option. Bad keyword values that the
// draft's meta-schema rejects (a length that is not a non-negative integer,
// an empty "oneOf" or "anyOf", repeated "required" names) fail compilation.
//
// Where v6 departs from the draft on absurd numbers it is not followed: v6
// reads a length limit of 2^63 or more as the low 64 bits of its value,
// and it cannot represent numbers whose decimal exponent exceeds a million
// in magnitude (treating 1e2000000 as no integer, ignoring such a minimum,
// and panicking on such an answer); here such limits and numbers keep
// their mathematical value.

// errFormSchema reports a requested schema that does not compile.
var errFormSchema = errors.New("requested form schema does not compile")

// errFormAnswers reports answers that fail the requested schema.
var errFormAnswers = errors.New("answers do not satisfy the requested form schema")

// propKind is what one property definition asserts.
type propKind uint8

const (
	propString     propKind = iota // type string, minLength, maxLength, format
	propNumber                     // type number, minimum, maximum
	propInteger                    // type integer, minimum, maximum
	propBoolean                    // type boolean
	propEnum                       // type string and enum (untitled single select, legacy titled)
	propOneOf                      // type string and oneOf const options (titled single select)
	propMultiEnum                  // type array, minItems, maxItems, items: type string and enum
	propMultiAnyOf                 // type array, minItems, maxItems, items: anyOf const options
)

// noLimit marks an absent length or item-count limit.
const noLimit = -1

// formProp is one compiled property definition.
type formProp struct {
	kind propKind
	// minN and maxN are minLength/maxLength (code points) or
	// minItems/maxItems, noLimit when absent; a limit beyond int64 is
	// math.MaxInt64, which no answer reaches.
	minN, maxN int64
	format     string // asserted format of a string, "" when absent
	// minimum and maximum are exact number texts, "" when absent.
	minimum, maximum string
	// values are the enum values or const options, in schema order; index
	// counts them when there are more than a few, so that looking an
	// answer up stays linear in its size.
	values []string
	index  map[string]int
}

// formSchema is a compiled requested form schema.
type formSchema struct {
	// props maps a property name to its definition; of a repeated name
	// the last definition counts, as when the schema is read as a JSON
	// object.
	props    map[string]*formProp
	required []string
}

// compileForm compiles the requested form schema of validated form params.
// The "$schema" member is ignored: the binding fixes the vocabulary.
func compileForm(p *gen.MCPElicitationElicitRequestFormParams) (*formSchema, error) {
	rs := &p.RequestedSchema
	if repeatedString(rs.Required) {
		return nil, errFormSchema
	}
	s := &formSchema{props: make(map[string]*formProp, len(rs.Properties)), required: rs.Required}
	defs := make(map[string]*gen.MCPElicitationPrimitiveSchemaDefinition, len(rs.Properties))
	for i := range rs.Properties {
		defs[rs.Properties[i].Name] = &rs.Properties[i].Value
	}
	for name, d := range defs {
		fp, err := compileProp(d)
		if err != nil {
			return nil, err
		}
		s.props[name] = fp
	}
	return s, nil
}

// repeatedString reports whether a string occurs twice in names.
func repeatedString(names []string) bool {
	if len(names) <= smallMembers {
		for i := range names {
			for j := range i {
				if names[i] == names[j] {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, ok := seen[n]; ok {
			return true
		}
		seen[n] = struct{}{}
	}
	return false
}

// compileProp compiles one primitive definition.
func compileProp(d *gen.MCPElicitationPrimitiveSchemaDefinition) (*formProp, error) {
	fp := &formProp{minN: noLimit, maxN: noLimit}
	var err error
	switch v := d.Value().(type) {
	case *gen.MCPElicitationStringSchema:
		fp.kind = propString
		if err = fp.limits(v.MinLength, v.MaxLength); err != nil {
			return nil, err
		}
		if v.Format != nil {
			fp.format = string(*v.Format)
		}
	case *gen.MCPElicitationNumberSchema:
		fp.kind = propNumber
		if v.Type == gen.MCPElicitationNumberSchemaTypeInteger {
			fp.kind = propInteger
		}
		if fp.minimum, err = numberText(v.Minimum); err != nil {
			return nil, err
		}
		if fp.maximum, err = numberText(v.Maximum); err != nil {
			return nil, err
		}
	case *gen.MCPElicitationBooleanSchema:
		fp.kind = propBoolean
	case *gen.MCPElicitationUntitledSingleSelectEnumSchema:
		fp.kind = propEnum
		fp.setValues(v.Enum)
	case *gen.MCPElicitationLegacyTitledEnumSchema:
		fp.kind = propEnum // enumNames is an annotation
		fp.setValues(v.Enum)
	case *gen.MCPElicitationTitledSingleSelectEnumSchema:
		fp.kind = propOneOf
		if len(v.OneOf) == 0 {
			return nil, errFormSchema
		}
		vals := make([]string, len(v.OneOf))
		for i := range v.OneOf {
			vals[i] = v.OneOf[i].Const
		}
		fp.setValues(vals)
	case *gen.MCPElicitationUntitledMultiSelectEnumSchema:
		fp.kind = propMultiEnum
		if err = fp.limits(v.MinItems, v.MaxItems); err != nil {
			return nil, err
		}
		fp.setValues(v.Items.Enum)
	case *gen.MCPElicitationTitledMultiSelectEnumSchema:
		fp.kind = propMultiAnyOf
		if err = fp.limits(v.MinItems, v.MaxItems); err != nil {
			return nil, err
		}
		if len(v.Items.AnyOf) == 0 {
			return nil, errFormSchema
		}
		vals := make([]string, len(v.Items.AnyOf))
		for i := range v.Items.AnyOf {
			vals[i] = v.Items.AnyOf[i].Const
		}
		fp.setValues(vals)
	default:
		return nil, errFormSchema
	}
	return fp, nil
}

// limits sets minN and maxN from a pair of limit keywords.
func (fp *formProp) limits(lo, hi *json.Number) error {
	var err error
	if fp.minN, err = limitValue(lo); err != nil {
		return err
	}
	fp.maxN, err = limitValue(hi)
	return err
}

// setValues sets the values and, beyond a few, their counting index.
func (fp *formProp) setValues(vals []string) {
	fp.values = vals
	if len(vals) > smallMembers {
		fp.index = make(map[string]int, len(vals))
		for _, v := range vals {
			fp.index[v]++
		}
	}
}

// count returns how many values equal s.
func (fp *formProp) count(s string) int {
	if fp.index != nil {
		return fp.index[s]
	}
	n := 0
	for _, v := range fp.values {
		if v == s {
			n++
		}
	}
	return n
}

// numberText returns the text of an optional number keyword.
func numberText(n *json.Number) (string, error) {
	if n == nil {
		return "", nil
	}
	if _, ok := parseNumber(string(*n)); !ok {
		return "", errFormSchema
	}
	return string(*n), nil
}

// limitValue reads an optional length or item-count limit, which the
// meta-schema requires to be a non-negative integer (1.0 and 1e1 count).
// A limit beyond int64 is math.MaxInt64.
func limitValue(n *json.Number) (int64, error) {
	if n == nil {
		return noLimit, nil
	}
	x, ok := parseNumber(string(*n))
	if !ok || !x.isInteger() || (x.neg && !x.zero) {
		return 0, errFormSchema
	}
	if x.zero {
		return 0, nil
	}
	e, small := x.decimalExponent()
	if !small || e > 18 {
		return math.MaxInt64, nil
	}
	// An integer of at most 18 digits: its significant digits followed by
	// e-len(digits) zeros.
	var v int64
	k := int64(0)
	for _, d := range [2]string{x.d1, x.d2} {
		for i := 0; i < len(d); i++ {
			v = v*10 + int64(d[i]-'0')
			k++
		}
	}
	for ; k < e; k++ {
		v *= 10
	}
	return v, nil
}

// decimalExponent returns exp+shift of a nonzero number (the value is
// 0.D × 10^e) when it fits an int64 comfortably; small is false otherwise.
func (n *number) decimalExponent() (e int64, small bool) {
	if len(n.expMag) > maxSmallExp {
		return 0, false
	}
	return n.smallExp() + n.shift, true
}

// isInteger reports whether the number is integer-valued.
func (n *number) isInteger() bool {
	if n.zero {
		return true
	}
	digits := int64(len(n.d1) + len(n.d2))
	if e, small := n.decimalExponent(); small {
		return e >= digits
	}
	neg, mag := n.adjusted()
	return !neg && cmpMag(mag, strconv.FormatInt(digits, 10)) >= 0
}

// cmpNumbers compares two JSON number texts exactly: -1, 0 or +1. ok is
// false when either is not a JSON number.
func cmpNumbers(a, b string) (c int, ok bool) {
	x, okx := parseNumber(a)
	y, oky := parseNumber(b)
	if !okx || !oky {
		return 0, false
	}
	sx, sy := x.sign(), y.sign()
	if sx != sy || sx == 0 {
		return cmpInt(sx, sy), true
	}
	c = cmpExponents(&x, &y)
	if c == 0 {
		c = cmpDigits(x.d1+x.d2, y.d1+y.d2)
	}
	return c * sx, true
}

// sign is -1, 0 or +1.
func (n *number) sign() int {
	switch {
	case n.zero:
		return 0
	case n.neg:
		return -1
	}
	return 1
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpExponents compares exp+shift of two nonzero numbers exactly: with the
// value 0.D × 10^e and D starting with a nonzero digit, a larger e means a
// larger magnitude.
func cmpExponents(x, y *number) int {
	ex, okx := x.decimalExponent()
	ey, oky := y.decimalExponent()
	if okx && oky {
		return int(cmpInt64(ex, ey))
	}
	xn, xm := x.adjusted()
	yn, ym := y.adjusted()
	switch {
	case xn != yn:
		if xn {
			return -1
		}
		return 1
	case xn:
		return cmpMag(ym, xm)
	}
	return cmpMag(xm, ym)
}

func cmpInt64(a, b int64) int64 {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpDigits compares two significant-digit strings of equal exponent:
// lexicographic order is numeric order of 0.D.
func cmpDigits(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkAnswers validates an answer object against the requested form
// schema. No defaults are injected. Of a repeated answer name the last
// value counts, as when the object is read as JSON.
func checkAnswers(s *formSchema, answers gen.OrderedMap[gen.FormAnswerValue]) error {
	var last map[string]int
	if len(answers) > smallMembers {
		last = make(map[string]int, len(answers))
		for i := range answers {
			last[answers[i].Name] = i
		}
	}
	isLast := func(i int) bool {
		if last != nil {
			return last[answers[i].Name] == i
		}
		for j := i + 1; j < len(answers); j++ {
			if answers[j].Name == answers[i].Name {
				return false
			}
		}
		return true
	}
	for _, r := range s.required {
		if !hasAnswer(answers, last, r) {
			return errFormAnswers
		}
	}
	for i := range answers {
		p := s.props[answers[i].Name]
		if p == nil || !isLast(i) {
			continue
		}
		if !p.accepts(answers[i].Value) {
			return errFormAnswers
		}
	}
	return nil
}

// hasAnswer reports whether name is answered.
func hasAnswer(answers gen.OrderedMap[gen.FormAnswerValue], last map[string]int, name string) bool {
	if last != nil {
		_, ok := last[name]
		return ok
	}
	for i := range answers {
		if answers[i].Name == name {
			return true
		}
	}
	return false
}

// accepts reports whether one answer value (exact JSON; nil is null)
// satisfies the property.
func (fp *formProp) accepts(v gen.FormAnswerValue) bool {
	raw := bytes.TrimSpace(v)
	switch fp.kind {
	case propString, propEnum, propOneOf:
		s, ok := jsonString(raw)
		if !ok {
			return false
		}
		return fp.acceptsString(s)
	case propNumber, propInteger:
		if v.Kind() != "number" {
			return false
		}
		return fp.acceptsNumber(string(raw))
	case propBoolean:
		return v.Kind() == "boolean"
	case propMultiEnum, propMultiAnyOf:
		if v.Kind() != "array" {
			return false
		}
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return false
		}
		n := int64(len(elems))
		if (fp.minN != noLimit && n < fp.minN) || (fp.maxN != noLimit && n > fp.maxN) {
			return false
		}
		for _, e := range elems {
			s, ok := jsonString(bytes.TrimSpace(e))
			if !ok || fp.count(s) == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// acceptsString checks a string answer.
func (fp *formProp) acceptsString(s string) bool {
	switch fp.kind {
	case propEnum:
		return fp.count(s) > 0
	case propOneOf:
		return fp.count(s) == 1
	}
	if fp.minN != noLimit || fp.maxN != noLimit {
		n := int64(utf8.RuneCountInString(s))
		if (fp.minN != noLimit && n < fp.minN) || (fp.maxN != noLimit && n > fp.maxN) {
			return false
		}
	}
	if fp.format != "" {
		if ok, _ := validate.FormatValid(fp.format, s); !ok {
			return false
		}
	}
	return true
}

// acceptsNumber checks a number answer's text.
func (fp *formProp) acceptsNumber(t string) bool {
	if fp.kind == propInteger {
		x, ok := parseNumber(t)
		if !ok || !x.isInteger() {
			return false
		}
	}
	if fp.minimum != "" {
		if c, ok := cmpNumbers(t, fp.minimum); !ok || c < 0 {
			return false
		}
	}
	if fp.maximum != "" {
		if c, ok := cmpNumbers(t, fp.maximum); !ok || c > 0 {
			return false
		}
	}
	return true
}

// jsonString decodes a JSON string value (leading and trailing space
// trimmed) as encoding/json does, invalid UTF-8 and lone surrogates
// becoming U+FFFD; ok is false for any other value.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := raw[len(raw)-1] == '"'
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
