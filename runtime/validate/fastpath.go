package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// The fast path is an accept-only validator. It is compiled from the schema
// graph that jsonschema/v6 has already built (so $ref resolution, the union
// dispatch rewrite of dispatch.go, the regular expressions and the format
// checkers are exactly the oracle's) into a small graph of fastNodes that
// fastRun (fastrun.go) interprets over the document parsed onto a tape
// (tape.go), without decoding it into Go values or building any error
// values.
//
// Its verdict is only ever used to skip v6: when it reports "valid", the
// document is accepted; in every other case, including any keyword or
// instance value it does not model, v6 validates the document as before and
// produces the error. A fast-path false negative therefore only costs time;
// a false accept is the one bug it must not have, which the differential
// tests against v6 guard.
//
// A schema graph that uses any keyword outside the modelled set, an older
// draft's semantics, or an in-place reference cycle is not compiled at all
// (fastSchema.root is nil) and always falls back to v6.

// errFastUnsupported is returned by compileFast for a schema graph the fast
// path does not model.
var errFastUnsupported = errors.New("ahp: schema not supported by the fast path")

// maxFastDepth bounds the recursion of a run (each schema node applied
// counts); deeper runs abort, leaving the document unverified. Documents
// nested as deep as maxTapeDepth stay within it.
const maxFastDepth = 1 << 17

// JSON types as a bit set, as the "type" keyword uses them; tape tokens
// use the same values as their kind.
const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// fastSchema is the fast-path program for one schema reference. A nil root
// means the reference is not supported and always falls back to v6.
type fastSchema struct {
	root *fastNode
}

// valid reports whether value, a decoded JSON value as accepted by
// [Validator.ValidateValue], is certainly valid. false means "unknown": the
// caller must ask v6.
func (f *fastSchema) valid(value any) bool {
	if f == nil || f.root == nil {
		return false
	}
	t := getTape()
	defer putTape(t)
	return t.fromValue(value) && f.validTape(t)
}

// validTape reports whether the document on t is certainly valid. false
// means "unknown": the caller must ask v6. A document with a duplicate key
// is always left to v6, which sees encoding/json's last-wins reading of
// it.
func (f *fastSchema) validTape(t *tape) bool {
	valid, _, _ := f.verdict(t, nil)
	return valid
}

// verdict runs the fast path on the document on t. decided reports that
// valid is the exact verdict (the fast path modelled everything it met);
// stopped that done was closed before the end (decided is then false).
func (f *fastSchema) verdict(t *tape, done <-chan struct{}) (valid, decided, stopped bool) {
	if f == nil || f.root == nil || t.dup {
		return false, false, false
	}
	r := fastRun{t: t, done: done}
	ok := r.valid(f.root, 0)
	return ok && !r.abort, !r.abort, r.stopped
}

// bound is a numeric schema bound, kept both exactly and, when it is a
// small integer, as an int64.
type bound struct {
	rat   *big.Rat
	i     int64
	small bool
}

func newBound(r *big.Rat) *bound {
	if r == nil {
		return nil
	}
	b := &bound{rat: r}
	if r.IsInt() && r.Num().IsInt64() {
		b.i, b.small = r.Num().Int64(), true
	}
	return b
}

type namedNode struct {
	name string
	hash uint16 // keyHash(name)
	node *fastNode
	req  bool // name is required
}

type patternProp struct {
	re   *matcher
	node *fastNode
}

// fastNode is one compiled subschema. The fields fastRun.check reads on
// every visit come first, then those of object (the most common kind of
// instance), so that a visit touches few cache lines; fields only the
// compiler reads come last.
type fastNode struct {
	// always is +1 for the schema true, -1 for false, 0 otherwise.
	always int8
	types  uint8 // 0: no "type" keyword
	// shared marks a reference target (refTarget), whose verdicts on
	// objects a run remembers.
	shared bool

	hasConst bool
	object   bool // some object keyword is present
	array    bool // some array keyword is present
	str      bool // some string keyword is present
	num      bool // some number keyword is present

	doc, frag    string    // the schema's location: its document and "#pointer" in it
	propNamesRaw *fastNode // the propertyNames subschema itself (before references are skipped)

	constT *tape           // const on a tape
	enumT  *tape           // enum as one array on a tape (nil: no enum)
	format func(any) error // nil: no format

	ref, not *fastNode

	// allOfRest and switches replace allOf: some of its entries may form
	// dispatch switches (see buildSwitches).
	allOfRest []*fastNode
	switches  []*dispatchSwitch
	guard     *dispatchGuard // replaces anyOf when set (see buildGuard)
	anyOf     []*fastNode
	oneOf     []*fastNode

	ifN, thenN, elseN *fastNode

	// object
	minProps, maxProps int           // -1: absent
	reqOutside         []string      // required names that are not in props
	propList           []namedNode   // the properties, sorted by name
	propTab            []int16       // open-addressing table by keyHash: index in propList + 1, 0 empty
	reqMask            uint64        // bits of the required entries of propList (when at most 64)
	patProps           []patternProp // patternProperties
	addl               *fastNode     // additionalProperties schema
	addlFalse          bool          // additionalProperties: false
	propNames          *fastNode

	enumStr map[string]struct{} // enum, when it lists only strings
	fmtName string              // the format's name

	// array
	minItems, maxItems int
	unique             bool
	contains           *fastNode
	prefix             []*fastNode
	items              *fastNode

	// string
	minLen, maxLen int
	pattern        *matcher

	// number
	minimum, maximum            *bound
	exMinimum, exMaximum, multi *bound

	// read by the compiler only
	constV   any
	enum     []any
	allOf    []*fastNode
	required []string
}

// pureRef reports whether n is a bare {"$ref": …}, which validates exactly
// as its target does.
func pureRef(n *fastNode) bool {
	return n.ref != nil && n.always == 0 && n.types == 0 && !n.hasConst && n.enum == nil &&
		n.format == nil && n.not == nil && len(n.allOf) == 0 && len(n.anyOf) == 0 && len(n.oneOf) == 0 &&
		n.ifN == nil && n.thenN == nil && n.elseN == nil && !n.object && !n.array && !n.str && !n.num
}

// follow returns the node at the end of n's chain of pure references.
func follow(n *fastNode) *fastNode {
	for n != nil && pureRef(n) {
		n = n.ref
	}
	return n
}

// skipRefs points n's subschemas past pure references.
func skipRefs(n *fastNode) {
	for _, p := range []**fastNode{&n.ref, &n.not, &n.ifN, &n.thenN, &n.elseN, &n.addl, &n.propNames, &n.contains, &n.items} {
		*p = follow(*p)
	}
	for _, l := range [][]*fastNode{n.allOf, n.anyOf, n.oneOf, n.prefix} {
		for i := range l {
			l[i] = follow(l[i])
		}
	}
	for i := range n.propList {
		n.propList[i].node = follow(n.propList[i].node)
	}
	for i := range n.patProps {
		n.patProps[i].node = follow(n.patProps[i].node)
	}
}

// refTarget reports whether a schema location is a document root or a
// $defs entry: what references point to, and so where several paths of a
// validation can meet on the same value.
func refTarget(loc string) bool {
	i := strings.IndexByte(loc, '#')
	if i < 0 {
		return true
	}
	frag := loc[i+1:]
	name, ok := strings.CutPrefix(frag, "/$defs/")
	return frag == "" || (ok && !strings.Contains(name, "/"))
}

// A signature is a schema of the form
//
//	{"required": [k1], "properties": {k1: {"required": [k2], "properties": {k2: … {"enum": [strings]}}}}}
//
// (each "required" optional, "const" instead of "enum" allowed, any number
// of levels including none), which dispatch.go emits to tell union arms
// apart and which the canonical schemas write by hand for conditional
// rules. Whether it holds depends only on the value found by walking the
// instance along its path of keys (see resolve), so many signatures on the
// same path are decided by one walk.

// pathLevel is one step of a signature's path.
type pathLevel struct {
	key  string
	hash uint16 // keyHash(key)
	req  bool   // the step's "required" lists key
}

// Outcomes of resolving a path in an instance.
const (
	selNone  = iota // no signature on the path holds
	selAll          // every signature on the path holds (vacuously)
	selValue        // the signatures listing the string found hold
)

// resolve walks the instance at token i along path. Where the value at
// some step is not an object, or lacks an optional key, every signature
// holds vacuously; where it lacks a required key, none holds. At the end of
// the path, only a string can equal the signatures' strings.
func resolve(t *tape, i uint32, path []pathLevel) (sel int, v uint32) {
	for _, lv := range path {
		if t.toks[i].kind != tObject {
			return selAll, 0
		}
		c := member(t, i, lv.key, lv.hash)
		if c == 0 {
			if lv.req {
				return selNone, 0
			}
			return selAll, 0
		}
		i = c
	}
	if t.toks[i].kind != tString {
		return selNone, 0
	}
	return selValue, i
}

// signatureOf reports whether n is exactly a signature and returns its
// path and strings.
func signatureOf(n *fastNode) ([]pathLevel, []string, bool) {
	var path []pathLevel
	for range maxSignatureDepth {
		var vals []any
		switch {
		case n.hasConst && n.enum == nil && onlyKeywords(n, kwConst):
			vals = []any{n.constV}
		case !n.hasConst && n.enum != nil && onlyKeywords(n, kwEnum):
			vals = n.enum
		}
		if vals != nil {
			out := make([]string, 0, len(vals))
			for _, v := range vals {
				str, ok := v.(string)
				if !ok {
					return nil, nil, false
				}
				out = append(out, str)
			}
			return path, out, true
		}
		if !onlyKeywords(n, kwObject) || len(n.propList) != 1 || len(n.reqOutside) != 0 ||
			n.minProps >= 0 || n.maxProps >= 0 || n.propNames != nil || len(n.patProps) != 0 ||
			n.addl != nil || n.addlFalse || len(n.required) > 1 {
			return nil, nil, false
		}
		p := n.propList[0]
		path = append(path, pathLevel{key: p.name, hash: keyHash(p.name), req: len(n.required) == 1})
		n = p.node
	}
	return nil, nil, false
}

// maxSignatureDepth bounds the paths signatureOf follows.
const maxSignatureDepth = 8

// pathKey identifies a path, for grouping signatures.
func pathKey(path []pathLevel) string {
	var b strings.Builder
	for _, lv := range path {
		fmt.Fprintf(&b, "%d:%s:%t;", len(lv.key), lv.key, lv.req)
	}
	return b.String()
}

// dispatchSwitch stands for allOf entries {"if": sig, "then": T} whose
// signatures share one path: when the path resolves to a string, exactly
// the entries listing it apply their "then"; when every signature holds
// vacuously, every "then" applies; otherwise none does.
type dispatchSwitch struct {
	path []pathLevel
	arms map[string][]*fastNode
	all  []*fastNode
}

// dispatchGuard stands for an anyOf whose entries are all signatures on
// one path: it holds when they hold vacuously or the path resolves to one
// of their strings.
type dispatchGuard struct {
	path   []pathLevel
	values map[string]struct{}
}

// minSwitch is the number of if/then entries on one path worth a switch.
const minSwitch = 3

// buildSwitches groups n's allOf entries into dispatch switches (the
// others stay in allOfRest, in order) and turns an anyOf of signatures on
// one path into a guard.
func buildSwitches(n *fastNode) {
	n.allOfRest = n.allOf
	buildGuard(n)
	if len(n.allOf) < minSwitch {
		return
	}
	type entry struct {
		path   []pathLevel
		values []string
		then   *fastNode
	}
	groups := map[string][]int{}
	entries := make([]entry, len(n.allOf))
	for i, e := range n.allOf {
		if e.ifN == nil || e.thenN == nil || !onlyKeywords(e, kwIf|kwThen) {
			continue
		}
		path, values, ok := signatureOf(e.ifN)
		if !ok {
			continue
		}
		entries[i] = entry{path, values, e.thenN}
		k := pathKey(path)
		groups[k] = append(groups[k], i)
	}
	used := make([]bool, len(n.allOf))
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		idx := groups[k]
		if len(idx) < minSwitch {
			continue
		}
		sw := &dispatchSwitch{path: entries[idx[0]].path, arms: map[string][]*fastNode{}}
		for _, i := range idx {
			used[i] = true
			e := entries[i]
			sw.all = append(sw.all, e.then)
			seen := map[string]bool{}
			for _, v := range e.values {
				if !seen[v] {
					seen[v] = true
					sw.arms[v] = append(sw.arms[v], e.then)
				}
			}
		}
		n.switches = append(n.switches, sw)
	}
	if len(n.switches) == 0 {
		return
	}
	n.allOfRest = nil
	for i, e := range n.allOf {
		if !used[i] {
			n.allOfRest = append(n.allOfRest, e)
		}
	}
}

// buildGuard sets n.guard when n's anyOf lists only signatures on one path.
func buildGuard(n *fastNode) {
	if len(n.anyOf) < 2 {
		return
	}
	g := &dispatchGuard{values: map[string]struct{}{}}
	for i, e := range n.anyOf {
		path, values, ok := signatureOf(e)
		if !ok || (i > 0 && pathKey(path) != pathKey(g.path)) {
			return
		}
		g.path = path
		for _, v := range values {
			g.values[v] = struct{}{}
		}
	}
	n.guard = g
}

// Keyword families for onlyKeywords.
const (
	kwIf = 1 << iota
	kwThen
	kwObject
	kwConst
	kwEnum
)

// onlyKeywords reports whether n uses no keyword outside allowed.
func onlyKeywords(n *fastNode, allowed int) bool {
	if n.always != 0 || n.types != 0 || n.format != nil || n.ref != nil || n.not != nil ||
		len(n.allOf) != 0 || len(n.anyOf) != 0 || len(n.oneOf) != 0 || n.elseN != nil ||
		n.array || n.str || n.num {
		return false
	}
	if n.ifN != nil && allowed&kwIf == 0 {
		return false
	}
	if n.thenN != nil && allowed&kwThen == 0 {
		return false
	}
	if n.object && allowed&kwObject == 0 {
		return false
	}
	if n.hasConst && allowed&kwConst == 0 {
		return false
	}
	if n.enum != nil && allowed&kwEnum == 0 {
		return false
	}
	return true
}

// plainJSON reports whether v consists only of decoded-JSON Go types with
// numbers as json.Number, the only schema values the fast path compares.
func plainJSON(v any, depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case json.Number:
		_, ok := parseNumber(string(x))
		return ok
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// checkInPlaceCycles rejects graphs where a subschema reaches itself
// without descending into the instance ($ref, allOf, anyOf, oneOf, not,
// if/then/else). v6 reports such a cycle as an error; the fast path would
// not terminate.
func checkInPlaceCycles(root *fastNode) error {
	const (
		grey  = 1
		black = 2
	)
	color := map[*fastNode]uint8{}
	var visit func(n *fastNode) error
	// descend lists the nodes applied to a different instance location.
	descend := func(n *fastNode) []*fastNode {
		var out []*fastNode
		out = append(out, n.propNames, n.addl, n.contains, n.items)
		out = append(out, n.prefix...)
		for _, p := range n.propList {
			out = append(out, p.node)
		}
		for _, p := range n.patProps {
			out = append(out, p.node)
		}
		return out
	}
	inPlace := func(n *fastNode) []*fastNode {
		out := []*fastNode{n.ref, n.not, n.ifN, n.thenN, n.elseN}
		out = append(out, n.allOf...)
		out = append(out, n.anyOf...)
		return append(out, n.oneOf...)
	}
	// Each node is visited once as the start of an in-place walk (colors
	// track the in-place DFS); descendants start fresh walks.
	started := map[*fastNode]bool{}
	queue := []*fastNode{root}
	visit = func(n *fastNode) error {
		switch color[n] {
		case grey:
			return errFastUnsupported
		case black:
			return nil
		}
		color[n] = grey
		for _, m := range inPlace(n) {
			if m == nil {
				continue
			}
			if err := visit(m); err != nil {
				return err
			}
		}
		color[n] = black
		for _, m := range descend(n) {
			if m != nil && !started[m] {
				started[m] = true
				queue = append(queue, m)
			}
		}
		return nil
	}
	started[root] = true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}
