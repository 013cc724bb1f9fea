package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthooks/agenthooks-go/schemas"
)

// ErrUnknownSchema is wrapped by the error returned for a schema reference
// that does not name an embedded document, or names a location that does not
// exist inside one.
var ErrUnknownSchema = errors.New("ahp: unknown schema")

// Validator validates JSON documents against the embedded Agent Hooks
// Protocol schemas.
//
// A Validator is safe for concurrent use. Schemas are compiled once per
// reference and cached; every root document is compiled by [New]. Each
// schema is also compiled into an accept-only fast path that runs first;
// whenever it does not establish validity, jsonschema/v6 decides and reports
// the error, so verdicts and errors are v6's.
type Validator struct {
	err  error           // set when the validator could not be built
	docs map[string]bool // embedded document names

	cache sync.Map // canonical reference -> *jsonschema.Schema
	fast  sync.Map // canonical reference -> *fastSchema (see fastpath.go)

	mu       sync.Mutex // guards compiler and fastc
	compiler *jsonschema.Compiler
	fastc    *fastCompiler // shared by every reference, so common subschemas compile once
}

// New compiles the embedded schema documents and returns a Validator for
// them. Every document is registered under its $id; references that leave
// the embedded set are refused rather than loaded, so New never reads files
// or uses the network. Compilation takes tens of milliseconds: build one
// Validator and share it, or use [Default].
func New() (*Validator, error) { return newValidator(true) }

// newValidator builds a Validator; dispatch selects the union rewrite of
// dispatch.go (tests compare both).
func newValidator(dispatch bool) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(embeddedOnly{})

	names := schemas.Documents()
	if len(names) == 0 {
		return nil, errors.New("ahp: no embedded schema documents")
	}
	v := &Validator{docs: make(map[string]bool, len(names)), compiler: c, fastc: newFastCompiler()}
	docs := make(map[string]any, len(names))
	for _, name := range names {
		raw, err := schemas.Read(name)
		if err != nil {
			return nil, fmt.Errorf("ahp: read schema %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("ahp: decode schema %s: %w", name, err)
		}
		id := schemas.BaseURI + name
		if obj, ok := doc.(map[string]any); !ok || obj["$id"] != id {
			return nil, fmt.Errorf("ahp: schema %s: $id is not %s", name, id)
		}
		docs[name] = doc
	}
	if dispatch {
		rewriteUnions(docs)
	}
	for _, name := range names {
		if err := c.AddResource(schemas.BaseURI+name, docs[name]); err != nil {
			return nil, fmt.Errorf("ahp: add schema %s: %w", name, err)
		}
		v.docs[name] = true
	}
	for _, name := range names {
		sch, err := c.Compile(schemas.BaseURI + name)
		if err != nil {
			return nil, fmt.Errorf("ahp: compile schema %s: %w", name, err)
		}
		v.fast.Store(name, v.fastc.schema(sch))
		v.cache.Store(name, sch)
	}
	return v, nil
}

var shared = sync.OnceValues(New)

// Default returns a shared Validator, built on first use and immutable
// afterwards. If building it fails, every method of the returned Validator
// reports that failure.
func Default() *Validator {
	v, err := shared()
	if err != nil {
		return &Validator{err: err}
	}
	return v
}

// Validate decodes doc as a single strict JSON value and validates it
// against the schema named by ref.
//
// ref is either a full schema URI ($id with an optional fragment) or the
// same with [schemas.BaseURI] left out, such as
// "effect.schema.json#/$defs/InjectEffect". An unknown ref yields an error
// wrapping [ErrUnknownSchema]. Malformed JSON yields an [*Error] with Keyword
// "json" (matching [ErrMalformedJSON]); an object anywhere in doc with two
// members of the same name (RFC 7493, I-JSON) yields an [*Error] with
// Keyword [KeywordDuplicateMember] (matching [ErrDuplicateMember]) and the
// pointer of the second one; a schema violation yields an [*Error]
// matching [ErrInvalid]. Duplicates are looked for before the schema is
// applied, so their error wins over any schema violation.
func (v *Validator) Validate(ref string, doc []byte) error {
	key, sch, err := v.schema(ref)
	if err != nil {
		return err
	}
	t := getTape()
	defer putTape(t)
	var value any
	if t.parse(doc) {
		if t.dup {
			return duplicate(key, doc, t.dupAt)
		}
		if v.fastSchema(key).validTape(t) {
			return nil
		}
		value = t.value(0)
	} else {
		var derr *Error
		if value, derr = decodeStd(doc); derr != nil {
			derr.Schema = key
			return derr
		}
		// A document the tape does not take (deep nesting, escaped lone
		// surrogates) is searched for duplicate names on its own.
		if at, ok := findDuplicate(doc); ok {
			return duplicate(key, doc, at)
		}
	}
	return check(key, sch, value)
}

// maxExactBytes is the largest document that [Validator.Check] hands to v6
// when the fast path cannot decide, or to explain a violation the fast path
// found: v6 takes microseconds per member, which on a few megabytes is
// seconds that no deadline can interrupt.
const maxExactBytes = 16 << 10

// Check is [Validator.Validate] for documents a peer sent, checked within
// a deadline. It differs in two ways:
//
//   - It observes ctx: it returns an error wrapping ctx.Err() as soon as it
//     sees ctx end (parsing and the fast path look at ctx regularly), and
//     does not start the exact validator once ctx has ended.
//   - Its work is linear in the size of doc with a small constant. A
//     document larger than 16 KiB is decided by the fast path alone: a
//     violation it finds is an [*Error] with Keyword [KeywordSchema] that
//     names no location, and a document it cannot decide (numbers beyond
//     its exact range, nesting deeper than 512 levels, escaped lone
//     surrogates, long uniqueItems arrays of non-strings) is an [*Error]
//     matching [ErrUnverified]. Smaller documents get exactly the errors
//     Validate returns.
//
// Malformed JSON and repeated member names are reported as Validate
// reports them, at any size.
func (v *Validator) Check(ctx context.Context, ref string, doc []byte) error {
	key, sch, err := v.schema(ref)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	t := getTape()
	defer putTape(t)
	parsed := t.parseUntil(doc, ctx.Done())
	if t.stopped {
		return stopped(ctx.Err())
	}
	if parsed && t.dup {
		return duplicate(key, doc, t.dupAt)
	}
	large := len(doc) > maxExactBytes
	if parsed {
		valid, decided, halted := v.fastSchema(key).verdict(t, ctx.Done())
		switch {
		case halted:
			return stopped(ctx.Err())
		case valid:
			return nil
		case decided && large:
			return &Error{Schema: key, Keyword: KeywordSchema}
		}
	}
	if large {
		if !parsed {
			// Malformed input and repeated names are found without v6.
			if _, derr := decodeStd(doc); derr != nil {
				derr.Schema = key
				return derr
			}
			if at, ok := findDuplicate(doc); ok {
				return duplicate(key, doc, at)
			}
		}
		return &Error{Schema: key, Keyword: KeywordUnverified}
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	var value any
	if parsed {
		value = t.value(0)
	} else {
		var derr *Error
		if value, derr = decodeStd(doc); derr != nil {
			derr.Schema = key
			return derr
		}
		if at, ok := findDuplicate(doc); ok {
			return duplicate(key, doc, at)
		}
	}
	return check(key, sch, value)
}

// stopped wraps the context error that ended a Check.
func stopped(err error) error {
	return fmt.Errorf("ahp: validation stopped: %w", err)
}

// Valid reports whether doc is valid against the schema named by ref, as
// Validate(ref, doc) == nil does, without explaining a failure: where the
// fast path can decide, its verdict is used, and v6 runs only for what it
// cannot decide. An unknown ref is not valid.
func (v *Validator) Valid(ref string, doc []byte) bool {
	return v.FirstValid([]string{ref}, doc) == 0
}

// FirstValid returns the index of the first of refs against which doc is
// valid, as a loop over [Validator.Valid] would, or -1; doc is parsed once
// for all of them. An unknown ref is skipped.
func (v *Validator) FirstValid(refs []string, doc []byte) int {
	t := getTape()
	defer putTape(t)
	parsed := t.parse(doc)
	if parsed && t.dup {
		return -1
	}
	var value any
	decoded := false
	for i, ref := range refs {
		key, sch, err := v.schema(ref)
		if err != nil {
			continue
		}
		if parsed {
			if valid, decided, _ := v.fastSchema(key).verdict(t, nil); decided {
				if valid {
					return i
				}
				continue
			}
		}
		if !decoded {
			decoded = true
			if parsed {
				value = t.value(0)
			} else {
				var derr *Error
				if value, derr = decodeStd(doc); derr != nil {
					return -1
				}
				if _, dup := findDuplicate(doc); dup {
					return -1
				}
			}
		}
		if sch.Validate(value) == nil {
			return i
		}
	}
	return -1
}

// ValidateValue validates an already decoded JSON value against the schema
// named by ref, which is interpreted as by [Validator.Validate].
//
// value must consist of the types produced by decoding JSON into an any
// with numbers kept as [encoding/json.Number] (as [jsonschema.UnmarshalJSON]
// does): map[string]any, []any, string, json.Number, bool and nil. Other Go
// types are reported as an [*Error] with Keyword "json".
func (v *Validator) ValidateValue(ref string, value any) error {
	key, sch, err := v.schema(ref)
	if err != nil {
		return err
	}
	if v.fastSchema(key).valid(value) {
		return nil
	}
	return check(key, sch, value)
}

// fastSchema returns the fast-path program (fastpath.go) for the schema
// cached under key, or nil. Whenever it does not establish validity, the
// caller validates with v6, which also reports the error.
func (v *Validator) fastSchema(key string) *fastSchema {
	f, _ := v.fast.Load(key)
	fs, _ := f.(*fastSchema)
	return fs
}

func check(key string, sch *jsonschema.Schema, value any) error {
	err := sch.Validate(value)
	if err == nil {
		return nil
	}
	return convert(key, err)
}

// schema returns the canonical short reference and compiled schema for ref.
func (v *Validator) schema(ref string) (string, *jsonschema.Schema, error) {
	if v == nil {
		return "", nil, errors.New("ahp: nil validator")
	}
	if v.err != nil {
		return "", nil, fmt.Errorf("ahp: validator unavailable: %w", v.err)
	}
	key, err := v.canonical(ref)
	if err != nil {
		return "", nil, err
	}
	if sch, ok := v.cache.Load(key); ok {
		return key, sch.(*jsonschema.Schema), nil
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	if sch, ok := v.cache.Load(key); ok {
		return key, sch.(*jsonschema.Schema), nil
	}
	sch, err := v.compiler.Compile(schemas.BaseURI + key)
	if err != nil {
		// Failures are not cached, so the cache only grows with locations
		// that exist in the embedded documents.
		return "", nil, fmt.Errorf("%w: %q: %w", ErrUnknownSchema, ref, err)
	}
	v.fast.Store(key, v.fastc.schema(sch))
	v.cache.Store(key, sch)
	return key, sch, nil
}

// canonical maps ref to "name" or "name#fragment", relative to
// schemas.BaseURI, and checks that name is an embedded document.
func (v *Validator) canonical(ref string) (string, error) {
	rel := strings.TrimPrefix(ref, schemas.BaseURI)
	name, frag, _ := strings.Cut(rel, "#")
	if !v.docs[name] {
		return "", fmt.Errorf("%w: %q", ErrUnknownSchema, ref)
	}
	if frag == "" {
		return name, nil
	}
	return name + "#" + frag, nil
}

// embeddedOnly is the compiler's URL loader. Every embedded document is
// registered as a resource up front, so any URL that reaches the loader lies
// outside the embedded set and is refused.
type embeddedOnly struct{}

func (embeddedOnly) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s is not an embedded schema document", ErrUnknownSchema, url)
}
