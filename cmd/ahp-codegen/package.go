package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"strings"

	"github.com/dave/jennifer/jen"
)

// root is one root document with a Parse/Encode pair.
type root struct {
	File   string
	Func   string // Parse<Func>, Encode<Func>
	Type   *goType
	Checks []string // extra checks by name
}

// model is what the generator knows after building package gen; renderers
// of files outside gen (hooks/events_gen.go, server/effects_gen.go) use it.
type model struct {
	set    *schemaSet
	b      *builder
	roots  []*root
	events []eventInfo
}

// typeAt returns the Go type built for a schema location ("file#pointer").
func (m *model) typeAt(ref string) *goType {
	file, ptr, _ := strings.Cut(ref, "#")
	return m.b.typeAt(loc{File: file, Pointer: ptr}, "")
}

// buildPackage builds the model and renders every file of package gen.
func buildPackage(set *schemaSet) (map[string][]byte, *model, error) {
	b := newBuilder(set)
	var roots []*root
	var entries []*goType
	for _, file := range set.Files {
		doc := set.Docs[file]
		if structural(doc.Raw) || doc.Raw.has("allOf") {
			t := b.typeAt(loc{File: file}, "")
			if t.Kind != kindRaw {
				fn := goCase(strings.TrimSuffix(strings.TrimSuffix(file, ".json"), ".schema"))
				if file == "schema.json" {
					fn = "WireMessage"
				}
				r := &root{File: file, Func: fn, Type: t}
				switch file {
				case "intercept-request.schema.json":
					r.Checks = append(r.Checks, "eventIDEquality")
				case "schema.json":
					r.Checks = append(r.Checks, "wireEventIDEquality")
				}
				roots = append(roots, r)
				entries = append(entries, t)
			}
		}
		if defs := doc.Raw.get("$defs"); defs != nil {
			for _, k := range defs.keys {
				entries = append(entries, b.typeAt(loc{File: file, Pointer: "/$defs/" + escapePointer(k)}, goCase(k)))
			}
		}
	}
	// Stable names for nested pointers (e.g. the static capability manifest).
	for _, key := range sortedKeys(set.StableNames) {
		file, ptr, _ := strings.Cut(key, "#")
		if ptr != "" && !strings.HasPrefix(ptr, "/$defs/") {
			entries = append(entries, b.typeAt(loc{File: file, Pointer: ptr}, ""))
		}
	}
	if len(b.errs) > 0 {
		return nil, nil, errors.Join(b.errs...)
	}
	reach := reachable(entries)
	b.assignNames(reach)
	if len(b.errs) > 0 {
		return nil, nil, errors.Join(b.errs...)
	}

	schemaRef := func(l loc) string {
		if l.Pointer == "" {
			return l.File
		}
		return l.File + "#" + l.Pointer
	}

	files := map[string]*jen.File{}
	fileFor := func(doc string) *jen.File {
		name := strings.TrimSuffix(strings.TrimSuffix(doc, ".json"), ".schema")
		name = strings.ReplaceAll(name, "-", "_")
		if name == "schema" {
			name = "wire_message"
		}
		name += ".go"
		if f, ok := files[name]; ok {
			return f
		}
		f := jen.NewFilePathName(genPackage, "gen")
		f.HeaderComment(genHeader)
		f.HeaderComment("Source: schemas/" + doc)
		files[name] = f
		return f
	}
	// Ensure every document gets a file, in document order.
	for _, file := range set.Files {
		fileFor(file)
	}
	var tagged []*goType
	for _, t := range b.ordered {
		if !reach[t] || !t.named() {
			continue
		}
		emitType(fileFor(t.File), t, schemaRef)
		if key, _, _ := unionTag(t); t.Kind == kindUnion && key != "" {
			tagged = append(tagged, t)
		}
	}
	for _, r := range roots {
		emitRoot(fileFor(r.File), r)
	}

	out := map[string][]byte{}
	for name, f := range files {
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			return nil, nil, fmt.Errorf("render %s: %w", name, err)
		}
		out[name] = buf.Bytes()
	}
	// Package documentation and constants.
	docFile, err := renderDoc(set)
	if err != nil {
		return nil, nil, err
	}
	out["doc.go"] = docFile
	events, rows, err := buildCatalogue(set, b)
	if err != nil {
		return nil, nil, err
	}
	out["events.go"] = events
	rootsFile, err := renderRoots(roots)
	if err != nil {
		return nil, nil, err
	}
	out["roots.go"] = rootsFile
	support, err := renderSupport()
	if err != nil {
		return nil, nil, err
	}
	out["codec.go"] = support
	codecTest, err := renderCodecTest(tagged)
	if err != nil {
		return nil, nil, err
	}
	out["codec_internal_test.go"] = codecTest
	return out, &model{set: set, b: b, roots: roots, events: rows}, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// reachable returns the set of types reachable from the entry types.
func reachable(entries []*goType) map[*goType]bool {
	seen := map[*goType]bool{}
	var visit func(t *goType)
	visit = func(t *goType) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		visit(t.Elem)
		visit(t.Alias)
		for _, f := range t.Fields {
			visit(f.Type)
		}
		for _, a := range t.Arms {
			visit(a.Type)
		}
	}
	for _, e := range entries {
		visit(e)
	}
	return seen
}

func emitRoot(f *jen.File, r *root) {
	t := r.Type
	name := t.Name
	if name == "" {
		return
	}
	parse := "Parse" + r.Func
	encode := "Encode" + r.Func
	if slicesContains(r.Checks, "eventIDEquality") {
		f.Comment("checkEventID applies the rule of the schema's $comment: a request's JSON-RPC id is a string equal to params.event.id.")
		f.Func().Params(jen.Id("v").Op("*").Id(name)).Id("checkEventID").Params().Error().Block(
			jen.If(jen.Op("!").Id("isString").Call(jen.Id("v").Dot("ID"), jen.Id("v").Dot("Params").Dot("Event").Dot("ID").Call())).Block(
				jen.Return(jen.Op("&").Id("ParseError").Values(jen.Id("Root").Op(":").Lit(name), jen.Id("Pointer").Op(":").Lit("/id"), jen.Id("Keyword").Op(":").Lit("eventIdEquality"))),
			),
			jen.Return(jen.Nil()),
		)
	}
	// body is the body of a Parse function whose first statement is call.
	body := func(call jen.Code) []jen.Code {
		body := []jen.Code{jen.List(jen.Id("v"), jen.Id("err")).Op(":=").Add(call)}
		if len(r.Checks) > 0 {
			body = append(body, jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))))
		}
		for _, c := range r.Checks {
			switch c {
			case "eventIDEquality":
				body = append(body,
					jen.If(jen.Id("err").Op(":=").Id("v").Dot("checkEventID").Call(), jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))))
			case "wireEventIDEquality":
				body = append(body,
					jen.If(jen.Id("v").Dot("InterceptRequest").Op("!=").Nil()).Block(
						jen.If(jen.Id("err").Op(":=").Id("v").Dot("InterceptRequest").Dot("checkEventID").Call(), jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err")))))
			}
		}
		if len(r.Checks) > 0 {
			return append(body, jen.Return(jen.Id("v"), jen.Nil()))
		}
		return append(body, jen.Return(jen.Id("v"), jen.Id("err")))
	}
	extra := ""
	if len(r.Checks) > 0 {
		extra = " It also checks that the request id equals params.event.id."
	}
	f.Comment(fmt.Sprintf("%s validates data against the canonical schema %s, then decodes it losslessly.%s A failure is a *ParseError naming the JSON pointer and keyword; it never contains document values.", parse, r.File, extra))
	f.Func().Id(parse).Params(jen.Id("data").Index().Byte()).Params(jen.Op("*").Id(name), jen.Error()).Block(
		body(jen.Id("parseRoot").Index(jen.Id(name)).Call(jen.Lit(name), jen.Lit(r.File), jen.Id("data")))...)
	f.Comment(fmt.Sprintf("%sContext is %s for a document a peer sent, parsed within ctx. Validation is validate.Validator.Check's, linear in the size of data: up to 16 KiB its verdict and error are Parse's; above, the linear validator decides alone, so a violation names no pointer and a document it cannot decide is rejected as unverified. Validation and decoding stop soon after ctx ends (every thousand values or so); the error then wraps ctx.Err() and is not a *ParseError.", parse, parse))
	f.Func().Id(parse+"Context").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("data").Index().Byte()).Params(jen.Op("*").Id(name), jen.Error()).Block(
		body(jen.Id("parseRootContext").Index(jen.Id(name)).Call(jen.Id("ctx"), jen.Lit(name), jen.Lit(r.File), jen.Id("data")))...)
	f.Comment(fmt.Sprintf("%sDoc is %sContext for a document already tokenized by validate.Scan: it validates and decodes the tokens of doc, without scanning its bytes again, with %sContext's verdict, errors and observation of ctx. The result does not alias doc, which the caller releases.", parse, parse, parse))
	f.Func().Id(parse+"Doc").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("doc").Op("*").Qual("github.com/agenthooks/agenthooks-go/runtime/validate", "Doc")).Params(jen.Op("*").Id(name), jen.Error()).Block(
		body(jen.Id("parseDocContext").Index(jen.Id(name)).Call(jen.Id("ctx"), jen.Lit(name), jen.Lit(r.File), jen.Id("doc")))...)
	f.Comment(fmt.Sprintf("%s encodes v as compact JSON: known members in schema order, then unknown members in their original order. It does not validate.", encode))
	f.Func().Id(encode).Params(jen.Id("v").Op("*").Id(name)).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jen.Id("encodeRoot").Call(jen.Id("v"), jen.Lit(encode))),
	)
	if r.Func == "Event" {
		// The host frames an event's encoding in its request body.
		f.Comment(fmt.Sprintf("%sFramed is %s into a buffer a caller frames without copying the encoding: the result holds head zero bytes followed by the encoding, and has capacity for at least tail more bytes behind it. A negative head or tail counts as zero; one over 1 MiB is an error wrapping ErrInvalid.", encode, encode))
		f.Func().Id(encode+"Framed").Params(jen.Id("v").Op("*").Id(name), jen.List(jen.Id("head"), jen.Id("tail")).Int()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jen.Id("encodeRootFramed").Call(jen.Id("v"), jen.Lit(encode+"Framed"), jen.Id("head"), jen.Id("tail"))),
		)
	}
	f.Line()
}

func renderDoc(set *schemaSet) ([]byte, error) {
	f := jen.NewFilePathName(genPackage, "gen")
	f.HeaderComment(genHeader)
	f.PackageComment(`Package gen is the typed model of the Agent Hooks Protocol, generated by
cmd/ahp-codegen from the canonical JSON Schemas in schemas/. Do not edit it:
change the generator or the schemas and run go generate ./...

Every object type keeps members its schema does not name (Unknown) and
re-emits them after the known members; numbers keep their exact text
(json.Number); absent, null and zero stay distinct. The MarshalJSON method of
an object type writes its known members in schema order, then its unknown
members in their original order; UnmarshalJSON methods keep unknown members
and exact number text and do not validate. Parse functions validate
against the canonical schema before decoding; Encode functions write compact
JSON without validating. For a document a peer sent, Parse<Root>Context
validates in time linear in its size and stops, validation and decoding
alike, soon after its context ends.

Start with the Parse function of the document at hand: ParseInterceptRequest
and ParseObserveNotification (what a backend receives), ParseInterceptResponse
(what a harness receives), ParseRegistration, ParseEvent; LookupRoot finds the
codec of any root schema by file name. Event holds one event occurrence with
exactly one payload field set (ToolBefore for tool.before, ...).
Events and LookupEvent are the event catalogue: for each event its payload
type, delivery modes and, for interceptable events, the effect families,
modification targets and flow operations its boundary can grant. A rejected
document is a *ParseError naming the JSON pointer and the schema keyword,
never the offending value.

Hosts normally use package hooks and backends package server, which build and
check these values; gen is the shared vocabulary beneath both.`)
	f.Const().Defs(
		jen.Comment("ProtocolVersion is the protocolVersion this package speaks."),
		jen.Id("ProtocolVersion").Op("=").Lit(set.Manifest.get("protocolVersion").str),
		jen.Comment("SchemaRevision is the revision of the canonical schemas this package was generated from."),
		jen.Id("SchemaRevision").Op("=").Lit(set.Manifest.get("snapshotVersion").str),
	)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func renderSupport() ([]byte, error) {
	src, err := ownSources.ReadFile("support.go.tmpl")
	if err != nil {
		return nil, err
	}
	full := append([]byte("// "+genHeader+"\n\n"), src...)
	out, err := format.Source(full)
	if err != nil {
		return nil, fmt.Errorf("format support code: %w", err)
	}
	return out, nil
}

// renderCodecTest emits the internal tests of the codec support code
// (codec_test.go.tmpl: among them, that the tagged arm selection,
// selectTagged, of every union in tagged picks what the selection by every
// arm, selectArm, picks) and the table of the unions in tagged.
func renderCodecTest(tagged []*goType) ([]byte, error) {
	src, err := ownSources.ReadFile("codec_test.go.tmpl")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("// " + genHeader + "\n\n")
	buf.Write(src)
	buf.WriteString("\n// taggedUnions lists every union that selectTagged selects the arm of.\nvar taggedUnions = []taggedUnion{\n")
	for _, t := range tagged {
		key, _, _ := unionTag(t)
		fmt.Fprintf(&buf, "{%q, %sArms, %q, %sTag},\n", t.Name, lowerFirst(t.Name), key, lowerFirst(t.Name))
	}
	buf.WriteString("}\n")
	out, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format arms test: %w", err)
	}
	return out, nil
}

// renderRoots emits a registry of the root documents' codecs, for callers
// that select a schema at run time (conformance tests, adapters).
func renderRoots(roots []*root) ([]byte, error) {
	f := jen.NewFilePathName(genPackage, "gen")
	f.HeaderComment(genHeader)
	f.Comment("RootCodec parses and encodes one root schema document without naming its Go type.")
	f.Type().Id("RootCodec").Struct(
		jen.Comment("Schema is the schema file name, e.g. intercept-request.schema.json."), jen.Id("Schema").String(),
		jen.Comment("Type is the Go type name of the root."), jen.Id("Type").String(),
		jen.Comment("Parse validates and decodes; the result is a pointer to the root type."), jen.Id("Parse").Func().Params(jen.Index().Byte()).Params(jen.Any(), jen.Error()),
		jen.Comment("Encode encodes a pointer to the root type."), jen.Id("Encode").Func().Params(jen.Any()).Params(jen.Index().Byte(), jen.Error()),
	)
	var cases []jen.Code
	for _, r := range roots {
		if r.Type.Name == "" {
			continue
		}
		cases = append(cases, jen.Case(jen.Lit(r.File)).Block(jen.Return(jen.Id("RootCodec").Values(
			jen.Id("Schema").Op(":").Lit(r.File),
			jen.Id("Type").Op(":").Lit(r.Type.Name),
			jen.Id("Parse").Op(":").Func().Params(jen.Id("b").Index().Byte()).Params(jen.Any(), jen.Error()).Block(jen.Return(jen.Id("Parse"+r.Func).Call(jen.Id("b")))),
			jen.Id("Encode").Op(":").Func().Params(jen.Id("v").Any()).Params(jen.Index().Byte(), jen.Error()).Block(
				jen.List(jen.Id("p"), jen.Id("ok")).Op(":=").Id("v").Assert(jen.Op("*").Id(r.Type.Name)),
				jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("%w: Encode"+r.Func+" needs *"+r.Type.Name), jen.Id("ErrInvalid")))),
				jen.Return(jen.Id("Encode"+r.Func).Call(jen.Id("p"))),
			),
		), jen.True())))
	}
	f.Comment("LookupRoot returns the codec of a root schema document by file name.")
	f.Func().Id("LookupRoot").Params(jen.Id("schema").String()).Params(jen.Id("RootCodec"), jen.Bool()).Block(
		jen.Switch(jen.Id("schema")).Block(cases...),
		jen.Return(jen.Id("RootCodec").Values(), jen.False()),
	)
	var names []jen.Code
	for _, r := range roots {
		if r.Type.Name != "" {
			names = append(names, jen.Lit(r.File))
		}
	}
	f.Comment("RootSchemas lists the root schema documents that have a codec.")
	f.Func().Id("RootSchemas").Params().Index().String().Block(jen.Return(jen.Index().String().Values(names...)))
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render roots.go: %w", err)
	}
	return buf.Bytes(), nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
