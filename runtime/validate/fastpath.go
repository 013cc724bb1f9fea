package validate

import (
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
	"sync/atomic"

	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// The fast path is the interpreter of the validation program that
// cmd/ahp-codegen generates from the schemas compiled by jsonschema/v6 (so
// $ref resolution, the union dispatch rewrite, the regular expressions and
// the format checkers are exactly the oracle's): fastRun (fastrun.go) runs
// the program's nodes, laid out as fastNodes on first visit (program.go),
// over the document parsed onto a tape (tape.go), without decoding it into
// Go values or building any error values; the explainer (explain.go) says
// why a rejected document fails. The differential tests hold both to v6.
//
// An instance value it does not model (an exotic number, excessive depth)
// aborts the run, leaving the document unverified; a program node it does
// not model, or an in-place reference cycle, is never run.

// errFastUnsupported is returned for a program the fast path does not
// model.
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

	// allKinds are the kinds of every value (tok.kind bits).
	allKinds = tNull | tBool | tNumber | tString | tArray | tObject
)

// fastSchema is the fast-path program for one schema reference. A nil root
// means the reference is not supported: nothing is valid against it.
type fastSchema struct {
	root *fastNode
}

// valid reports whether value, a decoded JSON value as accepted by
// [Validator.ValidateValue], is certainly valid. false means invalid or
// undecided.
func (f *fastSchema) valid(value any) bool {
	if f == nil || f.root == nil {
		return false
	}
	t := getTape()
	defer putTape(t)
	return t.fromValue(value) && f.validTape(t)
}

// validTape reports whether the document on t is certainly valid. false
// means invalid or undecided; a document with a duplicate key is never
// valid.
func (f *fastSchema) validTape(t *tape) bool {
	valid, _, _ := f.verdict(t, watch{})
	return valid
}

// verdict runs the fast path on the document on t. decided reports that
// valid is the exact verdict (the fast path modelled everything it met);
// stopped that done was closed before the end (decided is then false).
func (f *fastSchema) verdict(t *tape, w watch) (valid, decided, stopped bool) {
	if f == nil || f.root == nil || t.dup {
		return false, false, false
	}
	r := fastRun{t: t, w: w}
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

// keyName is a member name of the schema, with what looking it up in a
// tape's object needs, computed once (newKeyName).
type keyName struct {
	name string
	hash uint16 // keyHash(name)
	// The name's bytes 0-7 and 8-15 as little-endian words (zero-padded),
	// and the masks of the bytes it has in each; mask 0: a name compared
	// as a string (empty or longer than sixteen bytes).
	word, word2 uint64
	mask, mask2 uint64
}

func newKeyName(name string) keyName {
	k := keyName{name: name, hash: keyHash(name)}
	if len(name) > 0 && len(name) <= 16 {
		k.word, k.mask = nameWord(name), wordMask(min(len(name), 8))
		if len(name) > 8 {
			k.word2, k.mask2 = nameWord(name[8:]), wordMask(len(name)-8)
		}
	}
	return k
}

// is reports whether b, the bytes of a string token, is k's name. b's
// capacity may extend past it (a tape's bytes are in a larger buffer): a
// short name is compared with the sixteen bytes from b's start, masked.
func (k *keyName) is(b []byte) bool {
	if len(b) != len(k.name) {
		return false
	}
	if k.mask != 0 && cap(b) >= 16 {
		w := b[:16:16]
		return binary.LittleEndian.Uint64(w)&k.mask == k.word && binary.LittleEndian.Uint64(w[8:])&k.mask2 == k.word2
	}
	return string(b) == k.name
}

type namedNode struct {
	keyName
	node *fastNode
	req  bool // name is required
}

type patternProp struct {
	re   *matcher
	node *fastNode
}

// fastNode is one compiled subschema. The fields fastRun.check reads on
// every visit come first, then those of object (the most common kind of
// instance), so that a visit touches few cache lines. What only the
// explainer needs (the schema location, the constants' text, the required
// names) it reads from the program node.
type fastNode struct {
	// always is +1 for the schema true, -1 for false, 0 otherwise.
	always int8
	types  uint8 // 0: no "type" keyword
	// shared marks a reference target (refTarget), whose verdicts on
	// objects a run remembers.
	shared bool

	hasConst bool
	// fastFmt is the format fastFormat knows (fmtDateTime, fmtURI), or 0.
	fastFmt uint8
	// leaf is a visit that needs nothing but a look at the value's token
	// (leafType, leafString, leafConst), or leafNone.
	leaf uint8
	// leafKinds are the kinds of value (tok.kind bits) the leaf visit
	// applies to: all but numbers, all for leafAlways, none for
	// leafNone.
	leafKinds uint8
	object    bool // some object keyword is present
	array     bool // some array keyword is present
	str       bool // some string keyword is present
	num       bool // some number keyword is present

	// ops has a bit per keyword group present (see setOps), so that a
	// visit skips the absent ones together.
	ops uint32

	// pend is the node's layout state (see program.go): laidOut, or a
	// shell to lay out on first visit.
	pend uint32
	c    *fastCompiler // lays the node out (nil for nodes built by hand)
	id   schemaprog.ID // the program node

	constT   *tape           // const on a tape (nil for a string const)
	constStr string          // a string const
	constKey keyName         // constStr as a key
	enumT    *tape           // enum as one array on a tape (nil: no enum)
	format   func(any) error // nil: no format

	ref, not *fastNode

	// allOfRest and switches replace allOf: some of its entries may form
	// dispatch switches (the program's schemaprog.Dispatch tables).
	allOfRest []*fastNode
	// allOfRun is allOfRest as the interpreter runs it: an entry that only
	// applies if/then/else or not is applied without a visit of its own.
	allOfRun []allOfEntry
	switches []*dispatchSwitch
	guard    *dispatchGuard // replaces anyOf when set (the program's guard)
	anyOf    []*fastNode
	oneOf    []*fastNode

	ifN, thenN, elseN *fastNode

	// object
	minProps, maxProps int           // -1: absent
	reqOutside         []string      // required names that are not in props
	reqOutKeys         []keyName     // reqOutside as keys
	propList           []namedNode   // the properties, sorted by name
	propTab            hashTab       // propList by keyHash
	reqMask            uint64        // bits of the required entries of propList (when at most 64)
	patProps           []patternProp // patternProperties
	addl               *fastNode     // additionalProperties schema
	addlFalse          bool          // additionalProperties: false
	propNames          *fastNode

	enumStr *strSet // enum, when it lists only strings
	fmtName string  // the format's name

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
}

// allOfEntry is an entry of fastNode.allOfRun: a node to visit, or else
// the if/then/else or the not of an entry that has nothing else.
type allOfEntry struct {
	node              *fastNode
	ifN, thenN, elseN *fastNode
	not               *fastNode
}

// Bits of fastNode.ops. The bits of the keywords that apply to one kind
// of instance are that kind's type bit shifted by opKindShift, so that
// ops&(kind<<opKindShift) tells whether any applies to an instance of that
// kind.
const (
	opConst uint32 = 1 << iota
	opEnum
	opFormat
	opRef
	opNot
	opAllOf // allOfRun
	opSwitch
	opGuard
	opKindShift = 8
	opAnyOf     = 1 << 16
	opOneOf     = 1 << 17
	opIf        = 1 << 18

	// opBefore are the keywords checked before the kind's, opAfter those
	// checked after.
	opBefore = opConst | opEnum | opFormat | opRef
	opAfter  = opNot | opAllOf | opSwitch | opGuard | opAnyOf | opOneOf | opIf
)

// Kinds of fastNode.leaf.
const (
	leafNone   = iota
	leafType   // only "type" (without "integer")
	leafString // "type": "string" and minLength / maxLength
	leafConst  // a string const, and perhaps "type": "string"
	leafEnum   // an enum of strings, and perhaps "type": "string"
	leafFormat // "type": "string" and a format
	// leafRequired is "required" (names outside "properties") alone,
	// perhaps with "type": "object".
	leafRequired
	leafAlways // the schema true or false, on any value
)

// setOps sets n.ops from n's keywords; it is called once n is laid out
// (and by tests on nodes they build).
func (n *fastNode) setOps() {
	var ops uint32
	set := func(present bool, bit uint32) {
		if present {
			ops |= bit
		}
	}
	set(n.hasConst, opConst)
	set(n.enumT != nil, opEnum)
	set(n.format != nil, opFormat)
	set(n.ref != nil, opRef)
	set(n.not != nil, opNot)
	if n.allOfRun == nil && len(n.allOfRest) > 0 {
		// A node built by hand: every entry is visited.
		n.allOfRun = make([]allOfEntry, len(n.allOfRest))
		for k, m := range n.allOfRest {
			n.allOfRun[k].node = m
		}
	}
	set(len(n.allOfRun) > 0, opAllOf)
	set(len(n.switches) > 0, opSwitch)
	set(n.guard != nil, opGuard)
	set(n.guard == nil && len(n.anyOf) > 0, opAnyOf)
	set(len(n.oneOf) > 0, opOneOf)
	set(n.ifN != nil, opIf)
	set(n.object, uint32(tObject)<<opKindShift)
	set(n.array, uint32(tArray)<<opKindShift)
	set(n.str, uint32(tString)<<opKindShift)
	set(n.num, uint32(tNumber)<<opKindShift)
	n.ops = ops
	n.leaf = leafNone
	switch {
	case n.types == 0 || n.types&tInteger != 0 || n.always != 0:
		// An integer type needs the number parsed; always is decided
		// before the leaf.
	case ops == 0:
		n.leaf = leafType
	case ops == uint32(tString)<<opKindShift && n.types == tString && !n.pattern.ok():
		n.leaf = leafString
	}
	if n.always == 0 {
		switch {
		case ops == opConst && n.constT == nil && n.types&^tString == 0:
			n.leaf = leafConst
		case ops == opEnum && n.enumStr != nil && n.types&^tString == 0:
			n.leaf = leafEnum
		case ops == opFormat && n.types == tString:
			n.leaf = leafFormat
		case ops == uint32(tObject)<<opKindShift && n.types&^tObject == 0 && len(n.reqOutside) > 0 &&
			n.minProps < 0 && n.maxProps < 0 && len(n.propList) == 0 && len(n.patProps) == 0 &&
			!n.addlFalse && n.addl == nil && n.propNames == nil:
			n.leaf = leafRequired
		}
	}
	switch {
	case n.always != 0:
		n.leaf, n.leafKinds = leafAlways, allKinds
	case n.leaf != leafNone:
		n.leafKinds = tNull | tBool | tString | tArray | tObject
	default:
		n.leafKinds = 0
	}
	switch n.fmtName {
	case "date-time":
		n.fastFmt = fmtDateTime
	case "uri":
		n.fastFmt = fmtURI
	}
	n.constKey = newKeyName(n.constStr)
	n.reqOutKeys = make([]keyName, len(n.reqOutside))
	for k, name := range n.reqOutside {
		n.reqOutKeys[k] = newKeyName(name)
	}
	hs := make([]uint16, len(n.propList))
	for k := range n.propList {
		n.propList[k].keyName = newKeyName(n.propList[k].name)
		hs[k] = n.propList[k].hash
	}
	if len(hs) > 0 && n.propTab.slots == nil {
		n.propTab = newHashTab(hs)
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
// of levels including none), which the union dispatch rewrite emits to tell
// union arms apart and which the canonical schemas write by hand for
// conditional rules. Whether it holds depends only on the value found by
// walking the instance along its path of keys (see resolve), so many
// signatures on the same path are decided by one walk. The generator
// records them in each node's dispatch tables (schemaprog.Dispatch), which
// the interpreter runs as dispatchSwitch and dispatchGuard.

// pathLevel is one step of a signature's path.
type pathLevel struct {
	keyName
	req bool // the step's "required" lists the name
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
	for k := range path {
		lv := &path[k]
		if t.toks[i].kind != tObject {
			return selAll, 0
		}
		c := memberNamed(t, i, &lv.keyName)
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

// dispatchSwitch stands for allOf entries {"if": sig, "then": T} whose
// signatures share one path: when the path resolves to a string, exactly
// the entries listing it apply their "then"; when every signature holds
// vacuously, every "then" applies; otherwise none does. The arms of a
// value are made on its first selection.
type dispatchSwitch struct {
	path  []pathLevel
	index strSet    // the signatures' strings (sorted): their entry in arms
	arms  []armList // per string, then every arm (the vacuous case)
	c     *fastCompiler
}

// armList is the arms a dispatchSwitch applies in one case.
type armList struct {
	nodes atomic.Pointer[[]*fastNode] // nil until first selected
	ids   []schemaprog.ID
}

// selected returns the arms that apply to the value at token i; false
// means they could not be made (the run must abort).
func (sw *dispatchSwitch) selected(r *fastRun, i uint32) ([]*fastNode, bool) {
	t := r.t
	sel, v := r.resolve(i, sw.path)
	k := len(sw.arms) - 1
	switch sel {
	case selNone:
		return nil, true
	case selValue:
		if k = sw.index.find(t.bytes(v)); k < 0 {
			return nil, true
		}
	}
	if p := sw.arms[k].nodes.Load(); p != nil {
		return *p, true
	}
	return sw.c.arms(&sw.arms[k])
}

// dispatchGuard stands for an anyOf whose entries are all signatures on
// one path: it holds when they hold vacuously or the path resolves to one
// of their strings.
type dispatchGuard struct {
	path   []pathLevel
	values strSet
}

// strSet is a set of strings, each found by its index, in a table by
// keyHash.
type strSet struct {
	vals []string
	keys []keyName // vals as keys
	tab  hashTab
}

// newStrSet returns the set of vals (at most math.MaxInt16 of them, which
// it keeps).
func newStrSet(vals []string) strSet {
	hs := make([]uint16, len(vals))
	keys := make([]keyName, len(vals))
	for i, v := range vals {
		keys[i] = newKeyName(v)
		hs[i] = keys[i].hash
	}
	return strSet{vals: vals, keys: keys, tab: newHashTab(hs)}
}

// find returns the index of b in the set, or -1.
func (s *strSet) find(b []byte) int {
	t := &s.tab
	j := t.home(keyHash(b))
	if t.direct {
		if e := t.slots[j]; e != 0 && s.keys[e-1].is(b) {
			return int(e - 1)
		}
		return -1
	}
	for mask := len(t.slots) - 1; ; j = (j + 1) & mask {
		e := t.slots[j]
		if e == 0 {
			return -1
		}
		if s.vals[e-1] == string(b) {
			return int(e - 1)
		}
	}
}

// hashTab is an open-addressing table of entries (at most math.MaxInt16)
// by their keyHash, laid out when the program is: entry k is in slot
// home(hash) or, when no multiplier tried puts every entry in a slot of its
// own (direct false), in the first free slot after it.
type hashTab struct {
	slots  []int16 // entry index + 1, 0 empty; a power of two long
	mult   uint32
	shift  uint8
	direct bool
}

// home returns the first slot of hash h.
func (t *hashTab) home(h uint16) int { return int(uint32(h) * t.mult >> t.shift) }

// newHashTab lays out the entries of hashes hs: in a table with every entry
// in its home slot if one of a few sizes (two to sixteen slots per entry)
// and multipliers gives one, else probing from home slots in a table of two
// slots per entry.
func newHashTab(hs []uint16) hashTab {
	size, bits := 4, uint8(2)
	for size < 2*len(hs) {
		size, bits = size*2, bits+1
	}
	t := hashTab{mult: tabMultiplier(0), shift: 32 - bits}
	for grow := 0; grow < 4 && size <= 1<<15; grow, size, bits = grow+1, size*2, bits+1 {
		t.slots = make([]int16, size)
		for m := range tabMultipliers {
			t.mult, t.shift = tabMultiplier(m), 32-bits
			if t.place(hs) {
				t.direct = true
				return t
			}
		}
	}
	size, bits = 4, 2
	for size < 2*len(hs) {
		size, bits = size*2, bits+1
	}
	t = hashTab{slots: make([]int16, size), mult: tabMultiplier(0), shift: 32 - bits}
	for k, h := range hs {
		j := t.home(h)
		for t.slots[j] != 0 {
			j = (j + 1) & (size - 1)
		}
		t.slots[j] = int16(k + 1)
	}
	return t
}

// place puts every entry of hs in its home slot of t (cleared first) and
// reports whether none collided.
func (t *hashTab) place(hs []uint16) bool {
	clear(t.slots)
	for k, h := range hs {
		j := t.home(h)
		if t.slots[j] != 0 {
			return false
		}
		t.slots[j] = int16(k + 1)
	}
	return true
}

// tabMultipliers is the number of multipliers newHashTab tries per size.
const tabMultipliers = 32

// tabMultiplier returns the m-th multiplier newHashTab tries (odd, with
// well-mixed high bits).
func tabMultiplier(m int) uint32 { return 0x9E3779B1*uint32(2*m+1) | 1 }
