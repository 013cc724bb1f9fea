package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
	"github.com/agenthooks/agenthooks-go/schemas"
)

// ErrUnknownSchema is wrapped by the error returned for a schema reference
// that does not name an embedded document, or names a location that does not
// exist inside one.
var ErrUnknownSchema = errors.New("ahp: unknown schema")

// Validator validates JSON documents against the embedded Agent Hooks
// Protocol schemas.
//
// A Validator is safe for concurrent use. It runs the validation program
// that cmd/ahp-codegen generated from the schemas (package gen/validation):
// nothing is compiled from schema JSON at run time. Each node of the program
// is laid out for the interpreter the first time a validation visits it and
// shared by every later one.
type Validator struct {
	err  error // set when the validator could not be built
	prog *schemaprog.Program
	docs map[string]bool // embedded document names

	fast sync.Map // canonical reference -> *fastSchema (see fastpath.go)
	refs sync.Map // reference as given -> *resolved, for the references that exist
	// last is the reference most recently found in refs: callers pass the
	// same constant again and again, found here by its bytes' address
	// without hashing it.
	last atomic.Pointer[resolved]

	mu    sync.Mutex    // guards fastc
	fastc *fastCompiler // shared by every reference, so common subschemas are laid out once
}

// New returns a Validator for the embedded schema documents. It never reads
// files or uses the network, and compiles nothing: it is cheap, but the
// shared [Default] is as good.
func New() (*Validator, error) { return newFromProgram(validation.Program()) }

// newFromProgram returns a Validator running p (tests build programs of
// their own).
func newFromProgram(p *schemaprog.Program) (*Validator, error) {
	if p == nil || len(p.Docs) == 0 {
		return nil, errors.New("ahp: no embedded schema documents")
	}
	v := &Validator{prog: p, docs: make(map[string]bool, len(p.Docs)), fastc: newFastCompiler(p)}
	for _, d := range p.Docs {
		v.docs[d.Name] = true
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
	key, fs, err := v.schema(ref)
	if err != nil {
		return err
	}
	t := getTape()
	defer putTape(t)
	if derr := load(t, key, doc, watch{}); derr != nil {
		return derr
	}
	return judge(key, fs, t)
}

// judge runs the program fs (named key) on t, unbounded: nil when t is
// valid, otherwise the explained *Error, or one with keyword
// [KeywordUnverified] when the program cannot decide.
func judge(key string, fs *fastSchema, t *tape) error {
	valid, decided, _ := fs.verdict(t, watch{})
	switch {
	case valid:
		return nil
	case !decided:
		return &Error{Schema: key, Keyword: KeywordUnverified}
	}
	if e, ok := explain(key, fs.root, t, watch{}); ok {
		return e
	}
	return &Error{Schema: key, Keyword: KeywordUnverified}
}

// load puts doc on t: parsed directly, or, for the documents the tape's
// parser does not take (deep nesting, escaped lone surrogates), decoded by
// encoding/json and put on t from the value. It reports malformed input
// and repeated member names, and a document too deep for the tape as
// unverified; a nil error with t.stopped set means done was closed.
func load(t *tape, key string, doc []byte, w watch) *Error {
	if t.parseUntil(doc, w) {
		if t.dup {
			return duplicate(key, doc, t.dupAt)
		}
		return nil
	}
	if t.stopped {
		return nil
	}
	value, derr := decodeStd(doc)
	if derr != nil {
		derr.Schema = key
		return derr
	}
	if at, ok := findDuplicate(doc); ok {
		return duplicate(key, doc, at)
	}
	if !t.fromValue(value) {
		return &Error{Schema: key, Keyword: KeywordUnverified}
	}
	return nil
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
	key, fs, err := v.schema(ref)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	t := getTape()
	defer putTape(t)
	if derr := load(t, key, doc, watchOf(ctx)); derr != nil {
		return derr
	}
	if t.stopped {
		return stopped(ctx.Err())
	}
	return v.decide(ctx, key, fs, t, len(doc))
}

// decide is the verdict of Check (and CheckDoc) on the document of size
// bytes loaded on t.
func (v *Validator) decide(ctx context.Context, key string, fs *fastSchema, t *tape, size int) error {
	w := watchOf(ctx)
	valid, decided, halted := fs.verdict(t, w)
	switch {
	case halted:
		return stopped(ctx.Err())
	case valid:
		return nil
	case !decided:
		return &Error{Schema: key, Keyword: KeywordUnverified}
	case size > maxExactBytes:
		return &Error{Schema: key, Keyword: KeywordSchema}
	}
	e, ok := explain(key, fs.root, t, w)
	switch {
	case ok:
		return e
	case ctx.Err() != nil:
		return stopped(ctx.Err())
	}
	return &Error{Schema: key, Keyword: KeywordUnverified}
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
	if load(t, "", doc, watch{}) != nil {
		return -1
	}
	for i, ref := range refs {
		_, fs, err := v.schema(ref)
		if err != nil {
			continue
		}
		if valid, _, _ := fs.verdict(t, watch{}); valid {
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
	key, fs, err := v.schema(ref)
	if err != nil {
		return err
	}
	t := getTape()
	defer putTape(t)
	if !t.fromValue(value) {
		if p, found := notJSON(value, nil); found {
			return &Error{Schema: key, Keyword: KeywordJSON, Pointer: p}
		}
		return &Error{Schema: key, Keyword: KeywordUnverified}
	}
	return judge(key, fs, t)
}

// resolved is a reference that exists: its canonical form and program.
type resolved struct {
	given string // the reference as given
	key   string
	fs    *fastSchema
}

// schema returns the canonical short reference and program for ref.
func (v *Validator) schema(ref string) (string, *fastSchema, error) {
	if v == nil {
		return "", nil, errors.New("ahp: nil validator")
	}
	if v.err != nil {
		return "", nil, fmt.Errorf("ahp: validator unavailable: %w", v.err)
	}
	// Only references that exist are remembered, each as given: a few
	// spellings (with or without schemas.BaseURI, with or without an
	// empty fragment) per location of the program.
	if r := v.last.Load(); r != nil && len(r.given) == len(ref) && unsafe.StringData(r.given) == unsafe.StringData(ref) {
		return r.key, r.fs, nil
	}
	if r, ok := v.refs.Load(ref); ok {
		r := r.(*resolved)
		v.last.Store(r)
		return r.key, r.fs, nil
	}
	key, fs, err := v.lookup(ref)
	if err != nil {
		return "", nil, err
	}
	v.refs.Store(ref, &resolved{given: ref, key: key, fs: fs})
	return key, fs, nil
}

// lookup is schema without the cache of references as given.
func (v *Validator) lookup(ref string) (string, *fastSchema, error) {
	key, err := v.canonical(ref)
	if err != nil {
		return "", nil, err
	}
	if fs, ok := v.fast.Load(key); ok {
		return key, fs.(*fastSchema), nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if fs, ok := v.fast.Load(key); ok {
		return key, fs.(*fastSchema), nil
	}
	id := locate(v.prog, key)
	if id == 0 {
		// Failures are not cached, so the cache only grows with locations
		// that exist in the program.
		return "", nil, fmt.Errorf("%w: %q", ErrUnknownSchema, ref)
	}
	fs, err := v.fastc.schema(id)
	if err != nil {
		return "", nil, fmt.Errorf("ahp: schema %q: %w", ref, err)
	}
	v.fast.Store(key, fs)
	return key, fs, nil
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

// notJSON returns the pointer of the first value inside value (members in
// name order) whose Go type decoded JSON does not have.
func notJSON(value any, path []string) (string, bool) {
	switch x := value.(type) {
	case nil, bool, string, json.Number:
		return "", false
	case []any:
		for i, e := range x {
			if p, ok := notJSON(e, append(path, strconv.Itoa(i))); ok {
				return p, true
			}
		}
		return "", false
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, ok := notJSON(x[k], append(path, k)); ok {
				return p, true
			}
		}
		return "", false
	}
	return pointer(path), true
}
