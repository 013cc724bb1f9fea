package validate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile"
	"github.com/agenthooks/agenthooks-go/schemas"
)

// This file keeps the conversion of jsonschema/v6 errors that the
// validator used while it ran v6: the tests compare the generated
// program's errors with it.

// convert maps a jsonschema error to an *Error for the schema key.
func convert(key string, err error) error {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		// Not expected from jsonschema; its text is not trusted to be free
		// of values, so only the type is reported.
		return &Error{Schema: key, Keyword: "unknown", Causes: nil}
	}
	causes := leaves(verr, verr.InstanceLocation, nil)
	if len(causes) == 0 {
		causes = []Cause{toCause(verr)}
	}
	sortCauses(causes)
	causes = slices.CompactFunc(causes, func(a, b Cause) bool {
		return a.Pointer == b.Pointer && a.Keyword == b.Keyword &&
			a.SchemaLocation == b.SchemaLocation && slices.Equal(a.Missing, b.Missing) &&
			slices.Equal(a.Unexpected, b.Unexpected) && slices.Equal(a.Allowed, b.Allowed)
	})
	p := causes[0]
	return &Error{
		Schema:         key,
		Pointer:        p.Pointer,
		Keyword:        p.Keyword,
		SchemaLocation: p.SchemaLocation,
		Missing:        p.Missing,
		Unexpected:     p.Unexpected,
		Allowed:        p.Allowed,
		Causes:         causes,
	}
}

// leaves appends the relevant leaf failures under e. At a failed oneOf or
// anyOf only the alternative that came closest to matching contributes (see
// pickBranch). parentLoc is the instance location of e's parent (e's own for
// the root).
func leaves(e *jsonschema.ValidationError, parentLoc []string, dst []Cause) []Cause {
	if len(e.Causes) == 0 {
		if isStructural(e.ErrorKind) {
			return dst
		}
		return append(dst, toCause(e))
	}
	switch e.ErrorKind.(type) {
	case *kind.PropertyNames:
		// The causes describe the property name validated as a separate
		// instance (with root-relative pointers); the failing name itself
		// is instance data and is not reported. jsonschema/v6 gives this
		// error the validator's location slice without copying it, so its
		// last element may have been overwritten by a sibling validated
		// later (in map order); the parent, the failing object's schema,
		// has the same location, copied.
		c := toCause(e)
		if len(parentLoc) == len(e.InstanceLocation) {
			c.Pointer = pointer(parentLoc)
		}
		return append(dst, c)
	case *kind.OneOf, *kind.AnyOf:
		branches := make([][]Cause, len(e.Causes))
		for i, c := range e.Causes {
			branches[i] = leaves(c, e.InstanceLocation, nil)
		}
		if best := pickBranch(branches, len(e.InstanceLocation)); best >= 0 {
			return append(dst, branches[best]...)
		}
		// Every alternative was ruled out by a discriminator: the union
		// itself is the most precise description.
		return append(dst, toCause(e))
	}
	for _, c := range e.Causes {
		dst = leaves(c, e.InstanceLocation, dst)
	}
	return dst
}

// isStructural reports whether k only groups other failures; such a node
// without causes says nothing useful.
func isStructural(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		return true
	}
	return false
}

func toCause(e *jsonschema.ValidationError) Cause {
	c := Cause{
		Pointer:        pointer(e.InstanceLocation),
		SchemaLocation: strings.TrimPrefix(e.SchemaURL, schemas.BaseURI),
	}
	switch k := e.ErrorKind.(type) {
	case *kind.FalseSchema:
		// SchemaURL is the false schema itself.
		c.Keyword = "false"
	case *kind.InvalidJsonValue:
		c.Keyword = KeywordJSON
	case *kind.PropertyNames:
		// SchemaURL is the propertyNames subschema itself.
		c.Keyword = "propertyNames"
	case *kind.Not:
		c.Keyword = "not"
		c.SchemaLocation += "/not"
	default:
		kw := e.ErrorKind.KeywordPath()
		if len(kw) == 0 {
			c.Keyword = "schema"
			break
		}
		c.Keyword = kw[0]
		for _, tok := range kw {
			c.SchemaLocation += "/" + escape(tok)
		}
		switch k := k.(type) {
		case *kind.Required:
			c.Missing = slices.Clone(k.Missing)
		case *kind.DependentRequired:
			c.Missing = slices.Clone(k.Missing)
		case *kind.Dependency:
			c.Missing = slices.Clone(k.Missing)
		case *kind.AdditionalProperties:
			c.Unexpected = slices.Clone(k.Properties)
			slices.Sort(c.Unexpected)
		case *kind.Enum:
			// Want is the schema's list; Got, the instance value, is dropped.
			c.Allowed = make([]string, len(k.Want))
			for i, w := range k.Want {
				c.Allowed[i] = jsonText(w)
			}
		case *kind.Const:
			c.Allowed = []string{jsonText(k.Want)}
		}
	}
	return c
}

// jsonText encodes a schema value (decoded by jsonschema.UnmarshalJSON, so
// numbers are json.Number) as compact JSON with sorted object members.

// check validates value with v6 and converts its error as the validator
// did while it ran v6.
func check(key string, sch *jsonschema.Schema, value any) error {
	err := sch.Validate(value)
	if err == nil {
		return nil
	}
	return convert(key, err)
}

// testValidator pairs the validator running a program (the generated one,
// or one compiled without the dispatch rewrite) with jsonschema/v6 compiling
// the same schemas, the oracle: schema returns v6's compiled schema,
// fastSchema the program's.
type testValidator struct {
	*Validator
	mu       sync.Mutex // guards v6
	v6       *jsonschema.Compiler
	v6schema sync.Map // key -> *jsonschema.Schema
}

// newValidator returns the shipped validator (dispatch) or one running the
// program compiled without the union rewrite, each with its v6 oracle.
func newValidator(dispatch bool) (*testValidator, error) {
	docs := map[string][]byte{}
	values := map[string]any{}
	for _, name := range schemas.Documents() {
		raw, err := schemas.Read(name)
		if err != nil {
			return nil, err
		}
		docs[name] = raw
		if values[name], err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
			return nil, err
		}
	}
	prog := validation.Program()
	if !dispatch {
		var err error
		if prog, err = compile.Program(schemas.BaseURI, docs, false); err != nil {
			return nil, err
		}
	} else {
		compile.RewriteUnions(schemas.BaseURI, values)
	}
	v, err := newFromProgram(prog)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for name, doc := range values {
		if err := c.AddResource(schemas.BaseURI+name, doc); err != nil {
			return nil, err
		}
	}
	return &testValidator{Validator: v, v6: c}, nil
}

// schema returns the key and v6's compiled schema for ref.
func (tv *testValidator) schema(ref string) (string, *jsonschema.Schema, error) {
	key, _, err := tv.Validator.schema(ref)
	if err != nil {
		return "", nil, err
	}
	if s, ok := tv.v6schema.Load(key); ok {
		return key, s.(*jsonschema.Schema), nil
	}
	tv.mu.Lock()
	defer tv.mu.Unlock()
	sch, err := tv.v6.Compile(schemas.BaseURI + key)
	if err != nil {
		return "", nil, err
	}
	tv.v6schema.Store(key, sch)
	return key, sch, nil
}

// fastSchema returns the program for key.
func (tv *testValidator) fastSchema(key string) *fastSchema {
	_, fs, err := tv.Validator.schema(key)
	if err != nil {
		return nil
	}
	return fs
}

// compileFast compiles a schema compiled by v6 into a program and lays it
// out for the interpreter.
func compileFast(sch *jsonschema.Schema) (*fastNode, error) {
	prog, ids, err := compile.Schemas("", []*jsonschema.Schema{sch})
	if err != nil {
		if errors.Is(err, compile.ErrUnsupported) {
			return nil, fmt.Errorf("%w: %w", errFastUnsupported, err)
		}
		return nil, err
	}
	fs, err := newFastCompiler(prog).schema(ids[0])
	if err != nil {
		return nil, err
	}
	return fs.root, nil
}

// newFastSchema is compileFast that yields an empty program (never valid)
// for an unsupported schema.
func newFastSchema(sch *jsonschema.Schema) *fastSchema {
	root, err := compileFast(sch)
	if err != nil {
		return &fastSchema{}
	}
	return &fastSchema{root: root}
}
