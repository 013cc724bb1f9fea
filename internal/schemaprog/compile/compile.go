// Package compile builds the validation program ([schemaprog.Program]) of a
// set of schema documents with jsonschema/v6, which resolves every $ref and
// compiles the patterns exactly as the validator it replaces did. It is used
// by cmd/ahp-codegen and by tests; production code runs the generated
// program and never imports this package.
package compile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// ErrUnsupported is wrapped by the error for a schema using a keyword or
// semantics the program does not model.
var ErrUnsupported = errors.New("schemaprog: unsupported schema")

// Formats lists the formats the run time asserts (runtime/validate
// implements them exactly as jsonschema/v6 does); a schema asserting any
// other known format is refused.
var Formats = []string{"date-time", "uri"}

// Program compiles every document of docs (name -> JSON) and every $defs
// entry of each, registered under baseURI+name, with format assertions on,
// after the union dispatch rewrite when dispatch is set (see RewriteUnions).
func Program(baseURI string, docs map[string][]byte, dispatch bool) (*schemaprog.Program, error) {
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	values := map[string]any{}
	for _, n := range names {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(docs[n]))
		if err != nil {
			return nil, fmt.Errorf("decode schema %s: %w", n, err)
		}
		if m, ok := v.(map[string]any); !ok || m["$id"] != baseURI+n {
			return nil, fmt.Errorf("schema %s: $id is not %s", n, baseURI+n)
		}
		values[n] = v
	}
	if dispatch {
		RewriteUnions(baseURI, values)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuse{})
	for _, n := range names {
		if err := c.AddResource(baseURI+n, values[n]); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", n, err)
		}
	}
	b := &builder{base: baseURI, ids: map[*jsonschema.Schema]schemaprog.ID{}, docIdx: map[string]int{}}
	for i, n := range names {
		b.docIdx[n] = i
		b.prog.Docs = append(b.prog.Docs, schemaprog.Doc{Name: n})
	}
	for _, n := range names {
		refs := []string{baseURI + n}
		if defs, ok := values[n].(map[string]any)["$defs"].(map[string]any); ok {
			keys := make([]string, 0, len(defs))
			for k := range defs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				refs = append(refs, baseURI+n+"#/$defs/"+escape(k))
			}
		}
		for _, ref := range refs {
			sch, err := c.Compile(ref)
			if err != nil {
				return nil, fmt.Errorf("compile %s: %w", ref, err)
			}
			if _, err := b.node(sch); err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
		}
	}
	addDispatch(&b.prog)
	return &b.prog, nil
}

// Schemas builds the program of schemas already compiled by jsonschema/v6
// (for tests of ad hoc schemas): documents are named by their location
// relative to baseURI. It returns the ID of each of schs.
func Schemas(baseURI string, schs []*jsonschema.Schema) (*schemaprog.Program, []schemaprog.ID, error) {
	b := &builder{base: baseURI, ids: map[*jsonschema.Schema]schemaprog.ID{}, docIdx: map[string]int{}}
	out := make([]schemaprog.ID, len(schs))
	for i, s := range schs {
		id, err := b.node(s)
		if err != nil {
			return nil, nil, err
		}
		out[i] = id
	}
	addDispatch(&b.prog)
	return &b.prog, out, nil
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

type refuse struct{}

func (refuse) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not an embedded schema document", url)
}

type builder struct {
	base   string
	prog   schemaprog.Program
	ids    map[*jsonschema.Schema]schemaprog.ID
	docIdx map[string]int
}

// node returns the ID of s, compiling it (and what it reaches) first.
func (b *builder) node(s *jsonschema.Schema) (schemaprog.ID, error) {
	if s == nil {
		return 0, nil
	}
	if id, ok := b.ids[s]; ok {
		return id, nil
	}
	rel, ok := strings.CutPrefix(s.Location, b.base)
	if !ok {
		return 0, fmt.Errorf("%w: location %s outside the base URI", ErrUnsupported, s.Location)
	}
	name, frag, hasFrag := strings.Cut(rel, "#")
	di, ok := b.docIdx[name]
	if !ok {
		di = len(b.prog.Docs)
		b.docIdx[name] = di
		b.prog.Docs = append(b.prog.Docs, schemaprog.Doc{Name: name})
	}
	doc := &b.prog.Docs[di]
	if len(doc.Nodes) >= 0xfffe {
		return 0, fmt.Errorf("%w: too many subschemas in %s", ErrUnsupported, name)
	}
	idx := len(doc.Nodes)
	id := schemaprog.MakeID(di, idx)
	b.ids[s] = id
	loc := ""
	if hasFrag {
		loc = "#" + frag
	}
	doc.Nodes = append(doc.Nodes, schemaprog.Node{Loc: loc})
	n, err := b.fill(s)
	if err != nil {
		return 0, err
	}
	n.Loc = loc
	b.prog.Docs[di].Nodes[idx] = n
	return id, nil
}

func (b *builder) list(ss []*jsonschema.Schema) ([]schemaprog.ID, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	out := make([]schemaprog.ID, len(ss))
	for i, s := range ss {
		id, err := b.node(s)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

func canonical(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func count(p *int) uint32 {
	if p == nil {
		return 0
	}
	return uint32(*p) + 1
}

func rat(r *big.Rat) string {
	if r == nil {
		return ""
	}
	return r.RatString()
}

func (b *builder) fill(s *jsonschema.Schema) (schemaprog.Node, error) {
	var n schemaprog.Node
	if s.Bool != nil {
		if *s.Bool {
			n.Bool = 1
		} else {
			n.Bool = -1
		}
		return n, nil
	}
	if s.DraftVersion < 2020 ||
		s.RecursiveRef != nil || s.DynamicRef != nil ||
		len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
		s.MinContains != nil || s.MaxContains != nil ||
		s.Items != nil || s.AdditionalItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		len(s.Extensions) > 0 {
		return n, fmt.Errorf("%w: %s uses a keyword outside the modelled set", ErrUnsupported, s.Location)
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				n.Types |= schemaprog.TNull
			case "boolean":
				n.Types |= schemaprog.TBool
			case "number":
				n.Types |= schemaprog.TNumber
			case "integer":
				n.Types |= schemaprog.TInteger
			case "string":
				n.Types |= schemaprog.TString
			case "array":
				n.Types |= schemaprog.TArray
			case "object":
				n.Types |= schemaprog.TObject
			default:
				return n, fmt.Errorf("%w: type %s", ErrUnsupported, t)
			}
		}
	}
	var err error
	if s.Const != nil {
		if n.Const, err = canonical(*s.Const); err != nil {
			return n, err
		}
	}
	if s.Enum != nil {
		if n.Enum, err = canonical(append(make([]any, 0, len(s.Enum.Values)), s.Enum.Values...)); err != nil {
			return n, err
		}
	}
	if s.Format != nil {
		known := false
		for _, f := range Formats {
			known = known || f == s.Format.Name
		}
		if !known {
			return n, fmt.Errorf("%w: format %q is not implemented at run time", ErrUnsupported, s.Format.Name)
		}
		n.Format = s.Format.Name
	}
	for _, p := range []struct {
		dst *schemaprog.ID
		src *jsonschema.Schema
	}{{&n.Ref, s.Ref}, {&n.Not, s.Not}, {&n.If, s.If}, {&n.Then, s.Then}, {&n.Else, s.Else},
		{&n.PropNames, s.PropertyNames}, {&n.Contains, s.Contains}, {&n.Items, s.Items2020}} {
		if *p.dst, err = b.node(p.src); err != nil {
			return n, err
		}
	}
	for _, p := range []struct {
		dst *[]schemaprog.ID
		src []*jsonschema.Schema
	}{{&n.AllOf, s.AllOf}, {&n.AnyOf, s.AnyOf}, {&n.OneOf, s.OneOf}, {&n.Prefix, s.PrefixItems}} {
		if *p.dst, err = b.list(p.src); err != nil {
			return n, err
		}
	}
	n.MinProps, n.MaxProps = count(s.MinProperties), count(s.MaxProperties)
	n.Required = s.Required
	props := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		props = append(props, k)
	}
	sort.Strings(props)
	for _, k := range props {
		id, err := b.node(s.Properties[k])
		if err != nil {
			return n, err
		}
		n.PropKeys, n.PropIDs = append(n.PropKeys, k), append(n.PropIDs, id)
	}
	type pat struct {
		re  string
		sch *jsonschema.Schema
	}
	var pats []pat
	for re, ps := range s.PatternProperties {
		pats = append(pats, pat{re.String(), ps})
	}
	sort.Slice(pats, func(i, j int) bool { return pats[i].re < pats[j].re })
	for _, p := range pats {
		id, err := b.node(p.sch)
		if err != nil {
			return n, err
		}
		n.PatKeys, n.PatIDs = append(n.PatKeys, p.re), append(n.PatIDs, id)
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		n.AddlFalse = !a
	case *jsonschema.Schema:
		if n.Addl, err = b.node(a); err != nil {
			return n, err
		}
	default:
		return n, fmt.Errorf("%w: additionalProperties %T", ErrUnsupported, a)
	}
	n.MinItems, n.MaxItems = count(s.MinItems), count(s.MaxItems)
	n.Unique = s.UniqueItems
	n.MinLen, n.MaxLen = count(s.MinLength), count(s.MaxLength)
	if s.Pattern != nil {
		n.Pattern = s.Pattern.String()
	}
	n.Minimum, n.Maximum = rat(s.Minimum), rat(s.Maximum)
	n.ExMinimum, n.ExMaximum = rat(s.ExclusiveMinimum), rat(s.ExclusiveMaximum)
	n.MultipleOf = rat(s.MultipleOf)
	return n, nil
}
