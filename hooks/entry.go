package hooks

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// The entry check: the host's input is checked where it enters, on the
// typed values the caller supplied, instead of validating the bytes the SDK
// encoded from them against the whole payload schema.
//
// An entry plan is derived, once per event, from the generated validation
// program of the event's payload schema (gen/validation) and the Go types
// of its payload: for every member, the Go field that holds it and the
// keywords that apply to it. A call then walks the typed payload and
// checks what the caller controls: strings (length, enum, const; format
// and pattern through the canonical validator, on the string alone, the
// last accepted value remembered), booleans, raw JSON (validated against
// the member's schema by the canonical validator, which also rejects
// repeated member names) and the presence of members against required and
// the presence-only combinators (not/anyOf/oneOf/allOf of required). The
// check only accepts: whenever the plan does not cover a value (a keyword
// or a Go type it does not handle, unknown members, lists, numbers, large
// raw values), or a value fails it, the call validates the encoded event
// against the canonical schema as before, so every rejection is the
// canonical validator's, with the same error. TestEntryCheckAgrees checks
// that every event the plan accepts is valid canonically.

// entryPlan is the entry check of one event's payload. A nil plan means the
// payload schema is not covered: every call validates canonically.
type entryPlan struct {
	arm int // the index of the payload's field in gen.Event
	// arms are the offsets of gen.Event's fields, all pointers (the plan
	// checks that the payload's is the only one set).
	arms []uintptr
	obj  *objPlan
}

// maxRawEntry is the largest raw JSON value the plan validates on its own;
// a larger one makes the call validate the whole encoded event (its nesting
// stays far from what the validator's parsers take either way).
const maxRawEntry = 4 << 10

// fieldKind is how a payload field is checked.
type fieldKind uint8

const (
	kindUnknown fieldKind = iota // unknown members: covered only when empty
	kindString
	kindBool
	kindRaw    // raw JSON (json.RawMessage)
	kindObject // a struct with a plan of its own
	kindOpaque // not covered: only its absence (omitted zero value) is
)

// The plan is walked on the typed values without reflection: each field is
// read at its offset in its struct, found when the plan was made from the
// reflect.Type of that very struct (object plans its Go type field by
// field), as a value of the kind the plan checked there (a string, a bool,
// a []byte-shaped slice, a pointer, a slice or a map, or []gen.Member). A
// plan is only ever applied to a value of the type it was made for.

type fieldPlan struct {
	off       uintptr // offset of the field in its struct
	name      string
	bit       uint64 // presence bit of the member
	omitempty bool
	ptr       bool // a pointer: nil is absent
	nilable   bool // (pointer removed) a slice or a map: its nil value is absent
	kind      fieldKind
	str       *strPlan
	refs      []string // kindRaw: the member's schema references
	rawTypes  uint8    // kindRaw with a type-only schema: the JSON types it allows (then refs is empty)
	obj       *objPlan
	closed    bool // a subschema that forbids additional members does not name it
}

type objPlan struct {
	fields   []fieldPlan
	required uint64 // presence bits of the required members
	// missing is set when a required member has no field: nothing the
	// caller supplies can satisfy it.
	missing bool
	// conds are the nodes whose combinators (not, anyOf, oneOf,
	// if/then/else) apply to the object, evaluated exactly on the typed
	// value where they only test the presence of members and the values
	// of string and boolean members.
	conds  []*cond
	names  map[string]uint64 // member name -> presence bit
	byName map[string]*fieldPlan
}

type strPlan struct {
	minLen, maxLen int // -1: absent
	enum           [][]string
	refs           []string // format or pattern: the canonical validator decides
	// formats, when the only such keywords are formats that
	// validate.FormatValid knows (the canonical validator's own checks),
	// are checked by it without the validator.
	formats []string
	last    atomic.Pointer[string]
	stored  atomic.Int32
}

// planner builds entry plans from the generated program.
type planner struct {
	prog *schemaprog.Program
	docs map[string]int
}

var (
	rawMsgType  = reflect.TypeFor[json.RawMessage]()
	numberType  = reflect.TypeFor[json.Number]()
	memberType  = reflect.TypeFor[[]gen.Member]()
	marshalType = reflect.TypeFor[json.Marshaler]()
	textType    = reflect.TypeFor[encoding.TextMarshaler]()
	eventType   = reflect.TypeFor[gen.Event]()
)

// ownEncoding reports whether values of t are encoded by a method of their
// own (MarshalJSON or MarshalText, on t or *t) rather than as the plan
// reads them at their offset.
func ownEncoding(t reflect.Type) bool {
	return t.Implements(marshalType) || reflect.PointerTo(t).Implements(marshalType) ||
		t.Implements(textType) || reflect.PointerTo(t).Implements(textType)
}

// newEntryPlan returns the entry plan of the payload of info, nil when the
// payload schema is not one the plan covers.
func newEntryPlan(info gen.EventInfo) *entryPlan {
	p := &planner{prog: validation.Program(), docs: map[string]int{}}
	for i, d := range p.prog.Docs {
		p.docs[d.Name] = i
	}
	arm := -1
	arms := make([]uintptr, eventType.NumField())
	for i := range eventType.NumField() {
		f := eventType.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			return nil // only pointer arms are read as pointers
		}
		if f.Type.Elem().Name() == info.PayloadType {
			arm = i
		}
		arms[i] = f.Offset
	}
	id, ok := p.lookup(info.PayloadSchema)
	if arm < 0 || !ok {
		return nil
	}
	obj := p.object(eventType.Field(arm).Type.Elem(), []schemaprog.ID{id}, 0)
	if obj == nil {
		return nil
	}
	return &entryPlan{arm: arm, arms: arms, obj: obj}
}

// lookup finds the node of a schema reference "doc" or "doc#/pointer".
func (p *planner) lookup(ref string) (schemaprog.ID, bool) {
	doc, frag, _ := strings.Cut(ref, "#")
	di, ok := p.docs[doc]
	if !ok {
		return 0, false
	}
	loc := ""
	if frag != "" {
		loc = "#" + frag
	}
	for i, n := range p.prog.Docs[di].Nodes {
		if n.Loc == loc || (i == 0 && (loc == "" || loc == "#")) {
			return schemaprog.MakeID(di, i), true
		}
	}
	return 0, false
}

// ref is the canonical validator's reference of node id.
func (p *planner) ref(id schemaprog.ID) string {
	n := p.prog.Node(id)
	loc := n.Loc
	if loc == "" {
		loc = "#"
	}
	return p.prog.Docs[id.Doc()].Name + loc
}

// flatten expands references and allOf: the nodes that all apply.
func (p *planner) flatten(ids []schemaprog.ID, depth int) ([]*schemaprog.Node, bool) {
	var out []*schemaprog.Node
	for _, id := range ids {
		n := p.prog.Node(id)
		if n == nil || depth > 32 {
			return nil, false
		}
		out = append(out, n)
		if n.Ref != 0 || len(n.AllOf) > 0 {
			more := append([]schemaprog.ID{}, n.AllOf...)
			if n.Ref != 0 {
				more = append(more, n.Ref)
			}
			sub, ok := p.flatten(more, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
	}
	return out, true
}

// objectOnly reports whether n uses no keywords beyond those of an object
// the plan covers (type, properties, required, additionalProperties:
// false, the combinators) and those flatten expanded (ref, allOf).
func objectOnly(n *schemaprog.Node) bool {
	return n.Const == "" && n.Enum == "" && n.Format == "" &&
		n.MinProps == 0 && n.MaxProps == 0 && len(n.PatKeys) == 0 && n.Addl == 0 && n.PropNames == 0 &&
		n.MinItems == 0 && n.MaxItems == 0 && !n.Unique && n.Contains == 0 && n.Items == 0 && len(n.Prefix) == 0 &&
		n.MinLen == 0 && n.MaxLen == 0 && n.Pattern == "" &&
		n.Minimum == "" && n.Maximum == "" && n.ExMinimum == "" && n.ExMaximum == "" && n.MultipleOf == ""
}

// object plans the struct type t against the subschemas ids; nil when it is
// not covered.
func (p *planner) object(t reflect.Type, ids []schemaprog.ID, depth int) *objPlan {
	nodes, ok := p.flatten(ids, 0)
	if !ok || depth > 8 || t.Kind() != reflect.Struct || t.NumField() > 64 {
		return nil
	}
	if t.PkgPath() != eventType.PkgPath() && ownEncoding(t) {
		// A struct that encodes itself; the generated types' MarshalJSON
		// is the generated encoder, which follows the tags.
		return nil
	}
	o := &objPlan{names: map[string]uint64{}, byName: map[string]*fieldPlan{}}
	props := map[string][]schemaprog.ID{}
	// closers are the subschemas with additionalProperties: false; each
	// sees only its own properties (not those of a sibling $ref or of
	// another allOf branch), so a member is closed when any of them does
	// not name it.
	var closers []*schemaprog.Node
	var required []string
	var condNodes []*schemaprog.Node
	for _, n := range nodes {
		if n.Bool == -1 {
			return nil
		}
		if n.Bool == 1 {
			continue
		}
		if n.Types != 0 && n.Types&schemaprog.TObject == 0 {
			return nil
		}
		if !objectOnly(n) {
			return nil
		}
		if n.Not != 0 || len(n.AnyOf) > 0 || len(n.OneOf) > 0 || n.If != 0 {
			condNodes = append(condNodes, n)
		}
		required = append(required, n.Required...)
		for i, k := range n.PropKeys {
			props[k] = append(props[k], n.PropIDs[i])
		}
		if n.AddlFalse {
			closers = append(closers, n)
		}
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			if sf.Name == "Unknown" && sf.Type == memberType {
				o.fields = append(o.fields, fieldPlan{off: sf.Offset, kind: kindUnknown})
				continue
			}
			return nil
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || !sf.IsExported() {
			return nil
		}
		bit := uint64(1) << len(o.names)
		o.names[name] = bit
		fp := fieldPlan{off: sf.Offset, name: name, bit: bit, omitempty: opts == "omitempty"}
		pids := props[name]
		for _, n := range closers {
			if _, named := slices.BinarySearch(n.PropKeys, name); !named {
				fp.closed = true
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			fp.ptr, ft = true, ft.Elem()
		}
		fp.nilable = ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map
		p.field(&fp, ft, pids, depth)
		o.fields = append(o.fields, fp)
	}
	for i := range o.fields {
		if fp := &o.fields[i]; fp.name != "" {
			o.byName[fp.name] = fp
		}
	}
	for _, n := range condNodes {
		c, ok := p.compileCond(o, n, true, 0)
		if !ok {
			return nil
		}
		o.conds = append(o.conds, c)
	}
	for _, r := range required {
		bit, ok := o.names[r]
		if !ok {
			o.missing = true
		}
		o.required |= bit
	}
	return o
}

// field plans one member of Go type t (pointer removed) against its
// property subschemas.
func (p *planner) field(fp *fieldPlan, t reflect.Type, pids []schemaprog.ID, depth int) {
	fp.kind = kindOpaque
	nodes, ok := p.flatten(pids, 0)
	if !ok {
		return
	}
	switch {
	case t == numberType:
	case t.Kind() == reflect.String && !ownEncoding(t):
		if sp := stringPlan(nodes); sp != nil {
			fp.kind, fp.str = kindString, sp
			known := true
			var formats []string
			for _, n := range nodes {
				if n.Format != "" || n.Pattern != "" {
					sp.refs = append(sp.refs, p.refOf(n))
					_, k := validate.FormatValid(n.Format, "")
					known = known && n.Pattern == "" && k
					formats = append(formats, n.Format)
				}
			}
			if known && len(formats) > 0 {
				sp.formats = formats
			}
		}
	case t.Kind() == reflect.Bool && !ownEncoding(t):
		for _, n := range nodes {
			if n.Bool == 1 {
				continue
			}
			if n.Bool == -1 || (n.Types != 0 && n.Types&schemaprog.TBool == 0) || n.Const != "" || n.Enum != "" ||
				len(n.AnyOf) > 0 || len(n.OneOf) > 0 || n.Not != 0 || n.If != 0 || n.Then != 0 || n.Else != 0 {
				return
			}
		}
		fp.kind = kindBool
	case t == rawMsgType:
		// Only json.RawMessage is written as the bytes it holds: another
		// []byte-shaped type is written in base64 or by its own method.
		if len(pids) == 0 {
			return
		}
		fp.rawTypes = schemaprog.TNull | schemaprog.TBool | schemaprog.TNumber | schemaprog.TInteger | schemaprog.TString | schemaprog.TArray | schemaprog.TObject
		typeOnly := true
		for _, n := range nodes {
			if n.Bool == 1 {
				continue
			}
			if n.Bool != 0 || n.Types == 0 || n.Types&schemaprog.TInteger != 0 || !objectOnly(n) || n.AddlFalse ||
				n.Not != 0 || len(n.AnyOf) > 0 || len(n.OneOf) > 0 || n.If != 0 || n.Then != 0 || n.Else != 0 ||
				len(n.Required) > 0 || len(n.PropKeys) > 0 {
				typeOnly = false
				break
			}
			fp.rawTypes &= n.Types
		}
		if !typeOnly {
			fp.rawTypes = 0
			for _, id := range pids {
				fp.refs = append(fp.refs, p.ref(id))
			}
		}
		fp.kind = kindRaw
	case t.Kind() == reflect.Struct:
		if len(pids) == 0 {
			return
		}
		if o := p.object(t, pids, depth+1); o != nil {
			fp.kind, fp.obj = kindObject, o
		}
	}
}

// refOf is the reference of a flattened node, found by its location.
func (p *planner) refOf(n *schemaprog.Node) string {
	for di, d := range p.prog.Docs {
		for i := range d.Nodes {
			if &d.Nodes[i] == n {
				return p.ref(schemaprog.MakeID(di, i))
			}
		}
	}
	return ""
}

// stringPlan plans a string member; nil when its keywords are not covered.
func stringPlan(nodes []*schemaprog.Node) *strPlan {
	sp := &strPlan{minLen: -1, maxLen: -1}
	for _, n := range nodes {
		if n.Bool == -1 {
			return nil
		}
		if n.Bool == 1 {
			continue
		}
		if n.Types != 0 && n.Types&schemaprog.TString == 0 {
			return nil
		}
		if n.Not != 0 || len(n.AnyOf) > 0 || len(n.OneOf) > 0 || n.If != 0 || n.Then != 0 || n.Else != 0 {
			return nil
		}
		if n.MinLen != 0 && int(n.MinLen-1) > sp.minLen {
			sp.minLen = int(n.MinLen - 1)
		}
		if n.MaxLen != 0 && (sp.maxLen < 0 || int(n.MaxLen-1) < sp.maxLen) {
			sp.maxLen = int(n.MaxLen - 1)
		}
		for _, text := range []string{n.Const, n.Enum} {
			if text == "" {
				continue
			}
			var vals []any
			src := text
			if text == n.Const {
				src = "[" + text + "]"
			}
			if json.Unmarshal([]byte(src), &vals) != nil {
				return nil
			}
			var allowed []string
			for _, v := range vals {
				if s, ok := v.(string); ok {
					allowed = append(allowed, s)
				}
			}
			sp.enum = append(sp.enum, allowed)
		}
	}
	return sp
}

// eventPlan returns the entry plan of e's payload, built on first use.
func (e *eventEntry) eventPlan() *entryPlan {
	e.planOnce.Do(func() { e.plan = newEntryPlan(e.info) })
	return e.plan
}

// accepts reports whether the plan covers ev and ev satisfies it, in which
// case its encoding is valid canonically. false means: validate the
// encoding. sdk, when not nil, are the values of ev the SDK wrote itself:
// what they hold by construction is not checked again.
func (pl *entryPlan) accepts(ev *gen.Event, sdk *sdkValues) bool {
	if pl == nil || ev == nil {
		return false
	}
	off := pl.arms[pl.arm]
	arm := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(ev), off))
	if arm == nil {
		return false
	}
	// Every other arm is nil: ev is the event with this arm alone (all of
	// gen.Event's fields are pointers, newEntryPlan checks).
	var only gen.Event
	*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(&only), off)) = arm
	if *ev != only {
		return false
	}
	return pl.obj.accepts(arm, sdk)
}

// accepts checks the struct at p, of the type o was planned for (sdk as
// for entryPlan.accepts).
func (o *objPlan) accepts(p unsafe.Pointer, sdk *sdkValues) bool {
	if o.missing {
		return false
	}
	var present uint64
	for i := range o.fields {
		fp := &o.fields[i]
		f := unsafe.Add(p, fp.off)
		if fp.kind == kindUnknown {
			if len(*(*[]gen.Member)(f)) > 0 {
				return false
			}
			continue
		}
		if fp.ptr {
			elem := *(*unsafe.Pointer)(f)
			if elem == nil {
				if !fp.omitempty {
					return false
				}
				continue
			}
			f = elem
		}
		switch {
		case fp.kind == kindRaw && !fp.ptr && fp.omitempty && *(*[]byte)(f) == nil:
			continue // absent
		case fp.kind == kindOpaque && !fp.ptr && fp.omitempty && fp.nilable && *(*unsafe.Pointer)(f) == nil:
			continue // absent (a nil slice or map)
		case fp.kind == kindOpaque, !fp.ptr && fp.omitempty && fp.kind != kindRaw:
			// Not covered, or a zero value whose absence the plan does
			// not decide.
			return false
		}
		if fp.closed {
			return false
		}
		present |= fp.bit
		switch fp.kind {
		case kindString:
			if !fp.str.accepts(*(*string)(f), sdk) {
				return false
			}
		case kindBool:
		case kindRaw:
			raw := *(*[]byte)(f)
			if len(raw) == 0 {
				raw = nullJSON
			}
			if len(raw) > maxRawEntry {
				return false
			}
			if fp.rawTypes != 0 {
				// A schema that only names types: the value's type, and
				// I-JSON without repeated names (the encoder has checked
				// it is JSON), which JSON the SDK wrote from Go values
				// is by construction.
				if fp.rawTypes&rawType(raw) == 0 || (!sdk.isPlain(raw) && validate.UniqueMembers(raw) != nil) {
					return false
				}
			}
			for _, ref := range fp.refs {
				if validate.Default().Validate(ref, raw) != nil {
					return false
				}
			}
		case kindObject:
			if !fp.obj.accepts(f, sdk) {
				return false
			}
		}
	}
	if present&o.required != o.required {
		return false
	}
	for _, c := range o.conds {
		if !c.holds(p, present) {
			return false
		}
	}
	return true
}

var nullJSON = []byte("null")

// rawType is the type bit of the JSON value raw (valid JSON, no
// surrounding space); numbers are TNumber only, so a schema that tells
// integers apart is not type-only.
func rawType(raw []byte) uint8 {
	switch raw[0] {
	case '{':
		return schemaprog.TObject
	case '[':
		return schemaprog.TArray
	case '"':
		return schemaprog.TString
	case 't', 'f':
		return schemaprog.TBool
	case 'n':
		return schemaprog.TNull
	}
	return schemaprog.TNumber
}

// cond is a subschema compiled for exact evaluation on a typed object:
// the presence of members (required), string and boolean members tested
// by type, const and length (properties), and the combinators.
type cond struct {
	notObject bool   // its type excludes objects
	required  uint64 // presence bits that must all be set
	never     bool   // it requires a member the type does not have
	props     []propCond
	allOf     []*cond
	not       *cond
	anyOf     []*cond
	oneOf     []*cond
	ifc       *cond
	thenc     *cond
	elsec     *cond
}

// propCond tests one present member.
type propCond struct {
	fp             *fieldPlan
	never          bool   // false schema
	wrongType      bool   // its type excludes the member's JSON type
	hasConst       bool   // a const the string (or boolean) must equal
	constStr       string // a string const's value
	constBool      bool
	minLen, maxLen int // -1: absent
}

// compileCond compiles n for the object o (combinators only, when
// combinatorsOnly: the rest of an object node is planned member by
// member); nil when n is not evaluable exactly.
func (p *planner) compileCond(o *objPlan, n *schemaprog.Node, combinatorsOnly bool, depth int) (*cond, bool) {
	if depth > 16 {
		return nil, false
	}
	c := &cond{}
	sub := func(id schemaprog.ID) *cond {
		if id == 0 {
			return nil
		}
		x, ok := p.compileCond(o, p.prog.Node(id), false, depth+1)
		if !ok {
			return nil
		}
		return x
	}
	list := func(ids []schemaprog.ID) ([]*cond, bool) {
		var out []*cond
		for _, id := range ids {
			x := sub(id)
			if x == nil {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	}
	var ok bool
	if !combinatorsOnly {
		switch n.Bool {
		case 1:
			return c, true
		case -1:
			c.never = true
			return c, true
		}
		if !objectOnly(n) || n.AddlFalse {
			return nil, false
		}
		c.notObject = n.Types != 0 && n.Types&schemaprog.TObject == 0
		for _, r := range n.Required {
			bit, known := o.names[r]
			if !known {
				c.never = true
			}
			c.required |= bit
		}
		for i, k := range n.PropKeys {
			fp := o.byName[k]
			if fp == nil {
				continue // a member the type never has
			}
			pc, ok := compileProp(p.prog.Node(n.PropIDs[i]), fp)
			if !ok {
				return nil, false
			}
			c.props = append(c.props, pc)
		}
		if c.allOf, ok = list(n.AllOf); !ok {
			return nil, false
		}
		if n.Ref != 0 {
			x := sub(n.Ref)
			if x == nil {
				return nil, false
			}
			c.allOf = append(c.allOf, x)
		}
	}
	if c.anyOf, ok = list(n.AnyOf); !ok {
		return nil, false
	}
	if c.oneOf, ok = list(n.OneOf); !ok {
		return nil, false
	}
	for _, x := range []struct {
		id  schemaprog.ID
		dst **cond
	}{{n.Not, &c.not}, {n.If, &c.ifc}, {n.Then, &c.thenc}, {n.Else, &c.elsec}} {
		if x.id != 0 {
			if *x.dst = sub(x.id); *x.dst == nil {
				return nil, false
			}
		}
	}
	return c, true
}

// compileProp compiles the subschema n of the member fp.
func compileProp(n *schemaprog.Node, fp *fieldPlan) (propCond, bool) {
	pc := propCond{fp: fp, minLen: -1, maxLen: -1}
	switch n.Bool {
	case 1:
		return pc, true
	case -1:
		pc.never = true
		return pc, true
	}
	if n.Ref != 0 || len(n.AllOf) > 0 || len(n.AnyOf) > 0 || len(n.OneOf) > 0 || n.Not != 0 || n.If != 0 || n.Then != 0 || n.Else != 0 ||
		n.Enum != "" || n.Format != "" || n.Pattern != "" {
		return pc, false
	}
	switch fp.kind {
	case kindString:
		pc.wrongType = n.Types != 0 && n.Types&schemaprog.TString == 0
		if n.Const != "" {
			var v any
			if json.Unmarshal([]byte(n.Const), &v) != nil {
				return pc, false
			}
			str, isStr := v.(string)
			pc.hasConst, pc.constStr = true, str
			pc.never = pc.never || !isStr
		}
		if n.MinLen != 0 {
			pc.minLen = int(n.MinLen - 1)
		}
		if n.MaxLen != 0 {
			pc.maxLen = int(n.MaxLen - 1)
		}
		return pc, true
	case kindBool:
		pc.wrongType = n.Types != 0 && n.Types&schemaprog.TBool == 0
		if n.Const != "" {
			pc.hasConst = true
			switch n.Const {
			case "true":
				pc.constBool = true
			case "false":
			default:
				pc.never = true
			}
		}
		return pc, true
	}
	return pc, false
}

// holds evaluates c on the object at p whose present members are present.
func (c *cond) holds(p unsafe.Pointer, present uint64) bool {
	if c.never || c.notObject || present&c.required != c.required {
		return false
	}
	for i := range c.props {
		pc := &c.props[i]
		if present&pc.fp.bit == 0 {
			continue
		}
		if !pc.holds(unsafe.Add(p, pc.fp.off)) {
			return false
		}
	}
	for _, x := range c.allOf {
		if !x.holds(p, present) {
			return false
		}
	}
	if c.not != nil && c.not.holds(p, present) {
		return false
	}
	if len(c.anyOf) > 0 {
		any := false
		for _, x := range c.anyOf {
			if x.holds(p, present) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	if len(c.oneOf) > 0 {
		count := 0
		for _, x := range c.oneOf {
			if x.holds(p, present) {
				count++
			}
		}
		if count != 1 {
			return false
		}
	}
	if c.ifc != nil {
		branch := c.elsec
		if c.ifc.holds(p, present) {
			branch = c.thenc
		}
		if branch != nil && !branch.holds(p, present) {
			return false
		}
	}
	return true
}

// holds evaluates pc on the member at f, present (a non-nil pointer when
// the field is one).
func (pc *propCond) holds(f unsafe.Pointer) bool {
	if pc.never || pc.wrongType {
		return false
	}
	if pc.fp.ptr {
		f = *(*unsafe.Pointer)(f)
	}
	if pc.fp.kind == kindBool {
		return !pc.hasConst || *(*bool)(f) == pc.constBool
	}
	s := *(*string)(f)
	if pc.hasConst && s != pc.constStr {
		return false
	}
	if pc.minLen >= 0 || pc.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < pc.minLen || (pc.maxLen >= 0 && n > pc.maxLen) {
			return false
		}
	}
	return true
}

func (sp *strPlan) accepts(s string, sdk *sdkValues) bool {
	// Lengths count an invalid byte as one character, as the U+FFFD the
	// encoder writes for it, and no enum or const of the schemas holds
	// U+FFFD; a format or pattern is checked on valid UTF-8 only. The time
	// the SDK wrote is ASCII and an RFC 3339 date-time.
	ownTime := sdk.isTime(s)
	if len(sp.refs) > 0 {
		if last := sp.last.Load(); last != nil && *last == s {
			return sp.lengthsOK(s) // the remembered value passed the rest
		}
		if !ownTime && !utf8.ValidString(s) {
			return false
		}
	}
	if !sp.lengthsOK(s) {
		return false
	}
	for _, allowed := range sp.enum {
		found := false
		for _, a := range allowed {
			if a == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(sp.refs) == 0 {
		return true
	}
	if sp.formats != nil {
		for _, f := range sp.formats {
			if f == "date-time" && (ownTime || sdkTime(s)) {
				continue
			}
			if valid, _ := validate.FormatValid(f, s); !valid {
				return false
			}
		}
		sp.remember(s)
		return true
	}
	return sp.validate(s)
}

// lengthsOK checks minLength and maxLength, which count an invalid byte
// as one character (as the U+FFFD the encoder writes for it).
func (sp *strPlan) lengthsOK(s string) bool {
	if sp.minLen < 0 && sp.maxLen < 0 {
		return true
	}
	n := utf8.RuneCountInString(s)
	return n >= sp.minLen && (sp.maxLen < 0 || n <= sp.maxLen)
}

// sdkTime reports whether s has the form in which the SDK writes event
// times (fill.eventTime: time.RFC3339Nano in UTC, four-digit year) with
// every field in range: "YYYY-MM-DDTHH:MM:SS" with an optional fraction
// of one to nine digits, then "Z". Such a string is an RFC 3339
// date-time; anything else is left to validate.FormatValid
// (TestSDKTimeIsDateTime holds the two to agree on what sdkTime accepts).
func sdkTime(s string) bool {
	n := len(s)
	if n < 20 || n == 21 || n > 30 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[n-1] != 'Z' {
		return false
	}
	num := func(i, w int) int {
		v := 0
		for _, c := range []byte(s[i : i+w]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	if day > days {
		return false
	}
	if n > 20 {
		if s[19] != '.' || num(20, n-21) < 0 {
			return false
		}
	}
	return true
}

// validate checks s by the canonical validator against the subschemas
// with a format or pattern, and remembers it when they accept it.
func (sp *strPlan) validate(s string) bool {
	q := appendQuoted(make([]byte, 0, len(s)+8), s)
	for _, ref := range sp.refs {
		if validate.Default().Validate(ref, q) != nil {
			return false
		}
	}
	sp.remember(s)
	return true
}

// maxRemembered bounds how often a strPlan replaces its remembered value:
// a member that keeps one value (the source) is remembered at once, one
// that changes every call (the time) stops costing an allocation per call.
const maxRemembered = 8

// remember keeps s, an accepted value, for the next calls.
func (sp *strPlan) remember(s string) {
	if sp.stored.Load() >= maxRemembered {
		return
	}
	sp.stored.Add(1)
	keep := strings.Clone(s)
	sp.last.Store(&keep)
}

// appendQuoted appends s (valid UTF-8) as a JSON string.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// entryState is the per-event state of the entry check, built on first
// use.
type entryState struct {
	planOnce sync.Once
	plan     *entryPlan
}

// checkEvent encodes a built or given event and checks it where it
// enters: by its entry plan when the plan covers it, otherwise (and for
// every event the plan does not accept) by validating the encoding against
// the canonical payload schema, which reports the error.
func checkEvent(e *eventEntry, ev *gen.Event, sdk *sdkValues) ([]byte, error) {
	return checkEventFramed(e, ev, sdk, 0, 0)
}

// checkEventFramed is checkEvent into a buffer framed as
// gen.EncodeEventFramed frames it: head zero bytes, then the encoding, with
// capacity for tail more bytes.
func checkEventFramed(e *eventEntry, ev *gen.Event, sdk *sdkValues, head, tail int) ([]byte, error) {
	framed, err := gen.EncodeEventFramed(ev, head, tail)
	if err == nil && e.eventPlan().accepts(ev, sdk) {
		return framed, nil
	}
	if err == nil {
		err = validate.Default().Validate(e.info.PayloadSchema, framed[head:])
	}
	if err != nil {
		return nil, inputError("event", "", "schema", "the event does not satisfy its canonical schema").withCause("", err)
	}
	return framed, nil
}
