package validate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is matched (via [errors.Is]) by every [*Error]: the document
// is malformed JSON or does not satisfy its schema.
var ErrInvalid = errors.New("ahp: invalid document")

// ErrMalformedJSON is matched (via [errors.Is]) by an [*Error] whose Keyword
// is [KeywordJSON]: the input is not exactly one well-formed UTF-8 JSON
// value, or a value given to [Validator.ValidateValue] holds a Go type that
// decoded JSON cannot.
var ErrMalformedJSON = errors.New("ahp: malformed JSON")

// ErrDuplicateMember is matched (via [errors.Is]) by an [*Error] whose
// Keyword is [KeywordDuplicateMember]: an object of the document has two
// members with the same name (after unescaping), which RFC 7493 (I-JSON)
// forbids and which readers would resolve differently (first or last
// wins).
var ErrDuplicateMember = errors.New("ahp: duplicate member name")

// KeywordDuplicateMember is the Keyword of an [*Error] reporting an object
// with two members of the same name. Its Pointer is that of the second
// member and its Offset the byte offset of the second name.
const KeywordDuplicateMember = "duplicateMember"

// ErrUnverified is matched (via [errors.Is]) by an [*Error] whose Keyword
// is [KeywordUnverified]: [Validator.Check] could not decide the document
// within its bound on work.
var ErrUnverified = errors.New("ahp: document not verified within bounds")

// KeywordUnverified is the Keyword of an [*Error] from [Validator.Check]
// for a document too large for the exact validator that the fast path
// cannot decide.
const KeywordUnverified = "unverified"

// KeywordSchema is the Keyword of an [*Error] from [Validator.Check] for a
// large document that violates its schema, found without locating the
// failing keyword.
const KeywordSchema = "schema"

// KeywordJSON is the Keyword of an [*Error] reporting input that is not
// well-formed JSON, or a value passed to [Validator.ValidateValue] that is
// not a decoded JSON value.
const KeywordJSON = "json"

// Error reports a document that is malformed or fails schema validation.
//
// It deliberately carries no instance values: neither Error's text nor its
// fields include the offending value, the input bytes or the underlying
// validator's messages, since protocol messages may carry secrets. Pointers
// are built from the instance's property names.
type Error struct {
	// Schema is the reference validated against, relative to
	// schemas.BaseURI, e.g. "effect.schema.json#/$defs/InjectEffect".
	Schema string
	// Pointer is the RFC 6901 JSON pointer of the failing instance
	// location; "" is the whole document.
	Pointer string
	// Keyword is the failing schema keyword, such as "const",
	// "required", "oneOf", "format" or "additionalProperties", or
	// KeywordJSON for malformed input, or KeywordDuplicateMember.
	Keyword string
	// SchemaLocation is the location of the failing keyword, relative to
	// schemas.BaseURI, e.g. "common.schema.json#/$defs/x/properties/type/const".
	// It is empty for malformed input.
	SchemaLocation string
	// Missing lists the property names absent from the object at Pointer
	// when Keyword is "required" or "dependentRequired". The names come from
	// the schema.
	Missing []string
	// Unexpected lists, when Keyword is "additionalProperties", the names of
	// the members of the object at Pointer that the schema does not allow.
	// Like the tokens of Pointer, they are the instance's property names;
	// their values are never reported.
	Unexpected []string
	// Allowed lists, when Keyword is "const" or "enum", the values the
	// schema allows at Pointer, each as compact JSON text taken from the
	// schema (never from the instance), in schema order.
	Allowed []string
	// Offset is, when Keyword is KeywordJSON and the input was bytes, the
	// byte offset at (or, for syntax errors, just after) which decoding
	// failed; for KeywordDuplicateMember, the offset of the repeated name.
	Offset int64
	// Causes lists every relevant failure, the primary one (repeated in the
	// fields above) first. Where a oneOf or anyOf failed, only the branch that
	// came closest to matching contributes. Causes is nil for malformed
	// input.
	Causes []Cause
}

// Cause is one schema keyword failure inside an [*Error]. Like Error, it
// carries no instance values.
type Cause struct {
	// Pointer is the RFC 6901 JSON pointer of the failing instance location.
	Pointer string
	// Keyword is the failing schema keyword.
	Keyword string
	// SchemaLocation is the location of the failing keyword, relative to
	// schemas.BaseURI.
	SchemaLocation string
	// Missing lists missing property names for "required" and
	// "dependentRequired" failures.
	Missing []string
	// Unexpected lists the names of disallowed members for an
	// "additionalProperties" failure (see [Error].Unexpected).
	Unexpected []string
	// Allowed lists the schema's allowed values, as compact JSON text, for
	// a "const" or "enum" failure (see [Error].Allowed).
	Allowed []string
}

// Error returns a description naming the schema, the instance location, the
// failing keyword and, where the keyword has them, the missing members, the
// unexpected members or the allowed values, without any instance value.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ahp: schema ")
	b.WriteString(e.Schema)
	b.WriteString(": ")
	if e.Keyword == KeywordJSON && e.SchemaLocation == "" {
		b.WriteString("malformed JSON at byte offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		return b.String()
	}
	b.WriteString(displayPointer(e.Pointer))
	if e.Keyword == KeywordDuplicateMember && e.SchemaLocation == "" {
		b.WriteString(": duplicate member name")
		return b.String()
	}
	b.WriteString(": keyword ")
	b.WriteString(strconv.Quote(e.Keyword))
	b.WriteString(" failed")
	writeDetail(&b, e.Missing, e.Unexpected, e.Allowed)
	if n := len(e.Causes) - 1; n > 0 {
		fmt.Fprintf(&b, " (and %d more)", n)
	}
	return b.String()
}

// Is reports whether target is [ErrInvalid], [ErrMalformedJSON] for
// malformed input, [ErrDuplicateMember] for a repeated member name, or
// [ErrUnverified] for a document Check could not decide.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalid:
		return true
	case ErrMalformedJSON:
		return e.Keyword == KeywordJSON
	case ErrDuplicateMember:
		return e.Keyword == KeywordDuplicateMember
	case ErrUnverified:
		return e.Keyword == KeywordUnverified
	}
	return false
}

// Limits on what [Error.Error] and [Cause.Detail] spell out; the fields
// themselves are complete.
const (
	maxListed    = 8   // names or values listed before "and N more"
	maxNameBytes = 64  // bytes of an instance member name shown
	maxValueText = 120 // bytes of a schema value's JSON text shown
)

// Detail describes what the failure names, without any instance value: for
// "required" the missing members (`missing "a", "b"`), for
// "additionalProperties" the unexpected ones (`unexpected "x"`), for "const"
// and "enum" the allowed values (`allowed "a", "b"`); "" otherwise. Long
// lists and names are shortened.
func (c Cause) Detail() string {
	var b strings.Builder
	writeDetail(&b, c.Missing, c.Unexpected, c.Allowed)
	s := b.String()
	if s == "" {
		return ""
	}
	return s[2 : len(s)-1] // without " (" and ")"
}

// writeDetail appends " (missing …)", " (unexpected …)" and " (allowed …)"
// for the non-empty lists.
func writeDetail(b *strings.Builder, missing, unexpected, allowed []string) {
	list := func(label string, items []string, quote bool, limit int) {
		if len(items) == 0 {
			return
		}
		b.WriteString(" (")
		b.WriteString(label)
		b.WriteByte(' ')
		for i, it := range items {
			if i == maxListed {
				fmt.Fprintf(b, " and %d more", len(items)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			cut := len(it) > limit
			if cut {
				it = truncateUTF8(it, limit)
			}
			if quote {
				it = strconv.Quote(it)
			} else {
				it = quoteControl(it)
			}
			b.WriteString(it)
			if cut {
				b.WriteString("…")
			}
		}
		b.WriteByte(')')
	}
	list("missing", missing, true, maxNameBytes)
	list("unexpected", unexpected, true, maxNameBytes)
	list("allowed", allowed, false, maxValueText)
}

// truncateUTF8 returns at most n bytes of s, not splitting a rune.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// quoteControl leaves JSON text as it is unless it holds a control
// character (JSON text from the schema never does; a caller-built value
// might), in which case it is quoted as a Go string.
func quoteControl(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

// displayPointer renders a pointer for an error message: the root is shown
// as "(root)" and pointers holding unusual characters are quoted, so that
// property names cannot forge message text.
func displayPointer(p string) string {
	if p == "" {
		return "(root)"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r > 0x7e {
			return strconv.Quote(p)
		}
	}
	return p
}

// pickBranch returns the index of the alternative of a failed oneOf or anyOf
// at instance depth unionDepth that came closest to matching, given each
// alternative's leaf failures, or -1 when every alternative rejects the same
// location at or directly below the union with a const, enum, pattern, false
// schema or nested union (an unknown discriminator value, say), in which case
// the union itself is the best description.
//
// Alternatives are ranked by, in order:
//   - fewer mismatches at or directly below the union: a failed const, enum,
//     type or false schema, or a nested union reported as a whole, there
//     (typically a discriminator such as "type" or "kind" selecting another
//     alternative) weighs 2, a failed pattern 1;
//   - the deepest failure (the instance matched more of the alternative);
//   - fewer failures, each missing required property counting once;
//   - schema order.
func pickBranch(branches [][]Cause, unionDepth int) int {
	mismatch := func(c Cause) int {
		if strings.Count(c.Pointer, "/") > unionDepth+1 {
			return 0
		}
		switch c.Keyword {
		case "const", "enum", "type", "false", "oneOf", "anyOf":
			return 2
		case "pattern":
			return 1
		}
		return 0
	}

	type score struct{ mismatch, deepest, weight int }
	scores := make([]score, len(branches))
	var common map[string]bool // mismatched pointers shared by all alternatives
	for i, ls := range branches {
		ptrs := map[string]bool{}
		for _, c := range ls {
			if m := mismatch(c); m > 0 {
				scores[i].mismatch += m
				// A wrong JSON type rejected by every alternative is
				// reported as such rather than as the union.
				if c.Keyword != "type" {
					ptrs[c.Pointer] = true
				}
			}
			scores[i].deepest = max(scores[i].deepest, strings.Count(c.Pointer, "/"))
			scores[i].weight += max(1, len(c.Missing))
		}
		if i == 0 {
			common = ptrs
		} else {
			for p := range common {
				if !ptrs[p] {
					delete(common, p)
				}
			}
		}
	}
	if len(branches) > 1 && len(common) > 0 {
		return -1
	}

	best := 0
	for i := 1; i < len(scores); i++ {
		s, b := scores[i], scores[best]
		switch {
		case s.mismatch != b.mismatch:
			if s.mismatch < b.mismatch {
				best = i
			}
		case s.deepest != b.deepest:
			if s.deepest > b.deepest {
				best = i
			}
		case s.weight < b.weight:
			best = i
		}
	}
	return best
}

func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// sortCauses orders causes deterministically (jsonschema visits properties
// in map order): non-JSON values first, then by instance location (so an
// object's failures precede those of its members), keyword and schema
// location.
func sortCauses(cs []Cause) {
	slices.SortStableFunc(cs, func(a, b Cause) int {
		return cmp.Or(
			// A value that is not JSON at all is a caller bug; report it first.
			-cmp.Compare(boolInt(a.Keyword == KeywordJSON), boolInt(b.Keyword == KeywordJSON)),
			cmp.Compare(a.Pointer, b.Pointer),
			cmp.Compare(a.Keyword, b.Keyword),
			cmp.Compare(a.SchemaLocation, b.SchemaLocation),
		)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pointer builds an RFC 6901 JSON pointer from reference tokens.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

var escaper = strings.NewReplacer("~", "~0", "/", "~1")

func escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return escaper.Replace(token)
}
