package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// contentDoc is the schema document that owns every content slot shape.
const contentDoc = "content-item.schema.json"

// contentLeaf is what a schema location is as a content slot.
type contentLeaf int

const (
	leafNone     contentLeaf = iota
	leafMessage              // content-item#/$defs/message (and its modelVisibleItem alias)
	leafItem                 // content-item# (any content part)
	leafTextPart             // content-item#/$defs/textPart (a text part)
	leafPartArm              // one part arm used on its own: not a slot the walker knows
)

// leafOf classifies a type by the schema location it was built from.
func leafOf(t *goType) contentLeaf {
	r := resolved(t)
	if r.Loc.File != contentDoc {
		return leafNone
	}
	switch r.Loc.Pointer {
	case "":
		return leafItem
	case "/$defs/message":
		return leafMessage
	case "/$defs/textPart":
		return leafTextPart
	case "/$defs/textBodyPart", "/$defs/textGapPart", "/$defs/textMetadataPart", "/$defs/textOmittedPart",
		"/$defs/attachmentBodyPart", "/$defs/attachmentGapPart", "/$defs/attachmentMetadataPart", "/$defs/attachmentOmittedPart":
		return leafPartArm
	}
	return leafNone
}

// contentWalk finds the content slots of the event payloads: every field,
// array element, nullable value or union arm whose schema is (or contains)
// a canonical message, a content part or a text part. It emits one walker
// per named type on the way to a slot.
//
// With native set, the slots are the native members instead (an object
// field "native" of opaque JSON, at any depth): the walkers it emits drop
// them, copying on write, and take no contentWalker.
type contentWalk struct {
	m        *model
	native   bool
	contains map[*goType]bool
	emitted  map[*goType]bool
	order    []*goType // named types whose walkers are emitted, in discovery order
	err      error
}

// has reports whether t holds a content slot at any depth.
func (w *contentWalk) has(t *goType) bool {
	if v, ok := w.contains[t]; ok {
		return v
	}
	v := w.search(t, map[*goType]bool{})
	w.contains[t] = v
	return v
}

// search is has by depth-first search; seen breaks cycles.
func (w *contentWalk) search(t *goType, seen map[*goType]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if w.native {
		if nativeField(t) != nil {
			return true
		}
	} else if leafOf(t) != leafNone {
		return true
	}
	switch t.Kind {
	case kindAlias:
		return w.search(t.Alias, seen)
	case kindObject:
		for _, f := range t.Fields {
			if w.search(f.Type, seen) {
				return true
			}
		}
	case kindUnion:
		for _, a := range t.Arms {
			if w.search(a.Type, seen) {
				return true
			}
		}
	case kindArray, kindNullable, kindMap:
		return w.search(t.Elem, seen)
	}
	return false
}

func (w *contentWalk) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// nativeField returns the native member of an object type: a field
// "native" holding opaque JSON; nil when it has none.
func nativeField(t *goType) *field {
	if t.Kind != kindObject {
		return nil
	}
	for _, fl := range t.Fields {
		if fl.JSON == "native" && resolved(fl.Type).Kind == kindRaw {
			return fl
		}
	}
	return nil
}

// walkerName is the name of the emitted walker of a named type.
func (w *contentWalk) walkerName(t *goType) string {
	if w.native {
		return "withoutNative" + resolved(t).Name
	}
	return "walk" + resolved(t).Name
}

// walkerArgs are the arguments of a call of an emitted walker on v.
func (w *contentWalk) walkerArgs(v jen.Code) []jen.Code {
	if w.native {
		return []jen.Code{v}
	}
	return []jen.Code{jen.Id("w"), v}
}

// need records that the walker of t must be emitted.
func (w *contentWalk) need(t *goType) {
	r := resolved(t)
	if !w.emitted[r] {
		w.emitted[r] = true
		w.order = append(w.order, r)
	}
}

// own is the copy-on-write statement of a walker: the result starts as a
// shallow copy of the input on the first change.
func own(typ *jen.Statement) jen.Code {
	return jen.If(jen.Id("c").Op("==").Nil()).Block(
		jen.Id("c").Op("=").New(typ),
		jen.Op("*").Id("c").Op("=").Op("*").Id("v"),
	)
}

// ref is an addressable value in emitted code: val reads it, ptr takes
// its address.
type ref struct {
	val func() *jen.Statement
	ptr func() *jen.Statement
}

// fieldRef is the field v.<name> (a value field).
func fieldRef(name string) ref {
	return ref{
		val: func() *jen.Statement { return jen.Id("v").Dot(name) },
		ptr: func() *jen.Statement { return jen.Op("&").Id("v").Dot(name) },
	}
}

// pointerRef is the value the non-nil pointer field v.<name> points to.
func pointerRef(name string) ref {
	return ref{
		val: func() *jen.Statement { return jen.Op("*").Id("v").Dot(name) },
		ptr: func() *jen.Statement { return jen.Id("v").Dot(name) },
	}
}

// place emits the statements that walk the value of type t at at and,
// when the walker reports a change, run set with an expression of the new
// value (of type T).
func (w *contentWalk) place(t *goType, at ref, set func(val jen.Code) []jen.Code, where string, depth int) []jen.Code {
	r := resolved(t)
	call := func(fn jen.Code, arg jen.Code, deref bool) []jen.Code {
		var val jen.Code = jen.Id("x")
		if deref {
			val = jen.Op("*").Id("x")
		}
		return []jen.Code{jen.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Add(fn).Call(arg), jen.Id("ok")).Block(set(val)...)}
	}
	method := func(name string) jen.Code { return jen.Id("w").Dot(name) }
	leaf := leafOf(r)
	if w.native {
		leaf = leafNone
	}
	switch leaf {
	case leafMessage:
		return call(method("message"), at.ptr(), false)
	case leafItem:
		return call(method("item"), at.ptr(), false)
	case leafTextPart:
		return call(method("textPart"), at.ptr(), false)
	case leafPartArm:
		w.fail("%s: a content part arm (%s) used outside a content part union is not a slot the walker knows", where, r.Name)
		return nil
	}
	switch r.Kind {
	case kindObject, kindUnion:
		w.need(r)
		return []jen.Code{jen.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id(w.walkerName(r)).Call(w.walkerArgs(at.ptr())...), jen.Id("ok")).Block(set(jen.Op("*").Id("x"))...)}
	case kindArray:
		elemLeaf := leafOf(r.Elem)
		if w.native {
			elemLeaf = leafNone
		}
		switch elemLeaf {
		case leafMessage:
			return call(method("messages"), at.val(), false)
		case leafItem:
			return call(method("items"), at.val(), false)
		case leafTextPart:
			return call(method("textParts"), at.val(), false)
		}
		// A list of values holding slots: walk each, copying the list on
		// its first change.
		s, i := fmt.Sprintf("s%d", depth), fmt.Sprintf("i%d", depth)
		elem := ref{
			val: func() *jen.Statement { return at.val().Index(jen.Id(i)) },
			ptr: func() *jen.Statement { return jen.Op("&").Add(at.val()).Index(jen.Id(i)) },
		}
		inner := w.place(r.Elem, elem, func(val jen.Code) []jen.Code {
			return []jen.Code{
				jen.If(jen.Id(s).Op("==").Nil()).Block(jen.Id(s).Op("=").Qual("slices", "Clone").Call(at.val())),
				jen.Id(s).Index(jen.Id(i)).Op("=").Add(val),
			}
		}, where+"[]", depth+1)
		return []jen.Code{jen.Block(
			jen.Var().Id(s).Add(hooksExpr(r)),
			jen.For(jen.Id(i).Op(":=").Range().Add(at.val())).Block(inner...),
			jen.If(jen.Id(s).Op("!=").Nil()).Block(set(jen.Id(s))...),
		)}
	case kindNullable:
		value := ref{
			val: func() *jen.Statement { return at.val().Dot("Value") },
			ptr: func() *jen.Statement { return jen.Op("&").Add(at.val()).Dot("Value") },
		}
		inner := w.place(r.Elem, value, func(val jen.Code) []jen.Code {
			return set(jen.Qual(genPackage, "NullableOf").Call(val))
		}, where, depth+1)
		return []jen.Code{jen.If(at.val().Dot("Valid")).Block(inner...)}
	}
	w.fail("%s: a slot inside a %v type is not supported by the walker", where, r.Kind)
	return nil
}

// walker emits the walker of one named object or union type.
func (w *contentWalk) walker(f *jen.File, t *goType) {
	typ := jen.Qual(genPackage, t.Name)
	var body []jen.Code
	body = append(body, jen.Var().Id("c").Op("*").Add(typ.Clone()))
	switch t.Kind {
	case kindObject:
		for _, fl := range t.Fields {
			if w.native && fl == nativeField(t) {
				body = append(body, jen.If(jen.Id("v").Dot(fl.Go).Op("!=").Nil()).Block(own(typ.Clone()), jen.Id("c").Dot(fl.Go).Op("=").Nil()))
				continue
			}
			if !w.has(fl.Type) {
				continue
			}
			where := t.Name + "." + fl.Go
			set := func(val jen.Code) []jen.Code {
				return []jen.Code{own(typ.Clone()), jen.Id("c").Dot(fl.Go).Op("=").Add(val)}
			}
			if !fl.Required && !optionalByNil(fl.Type) {
				setPtr := func(val jen.Code) []jen.Code {
					return []jen.Code{own(typ.Clone()), jen.Id("y").Op(":=").Add(val), jen.Id("c").Dot(fl.Go).Op("=").Op("&").Id("y")}
				}
				body = append(body, jen.If(jen.Id("v").Dot(fl.Go).Op("!=").Nil()).Block(w.place(fl.Type, pointerRef(fl.Go), setPtr, where, 0)...))
				continue
			}
			body = append(body, w.place(fl.Type, fieldRef(fl.Go), set, where, 0)...)
		}
	case kindUnion:
		for _, a := range t.Arms {
			if !w.has(a.Type) {
				continue
			}
			setPtr := func(val jen.Code) []jen.Code {
				return []jen.Code{own(typ.Clone()), jen.Id("y").Op(":=").Add(val), jen.Id("c").Dot(a.Field).Op("=").Op("&").Id("y")}
			}
			body = append(body, jen.If(jen.Id("v").Dot(a.Field).Op("!=").Nil()).Block(w.place(a.Type, pointerRef(a.Field), setPtr, t.Name+"."+a.Field, 0)...))
		}
	}
	body = append(body,
		jen.If(jen.Id("c").Op("==").Nil()).Block(jen.Return(jen.Id("v"), jen.False())),
		jen.Return(jen.Id("c"), jen.True()),
	)
	if w.native {
		f.Commentf("%s returns %s %s without the native members it holds at any depth (a copy) and true, or v and false when it holds none; see withoutNative.", w.walkerName(t), article(strings.ToLower(t.Name)), t.Name)
		f.Func().Id(w.walkerName(t)).Params(jen.Id("v").Op("*").Add(typ.Clone())).Params(jen.Op("*").Add(typ.Clone()), jen.Bool()).Block(body...)
		return
	}
	f.Commentf("%s walks the content slots of %s %s; see walkEvent.", w.walkerName(t), article(strings.ToLower(t.Name)), t.Name)
	f.Func().Id(w.walkerName(t)).Params(jen.Id("w").Id("contentWalker"), jen.Id("v").Op("*").Add(typ.Clone())).Params(jen.Op("*").Add(typ.Clone()), jen.Bool()).Block(body...)
}

// renderHooksContent renders hooks/content_gen.go: walkEvent and the
// per-type walkers it calls, which visit every content slot the schemas
// define for each event (canonical messages, content parts, text parts),
// copying on write. Native payloads, extensions and application JSON are
// not schema-owned slots: they are opaque to the walk.
func renderHooksContent(m *model) ([]byte, error) {
	w := &contentWalk{m: m, contains: map[*goType]bool{}, emitted: map[*goType]bool{}}
	f := jen.NewFilePathName(hooksPackage, "hooks")
	f.HeaderComment(genHeader)
	f.HeaderComment("Source: the event payload schemas and the content-item schema.")
	f.ImportName(genPackage, "gen")

	var cases []jen.Code
	for _, ev := range m.events {
		pt := resolved(m.typeAt(ev.PayloadSchema))
		if !w.has(pt) {
			continue
		}
		w.need(pt)
		arm := jen.Id("e").Dot(ev.GoName)
		cases = append(cases, jen.Case(arm.Clone().Op("!=").Nil()).Block(
			jen.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id(w.walkerName(pt)).Call(jen.Id("w"), arm.Clone()), jen.Id("ok")).Block(
				jen.Return(jen.Op("&").Qual(genPackage, "Event").Values(jen.Id(ev.GoName).Op(":").Id("x")), jen.True()),
			),
			jen.Return(jen.Id("e"), jen.False()),
		))
	}
	f.Comment(`contentWalker visits the content slots of an event. Each method gets one
slot and returns its replacement and true, or false to keep the slot as it
is; the walk copies every container on the way to a replaced slot and
shares the rest.`)
	f.Type().Id("contentWalker").Interface(
		jen.Id("messages").Params(jen.Index().Qual(genPackage, "CanonicalMessage")).Params(jen.Index().Qual(genPackage, "CanonicalMessage"), jen.Bool()),
		jen.Id("message").Params(jen.Op("*").Qual(genPackage, "CanonicalMessage")).Params(jen.Qual(genPackage, "CanonicalMessage"), jen.Bool()),
		jen.Id("items").Params(jen.Index().Qual(genPackage, "ContentItem")).Params(jen.Index().Qual(genPackage, "ContentItem"), jen.Bool()),
		jen.Id("item").Params(jen.Op("*").Qual(genPackage, "ContentItem")).Params(jen.Qual(genPackage, "ContentItem"), jen.Bool()),
		jen.Id("textParts").Params(jen.Index().Qual(genPackage, "TextPart")).Params(jen.Index().Qual(genPackage, "TextPart"), jen.Bool()),
		jen.Id("textPart").Params(jen.Op("*").Qual(genPackage, "TextPart")).Params(jen.Qual(genPackage, "TextPart"), jen.Bool()),
	)
	f.Comment(`walkEvent runs w over every schema-owned content slot of e, in schema
order, and returns the event with the replaced slots (a copy) and true, or e
itself and false when w replaced nothing.`)
	f.Func().Id("walkEvent").Params(jen.Id("w").Id("contentWalker"), jen.Id("e").Op("*").Qual(genPackage, "Event")).Params(jen.Op("*").Qual(genPackage, "Event"), jen.Bool()).Block(
		jen.Switch().Block(cases...),
		jen.Return(jen.Id("e"), jen.False()),
	)
	if err := w.candidates(f); err != nil {
		return nil, err
	}
	for i := 0; i < len(w.order); i++ { // walker bodies may discover more types
		w.walker(f, w.order[i])
	}
	if w.err != nil {
		return nil, w.err
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// candidateSlot is an event whose interception state carries a candidate
// value holding content slots.
type candidateSlot struct {
	goName string  // the event's Go name
	value  *goType // the type of state.candidate.value
}

// candidateSlots reads the per-event state definitions of
// intercept-request.schema.json (params.allOf: if event.type is a const,
// then state is a $ref) and returns the events whose candidate value holds
// a content slot, in schema order.
func (w *contentWalk) candidateSlots() ([]candidateSlot, error) {
	const doc = "intercept-request.schema.json"
	goNames := map[string]string{}
	for _, ev := range w.m.events {
		goNames[ev.Name] = ev.GoName
	}
	var out []candidateSlot
	for i, member := range w.m.set.Docs[doc].Raw.get("allOf").arrOrNil() {
		for j, cond := range member.get("properties").get("params").get("allOf").arrOrNil() {
			name := cond.get("if").get("properties").get("event").get("properties").get("type").get("const")
			ref := cond.get("then").get("properties").get("state").get("$ref")
			if name == nil || ref == nil {
				continue
			}
			at := loc{File: doc, Pointer: fmt.Sprintf("/allOf/%d/properties/params/allOf/%d/then/properties/state", i, j)}
			goName, ok := goNames[name.str]
			if !ok {
				return nil, fmt.Errorf("%s: state of an unknown event %q", at, name.str)
			}
			target, err := w.m.set.resolveRef(at, ref.str)
			if err != nil {
				return nil, err
			}
			st := resolved(w.m.b.typeAt(target, ""))
			value, err := candidateValue(st)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", at, name.str, err)
			}
			if w.has(value) {
				if resolved(value).Name == "" {
					return nil, fmt.Errorf("%s (%s): the candidate value holds content but has no named type to decode it", at, name.str)
				}
				out = append(out, candidateSlot{goName: goName, value: value})
			}
		}
	}
	return out, nil
}

// candidateValue is the type of state.candidate.value: state is an object
// whose candidate is a nullable object with a value member.
func candidateValue(st *goType) (*goType, error) {
	member := func(t *goType, json string) *goType {
		if t.Kind != kindObject {
			return nil
		}
		for _, fl := range t.Fields {
			if fl.JSON == json {
				return fl.Type
			}
		}
		return nil
	}
	cand := member(st, "candidate")
	if cand == nil {
		return nil, fmt.Errorf("the state has no candidate member")
	}
	if c := resolved(cand); c.Kind == kindNullable {
		cand = c.Elem
	}
	value := member(resolved(cand), "value")
	if value == nil {
		return nil, fmt.Errorf("the candidate is not an object with a value member")
	}
	return value, nil
}

// candidates emits walkCandidate, which runs a walker over the content
// slots of an interception candidate value.
func (w *contentWalk) candidates(f *jen.File) error {
	slots, err := w.candidateSlots()
	if err != nil {
		return err
	}
	var cases []jen.Code
	for _, c := range slots {
		val := ref{
			val: func() *jen.Statement { return jen.Id("val") },
			ptr: func() *jen.Statement { return jen.Op("&").Id("val") },
		}
		walk := w.place(c.value, val, func(x jen.Code) []jen.Code {
			return []jen.Code{jen.Id("val").Op("=").Add(x), jen.Id("changed").Op("=").True()}
		}, "candidate of "+c.goName, 0)
		body := []jen.Code{
			jen.Var().Id("val").Add(hooksExpr(c.value)),
			jen.If(jen.Err().Op(":=").Id("val").Dot("UnmarshalJSON").Call(jen.Id("v")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.False(), jen.Err())),
			jen.Id("changed").Op(":=").False(),
		}
		body = append(body, walk...)
		body = append(body, jen.Return(jen.Id("val"), jen.Id("changed"), jen.Nil()))
		cases = append(cases, jen.Case(jen.Qual(genPackage, "Event"+c.goName)).Block(body...))
	}
	f.Comment(`walkCandidate runs w over the content slots of v, the candidate value of
an interception state at event name, typed by the event's state definition in
intercept-request.schema.json. It returns the value with the replaced slots
(to be encoded once the walker is done with it) and true; false when the
event's candidate holds no content slot or w replaced nothing; an error when
v does not decode as its type.`)
	f.Func().Id("walkCandidate").Params(jen.Id("w").Id("contentWalker"), jen.Id("name").Qual(genPackage, "EventName"), jen.Id("v").Qual("encoding/json", "RawMessage")).Params(jen.Qual("encoding/json", "Marshaler"), jen.Bool(), jen.Error()).Block(
		jen.Switch(jen.Id("name")).Block(cases...),
		jen.Return(jen.Nil(), jen.False(), jen.Nil()),
	)
	return nil
}
