package validate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// This file turns the generated validation program (package gen/validation,
// emitted by cmd/ahp-codegen from the schemas compiled by jsonschema/v6) into
// the fastNodes the interpreter (fastrun.go) and the explainer (explain.go)
// run. Nothing is compiled from schema JSON here, and nothing is laid out
// ahead of need: a node is laid out (its keywords copied, its property table
// built, its constants put on tapes, its dispatch switches built) the first
// time a validation visits it, and shared by every later visit. Until then a
// node is a shell that only knows its program node; its subschemas are
// shells too. A validation therefore pays for the nodes it visits, which on
// a request is a small part of what its reference reaches (a union's arms
// for the other event types are never visited).

// Layout states of a fastNode (fastNode.pend).
const (
	laidOut   = 0 // ready to run (also every node built by hand in tests)
	shell     = 1 // not laid out yet
	layingOut = 2 // being laid out (by the goroutine holding the lock)
	broken    = 3 // the program node is not modelled: every visit aborts
)

// fastCompiler lays out program nodes as fastNodes, one per node, shared by
// every reference and every validation that reaches it.
type fastCompiler struct {
	prog *schemaprog.Program
	// trusted marks the generated program, which the generator and the
	// tests (TestGeneratedProgramLaysOut) have checked: no in-place
	// cycles, nothing the interpreter does not model.
	trusted bool

	mu    sync.Mutex             // guards nodes, free and every layout
	nodes [][]*fastNode          // per document, per node: its fastNode once made
	free  []fastNode             // allocated together, not yet made
	paths map[string][]pathLevel // interned dispatch paths (stepsPath)
	pfree []*fastNode            // allocated together for lists, not yet used
}

// shellChunk and ptrChunk are the numbers of fastNodes and list entries
// allocated together.
const (
	shellChunk = 16
	ptrChunk   = 256
)

func newFastCompiler(p *schemaprog.Program) *fastCompiler {
	return &fastCompiler{prog: p, trusted: p == validation.Program(), nodes: make([][]*fastNode, len(p.Docs))}
}

// raw returns the program node id names.
func (c *fastCompiler) raw(id schemaprog.ID) *schemaprog.Node {
	return &c.prog.Docs[id.Doc()].Nodes[id.Index()]
}

// schema returns the program for the reference to node id, its root laid
// out; an error means the program holds something the interpreter does not
// model (which the generator refuses to emit).
func (c *fastCompiler) schema(id schemaprog.ID) (*fastSchema, error) {
	if !c.trusted {
		if err := inPlaceCycle(c.prog, id); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	root, err := c.shell(id)
	if err != nil {
		return nil, err
	}
	if err := c.layOut(root); err != nil {
		return nil, err
	}
	return &fastSchema{root: root}, nil
}

// ready lays n out if it is still a shell; false means n is not modelled
// (the run must abort).
func (n *fastNode) ready() bool {
	if atomic.LoadUint32(&n.pend) == laidOut {
		return true
	}
	if n.c == nil {
		return false
	}
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	return n.c.layOut(n) == nil
}

// maxRefChain bounds the chains of bare references followed to their
// target; longer chains (which only a reference cycle makes) are not
// modelled.
const maxRefChain = 1 << 10

// pureRaw reports whether s is a bare {"$ref": …}, which validates exactly
// as its target does.
func pureRaw(s *schemaprog.Node) bool {
	return s.Ref != 0 && s.Bool == 0 && s.Types == 0 && s.Const == "" && s.Enum == "" && s.Format == "" &&
		s.Not == 0 && s.If == 0 && s.Then == 0 && s.Else == 0 &&
		len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		!rawObject(s) && !rawArray(s) && !rawString(s) && !rawNumber(s)
}

func rawObject(s *schemaprog.Node) bool {
	return s.MinProps != 0 || s.MaxProps != 0 || len(s.Required) > 0 || s.PropNames != 0 ||
		len(s.PropKeys) > 0 || len(s.PatKeys) > 0 || s.AddlFalse || s.Addl != 0
}

func rawArray(s *schemaprog.Node) bool {
	return s.MinItems != 0 || s.MaxItems != 0 || s.Unique || s.Contains != 0 || len(s.Prefix) > 0 || s.Items != 0
}

func rawString(s *schemaprog.Node) bool { return s.MinLen != 0 || s.MaxLen != 0 || s.Pattern != "" }

func rawNumber(s *schemaprog.Node) bool {
	return s.Minimum != "" || s.Maximum != "" || s.ExMinimum != "" || s.ExMaximum != "" || s.MultipleOf != ""
}

// target returns the node at the end of id's chain of bare references.
func (c *fastCompiler) target(id schemaprog.ID) (schemaprog.ID, error) {
	for range maxRefChain {
		s := c.raw(id)
		if !pureRaw(s) {
			return id, nil
		}
		id = s.Ref
	}
	return 0, fmt.Errorf("%w: reference cycle", errFastUnsupported)
}

// shell returns the fastNode of the target of id (0: nil), made as a shell
// on first request. c.mu must be held.
func (c *fastCompiler) shell(id schemaprog.ID) (*fastNode, error) {
	if id == 0 {
		return nil, nil
	}
	id, err := c.target(id)
	if err != nil {
		return nil, err
	}
	d, i := id.Doc(), id.Index()
	if c.nodes[d] == nil {
		c.nodes[d] = make([]*fastNode, len(c.prog.Docs[d].Nodes))
	}
	if n := c.nodes[d][i]; n != nil {
		return n, nil
	}
	if len(c.free) == 0 {
		c.free = make([]fastNode, shellChunk)
	}
	n := &c.free[0]
	c.free = c.free[1:]
	n.pend, n.c, n.id, n.shared = shell, c, id, refTarget(c.raw(id).Loc)
	c.nodes[d][i] = n
	return n, nil
}

// layOut lays n out unless it is already. c.mu must be held.
func (c *fastCompiler) layOut(n *fastNode) error {
	switch atomic.LoadUint32(&n.pend) {
	case laidOut:
		return nil
	case layingOut:
		// Only an in-place cycle through allOf or anyOf leads back here
		// (the generated program has none).
		return fmt.Errorf("%w: in-place cycle", errFastUnsupported)
	case broken:
		return errFastUnsupported
	}
	atomic.StoreUint32(&n.pend, layingOut)
	if err := c.fill(n, c.raw(n.id)); err != nil {
		// A broken node is never run: what fill left in it is not read.
		atomic.StoreUint32(&n.pend, broken)
		return fmt.Errorf("%s: %w", n.location(), err)
	}
	atomic.StoreUint32(&n.pend, laidOut)
	return nil
}

func (c *fastCompiler) list(ids []schemaprog.ID) ([]*fastNode, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []*fastNode
	if len(ids) > len(c.pfree) {
		if len(ids) > ptrChunk/4 {
			out = make([]*fastNode, len(ids))
		} else {
			c.pfree = make([]*fastNode, ptrChunk)
		}
	}
	if out == nil {
		out, c.pfree = c.pfree[:len(ids):len(ids)], c.pfree[len(ids):]
	}
	for i, id := range ids {
		n, err := c.shell(id)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// decodeConst decodes a constant of the program (canonical JSON).
func decodeConst(s string) (any, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.ContainsAny(s[1:len(s)-1], "\\\"") {
		return s[1 : len(s)-1], nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// constTape puts a constant of the program (canonical JSON) on a tape of
// its own, or returns nil if it holds a number outside what the fast path
// compares exactly.
func constTape(s string) *tape {
	t := new(tape)
	// The tape only reads its source: it aliases the program's text.
	if !t.parse(unsafe.Slice(unsafe.StringData(s), len(s))) || t.dup {
		v, err := decodeConst(s)
		t = new(tape)
		if err != nil || !t.fromValue(v) {
			return nil
		}
	}
	for i := range t.toks {
		if t.toks[i].kind == tNumber {
			if _, ok := parseNumber(t.bytes(uint32(i))); !ok {
				return nil
			}
		}
	}
	return t
}

// elements splits the canonical JSON text of an array into the texts of
// its elements.
func elements(s string) []string {
	if len(s) < 2 || s[0] != '[' {
		return nil
	}
	out := []string{}
	depth, start, inStr := 0, 1, false
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s)-1 {
		out = append(out, s[start:len(s)-1])
	}
	return out
}

// progBound parses a bound of the program.
func progBound(s string) (*bound, error) {
	if s == "" {
		return nil, nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%w: bound %q", errFastUnsupported, s)
	}
	return newBound(r), nil
}

func progCount(v uint32) int { return int(v) - 1 }

// fill lays out n from program node s. c.mu must be held.
func (c *fastCompiler) fill(n *fastNode, s *schemaprog.Node) error {
	switch s.Bool {
	case 1, -1:
		n.always = s.Bool
		n.leaf, n.leafKinds = leafAlways, allKinds
		return nil
	}
	n.minProps, n.maxProps, n.minItems, n.maxItems, n.minLen, n.maxLen = -1, -1, -1, -1, -1, -1
	n.types = s.Types
	var err error
	if s.Const != "" {
		n.hasConst = true
		if n.constT = constTape(s.Const); n.constT == nil {
			return errFastUnsupported
		}
		if tk := n.constT.toks[0]; tk.kind == tString && tk.flags&fBuf == 0 {
			// A string without escapes: compared as the string itself,
			// cut out of the program's text.
			n.constStr, n.constT = s.Const[tk.off:tk.off+tk.n], nil
		}
	}
	if s.Enum != "" {
		e := constTape(s.Enum)
		if e == nil || e.toks[0].kind != tArray {
			return errFastUnsupported
		}
		n.enumT = e
		var vals []string
		for k := uint32(1); k < e.toks[0].end; k = e.toks[k].end {
			tk := e.toks[k]
			if tk.kind != tString {
				vals = nil
				break
			}
			v := string(e.bytes(k))
			if tk.flags&fBuf == 0 {
				v = s.Enum[tk.off : tk.off+tk.n]
			}
			vals = append(vals, v)
		}
		if vals != nil && len(vals) <= math.MaxInt16 {
			set := newStrSet(vals)
			n.enumStr = &set
		}
	}
	if s.Format != "" {
		if n.format = formatCheck(s.Format); n.format == nil {
			return fmt.Errorf("%w: format %q", errFastUnsupported, s.Format)
		}
		n.fmtName = s.Format
	}
	sh := func(id schemaprog.ID) *fastNode {
		if id == 0 || err != nil {
			return nil
		}
		var m *fastNode
		m, err = c.shell(id)
		return m
	}
	ls := func(ids []schemaprog.ID) []*fastNode {
		if len(ids) == 0 || err != nil {
			return nil
		}
		var l []*fastNode
		l, err = c.list(ids)
		return l
	}
	n.ref, n.not, n.ifN, n.thenN, n.elseN = sh(s.Ref), sh(s.Not), sh(s.If), sh(s.Then), sh(s.Else)
	n.addl, n.propNames, n.contains, n.items = sh(s.Addl), sh(s.PropNames), sh(s.Contains), sh(s.Items)
	n.allOfRest, n.anyOf, n.oneOf, n.prefix = ls(s.AllOf), ls(s.AnyOf), ls(s.OneOf), ls(s.Prefix)
	if err != nil {
		return err
	}

	// object
	n.minProps, n.maxProps = progCount(s.MinProps), progCount(s.MaxProps)
	n.addlFalse = s.AddlFalse
	n.object = rawObject(s)
	if len(s.PropKeys) != len(s.PropIDs) || len(s.PatKeys) != len(s.PatIDs) {
		return errFastUnsupported
	}
	if len(s.PropKeys) > 0 {
		n.propList = make([]namedNode, len(s.PropKeys))
		for k, name := range s.PropKeys {
			pn, err := c.shell(s.PropIDs[k])
			if err != nil {
				return err
			}
			n.propList[k] = namedNode{keyName: keyName{name: name}, node: pn}
		}
	}
	for k, re := range s.PatKeys {
		m, err := c.matcher(re)
		if err != nil {
			return err
		}
		pn, err := c.shell(s.PatIDs[k])
		if err != nil {
			return err
		}
		n.patProps = append(n.patProps, patternProp{m, pn})
	}
	if !slices.IsSortedFunc(n.propList, func(a, b namedNode) int { return strings.Compare(a.name, b.name) }) {
		slices.SortFunc(n.propList, func(a, b namedNode) int { return strings.Compare(a.name, b.name) })
	}
	if len(n.propList) > math.MaxInt16 {
		return errFastUnsupported
	}
	for i := range n.propList {
		n.propList[i].keyName = newKeyName(n.propList[i].name)
	}
	if len(n.propList) > 0 {
		hs := make([]uint16, len(n.propList))
		for i := range n.propList {
			hs[i] = n.propList[i].hash
		}
		n.propTab = newHashTab(hs)
	}
	for _, k := range s.Required {
		if i := n.propIndex([]byte(k), keyHash(k)); i >= 0 {
			n.propList[i].req = true
			if i < 64 {
				n.reqMask |= 1 << i
			}
		} else if !slices.Contains(n.reqOutside, k) {
			n.reqOutside = append(n.reqOutside, k)
		}
	}

	// array
	n.minItems, n.maxItems = progCount(s.MinItems), progCount(s.MaxItems)
	n.unique = s.Unique
	n.array = rawArray(s)

	// string
	n.minLen, n.maxLen = progCount(s.MinLen), progCount(s.MaxLen)
	if s.Pattern != "" {
		if n.pattern, err = c.matcher(s.Pattern); err != nil {
			return err
		}
	}
	n.str = n.minLen >= 0 || n.maxLen >= 0 || n.pattern.ok()

	// number
	if rawNumber(s) {
		for _, p := range []struct {
			dst **bound
			s   string
		}{{&n.minimum, s.Minimum}, {&n.maximum, s.Maximum}, {&n.exMinimum, s.ExMinimum},
			{&n.exMaximum, s.ExMaximum}, {&n.multi, s.MultipleOf}} {
			if *p.dst, err = progBound(p.s); err != nil {
				return err
			}
		}
	}
	if n.multi != nil && n.multi.rat.Sign() <= 0 {
		return errFastUnsupported
	}
	n.num = n.minimum != nil || n.maximum != nil || n.exMinimum != nil || n.exMaximum != nil || n.multi != nil
	if t := c.dispatchOf(n.id); t != nil {
		if err := c.dispatch(n, t); err != nil {
			return err
		}
	}
	n.allOfRun = c.allOfRun(n.allOfRest)
	n.setOps()
	return nil
}

// allOfRun returns the entries of an allOf as fastNode.allOfRun runs them:
// an entry whose program node applies only if/then/else, or only not (and
// has no dispatch tables), becomes those subschemas. An entry whose
// subschemas cannot be made stays a node, which its visit finds broken.
// c.mu must be held.
func (c *fastCompiler) allOfRun(l []*fastNode) []allOfEntry {
	if len(l) == 0 {
		return nil
	}
	out := make([]allOfEntry, len(l))
	for k, m := range l {
		out[k].node = m
		s := c.raw(m.id)
		if s.Bool != 0 || s.Types != 0 || s.Const != "" || s.Enum != "" || s.Format != "" || s.Ref != 0 ||
			len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 ||
			rawObject(s) || rawArray(s) || rawString(s) || rawNumber(s) || c.dispatchOf(m.id) != nil {
			continue
		}
		var e allOfEntry
		var err error
		switch {
		case s.If != 0 && s.Not == 0:
			e.ifN, err = c.shell(s.If)
			if err == nil {
				e.thenN, err = c.shell(s.Then)
			}
			if err == nil {
				e.elseN, err = c.shell(s.Else)
			}
		case s.Not != 0 && s.If == 0:
			e.not, err = c.shell(s.Not)
		default:
			continue
		}
		if err == nil {
			out[k] = e
		}
	}
	return out
}

// arms makes the nodes of l, a dispatchSwitch's arms, on their first
// selection.
func (c *fastCompiler) arms(l *armList) ([]*fastNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := l.nodes.Load(); p != nil {
		return *p, true
	}
	nodes, err := c.list(l.ids)
	if err != nil {
		return nil, false
	}
	l.nodes.Store(&nodes)
	return nodes, true
}

// dispatchOf returns the dispatch tables of node id, or nil.
func (c *fastCompiler) dispatchOf(id schemaprog.ID) *schemaprog.Dispatch {
	tabs := c.prog.Docs[id.Doc()].Dispatch
	idx := uint32(id.Index())
	k, found := slices.BinarySearchFunc(tabs, idx, func(t schemaprog.Dispatch, i uint32) int {
		return cmp.Compare(t.Node, i)
	})
	if !found {
		return nil
	}
	return &tabs[k]
}

// stepsPath converts a signature path of the program; equal paths are the
// same slice (which fastRun.resolve relies on to remember resolutions).
// c.mu must be held.
func (c *fastCompiler) stepsPath(steps []schemaprog.Step) []pathLevel {
	var key strings.Builder
	for _, st := range steps {
		key.WriteString(strconv.Itoa(len(st.Key)))
		if st.Req {
			key.WriteByte('!')
		}
		key.WriteByte(':')
		key.WriteString(st.Key)
	}
	if p, ok := c.paths[key.String()]; ok {
		return p
	}
	out := make([]pathLevel, len(steps))
	for i, st := range steps {
		out[i] = pathLevel{keyName: newKeyName(st.Key), req: st.Req}
	}
	if c.paths == nil {
		c.paths = map[string][]pathLevel{}
	}
	c.paths[key.String()] = out
	return out
}

// dispatch sets n's dispatch switches and guard from its tables t: the
// arms become shells, laid out when a validation selects them.
func (c *fastCompiler) dispatch(n *fastNode, t *schemaprog.Dispatch) error {
	if t.Guard && len(n.anyOf) > 0 {
		if len(t.GuardValues) > math.MaxInt16 {
			return errFastUnsupported
		}
		n.guard = &dispatchGuard{path: c.stepsPath(t.GuardPath), values: newStrSet(t.GuardValues)}
	}
	if len(t.Switches) == 0 {
		return nil
	}
	var err error
	if n.allOfRest, err = c.list(t.Rest); err != nil {
		return err
	}
	n.switches = make([]*dispatchSwitch, len(t.Switches))
	for k := range t.Switches {
		st := &t.Switches[k]
		if len(st.Values) != len(st.Arms) || len(st.Values) > math.MaxInt16 {
			return errFastUnsupported
		}
		sw := &dispatchSwitch{path: c.stepsPath(st.Path), index: newStrSet(st.Values),
			arms: make([]armList, len(st.Values)+1), c: c}
		for v, a := range st.Arms {
			sw.arms[v].ids = a
		}
		sw.arms[len(st.Values)].ids = st.All
		n.switches[k] = sw
	}
	return nil
}

// matcher returns a pattern's matcher; the generated program's patterns
// are known to compile, others are parsed first.
func (c *fastCompiler) matcher(src string) (*matcher, error) {
	if !c.trusted && !regexpSyntaxOK(src) {
		return nil, fmt.Errorf("%w: pattern %q", errFastUnsupported, src)
	}
	return &matcher{src: src, known: knownPattern(src)}, nil
}

// locate returns the ID of the node at location key ("name" or
// "name#fragment") of p, or 0.
func locate(p *schemaprog.Program, key string) schemaprog.ID {
	name, frag, _ := strings.Cut(key, "#")
	loc := "#" + frag
	for di := range p.Docs {
		d := &p.Docs[di]
		if d.Name != name {
			continue
		}
		for i := range d.Nodes {
			if d.Nodes[i].Loc == loc {
				return schemaprog.MakeID(di, i)
			}
		}
	}
	return 0
}

// location returns n's schema location relative to schemas.BaseURI ("" for
// a node built by hand).
func (n *fastNode) location() string {
	if n.c == nil {
		return ""
	}
	return n.c.location(n.id)
}

// location returns the schema location of node id relative to
// schemas.BaseURI.
func (c *fastCompiler) location(id schemaprog.ID) string {
	return c.prog.Docs[id.Doc()].Name + c.raw(id).Loc
}

// raw returns the program node n was laid out from (an empty one for a
// node built by hand).
func (n *fastNode) raw() *schemaprog.Node {
	if n.c == nil {
		return &schemaprog.Node{}
	}
	return n.c.raw(n.id)
}

// inPlaceCycle rejects graphs where a subschema reaches itself without
// descending into the instance ($ref, allOf, anyOf, oneOf, not,
// if/then/else), among the nodes reachable from root. v6 reports such a
// cycle as an error; the fast path would not terminate.
func inPlaceCycle(p *schemaprog.Program, root schemaprog.ID) error {
	const (
		grey  = 1
		black = 2
	)
	color := map[schemaprog.ID]uint8{}
	started := map[schemaprog.ID]bool{root: true}
	queue := []schemaprog.ID{root}
	var visit func(id schemaprog.ID) error
	visit = func(id schemaprog.ID) error {
		switch color[id] {
		case grey:
			return fmt.Errorf("%w: in-place cycle", errFastUnsupported)
		case black:
			return nil
		}
		color[id] = grey
		s := p.Node(id)
		inPlace := append([]schemaprog.ID{s.Ref, s.Not, s.If, s.Then, s.Else}, s.AllOf...)
		inPlace = append(append(inPlace, s.AnyOf...), s.OneOf...)
		for _, m := range inPlace {
			if m == 0 {
				continue
			}
			if err := visit(m); err != nil {
				return err
			}
		}
		color[id] = black
		descend := append([]schemaprog.ID{s.PropNames, s.Addl, s.Contains, s.Items}, s.Prefix...)
		descend = append(append(descend, s.PropIDs...), s.PatIDs...)
		for _, m := range descend {
			if m != 0 && !started[m] {
				started[m] = true
				queue = append(queue, m)
			}
		}
		return nil
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if err := visit(id); err != nil {
			return err
		}
	}
	return nil
}
