package validate

import (
	"bytes"
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
