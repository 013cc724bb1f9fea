package validate

import (
	"slices"
	"strconv"
	"sync/atomic"
)

// The explainer reports why a document the interpreter (fastrun.go) found
// invalid fails, in the terms jsonschema/v6 used while it validated: it
// visits the schema graph as v6's validator does when collecting errors
// (every keyword of a node is evaluated once the node's type, const, enum
// and format hold; "not", "if" and the arms of a matched union only need a
// verdict, which the interpreter gives), and keeps the leaf failures, one
// per failing keyword, with the instance location, the keyword and its
// schema location. At a failed oneOf or anyOf only the arm that came
// closest contributes (pickBranch in errors.go), as the v6 error conversion
// did. The tests hold the result to v6's converted errors.
//
// It runs only on rejection, over the same tape and with the same run
// state (so the same deadline), in time linear in the document for a given
// schema.
//
// A member or item the interpreter finds valid against its subschema has
// no failures to explain, so the explainer asks it first (child) and
// descends only into the values that fail: on a document with one bad
// value, most of the document costs a verdict, not an explanation. Each
// value on the way down to a failure is then judged once more than it is
// explained; to keep the explanation linear in the document whatever the
// nesting, only the values of the first maxJudgedLevels levels of failing
// values are asked first.

type explainer struct {
	r    *fastRun
	path []string // reference tokens of the current instance location
	// judged is the number of values on the current path that the
	// interpreter was asked about first and rejected.
	judged int
}

// maxJudgedLevels bounds the nesting of values asked about first (see
// above).
const maxJudgedLevels = 32

// child appends the failures of the value at token i against n: of the
// member whose key is token key, or (key 0, never a key) of the item of
// index k. A value the interpreter finds valid has none.
func (e *explainer) child(n *fastNode, i, key uint32, k int, dst []Cause) []Cause {
	judged := e.judged < maxJudgedLevels
	if judged {
		if e.r.valid(n, i) || e.r.abort {
			return dst
		}
		e.judged++
	}
	if key != 0 {
		e.push(string(e.r.t.bytes(key)))
	} else {
		e.push(strconv.Itoa(k))
	}
	dst = e.node(n, i, dst)
	e.pop()
	if judged {
		e.judged--
	}
	return dst
}

func (e *explainer) cause(kw, loc string, missing []string) Cause {
	return Cause{Pointer: pointer(e.path), Keyword: kw, SchemaLocation: loc, Missing: missing}
}

// explain returns the error for the document on t, which root rejects;
// ok is false if the run aborted (undecidable input, or done closed).
func explain(key string, root *fastNode, t *tape, w watch) (err *Error, ok bool) {
	r := fastRun{t: t, w: w}
	e := explainer{r: &r}
	causes := e.node(root, 0, nil)
	if r.abort {
		return nil, false
	}
	if len(causes) == 0 {
		return &Error{Schema: key, Keyword: KeywordSchema}, true
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
	}, true
}

func (e *explainer) push(tok string) { e.path = append(e.path, tok) }
func (e *explainer) pop()            { e.path = e.path[:len(e.path)-1] }

// node appends the leaf failures of the value at token i against n.
func (e *explainer) node(n *fastNode, i uint32, dst []Cause) []Cause {
	r := e.r
	if r.abort || n == nil {
		return dst
	}
	if atomic.LoadUint32(&n.pend) != laidOut && !n.ready() {
		r.abort = true
		return dst
	}
	if r.w.ctx != nil {
		if r.steps++; r.steps%pollEvery == 0 && r.w.ended() {
			r.abort, r.stopped = true, true
			return dst
		}
	}
	switch n.always {
	case 1:
		return dst
	case -1:
		return append(dst, e.cause("false", n.location(), nil))
	}
	t := r.t
	kind := t.toks[i].kind
	if kind == tNumber {
		if _, _, _, ok := scanNumber(t.bytes(i)); !ok {
			r.abort = true
			return dst
		}
	}
	if n.types != 0 && n.types&kind == 0 {
		if kind != tNumber || n.types&tInteger == 0 || !r.isInteger(i) {
			return append(dst, e.cause("type", n.location()+"/type", nil))
		}
	}
	if n.hasConst && !r.isConst(n, i) {
		c := e.cause("const", n.location()+"/const", nil)
		c.Allowed = []string{n.raw().Const}
		return append(dst, c)
	}
	if n.enumT != nil && !r.inEnum(n, i) {
		c := e.cause("enum", n.location()+"/enum", nil)
		c.Allowed = elements(n.raw().Enum)
		return append(dst, c)
	}
	if n.format != nil && !r.formatOK(n, i) {
		return append(dst, e.cause("format", n.location()+"/format", nil))
	}
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxFastDepth {
		r.abort = true
		return dst
	}
	if n.ref != nil {
		dst = e.node(n.ref, i, dst)
	}
	switch kind {
	case tObject:
		if n.object {
			dst = e.object(n, i, dst)
		}
	case tArray:
		if n.array {
			dst = e.array(n, i, dst)
		}
	case tString:
		if n.str {
			dst = e.str(n, i, dst)
		}
	case tNumber:
		if n.num {
			dst = e.number(n, i, dst)
		}
	}
	if n.not != nil && r.valid(n.not, i) {
		dst = append(dst, e.cause("not", n.location()+"/not", nil))
	}
	// allOf: the entries the dispatch switches stand for ({"if": a
	// signature, "then": an arm}) contribute exactly the arms whose
	// signature holds, which the switch selects without evaluating every
	// "if".
	for _, s := range n.allOfRest {
		dst = e.node(s, i, dst)
	}
	for _, sw := range n.switches {
		arms, ok := sw.selected(r, i)
		if !ok {
			r.abort = true
			return dst
		}
		for _, s := range arms {
			dst = e.node(s, i, dst)
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		if n.guard != nil {
			matched = n.guard.holds(r, i)
		} else {
			for _, s := range n.anyOf {
				if r.valid(s, i) {
					matched = true
					break
				}
			}
		}
		if !matched {
			dst = e.union(n, n.anyOf, "anyOf", i, dst)
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			if r.valid(s, i) {
				if matched++; matched > 1 {
					break
				}
			}
		}
		switch {
		case matched == 0:
			dst = e.union(n, n.oneOf, "oneOf", i, dst)
		case matched > 1:
			dst = append(dst, e.cause("oneOf", n.location()+"/oneOf", nil))
		}
	}
	if n.ifN != nil {
		if r.valid(n.ifN, i) {
			if n.thenN != nil {
				dst = e.node(n.thenN, i, dst)
			}
		} else if n.elseN != nil {
			dst = e.node(n.elseN, i, dst)
		}
	}
	return dst
}

// union appends the failures of the arm of a failed oneOf or anyOf that
// came closest to matching, or the union's own failure.
func (e *explainer) union(n *fastNode, arms []*fastNode, kw string, i uint32, dst []Cause) []Cause {
	branches := make([][]Cause, len(arms))
	for k, a := range arms {
		branches[k] = e.node(a, i, nil)
	}
	if best := pickBranch(branches, len(e.path)); best >= 0 {
		return append(dst, branches[best]...)
	}
	return append(dst, e.cause(kw, n.location()+"/"+kw, nil))
}

func (e *explainer) object(n *fastNode, i uint32, dst []Cause) []Cause {
	r, t := e.r, e.r.t
	obj := t.toks[i]
	count := int(obj.n)
	if n.minProps >= 0 && count < n.minProps {
		dst = append(dst, e.cause("minProperties", n.location()+"/minProperties", nil))
	}
	if n.maxProps >= 0 && count > n.maxProps {
		dst = append(dst, e.cause("maxProperties", n.location()+"/maxProperties", nil))
	}
	var missing []string
	for _, k := range n.raw().Required {
		if member(t, i, k, keyHash(k)) == 0 {
			missing = append(missing, k)
		}
	}
	if missing != nil {
		dst = append(dst, e.cause("required", n.location()+"/required", missing))
	}
	var additional []string
	for c := i + 1; c < obj.end; c = t.toks[c+1].end {
		key := t.bytes(c)
		evaluated := false
		if pi := n.propIndex(key, t.toks[c].hash); pi >= 0 {
			evaluated = true
			dst = e.child(n.propList[pi].node, c+1, c, 0, dst)
		}
		for _, pp := range n.patProps {
			if r.matches(pp.re, c) {
				evaluated = true
				dst = e.child(pp.node, c+1, c, 0, dst)
			}
		}
		if !evaluated {
			if n.addlFalse {
				additional = append(additional, string(key))
			} else if n.addl != nil {
				dst = e.child(n.addl, c+1, c, 0, dst)
			}
		}
	}
	if additional != nil {
		c := e.cause("additionalProperties", n.location()+"/additionalProperties", nil)
		slices.Sort(additional)
		c.Unexpected = additional
		dst = append(dst, c)
	}
	if n.propNames != nil {
		for c := i + 1; c < obj.end; c = t.toks[c+1].end {
			if !r.valid(n.propNames, c) {
				// The location of the propertyNames subschema itself,
				// before references are followed.
				loc := ""
				if n.c != nil {
					loc = n.c.location(n.raw().PropNames)
				}
				dst = append(dst, e.cause("propertyNames", loc, nil))
			}
		}
	}
	return dst
}

func (e *explainer) array(n *fastNode, i uint32, dst []Cause) []Cause {
	r, t := e.r, e.r.t
	arr := t.toks[i]
	count := int(arr.n)
	if n.minItems >= 0 && count < n.minItems {
		dst = append(dst, e.cause("minItems", n.location()+"/minItems", nil))
	}
	if n.maxItems >= 0 && count > n.maxItems {
		dst = append(dst, e.cause("maxItems", n.location()+"/maxItems", nil))
	}
	if n.unique && count > 1 && !r.uniqueItems(i) {
		if r.abort {
			return dst
		}
		dst = append(dst, e.cause("uniqueItems", n.location()+"/uniqueItems", nil))
	}
	c, k := i+1, 0
	for ; k < len(n.prefix) && c < arr.end; k++ {
		dst = e.child(n.prefix[k], c, 0, k, dst)
		c = t.toks[c].end
	}
	if n.items != nil {
		for ; c < arr.end; c, k = t.toks[c].end, k+1 {
			dst = e.child(n.items, c, 0, k, dst)
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
			if count == 0 {
				dst = append(dst, e.cause("contains", n.location()+"/contains", nil))
			}
			k := 0
			for c := i + 1; c < arr.end; c, k = t.toks[c].end, k+1 {
				e.push(strconv.Itoa(k))
				dst = e.node(n.contains, c, dst)
				e.pop()
			}
		}
	}
	return dst
}

func (e *explainer) str(n *fastNode, i uint32, dst []Cause) []Cause {
	r := e.r
	if n.minLen >= 0 || n.maxLen >= 0 {
		s := r.t.bytes(i)
		l := len(s)
		if !asciiOnly(s) {
			l = runeCount(s)
		}
		if n.minLen >= 0 && l < n.minLen {
			dst = append(dst, e.cause("minLength", n.location()+"/minLength", nil))
		}
		if n.maxLen >= 0 && l > n.maxLen {
			dst = append(dst, e.cause("maxLength", n.location()+"/maxLength", nil))
		}
	}
	if n.pattern.ok() && !r.matches(n.pattern, i) {
		dst = append(dst, e.cause("pattern", n.location()+"/pattern", nil))
	}
	return dst
}

func (e *explainer) number(n *fastNode, i uint32, dst []Cause) []Cause {
	num, ok := parseNumber(e.r.t.bytes(i))
	if !ok {
		e.r.abort = true
		return dst
	}
	if n.minimum != nil && num.cmp(n.minimum) < 0 {
		dst = append(dst, e.cause("minimum", n.location()+"/minimum", nil))
	}
	if n.maximum != nil && num.cmp(n.maximum) > 0 {
		dst = append(dst, e.cause("maximum", n.location()+"/maximum", nil))
	}
	if n.exMinimum != nil && num.cmp(n.exMinimum) <= 0 {
		dst = append(dst, e.cause("exclusiveMinimum", n.location()+"/exclusiveMinimum", nil))
	}
	if n.exMaximum != nil && num.cmp(n.exMaximum) >= 0 {
		dst = append(dst, e.cause("exclusiveMaximum", n.location()+"/exclusiveMaximum", nil))
	}
	if n.multi != nil && !multipleOf(num, n.multi) {
		dst = append(dst, e.cause("multipleOf", n.location()+"/multipleOf", nil))
	}
	return dst
}
