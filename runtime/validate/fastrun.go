package validate

import (
	"encoding/binary"
	"math/big"
	"regexp"
	"regexp/syntax"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// This file is the fast path's interpreter: it runs a compiled fastNode
// program over a document parsed onto a tape (tape.go).

// matcher is a pattern: a Go regular expression, what v6 compiled patterns
// to, matched on bytes directly. It is compiled on first use (the generator
// has checked that it compiles).
type matcher struct {
	src   string
	known uint8 // a known pattern (patterns.go), matched without regexp
	once  sync.Once
	re    *regexp.Regexp
}

// regexpSyntaxOK reports whether src parses as a Go regular expression,
// without compiling it.
func regexpSyntaxOK(src string) bool {
	_, err := syntax.Parse(src, syntax.Perl)
	return err == nil
}

func (m *matcher) ok() bool { return m != nil }

func (m *matcher) match(b []byte) bool {
	if m.known != patRegexp {
		return matchKnown(m.known, b)
	}
	m.once.Do(func() { m.re = regexp.MustCompile(m.src) })
	return m.re.Match(b)
}

// fastRun is the state of one fast-path validation of the document on t.
// abort is set when the instance holds something the fast path does not
// model (an exotic number, excessive depth, a long uniqueItems array); the
// verdict is then "unknown" whatever valid returned, which keeps negations
// (not, oneOf, if) from turning an unmodelled case into an accept.
type fastRun struct {
	t     *tape
	abort bool
	depth int

	// w, when it has a context, ends the run (abort and stopped set) once
	// that context has ended; it is looked at every pollEvery visits.
	w       watch
	steps   uint32
	stopped bool

	// Recent format and pattern verdicts: a string is often checked
	// against the same format or pattern by several subschemas, and both
	// are pure functions of the string.
	verdicts  [8]verdict
	nverdicts int

	// Recent verdicts of reference targets on whole objects, by a hash of
	// node and token: the same subschema is often reached on the same
	// object by several paths (an event checked by its envelope's union
	// and by the request's interceptable union), and a verdict is a pure
	// function of the node and the value.
	objects [16]objectVerdict

	// Recent resolutions of dispatch paths: several switches and guards
	// often resolve the same path (the generator's paths are interned, so
	// the same path is the same slice) from the same object.
	paths  [4]resolution
	npaths int
}

// resolution is the outcome of resolve along path from token tok.
type resolution struct {
	path *pathLevel // the path's first level
	tok  uint32
	v    uint32
	sel  int
}

// resolve is resolve(r.t, i, path), remembered.
func (r *fastRun) resolve(i uint32, path []pathLevel) (sel int, v uint32) {
	if len(path) == 0 {
		return resolve(r.t, i, path)
	}
	p := &path[0]
	for k := range r.paths {
		if e := &r.paths[k]; e.path == p && e.tok == i {
			return e.sel, e.v
		}
	}
	sel, v = resolve(r.t, i, path)
	r.paths[r.npaths%len(r.paths)] = resolution{path: p, tok: i, v: v, sel: sel}
	r.npaths++
	return sel, v
}

// objectSlot returns the slot of r.objects for node n on token i.
func objectSlot(n *fastNode, i uint32) int {
	return int((uint32(n.id)*0x9E3779B1 ^ i*0x85EBCA6B) >> 28)
}

// objectVerdict is node n's verdict on the object at token tok.
type objectVerdict struct {
	n   *fastNode
	tok uint32
	ok  bool
}

// verdict is a format's (by name) or a Go regular expression's verdict on
// the string at token tok.
type verdict struct {
	tok    uint32
	format string
	re     *matcher
	ok     bool
}

func (r *fastRun) recall(i uint32, format string, re *matcher) (ok, found bool) {
	for _, v := range r.verdicts[:min(r.nverdicts, len(r.verdicts))] {
		if v.tok == i && v.re == re && v.format == format {
			return v.ok, true
		}
	}
	return false, false
}

func (r *fastRun) remember(v verdict) {
	r.verdicts[r.nverdicts%len(r.verdicts)] = v
	r.nverdicts++
}

// formatOK reports whether the value at token i satisfies n's format.
func (r *fastRun) formatOK(n *fastNode, i uint32) bool {
	if r.t.toks[i].kind != tString {
		return n.format(r.t.value(i)) == nil
	}
	b := r.t.bytes(i)
	if fastFormatOf(n.fastFmt, b) {
		return true
	}
	if ok, found := r.recall(i, n.fmtName, nil); found {
		return ok
	}
	ok := n.format(string(b)) == nil
	r.remember(verdict{tok: i, format: n.fmtName, ok: ok})
	return ok
}

// matches reports whether the string at token i matches m.
func (r *fastRun) matches(m *matcher, i uint32) bool {
	if ok, found := r.recall(i, "", m); found {
		return ok
	}
	ok := m.match(r.t.bytes(i))
	r.remember(verdict{tok: i, re: m, ok: ok})
	return ok
}

// valid reports whether the value at token i is valid against n.
func (r *fastRun) valid(n *fastNode, i uint32) bool {
	if r.abort {
		return false
	}
	if atomic.LoadUint32(&n.pend) != laidOut && !n.ready() {
		r.abort = true
		return false
	}
	if r.w.ctx != nil {
		if r.steps++; r.steps%pollEvery == 0 && r.w.ended() {
			r.abort, r.stopped = true, true
			return false
		}
	}
	tk := &r.t.toks[i]
	kind := tk.kind
	if n.leafKinds&kind != 0 && r.depth < maxFastDepth {
		// What the full visit below would do, in fewer steps. (A number
		// takes the full visit, which aborts on those it does not
		// model, but for the schemas true and false.)
		switch n.leaf {
		case leafAlways:
			return n.always > 0
		case leafType:
			return n.types&kind != 0
		case leafString:
			return kind == tString && r.strLen(n, tk.n, i)
		case leafConst:
			return kind == tString && n.constKey.is(r.t.bytes(i))
		case leafEnum:
			return kind == tString && n.enumStr.find(r.t.bytes(i)) >= 0
		case leafFormat:
			return kind == tString && r.formatOK(n, i)
		case leafRequired:
			if kind != tObject {
				return n.types == 0
			}
			for k := range n.reqOutKeys {
				if memberNamed(r.t, i, &n.reqOutKeys[k]) == 0 {
					return false
				}
			}
			return true
		}
	}
	if n.always != 0 {
		return n.always > 0
	}
	memo := n.shared && kind == tObject
	if memo {
		if v := &r.objects[objectSlot(n, i)]; v.n == n && v.tok == i {
			return v.ok
		}
	}
	ok := false
	ops := n.ops
	r.depth++
	if r.depth > maxFastDepth {
		r.abort = true
		goto done
	}
	if kind == tNumber {
		// Only numbers v6 and the fast path read alike (within the
		// exact-parse limits) are modelled.
		if _, _, _, fine := scanNumber(r.t.bytes(i)); !fine {
			r.abort = true
			goto done
		}
	}
	if n.types != 0 && n.types&kind == 0 {
		if kind != tNumber || n.types&tInteger == 0 || !r.isInteger(i) {
			goto done
		}
	}
	if ops&opBefore != 0 {
		if ops&opConst != 0 && !r.isConst(n, i) {
			goto done
		}
		if ops&opEnum != 0 && !r.inEnum(n, i) {
			goto done
		}
		if ops&opFormat != 0 && !r.formatOK(n, i) {
			goto done
		}
		if ops&opRef != 0 && !r.valid(n.ref, i) {
			goto done
		}
	}
	if ops&(uint32(kind)<<opKindShift) != 0 {
		switch kind {
		case tObject:
			if !r.object(n, i) {
				goto done
			}
		case tArray:
			if !r.array(n, i) {
				goto done
			}
		case tString:
			if !r.str(n, i) {
				goto done
			}
		case tNumber:
			if !r.number(n, i) {
				goto done
			}
		}
	}
	if ops&opAfter != 0 && !r.after(n, i, ops) {
		goto done
	}
	ok = !r.abort
done:
	r.depth--
	if memo && !r.abort {
		r.objects[objectSlot(n, i)] = objectVerdict{n: n, tok: i, ok: ok}
	}
	return ok
}

// after checks the keywords of n in opAfter (those that apply n's
// subschemas in place) on the value at token i.
func (r *fastRun) after(n *fastNode, i uint32, ops uint32) bool {
	if ops&opNot != 0 && r.valid(n.not, i) {
		return false
	}
	for k := range n.allOfRun {
		e := &n.allOfRun[k]
		if e.node != nil {
			if !r.valid(e.node, i) {
				return false
			}
			continue
		}
		// The visit of an entry that only applies if/then/else or not,
		// without its frame (its depth counts as the visit's would; a
		// number here passed scanNumber in n's visit already).
		if r.depth++; r.depth > maxFastDepth {
			r.abort = true
		}
		ok := !r.abort
		switch {
		case !ok:
		case e.not != nil:
			ok = !r.valid(e.not, i)
		case r.valid(e.ifN, i):
			ok = e.thenN == nil || r.valid(e.thenN, i)
		default:
			ok = e.elseN == nil || r.valid(e.elseN, i)
		}
		r.depth--
		if !ok || r.abort {
			return false
		}
	}
	for _, sw := range n.switches {
		if !r.dispatch(sw, i) {
			return false
		}
	}
	if ops&opGuard != 0 {
		if !n.guard.holds(r, i) {
			return false
		}
	} else if ops&opAnyOf != 0 {
		matched := false
		for _, s := range n.anyOf {
			if r.valid(s, i) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if ops&opOneOf != 0 {
		matched := 0
		for _, s := range n.oneOf {
			if r.valid(s, i) {
				if matched++; matched > 1 {
					break
				}
			}
		}
		if matched != 1 {
			return false
		}
	}
	if ops&opIf != 0 {
		if r.valid(n.ifN, i) {
			if n.thenN != nil && !r.valid(n.thenN, i) {
				return false
			}
		} else if n.elseN != nil && !r.valid(n.elseN, i) {
			return false
		}
	}
	return true
}

// isConst reports whether the value at token i equals n's const.
func (r *fastRun) isConst(n *fastNode, i uint32) bool {
	if n.constT == nil {
		return r.t.toks[i].kind == tString && n.constKey.is(r.t.bytes(i))
	}
	return r.equal(r.t, i, n.constT, 0)
}

func (r *fastRun) inEnum(n *fastNode, i uint32) bool {
	if n.enumStr != nil {
		return r.t.toks[i].kind == tString && n.enumStr.find(r.t.bytes(i)) >= 0
	}
	e := n.enumT
	for c := uint32(1); c < e.toks[0].end; c = e.toks[c].end {
		if r.equal(r.t, i, e, c) {
			return true
		}
	}
	return false
}

func (r *fastRun) dispatch(sw *dispatchSwitch, i uint32) bool {
	arms, ok := sw.selected(r, i)
	if !ok {
		r.abort = true
		return false
	}
	for _, s := range arms {
		if !r.valid(s, i) {
			return false
		}
	}
	return true
}

func (g *dispatchGuard) holds(r *fastRun, i uint32) bool {
	t := r.t
	sel, v := r.resolve(i, g.path)
	switch sel {
	case selAll:
		return true
	case selValue:
		return g.values.find(t.bytes(v)) >= 0
	}
	return false
}

// maxLookupProps is the largest number of schema properties for which an
// object with more members than the schema has properties is checked by
// looking each property up in the instance (a linear scan of its members);
// otherwise each of the instance's members is looked up in the schema's
// property table (one probe when the table is direct).
const maxLookupProps = 4

func (r *fastRun) object(n *fastNode, i uint32) bool {
	t := r.t
	obj := &t.toks[i]
	count := int(obj.n)
	if n.minProps >= 0 && count < n.minProps {
		return false
	}
	if n.maxProps >= 0 && count > n.maxProps {
		return false
	}
	for k := range n.reqOutKeys {
		if memberNamed(t, i, &n.reqOutKeys[k]) == 0 {
			return false
		}
	}
	if len(n.patProps) == 0 && len(n.propList) <= maxLookupProps && (count > len(n.propList) || !n.propTab.direct) {
		// The keys of a tape that reaches here are unique, so counting
		// the members the properties cover tells whether there are
		// others.
		covered := 0
		for pi := range n.propList {
			p := &n.propList[pi]
			v := memberNamed(t, i, &p.keyName)
			if v == 0 {
				if p.req {
					return false
				}
				continue
			}
			covered++
			if !r.valid(p.node, v) {
				return false
			}
		}
		if covered < count {
			if n.addlFalse {
				return false
			}
			if n.addl != nil {
				for c := i + 1; c < obj.end; c = t.toks[c+1].end {
					if n.propAt(t, c) < 0 && !r.valid(n.addl, c+1) {
						return false
					}
				}
			}
		}
	} else if len(n.patProps) == 0 {
		// Each member looked up in the properties, in one probe of the
		// table when it gives every property a slot of its own.
		var seen uint64
		tab := &n.propTab
		toks, end := t.toks, obj.end
		for c := i + 1; c < end; c = toks[c+1].end {
			pi := -1
			if tab.direct {
				k := &toks[c]
				if e := tab.slots[tab.home(k.hash)]; e != 0 {
					if p := &n.propList[e-1]; p.hash == k.hash && p.is(t.bytes(c)) {
						pi = int(e - 1)
					}
				}
			} else {
				pi = n.propAt(t, c)
			}
			if pi >= 0 {
				if pi < 64 {
					seen |= 1 << pi
				}
				if !r.valid(n.propList[pi].node, c+1) {
					return false
				}
			} else if n.addlFalse || n.addl != nil && !r.valid(n.addl, c+1) {
				return false
			}
		}
		if seen&n.reqMask != n.reqMask {
			return false
		}
		for pi := 64; pi < len(n.propList); pi++ {
			if p := &n.propList[pi]; p.req && memberNamed(t, i, &p.keyName) == 0 {
				return false
			}
		}
	} else {
		var seen uint64
		for c := i + 1; c < obj.end; c = t.toks[c+1].end {
			evaluated := false
			if pi := n.propAt(t, c); pi >= 0 {
				evaluated = true
				if pi < 64 {
					seen |= 1 << pi
				}
				if !r.valid(n.propList[pi].node, c+1) {
					return false
				}
			}
			for _, pp := range n.patProps {
				if r.matches(pp.re, c) {
					evaluated = true
					if !r.valid(pp.node, c+1) {
						return false
					}
				}
			}
			if !evaluated {
				if n.addlFalse {
					return false
				}
				if n.addl != nil && !r.valid(n.addl, c+1) {
					return false
				}
			}
		}
		if seen&n.reqMask != n.reqMask {
			return false
		}
		for pi := 64; pi < len(n.propList); pi++ {
			if p := &n.propList[pi]; p.req && memberNamed(t, i, &p.keyName) == 0 {
				return false
			}
		}
	}
	if n.propNames != nil {
		for c := i + 1; c < obj.end; c = t.toks[c+1].end {
			if !r.valid(n.propNames, c) {
				return false
			}
		}
	}
	return true
}

// member returns the index of the value of the member of object i named
// key, whose keyHash is h, or 0 (never a member's index) when there is
// none.
func member[K string | []byte](t *tape, i uint32, key K, h uint16) uint32 {
	toks := t.toks
	if toks[i].off&keyBloom(h) == 0 {
		return 0
	}
	end := toks[i].end
	for c := i + 1; c < end; c = toks[c+1].end {
		if k := &toks[c]; k.hash == h && int(k.n) == len(key) && string(t.bytes(c)) == string(key) {
			return c + 1
		}
	}
	return 0
}

// memberNamed is member for a key of the schema.
func memberNamed(t *tape, i uint32, key *keyName) uint32 {
	toks := t.toks
	h := key.hash
	if toks[i].off&keyBloom(h) == 0 {
		return 0
	}
	size := uint32(len(key.name))
	end := toks[i].end
	for c := i + 1; c < end; c = toks[c+1].end {
		if k := &toks[c]; k.hash == h && k.n == size && key.is(t.bytes(c)) {
			return c + 1
		}
	}
	return 0
}

// nameWord is the bytes of a key of up to eight bytes as a little-endian
// word (zero-padded): such keys are compared to a tape's as one word.
func nameWord(s string) uint64 {
	var w uint64
	for k := min(len(s), 8) - 1; k >= 0; k-- {
		w = w<<8 | uint64(s[k])
	}
	return w
}

// wordMask is the mask of the bytes of a key of size bytes in its word, or
// 0 when it is not compared as a word (empty or longer than eight bytes).
func wordMask(size int) uint64 {
	if size == 0 || size > 8 {
		return 0
	}
	return uint64(1)<<(8*size) - 1
}

// propAt returns the index in n.propList of the property named by key
// token c, or -1.
func (n *fastNode) propAt(t *tape, c uint32) int {
	tab := &n.propTab
	if len(tab.slots) == 0 {
		return -1
	}
	k := &t.toks[c]
	h := k.hash
	j := tab.home(h)
	for {
		e := tab.slots[j]
		if e == 0 {
			return -1
		}
		if p := &n.propList[e-1]; p.hash == h && p.is(t.bytes(c)) {
			return int(e - 1)
		}
		if tab.direct {
			return -1
		}
		j = (j + 1) & (len(tab.slots) - 1)
	}
}

// propIndex returns the index in n.propList of the property named key,
// whose keyHash is h, or -1.
func (n *fastNode) propIndex(key []byte, h uint16) int {
	tab := &n.propTab
	if len(tab.slots) == 0 {
		return -1
	}
	for j := tab.home(h); ; j = (j + 1) & (len(tab.slots) - 1) {
		e := tab.slots[j]
		if e == 0 {
			return -1
		}
		if p := &n.propList[e-1]; p.hash == h && p.name == string(key) {
			return int(e - 1)
		}
		if tab.direct {
			return -1
		}
	}
}

func (r *fastRun) array(n *fastNode, i uint32) bool {
	t := r.t
	arr := t.toks[i]
	count := int(arr.n)
	if n.minItems >= 0 && count < n.minItems {
		return false
	}
	if n.maxItems >= 0 && count > n.maxItems {
		return false
	}
	if n.unique && count > 1 && !r.uniqueItems(i) {
		return false
	}
	c := i + 1
	for k := 0; k < len(n.prefix) && c < arr.end; k++ {
		if !r.valid(n.prefix[k], c) {
			return false
		}
		c = t.toks[c].end
	}
	if n.items != nil {
		for ; c < arr.end; c = t.toks[c].end {
			if !r.valid(n.items, c) {
				return false
			}
		}
	}
	if n.contains != nil {
		found := false
		for c := i + 1; c < arr.end; c = t.toks[c].end {
			if r.valid(n.contains, c) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// maxPairwiseUnique bounds the quadratic uniqueItems check; longer arrays
// of anything but strings defer to v6.
const maxPairwiseUnique = 64

func (r *fastRun) uniqueItems(i uint32) bool {
	t := r.t
	arr := t.toks[i]
	allStrings := true
	for c := i + 1; c < arr.end; c = t.toks[c].end {
		if t.toks[c].kind != tString {
			allStrings = false
			break
		}
	}
	if allStrings && arr.n > 8 {
		seen := make(map[string]struct{}, arr.n)
		for c := i + 1; c < arr.end; c = t.toks[c].end {
			s := t.bytes(c)
			if _, dup := seen[string(s)]; dup {
				return false
			}
			seen[string(s)] = struct{}{}
		}
		return true
	}
	if arr.n > maxPairwiseUnique {
		r.abort = true
		return false
	}
	for c := t.toks[i+1].end; c < arr.end; c = t.toks[c].end {
		for d := i + 1; d < c; d = t.toks[d].end {
			if r.equal(t, c, t, d) {
				return false
			}
		}
	}
	return true
}

func (r *fastRun) str(n *fastNode, i uint32) bool {
	if (n.minLen >= 0 || n.maxLen >= 0) && !r.strLen(n, r.t.toks[i].n, i) {
		return false
	}
	if n.pattern.ok() && !r.matches(n.pattern, i) {
		return false
	}
	return true
}

// strLen reports whether the string at token i, of size bytes, is within
// n's minLength and maxLength (-1: absent). Lengths count code points (an
// invalid byte counts as one, as in v6); as a code point takes one to four
// bytes, most strings are decided by their size alone.
func (r *fastRun) strLen(n *fastNode, size uint32, i uint32) bool {
	l := int(size)
	if l < n.minLen {
		return false
	}
	if l < 4*n.minLen || (n.maxLen >= 0 && l > n.maxLen) {
		if s := r.t.bytes(i); !asciiOnly(s) {
			l = utf8.RuneCount(s)
		}
		if l < n.minLen || (n.maxLen >= 0 && l > n.maxLen) {
			return false
		}
	}
	return true
}

func asciiOnly(s []byte) bool {
	for len(s) >= 8 {
		if binary.LittleEndian.Uint64(s)&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (r *fastRun) number(n *fastNode, i uint32) bool {
	num, ok := parseNumber(r.t.bytes(i))
	if !ok {
		r.abort = true
		return false
	}
	if n.minimum != nil && num.cmp(n.minimum) < 0 {
		return false
	}
	if n.maximum != nil && num.cmp(n.maximum) > 0 {
		return false
	}
	if n.exMinimum != nil && num.cmp(n.exMinimum) <= 0 {
		return false
	}
	if n.exMaximum != nil && num.cmp(n.exMaximum) >= 0 {
		return false
	}
	if n.multi != nil && !multipleOf(num, n.multi) {
		return false
	}
	return true
}

// multipleOf reports whether num is a multiple of m (m > 0).
func multipleOf(num number, m *bound) bool {
	if num.small && m.small {
		return num.i%m.i == 0
	}
	return new(big.Rat).Quo(num.exact(), m.rat).IsInt()
}

// runeCount counts code points as v6 does (an invalid byte counts as one).
func runeCount(s []byte) int { return utf8.RuneCount(s) }

func (r *fastRun) isInteger(i uint32) bool {
	num, ok := parseNumber(r.t.bytes(i))
	if !ok {
		r.abort = true
		return false
	}
	return num.small || num.rat.IsInt()
}

// equal is JSON equality as v6 defines it (numbers by value) between token
// i of a and token j of b. Neither tape may have duplicate keys.
func (r *fastRun) equal(a *tape, i uint32, b *tape, j uint32) bool {
	x, y := &a.toks[i], &b.toks[j]
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case tNull:
		return true
	case tBool:
		return x.flags&fTrue == y.flags&fTrue
	case tString:
		return string(a.bytes(i)) == string(b.bytes(j))
	case tNumber:
		xs, ys := a.bytes(i), b.bytes(j)
		if string(xs) == string(ys) {
			return true
		}
		nx, ok1 := parseNumber(xs)
		ny, ok2 := parseNumber(ys)
		if !ok1 || !ok2 {
			r.abort = true
			return false
		}
		return nx.cmpNum(ny) == 0
	case tArray:
		if x.n != y.n {
			return false
		}
		for c, d := i+1, j+1; c < x.end; c, d = a.toks[c].end, b.toks[d].end {
			if !r.equal(a, c, b, d) {
				return false
			}
		}
		return true
	case tObject:
		if x.n != y.n {
			return false
		}
		for c := i + 1; c < x.end; c = a.toks[c+1].end {
			d := member(b, j, a.bytes(c), a.toks[c].hash)
			if d == 0 || !r.equal(a, c+1, b, d) {
				return false
			}
		}
		return true
	}
	r.abort = true
	return false
}

// number is a parsed JSON number: an int64 when it is written as a small
// integer literal, an exact rational otherwise.
type number struct {
	i     int64
	small bool
	rat   *big.Rat
}

// Limits for exact parsing; numbers beyond them defer to v6.
const (
	maxNumberLen = 512
	maxExponent  = 1000
)

// scanNumber checks that s follows the JSON number grammar exactly and is
// within the limits of exact parsing here. It reports whether s is a plain
// integer literal and where its integer digits are.
func scanNumber[T string | []byte](s T) (plain bool, intStart, intEnd int, ok bool) {
	if len(s) == 0 || len(s) > maxNumberLen {
		return false, 0, 0, false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	intStart = i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false, 0, 0, false
	}
	intEnd = i
	plain = true
	if i < len(s) && s[i] == '.' {
		plain = false
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false, 0, 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		plain = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp <= maxExponent {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start || exp > maxExponent {
			return false, 0, 0, false
		}
	}
	if i != len(s) {
		return false, 0, 0, false
	}
	return plain, intStart, intEnd, true
}

// parseNumber parses s, which must pass scanNumber; it reports false
// otherwise.
func parseNumber[T string | []byte](s T) (number, bool) {
	plain, intStart, intEnd, ok := scanNumber(s)
	if !ok {
		return number{}, false
	}
	if plain && intEnd-intStart <= 18 {
		var v int64
		for k := intStart; k < intEnd; k++ {
			v = v*10 + int64(s[k]-'0')
		}
		if s[0] == '-' {
			v = -v
		}
		return number{i: v, small: true}, true
	}
	rat, ok := new(big.Rat).SetString(string(s))
	if !ok {
		return number{}, false
	}
	return number{rat: rat}, true
}

func (n number) exact() *big.Rat {
	if n.small {
		return new(big.Rat).SetInt64(n.i)
	}
	return n.rat
}

func (n number) cmp(b *bound) int {
	if n.small && b.small {
		switch {
		case n.i < b.i:
			return -1
		case n.i > b.i:
			return 1
		}
		return 0
	}
	return n.exact().Cmp(b.rat)
}

func (n number) cmpNum(m number) int {
	if n.small && m.small {
		switch {
		case n.i < m.i:
			return -1
		case n.i > m.i:
			return 1
		}
		return 0
	}
	return n.exact().Cmp(m.exact())
}
