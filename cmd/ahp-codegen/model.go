package main

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"
)

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// kind is the Go shape chosen for a schema node.
type kind int

const (
	kindRaw         kind = iota // any JSON: json.RawMessage
	kindString                  // string (or a named string type)
	kindNumber                  // json.Number, exact text
	kindBool                    // bool
	kindEnum                    // named string type with constants (closed or open)
	kindObject                  // struct with known fields and kept unknown members
	kindUnion                   // struct with one pointer per arm
	kindScalarUnion             // raw-backed named type for unions of non-object shapes
	kindArray                   // slice
	kindMap                     // OrderedMap[T]
	kindNullable                // Nullable[T]
	kindAlias                   // Go type alias to another named type
)

// goType is the intermediate model of one Go type.
type goType struct {
	Kind   kind
	Name   string // Go name for named kinds; "" for anonymous (primitive, slice)
	File   string // document whose generated file declares it
	Loc    loc
	AlsoAt []loc  // other locations with an identical anonymous schema
	Doc    string // description
	Elem   *goType
	Alias  *goType

	// object
	Fields       []*field
	AllowUnknown bool

	// union
	Arms []*arm

	// enum
	EnumValues []string
	OpenEnum   bool // also accepts strings outside EnumValues

	// scalar union
	ScalarKinds []string // JSON kinds accepted: string, number, integer, boolean, array, object, null
}

func (t *goType) named() bool {
	switch t.Kind {
	case kindEnum, kindObject, kindUnion, kindScalarUnion, kindAlias:
		return true
	case kindString, kindArray:
		return t.Name != ""
	}
	return false
}

type field struct {
	JSON     string
	Go       string
	Type     *goType
	Required bool
	Const    *string // string const discriminator, if any
	Doc      string
}

type arm struct {
	Field  string  // Go field name inside the union
	Type   *goType // the arm's type (object or union)
	Loc    loc     // schema location of the arm (for fallback validation)
	Discs  []disc  // string-valued discriminators that select this arm
	Needed []string

	Raw     *rawNode
	DiscKey string
	Inline  bool // the arm is written inline, not a $ref
}

type disc struct {
	Key    string
	Values []string
}

// builder turns schema nodes into goTypes.
type builder struct {
	set      *schemaSet
	byLoc    map[string]*goType
	names    map[string]loc
	ordered  []*goType // named types in creation order
	inFlight map[string]*goType
	byPrint  map[string]*goType
	errs     []error
}

func newBuilder(set *schemaSet) *builder {
	return &builder{set: set, byLoc: map[string]*goType{}, names: map[string]loc{}, inFlight: map[string]*goType{}, byPrint: map[string]*goType{}}
}

func (b *builder) fail(l loc, format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf("%s: %s", l, fmt.Sprintf(format, args...)))
}

var rawType = &goType{Kind: kindRaw}

// typeAt builds (or returns the memoized) type of the node at l. hint names
// anonymous nodes.
func (b *builder) typeAt(l loc, hint string) *goType {
	key := l.String()
	if t, ok := b.byLoc[key]; ok {
		return t
	}
	if t, ok := b.inFlight[key]; ok {
		return t
	}
	n, err := b.set.resolvePointer(l)
	if err != nil {
		b.fail(l, "%v", err)
		return rawType
	}
	shareable := !isDefsRoot(l)
	if _, stable := b.set.StableNames[l.String()]; stable {
		shareable = false
	}
	var fp string
	if isDefsRoot(l) && l.Pointer != "" {
		// A definition identical to an earlier one (after $ref resolution)
		// becomes an alias of it.
		fp = "defs:" + b.fingerprint(l, n.Raw)
		if t, ok := b.byPrint[fp]; ok && !onlyRef(n.Raw) {
			a := &goType{Kind: kindAlias, File: l.File, Loc: l, Alias: t, Doc: describe(n)}
			b.register(a)
			b.byLoc[key] = a
			return a
		}
		t := b.build(n, hint)
		b.byLoc[key] = t
		if t.named() && t.Loc == l && t.Kind != kindAlias {
			b.byPrint[fp] = t
		}
		return t
	}
	if shareable {
		fp = leafKey(l) + ":" + b.fingerprint(l, n.Raw)
		if t, ok := b.byPrint[fp]; ok {
			t.AlsoAt = append(t.AlsoAt, l)
			b.byLoc[key] = t
			return t
		}
	}
	t := b.build(n, hint)
	b.byLoc[key] = t
	if shareable && t.named() && t.Loc == l {
		b.byPrint[fp] = t
	}
	return t
}

func (b *builder) register(t *goType) {
	b.ordered = append(b.ordered, t)
}

// schemaTypes returns the JSON "type" keyword, preferring the go-jsonschema model.
func schemaTypes(n *node) []string {
	if n.Model != nil && len(n.Model.Type) > 0 && n.Raw.has("type") {
		return []string(n.Model.Type)
	}
	t := n.Raw.get("type")
	if t == nil {
		return nil
	}
	if t.kind == 's' {
		return []string{t.str}
	}
	var out []string
	for _, v := range t.arr {
		out = append(out, v.str)
	}
	return out
}

func requiredOf(n *node) []string {
	if n.Model != nil && n.Raw.has("required") {
		return n.Model.Required
	}
	var out []string
	for _, v := range n.Raw.get("required").arrOrNil() {
		out = append(out, v.str)
	}
	return out
}

func (n *rawNode) arrOrNil() []*rawNode {
	if n == nil || n.kind != 'a' {
		return nil
	}
	return n.arr
}

func describe(n *node) string {
	if n.Model != nil && n.Model.Description != "" {
		return n.Model.Description
	}
	if d := n.Raw.get("description"); d != nil {
		return d.str
	}
	return ""
}

// memberDoc returns the description of an object member: that of the
// location its type was chosen from, else that of any other location
// contributing to the member, else that of the definition a $ref at one of
// them names (followed through further $refs). Empty when the schemas
// describe none of them.
func (b *builder) memberDoc(chosen loc, locs []loc) string {
	order := append([]loc{chosen}, locs...)
	for _, l := range order {
		if pn, err := b.set.resolvePointer(l); err == nil {
			if d := describe(pn); d != "" {
				return d
			}
		}
	}
	for _, l := range order {
		for hop := 0; hop < 8; hop++ {
			pn, err := b.set.resolvePointer(l)
			if err != nil {
				break
			}
			ref := pn.Raw.get("$ref")
			if ref == nil || ref.kind != 's' {
				break
			}
			if l, err = b.set.resolveRef(l, ref.str); err != nil {
				break
			}
			if tn, err := b.set.resolvePointer(l); err == nil {
				if d := describe(tn); d != "" {
					return d
				}
			}
		}
	}
	return ""
}

// structural reports whether a schema node says anything about shape (as
// opposed to pure constraints such as required/not/if).
func structural(r *rawNode) bool {
	if r == nil || r.kind != 'o' {
		return r != nil && r.kind == 'b'
	}
	for _, k := range []string{"type", "$ref", "properties", "items", "enum", "const", "oneOf", "anyOf", "additionalProperties"} {
		if r.has(k) {
			return true
		}
	}
	for _, m := range r.get("allOf").arrOrNil() {
		if structural(m) {
			return true
		}
	}
	return false
}

func (b *builder) build(n *node, hint string) *goType {
	r := n.Raw
	l := n.Loc
	if r.kind == 'b' { // boolean schema
		return rawType
	}
	if ref := r.get("$ref"); ref != nil {
		target, err := b.set.resolveRef(l, ref.str)
		if err != nil {
			b.fail(l, "%v", err)
			return rawType
		}
		t := b.typeAt(target, hint)
		if isDefsRoot(l) && t.named() && !onlyRef(r) {
			return t
		}
		if isDefsRoot(l) && l.Pointer != "" && t.named() {
			a := &goType{Kind: kindAlias, File: l.File, Loc: l, Alias: t, Doc: describe(n)}
			b.register(a)
			return a
		}
		return t
	}
	if r.has("allOf") && structuralAllOf(r) {
		return b.buildAllOf(n, hint)
	}
	if c := r.get("const"); c != nil {
		switch c.kind {
		case 's':
			return &goType{Kind: kindString}
		case 'b':
			return &goType{Kind: kindBool}
		case 'n':
			return &goType{Kind: kindNumber}
		}
		return rawType
	}
	if e := r.get("enum"); e != nil {
		return b.buildEnum(n, hint, e.arr, false)
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if arms := r.get(kw).arrOrNil(); arms != nil && armsStructural(arms) && !(r.has("properties") && !armsAddShape(b, l.child(kw), arms)) {
			return b.buildUnion(n, hint, kw, arms)
		}
	}
	types := schemaTypes(n)
	if len(types) > 1 {
		return b.buildScalarUnionFromTypes(n, hint, types)
	}
	typ := ""
	if len(types) == 1 {
		typ = types[0]
	} else if r.has("properties") {
		typ = "object"
	}
	switch typ {
	case "string":
		if isDefsRoot(l) {
			t := &goType{Kind: kindString, Name: "?", File: l.File, Loc: l, Doc: describe(n)}
			b.register(t)
			return t
		}
		return &goType{Kind: kindString}
	case "integer", "number":
		return &goType{Kind: kindNumber}
	case "boolean":
		return &goType{Kind: kindBool}
	case "array":
		var elem *goType
		if r.has("items") {
			elem = b.typeAt(l.child("items"), singular(hint))
		} else {
			elem = rawType
		}
		if isDefsRoot(l) {
			t := &goType{Kind: kindArray, Name: "?", File: l.File, Loc: l, Elem: elem, Doc: describe(n)}
			b.register(t)
			return t
		}
		return &goType{Kind: kindArray, Elem: elem}
	case "object":
		if r.has("properties") {
			return b.buildObject(n, hint, []*node{n})
		}
		if ap := r.get("additionalProperties"); ap != nil && structural(ap) && !(ap.kind == 'b') {
			elem := b.typeAt(l.child("additionalProperties"), hint+"Value")
			return &goType{Kind: kindMap, Elem: elem}
		}
		return rawType
	}
	return rawType
}

// leafKey is the member name an anonymous node sits under (its items
// included), so that only same-named identical shapes share a type.
func leafKey(l loc) string {
	segs := strings.Split(l.Pointer, "/")
	for i := len(segs) - 1; i > 0; i-- {
		if segs[i-1] == "properties" {
			return segs[i]
		}
	}
	return ""
}

// onlyRef reports whether a node is a bare $ref (annotations aside).
func onlyRef(r *rawNode) bool {
	for _, k := range r.keys {
		switch k {
		case "$ref", "description", "$comment", "title":
		default:
			return false
		}
	}
	return true
}

func isDefsRoot(l loc) bool {
	segs := strings.Split(strings.TrimPrefix(l.Pointer, "/"), "/")
	return l.Pointer == "" || (len(segs) == 2 && segs[0] == "$defs")
}

func structuralAllOf(r *rawNode) bool {
	for _, m := range r.get("allOf").arrOrNil() {
		if structural(m) {
			return true
		}
	}
	return false
}

func armsStructural(arms []*rawNode) bool {
	for _, a := range arms {
		if !structural(a) {
			return false
		}
	}
	return true
}

// armsAddShape reports whether union arms under an object with its own
// properties define new members (otherwise they only constrain the object).
func armsAddShape(b *builder, base loc, arms []*rawNode) bool {
	for _, a := range arms {
		if a.has("$ref") || a.has("type") {
			return true
		}
	}
	return false
}

func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "ches"):
		return strings.TrimSuffix(s, "es")
	case strings.HasSuffix(s, "ss"):
		return s + "Item"
	case strings.HasSuffix(s, "s"):
		return strings.TrimSuffix(s, "s")
	case s == "":
		return "Item"
	}
	return s + "Item"
}

func (b *builder) buildEnum(n *node, hint string, values []*rawNode, open bool) *goType {
	var vals []string
	for _, v := range values {
		if v.kind != 's' {
			return rawType
		}
		vals = append(vals, v.str)
	}
	t := &goType{Kind: kindEnum, File: n.Loc.File, Loc: n.Loc, EnumValues: vals, OpenEnum: open, Doc: describe(n)}
	b.register(t)
	return t
}

// collectObject gathers the ordered properties, required names and
// additionalProperties policy of an object node, following allOf and $ref.
type objectView struct {
	order    []string
	props    map[string][]loc // contributing schemas, base first
	required map[string]bool
	closed   bool
}

func (b *builder) collect(v *objectView, n *node, depth int) {
	if depth > 16 {
		b.fail(n.Loc, "allOf/$ref nesting too deep")
		return
	}
	r := n.Raw
	if ref := r.get("$ref"); ref != nil {
		target, err := b.set.resolveRef(n.Loc, ref.str)
		if err != nil {
			b.fail(n.Loc, "%v", err)
			return
		}
		tn, err := b.set.resolvePointer(target)
		if err != nil {
			b.fail(n.Loc, "%v", err)
			return
		}
		b.collect(v, tn, depth+1)
	}
	if props := r.get("properties"); props != nil {
		for _, k := range props.keys {
			if _, seen := v.props[k]; !seen {
				v.order = append(v.order, k)
			}
			v.props[k] = append(v.props[k], n.Loc.child("properties", k))
		}
	}
	for _, req := range requiredOf(n) {
		v.required[req] = true
	}
	if ap := r.get("additionalProperties"); ap != nil && ap.kind == 'b' && !ap.boolv {
		v.closed = true
	}
	for i, m := range r.get("allOf").arrOrNil() {
		if structural(m) {
			mn, err := b.set.resolvePointer(n.Loc.child("allOf", fmt.Sprint(i)))
			if err != nil {
				b.fail(n.Loc, "%v", err)
				continue
			}
			b.collect(v, mn, depth+1)
		}
	}
}

// specificity ranks how much shape a type carries; a narrowing allOf member
// replaces a base property only when it says strictly more.
func specificity(t *goType) int {
	switch t.Kind {
	case kindRaw:
		return 0
	case kindString, kindNumber, kindBool:
		return 1
	case kindEnum:
		return 2
	case kindArray:
		return 2 + specificity(t.Elem)
	case kindAlias:
		return specificity(t.Alias)
	}
	return 5
}

func (b *builder) buildAllOf(n *node, hint string) *goType {
	// A node that is a single $ref member plus members that only narrow
	// existing properties is an alias of the referenced type.
	r := n.Raw
	var refMember *node
	structuralMembers := 0
	for i, m := range r.get("allOf").arrOrNil() {
		if !structural(m) {
			continue
		}
		structuralMembers++
		if m.has("$ref") && len(m.keys) == 1 && refMember == nil {
			mn, _ := b.set.resolvePointer(n.Loc.child("allOf", fmt.Sprint(i)))
			refMember = mn
		}
	}
	if refMember != nil {
		target, err := b.set.resolveRef(refMember.Loc, refMember.Raw.get("$ref").str)
		if err == nil {
			base := b.typeAt(target, hint)
			if base.Kind == kindObject && !b.narrowingAddsShape(n, base) {
				if _, stable := b.set.StableNames[n.Loc.String()]; !stable && !isDefsRoot(n.Loc) {
					return base
				}
				t := &goType{Kind: kindAlias, File: n.Loc.File, Loc: n.Loc, Alias: base, Doc: describe(n)}
				b.register(t)
				return t
			}
			if base.Kind != kindObject && structuralMembers == 1 && !r.has("properties") {
				return base
			}
		}
	}
	return b.buildObject(n, hint, []*node{n})
}

// narrowingAddsShape reports whether the non-$ref members of an allOf add
// properties or give a property more shape than the base type has.
func (b *builder) narrowingAddsShape(n *node, base *goType) bool {
	baseFields := map[string]*field{}
	for _, f := range base.Fields {
		baseFields[f.JSON] = f
	}
	v := &objectView{props: map[string][]loc{}, required: map[string]bool{}}
	for i, m := range n.Raw.get("allOf").arrOrNil() {
		if !structural(m) || m.has("$ref") {
			continue
		}
		mn, err := b.set.resolvePointer(n.Loc.child("allOf", fmt.Sprint(i)))
		if err != nil {
			continue
		}
		b.collect(v, mn, 0)
	}
	if n.Raw.has("properties") {
		b.collect(v, n, 0)
	}
	for _, k := range v.order {
		bf, ok := baseFields[k]
		if !ok {
			return true
		}
		for _, pl := range v.props[k] {
			pn, err := b.set.resolvePointer(pl)
			if err != nil || !structural(pn.Raw) {
				continue
			}
			if specificity(b.typeAt(pl, "")) > specificity(bf.Type) {
				return true
			}
		}
	}
	return false
}

func (b *builder) buildObject(n *node, hint string, _ []*node) *goType {
	l := n.Loc
	t := &goType{Kind: kindObject, File: l.File, Loc: l, Doc: describe(n)}
	b.inFlight[l.String()] = t
	defer delete(b.inFlight, l.String())
	b.register(t)

	v := &objectView{props: map[string][]loc{}, required: map[string]bool{}}
	b.collect(v, n, 0)
	t.AllowUnknown = !v.closed
	used := map[string]bool{}
	for _, k := range v.order {
		goName := goCase(k)
		if goName == "" || used[goName] || goName == "Unknown" {
			goName = "Field" + goName
		}
		used[goName] = true
		var chosen *goType
		var chosenLoc loc
		best := -1
		for _, pl := range v.props[k] {
			pn, err := b.set.resolvePointer(pl)
			if err != nil {
				b.fail(pl, "%v", err)
				continue
			}
			if !structural(pn.Raw) && chosen != nil {
				continue
			}
			pt := b.typeAt(pl, "")
			if s := specificity(pt); s > best {
				best, chosen, chosenLoc = s, pt, pl
			}
		}
		if chosen == nil {
			chosen = rawType
		}
		f := &field{JSON: k, Go: goName, Type: chosen, Required: v.required[k]}
		f.Doc = b.memberDoc(chosenLoc, v.props[k])
		if pn, err := b.set.resolvePointer(chosenLoc); err == nil {
			if c := pn.Raw.get("const"); c != nil && c.kind == 's' {
				s := c.str
				f.Const = &s
			}
		}
		// a const declared by any contributing member counts
		if f.Const == nil {
			for _, pl := range v.props[k] {
				if pn, err := b.set.resolvePointer(pl); err == nil {
					if c := pn.Raw.get("const"); c != nil && c.kind == 's' {
						s := c.str
						f.Const = &s
					}
				}
			}
		}
		if nullableOf(b, chosenLoc) && chosen.Kind != kindScalarUnion && chosen.Kind != kindRaw && chosen.Kind != kindNullable {
			f.Type = &goType{Kind: kindNullable, Elem: chosen}
		}
		t.Fields = append(t.Fields, f)
	}
	return t
}

// nullableOf reports whether the property schema admits null beside one
// non-null shape (anyOf [X, null] or type [X, "null"]).
func nullableOf(b *builder, l loc) bool {
	n, err := b.set.resolvePointer(l)
	if err != nil {
		return false
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		for _, a := range n.Raw.get(kw).arrOrNil() {
			if t := a.get("type"); t != nil && t.kind == 's' && t.str == "null" {
				return true
			}
		}
	}
	return false
}

func (b *builder) buildScalarUnionFromTypes(n *node, hint string, types []string) *goType {
	nonNull := []string{}
	for _, t := range types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	if len(nonNull) == 1 && len(types) == 2 {
		switch nonNull[0] {
		case "string":
			return &goType{Kind: kindNullable, Elem: &goType{Kind: kindString}}
		case "integer", "number":
			return &goType{Kind: kindNullable, Elem: &goType{Kind: kindNumber}}
		case "boolean":
			return &goType{Kind: kindNullable, Elem: &goType{Kind: kindBool}}
		}
	}
	t := &goType{Kind: kindScalarUnion, File: n.Loc.File, Loc: n.Loc, ScalarKinds: types, Doc: describe(n)}
	b.register(t)
	return t
}

func (b *builder) buildUnion(n *node, hint, kw string, arms []*rawNode) *goType {
	l := n.Loc
	// Classify arms.
	var nonNull []int
	hasNull := false
	allStrings := true
	for i, a := range arms {
		if t := a.get("type"); t != nil && t.kind == 's' && t.str == "null" && len(a.keys) == 1 {
			hasNull = true
			continue
		}
		nonNull = append(nonNull, i)
		if !stringish(a) {
			allStrings = false
		}
	}
	if allStrings && !hasNull {
		var vals []*rawNode
		open := false
		for _, i := range nonNull {
			a := arms[i]
			switch {
			case a.has("const"):
				vals = append(vals, a.get("const"))
			case a.has("enum"):
				vals = append(vals, a.get("enum").arr...)
			default:
				open = true
			}
		}
		return b.buildEnum(n, hint, vals, open)
	}
	// Arm types.
	armTypes := make([]*goType, len(arms))
	allObjects := true
	for _, i := range nonNull {
		at := b.typeAt(l.child(kw, fmt.Sprint(i)), "")
		armTypes[i] = at
		k := at.Kind
		if k == kindAlias {
			k = at.Alias.Kind
		}
		if k != kindObject && k != kindUnion {
			allObjects = false
		}
	}
	if hasNull && len(nonNull) == 1 && allObjects {
		return &goType{Kind: kindNullable, Elem: armTypes[nonNull[0]]}
	}
	if !allObjects || hasNull {
		var kinds []string
		for i, a := range arms {
			kinds = append(kinds, scalarKinds(b, l.child(kw, fmt.Sprint(i)), a)...)
		}
		t := &goType{Kind: kindScalarUnion, File: l.File, Loc: l, ScalarKinds: dedupe(kinds), Doc: describe(n)}
		b.register(t)
		return t
	}
	t := &goType{Kind: kindUnion, File: l.File, Loc: l, Doc: describe(n)}
	b.register(t)
	var discKey string
	if d := n.Raw.get("x-sdk-discriminator"); d != nil && d.kind == 's' {
		discKey = d.str
	}
	for _, i := range nonNull {
		armLoc := l.child(kw, fmt.Sprint(i))
		if ref := arms[i].get("$ref"); ref != nil {
			// Validate a $ref arm at its target, which stays addressable
			// however the union itself is compiled.
			if target, err := b.set.resolveRef(armLoc, ref.str); err == nil {
				armLoc = target
			}
		}
		at := armTypes[i]
		a := &arm{Type: at, Loc: armLoc}
		obj := at
		if obj.Kind == kindAlias {
			obj = obj.Alias
		}
		if obj.Kind == kindObject {
			for _, f := range obj.Fields {
				if f.Const != nil {
					a.Discs = append(a.Discs, disc{Key: f.JSON, Values: []string{*f.Const}})
				} else if f.Type.Kind == kindEnum && !f.Type.OpenEnum && f.Required {
					a.Discs = append(a.Discs, disc{Key: f.JSON, Values: f.Type.EnumValues})
				}
				if f.Required {
					a.Needed = append(a.Needed, f.JSON)
				}
			}
		}
		a.Raw = arms[i]
		a.DiscKey = discKey
		a.Inline = !arms[i].has("$ref")
		t.Arms = append(t.Arms, a)
	}
	return t
}

func stringish(a *rawNode) bool {
	if c := a.get("const"); c != nil {
		return c.kind == 's'
	}
	if e := a.get("enum"); e != nil {
		for _, v := range e.arr {
			if v.kind != 's' {
				return false
			}
		}
		return true
	}
	if t := a.get("type"); t != nil && t.kind == 's' && t.str == "string" && !a.has("$ref") {
		return true
	}
	return false
}

func scalarKinds(b *builder, l loc, a *rawNode) []string {
	n, err := b.set.resolvePointer(l)
	if err != nil {
		return nil
	}
	for n.Raw.has("$ref") {
		target, err := b.set.resolveRef(n.Loc, n.Raw.get("$ref").str)
		if err != nil {
			return nil
		}
		if n, err = b.set.resolvePointer(target); err != nil {
			return nil
		}
	}
	if ts := schemaTypes(n); len(ts) > 0 {
		return ts
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if arms := n.Raw.get(kw).arrOrNil(); arms != nil {
			var out []string
			for i, x := range arms {
				out = append(out, scalarKinds(b, n.Loc.child(kw, fmt.Sprint(i)), x)...)
			}
			return out
		}
	}
	if c := n.Raw.get("const"); c != nil {
		switch c.kind {
		case 's':
			return []string{"string"}
		case 'n':
			return []string{"number"}
		case 'b':
			return []string{"boolean"}
		}
	}
	return []string{"any"}
}

func dedupe(s []string) []string {
	out := []string{}
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// armFieldName names a union arm: a referenced type's name without the words
// it shares with the union's name; an inline arm after its discriminator
// values or title.
func armFieldName(union string, at *goType, raw *rawNode, discKey string, discs []disc) string {
	if raw.has("$ref") && at.Name != "" {
		return trimShared(at.Name, union)
	}
	var parts []string
	for _, d := range discs {
		if discKey != "" && d.Key != discKey {
			continue
		}
		if len(d.Values) == 1 {
			parts = append(parts, goCase(d.Values[0]))
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "")
	}
	if discKey != "" {
		// The discriminator is open (a pattern): the extension arm.
		return "Extension"
	}
	if t := raw.get("title"); t != nil && t.kind == 's' {
		return goCase(t.str)
	}
	return ""
}

func trimShared(arm, union string) string {
	aw, uw := splitWords(arm), splitWords(union)
	// common prefix
	p := 0
	for p < len(aw) && p < len(uw) && aw[p] == uw[p] {
		p++
	}
	// common suffix
	s := 0
	for s < len(aw)-p && s < len(uw) && aw[len(aw)-1-s] == uw[len(uw)-1-s] {
		s++
	}
	rest := aw[p : len(aw)-s]
	if len(rest) == 0 {
		return arm
	}
	return strings.Join(rest, "")
}

// splitWords splits a Go identifier into words at case changes, keeping
// initialisms (HTTPTransport -> HTTP, Transport).
func splitWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := 0
	for i := 1; i < len(rs); i++ {
		lower := func(r rune) bool { return r >= 'a' && r <= 'z' }
		upper := func(r rune) bool { return r >= 'A' && r <= 'Z' }
		if upper(rs[i]) && (lower(rs[i-1]) || (i+1 < len(rs) && lower(rs[i+1]) && upper(rs[i-1]))) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	words = append(words, string(rs[start:]))
	return words
}

// initialisms are rendered in upper case, per Go naming.
var initialisms = map[string]string{
	"id": "ID", "jsonrpc": "JSONRPC", "url": "URL", "uri": "URI", "http": "HTTP", "https": "HTTPS", "json": "JSON", "rpc": "RPC",
	"mcp": "MCP", "dns": "DNS", "sha256": "SHA256", "sse": "SSE", "api": "API", "ms": "Ms", "ttl": "TTL",
	"tls": "TLS", "ip": "IP", "uuid": "UUID", "ui": "UI", "jsonl": "JSONL", "pkce": "PKCE", "mtls": "MTLS",
}

// goCase renders a wire name (camelCase, kebab-case, dotted or snake_case) as
// an exported Go identifier with Go initialisms.
func goCase(s string) string {
	var words []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == ' ' || r == '/' || r == '$' || r == ':'
	}) {
		words = append(words, splitWords(part)...)
	}
	var out strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			out.WriteString(up)
			continue
		}
		out.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	res := out.String()
	if res != "" && res[0] >= '0' && res[0] <= '9' {
		res = "N" + res
	}
	return res
}

// renderStableName renders a protocol stable SDK name in Go style. Where the
// stable name flattened the case of its $defs key (ExecutionEventAttemptusage
// for attemptUsage), the key's own word breaks are restored.
func renderStableName(stable string, l loc) string {
	segs := strings.Split(strings.TrimPrefix(l.Pointer, "/"), "/")
	key := segs[len(segs)-1]
	if len(segs) >= 2 && segs[len(segs)-2] == "$defs" {
		keyGo := goCase(key)
		lowerStable := strings.ToLower(stable)
		if k := strings.ToLower(strings.ReplaceAll(keyGo, "", "")); strings.HasSuffix(lowerStable, k) && len(k) < len(stable) {
			stable = stable[:len(stable)-len(k)] + keyGo
		}
	}
	return goCase(stable)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
