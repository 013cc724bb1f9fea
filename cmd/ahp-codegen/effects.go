package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// serverPackage is the import path of the backend package that receives
// effects_gen.go.
const serverPackage = "github.com/agenthooks/agenthooks-go/server"

// effectsSchema is the document the effect constructors are derived from.
const effectsSchema = "effect.schema.json"

// renderServerEffects renders server/effects_gen.go: one typed constructor
// per effect shape of effect.schema.json (the arms of the top-level oneOf and
// the other effect $defs that share an arm's discriminators), plus two
// unexported helpers the server's admission check uses: effectFacts, which
// reads an effect's family, target and operation from its discriminators,
// and modifyGrant, which reads a modification grant from
// capabilities.schema.json#/properties/modify.
//
// Constructor rules, all derived from the schema:
//   - the name is the definition name without its "Effect" suffix
//     (AllowEffect → Allow, StopFlowEffect → StopFlow);
//   - const members are filled in; the other required members become
//     parameters in schema order; an optional string member with minLength
//     ≥ 1 of a definition that has no other free member becomes a parameter
//     whose empty value means absent (ContinueFlow);
//   - a required member whose schema is an enumeration of consts named
//     "operation" yields one constructor per value, named after the value
//     and the definition without its family prefix (ModifyMessagesEffect →
//     ReplaceMessages, MergeMessages);
//   - a member whose Go type is raw JSON takes any value, encoded with
//     encoding/json (a value that the schema requires to be an object is
//     checked to be one); every constructor returns only the effect, and a
//     value that cannot be encoded makes an effect that admission rejects
//     with the constructor's reason (server/effects.go);
//   - a definition that is not an arm of the union is built through the arm
//     with the same const discriminators, which must hold the member as raw
//     JSON (ReturnMessagesEffect → the ReturnToolEffect arm);
//   - the arm whose only free member is an unconstrained value (schema true)
//     is the family's generic constructor, named after the family (Return).
func renderServerEffects(m *model) ([]byte, error) {
	union := m.typeAt(effectsSchema)
	if union == nil || union.Kind != kindUnion {
		return nil, fmt.Errorf("%s: the root is not a union", effectsSchema)
	}
	doc := m.set.Docs[effectsSchema]
	if doc == nil {
		return nil, fmt.Errorf("%s: not loaded", effectsSchema)
	}

	var shapes []*effectShape
	armLocs := map[string]bool{}
	for _, a := range union.Arms {
		t := resolved(a.Type)
		if t.Kind != kindObject {
			return nil, fmt.Errorf("%s: arm %s is not an object", effectsSchema, a.Field)
		}
		armLocs[a.Loc.String()] = true
		s, err := newEffectShape(m, a.Loc, t, a, a)
		if err != nil {
			return nil, err
		}
		shapes = append(shapes, s)
	}
	// Other effect definitions: built through the arm with the same const
	// discriminators. They follow that arm in the output.
	if defs := doc.Raw.get("$defs"); defs != nil {
		for _, k := range defs.keys {
			l := loc{File: effectsSchema, Pointer: "/$defs/" + escapePointer(k)}
			if armLocs[l.String()] || !strings.HasSuffix(k, "Effect") {
				continue
			}
			t := resolved(m.typeAt(l.String()))
			if t.Kind != kindObject {
				continue
			}
			via := matchingArm(union, t)
			if via == nil {
				return nil, fmt.Errorf("%s: definition %s matches no arm of the effect union", effectsSchema, k)
			}
			s, err := newEffectShape(m, l, t, nil, via)
			if err != nil {
				return nil, err
			}
			// Insert after the last shape built through the same arm.
			at := len(shapes)
			for i, o := range shapes {
				if o.via == via {
					at = i + 1
				}
			}
			shapes = append(shapes[:at], append([]*effectShape{s}, shapes[at:]...)...)
		}
	}

	f := jen.NewFilePathName(serverPackage, "server")
	f.ImportName(genPackage, "gen")
	f.HeaderComment(genHeader)
	f.HeaderComment("Source: schemas/effect.schema.json, deny-effect.schema.json, capabilities.schema.json")

	seen := map[string]bool{}
	for _, s := range shapes {
		for _, c := range s.constructors() {
			if seen[c.name] {
				return nil, fmt.Errorf("%s: two effect constructors named %s", effectsSchema, c.name)
			}
			seen[c.name] = true
			c.emit(f)
		}
	}

	if err := emitEffectFacts(f, union); err != nil {
		return nil, err
	}
	if err := emitModifyGrant(f, m); err != nil {
		return nil, err
	}

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render server/effects_gen.go: %w", err)
	}
	return buf.Bytes(), nil
}

// effectShape is one effect definition and the union arm that carries it.
type effectShape struct {
	m      *model
	loc    loc
	t      *goType // the definition's object type
	arm    *arm    // the arm when the definition is one; nil otherwise
	via    *arm    // the arm that carries the value (== arm for arms)
	raw    *rawNode
	family string // the "type" const
	consts []*field
	free   []*field // required non-const members, in schema order
	opt    *field   // optional string parameter (empty = absent), if any
	opEnum *field   // the "operation" member when it is an enumeration
}

func newEffectShape(m *model, l loc, t *goType, a, via *arm) (*effectShape, error) {
	n, err := m.set.resolvePointer(l)
	if err != nil {
		return nil, err
	}
	s := &effectShape{m: m, loc: l, t: t, arm: a, via: via, raw: n.Raw}
	var optional []*field
	for _, fl := range t.Fields {
		switch {
		case fl.Const != nil:
			s.consts = append(s.consts, fl)
			if fl.JSON == "type" {
				s.family = *fl.Const
			}
		case fl.Required && fl.JSON == "operation" && resolved(fl.Type).Kind == kindEnum:
			s.opEnum = fl
		case fl.Required:
			s.free = append(s.free, fl)
		default:
			optional = append(optional, fl)
		}
	}
	if s.family == "" {
		return nil, fmt.Errorf("%s: effect definition has no const \"type\"", l)
	}
	if len(s.free) == 0 && s.opEnum == nil {
		for _, fl := range optional {
			p := s.prop(fl.JSON)
			if resolved(fl.Type).Kind == kindString && p.get("minLength") != nil && p.get("minLength").num != "0" {
				if s.opt != nil {
					s.opt = nil // more than one: none is a parameter
					break
				}
				s.opt = fl
			}
		}
	}
	return s, nil
}

// prop returns the raw schema of the named member.
func (s *effectShape) prop(name string) *rawNode {
	return s.raw.get("properties").get(name)
}

// ref is the schema reference of the definition, for documentation.
func (s *effectShape) ref() string {
	return s.loc.File + "#" + s.loc.Pointer
}

// baseName is the definition name without its "Effect" suffix.
func (s *effectShape) baseName() string {
	return strings.TrimSuffix(s.t.Name, "Effect")
}

// generic reports whether the shape is its family's generic constructor: a
// union arm whose only free member is an unconstrained value (schema true).
func (s *effectShape) generic() bool {
	if s.arm == nil || len(s.free) != 1 || s.opEnum != nil || s.opt != nil {
		return false
	}
	p := s.prop(s.free[0].JSON)
	return p != nil && p.kind == 'b' && p.boolv
}

// effectCtor is one constructor to emit.
type effectCtor struct {
	shape     *effectShape
	name      string
	operation string // value of the enumerated operation member, if any
	opConst   string // Go constant name of that value
}

func (s *effectShape) constructors() []effectCtor {
	if s.opEnum == nil {
		name := s.baseName()
		if s.generic() {
			name = goCase(s.family)
		}
		return []effectCtor{{shape: s, name: name}}
	}
	rest := strings.TrimPrefix(s.baseName(), goCase(s.family))
	enum := resolved(s.opEnum.Type)
	var out []effectCtor
	for _, v := range enum.EnumValues {
		out = append(out, effectCtor{shape: s, name: goCase(v) + rest, operation: v, opConst: enum.Name + goCase(v)})
	}
	return out
}

// rawCarrier reports whether the member is carried as raw JSON by the arm,
// so that the constructor must encode it.
func (s *effectShape) rawCarrier(fl *field) bool {
	if resolved(fl.Type).Kind == kindRaw {
		return true
	}
	if s.arm == nil {
		af := armField(s.via, fl.JSON)
		return af != nil && resolved(af.Type).Kind == kindRaw
	}
	return false
}

func armField(a *arm, name string) *field {
	for _, fl := range resolved(a.Type).Fields {
		if fl.JSON == name {
			return fl
		}
	}
	return nil
}

// paramName is the Go parameter name of a member.
func paramName(fl *field) string {
	n := lowerFirst(fl.Go)
	switch n {
	case "type", "func", "var", "range", "map", "chan", "default", "select", "case", "go", "interface", "package", "import", "return", "struct", "const":
		return n + "Value"
	}
	return n
}

// genType is the Go type expression of t qualified with package gen.
func genType(t *goType) *jen.Statement {
	switch t.Kind {
	case kindRaw:
		return jen.Any()
	case kindString:
		if t.Name != "" {
			return jen.Qual(genPackage, t.Name)
		}
		return jen.String()
	case kindNumber:
		return jen.Qual("encoding/json", "Number")
	case kindBool:
		return jen.Bool()
	case kindArray:
		if t.Name != "" {
			return jen.Qual(genPackage, t.Name)
		}
		return jen.Index().Add(genType(t.Elem))
	case kindMap:
		return jen.Qual(genPackage, "OrderedMap").Types(genType(t.Elem))
	case kindNullable:
		return jen.Qual(genPackage, "Nullable").Types(genType(t.Elem))
	}
	return jen.Qual(genPackage, t.Name)
}

// jsonObjectRequired reports whether the member's schema requires an object.
func (s *effectShape) jsonObjectRequired(fl *field) bool {
	p := s.prop(fl.JSON)
	return p != nil && p.get("type") != nil && p.get("type").kind == 's' && p.get("type").str == "object"
}

func (c effectCtor) doc() string {
	s := c.shape
	var b strings.Builder
	fmt.Fprintf(&b, "%s returns %s %q effect", c.name, article(s.family), s.family)
	if c.operation != "" {
		fmt.Fprintf(&b, " with operation %q", c.operation)
	}
	fmt.Fprintf(&b, " (%s)", s.ref())
	var params []string
	for _, fl := range s.free {
		params = append(params, paramName(fl))
	}
	if len(params) > 0 {
		fmt.Fprintf(&b, " built from %s", strings.Join(params, " and "))
	}
	if s.arm == nil {
		fmt.Fprintf(&b, ", carried by the %s arm of gen.Effect", s.via.Field)
	}
	b.WriteString(".")
	if s.opt != nil {
		fmt.Fprintf(&b, " An empty %s leaves the optional %q member absent.", paramName(s.opt), s.opt.JSON)
	}
	if c.operation != "" {
		if d := s.prop(s.opEnum.JSON).get("description"); d != nil && d.kind == 's' {
			b.WriteString(" Operations: " + strings.TrimSpace(d.str))
		}
	}
	for _, fl := range s.free {
		if s.rawCarrier(fl) {
			fmt.Fprintf(&b, " The %s is encoded with encoding/json", paramName(fl))
			if s.jsonObjectRequired(fl) {
				b.WriteString(" and must encode as a JSON object")
			}
			b.WriteString(". A value that cannot be encoded")
			if s.jsonObjectRequired(fl) {
				b.WriteString(" or is not an object")
			}
			b.WriteString(" makes an effect that is never sent: Admit, and the dispatcher before sending, reject it with an *AdmissionError naming the effect and this constructor.")
		}
	}
	b.WriteString(" Like every effect, it is checked against the canonical schema and the request's capabilities when the response is admitted.")
	return b.String()
}

func (c effectCtor) emit(f *jen.File) {
	s := c.shape

	var params []jen.Code
	for _, fl := range s.free {
		typ := genType(resolved(fl.Type))
		if fl.Type.Kind == kindAlias || fl.Type.Name != "" {
			typ = genType(fl.Type)
		}
		params = append(params, jen.Id(paramName(fl)).Add(typ))
	}
	if s.opt != nil {
		params = append(params, jen.Id(paramName(s.opt)).String())
	}

	armType := resolved(s.via.Type)
	var body []jen.Code
	values := jen.Dict{}
	for _, fl := range s.consts {
		if af := armField(s.via, fl.JSON); af != nil {
			values[jen.Id(af.Go)] = constValue(af, *fl.Const)
		}
	}
	if c.operation != "" {
		values[jen.Id(s.opEnum.Go)] = jen.Qual(genPackage, c.opConst)
	}
	for _, fl := range s.free {
		af := armField(s.via, fl.JSON)
		if s.rawCarrier(fl) {
			values[jen.Id(af.Go)] = jen.Id("encodeEffectValue").Call(jen.Lit(c.name), jen.Id(paramName(fl)), jen.Lit(s.jsonObjectRequired(fl)))
			continue
		}
		values[jen.Id(af.Go)] = jen.Id(paramName(fl))
	}
	var optSet []jen.Code
	if s.opt != nil {
		p := paramName(s.opt)
		optSet = append(optSet, jen.If(jen.Id(p).Op("!=").Lit("")).Block(
			jen.Id("e").Dot(s.opt.Go).Op("=").Op("&").Id(p),
		))
	}
	effect := jen.Qual(genPackage, "Effect").Values(jen.Dict{
		jen.Id(s.via.Field): jen.Op("&").Qual(genPackage, armType.Name).Values(values),
	})
	if len(optSet) > 0 {
		body = append(body, jen.Id("e").Op(":=").Op("&").Qual(genPackage, armType.Name).Values(values))
		body = append(body, optSet...)
		effect = jen.Qual(genPackage, "Effect").Values(jen.Dict{jen.Id(s.via.Field): jen.Id("e")})
	}
	body = append(body, jen.Return(effect))

	results := jen.Qual(genPackage, "Effect")
	for _, line := range wrapComment(c.doc()) {
		f.Comment(line)
	}
	f.Func().Id(c.name).Params(params...).Add(results).Block(body...)
	f.Line()
}

// constValue is the Go expression of a const member's value.
func constValue(fl *field, v string) jen.Code {
	if t := resolved(fl.Type); t.Kind == kindEnum && t.Name != "" {
		return jen.Qual(genPackage, t.Name).Call(jen.Lit(v))
	}
	return jen.Lit(v)
}

// matchingArm returns the union arm whose const discriminators equal the
// definition's, or nil.
func matchingArm(union *goType, t *goType) *arm {
	want := map[string]string{}
	for _, fl := range t.Fields {
		if fl.Const != nil {
			want[fl.JSON] = *fl.Const
		}
	}
	var found *arm
	for _, a := range union.Arms {
		got := map[string]string{}
		for _, fl := range resolved(a.Type).Fields {
			if fl.Const != nil {
				got[fl.JSON] = *fl.Const
			}
		}
		if len(got) != len(want) {
			continue
		}
		same := true
		for k, v := range want {
			if got[k] != v {
				same = false
			}
		}
		if same {
			if found != nil {
				return nil // ambiguous
			}
			found = a
		}
	}
	return found
}

// emitEffectFacts emits effectFacts, which reads the family, modification
// or flow target and operation of an effect from its discriminators: const
// members give literal values, enumerated members are read from the effect.
func emitEffectFacts(f *jen.File, union *goType) error {
	var cases []jen.Code
	for _, a := range union.Arms {
		t := resolved(a.Type)
		var family, target, operation jen.Code = jen.Lit(""), jen.Lit(""), jen.Lit("")
		hasFamily := false
		for _, fl := range t.Fields {
			var v jen.Code
			switch {
			case fl.Const != nil:
				v = jen.Lit(*fl.Const)
			case resolved(fl.Type).Kind == kindEnum:
				v = jen.String().Call(jen.Id("e").Dot(a.Field).Dot(fl.Go))
			default:
				continue
			}
			switch fl.JSON {
			case "type":
				family, hasFamily = v, fl.Const != nil
			case "target":
				target = v
			case "operation":
				operation = v
			}
		}
		if !hasFamily {
			return fmt.Errorf("%s: arm %s has no const type", effectsSchema, a.Field)
		}
		cases = append(cases, jen.Case(jen.Id("e").Dot(a.Field).Op("!=").Nil()).Block(
			jen.Return(jen.Qual(genPackage, "EffectFamily").Call(family), target, operation),
		))
	}
	f.Comment("effectFacts returns the family (the \"type\" member), the target and the")
	f.Comment("operation of the arm that is set, from the discriminators of")
	f.Comment("effect.schema.json; members an arm does not have are empty. It returns")
	f.Comment("empty strings when no arm is set.")
	f.Func().Id("effectFacts").Params(jen.Id("e").Op("*").Qual(genPackage, "Effect")).Params(
		jen.Id("family").Qual(genPackage, "EffectFamily"), jen.Id("target").String(), jen.Id("operation").String(),
	).Block(
		jen.Switch().Block(cases...),
		jen.Return(jen.Lit(""), jen.Lit(""), jen.Lit("")),
	)
	f.Line()
	return nil
}

// emitModifyGrant emits modifyGrant, which reports whether a modification
// target grants an operation, from the boolean members of each target object
// of capabilities.schema.json#/properties/modify.
func emitModifyGrant(f *jen.File, m *model) error {
	const ref = "capabilities.schema.json#/properties/modify"
	mod := m.typeAt(ref)
	if mod == nil || resolved(mod).Kind != kindObject {
		return fmt.Errorf("%s is not an object", ref)
	}
	var targets []jen.Code
	for _, tf := range resolved(mod).Fields {
		tt := resolved(tf.Type)
		if tt.Kind != kindObject {
			return fmt.Errorf("%s/properties/%s is not an object", ref, tf.JSON)
		}
		var ops []jen.Code
		for _, of := range tt.Fields {
			if resolved(of.Type).Kind != kindBool {
				continue
			}
			ops = append(ops, jen.Case(jen.Lit(of.JSON)).Block(jen.Return(jen.Id("m").Dot(tf.Go).Dot(of.Go))))
		}
		if len(ops) == 0 {
			return fmt.Errorf("%s/properties/%s has no boolean operation members", ref, tf.JSON)
		}
		targets = append(targets, jen.Case(jen.Lit(tf.JSON)).Block(
			jen.If(jen.Id("m").Dot(tf.Go).Op("==").Nil()).Block(jen.Return(jen.False())),
			jen.Switch(jen.Id("operation")).Block(ops...),
		))
	}
	f.Comment("modifyGrant reports whether m grants operation on target, from the")
	f.Comment("boolean members of each target object of " + ref + ".")
	f.Func().Id("modifyGrant").Params(
		jen.Id("m").Op("*").Qual(genPackage, "CapabilitiesModify"), jen.List(jen.Id("target"), jen.Id("operation")).String(),
	).Bool().Block(
		jen.If(jen.Id("m").Op("==").Nil()).Block(jen.Return(jen.False())),
		jen.Switch(jen.Id("target")).Block(targets...),
		jen.Return(jen.False()),
	)
	return nil
}

// article returns the indefinite article for w.
func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}

// wrapComment wraps text at about 76 columns into comment lines.
func wrapComment(text string) []string {
	words := strings.Fields(text)
	var lines []string
	line := ""
	for _, w := range words {
		if line != "" && len(line)+1+len(w) > 76 {
			lines = append(lines, line)
			line = w
			continue
		}
		if line == "" {
			line = w
		} else {
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
