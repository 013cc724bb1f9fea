package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// This file turns the generated validation program (package gen/validation,
// emitted by cmd/ahp-codegen from the schemas compiled by jsonschema/v6) into
// the fastNode graph the interpreter (fastrun.go) and the explainer
// (explain.go) run. Nothing is compiled from schema JSON here: each node's
// keywords are copied, its property table is laid out, and its patterns are
// compiled as Go regular expressions (the engine v6 used), lazily, for the
// nodes reachable from the references actually used.

// fastCompiler turns program nodes into fastNodes, one per node, shared by
// every reference compiled with it.
type fastCompiler struct {
	prog *schemaprog.Program
	// slab holds each document's nodes, allocated together on the
	// document's first use; made marks those laid out.
	slab  [][]fastNode
	made  [][]bool
	order []schemaprog.ID // laid out nodes in creation order
}

func newFastCompiler(p *schemaprog.Program) *fastCompiler {
	return &fastCompiler{prog: p, slab: make([][]fastNode, len(p.Docs)), made: make([][]bool, len(p.Docs))}
}

// at returns the slot of node id and whether it is laid out.
func (c *fastCompiler) at(id schemaprog.ID) (*fastNode, *bool) {
	d, i := id.Doc(), id.Index()
	if c.slab[d] == nil {
		c.slab[d] = make([]fastNode, len(c.prog.Docs[d].Nodes))
		c.made[d] = make([]bool, len(c.prog.Docs[d].Nodes))
	}
	return &c.slab[d][i], &c.made[d][i]
}

// schema compiles the node id; an error means the program holds something
// the interpreter does not model (which the generator refuses to emit).
func (c *fastCompiler) schema(id schemaprog.ID) (*fastSchema, error) {
	start := len(c.order)
	root, err := c.node(id)
	if err == nil {
		err = checkInPlaceCycles(root)
	}
	if err != nil {
		for _, s := range c.order[start:] {
			n, made := c.at(s)
			*n, *made = fastNode{}, false
		}
		c.order = c.order[:start]
		return nil, err
	}
	fresh := c.order[start:]
	for _, s := range fresh {
		n, _ := c.at(s)
		skipRefs(n)
	}
	for _, s := range fresh {
		n, _ := c.at(s)
		buildSwitches(n)
	}
	return &fastSchema{root: follow(root)}, nil
}

func (c *fastCompiler) node(id schemaprog.ID) (*fastNode, error) {
	if id == 0 {
		return nil, nil
	}
	n, made := c.at(id)
	if *made {
		return n, nil
	}
	doc := &c.prog.Docs[id.Doc()]
	pn := &doc.Nodes[id.Index()]
	*n = fastNode{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1,
		shared: refTarget(pn.Loc), doc: doc.Name, frag: pn.Loc}
	*made = true
	c.order = append(c.order, id)
	if err := c.fill(n, pn); err != nil {
		return nil, fmt.Errorf("%s: %w", n.location(), err)
	}
	return n, nil
}

func (c *fastCompiler) list(ids []schemaprog.ID) ([]*fastNode, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]*fastNode, len(ids))
	for i, id := range ids {
		n, err := c.node(id)
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

func (c *fastCompiler) fill(n *fastNode, s *schemaprog.Node) error {
	switch s.Bool {
	case 1:
		n.always = 1
		return nil
	case -1:
		n.always = -1
		return nil
	}
	n.types = s.Types
	var err error
	if s.Const != "" {
		v, err := decodeConst(s.Const)
		if err != nil || !plainJSON(v, 0) {
			return errFastUnsupported
		}
		n.hasConst, n.constV = true, v
		if n.constT = constTape(v); n.constT == nil {
			return errFastUnsupported
		}
	}
	if s.Enum != "" {
		v, err := decodeConst(s.Enum)
		vals, ok := v.([]any)
		if err != nil || !ok || !plainJSON(v, 0) {
			return errFastUnsupported
		}
		n.enum = append(make([]any, 0, len(vals)), vals...)
		if n.enumT = constTape(n.enum); n.enumT == nil {
			return errFastUnsupported
		}
		n.enumStr = make(map[string]struct{}, len(n.enum))
		for _, e := range n.enum {
			str, ok := e.(string)
			if !ok {
				n.enumStr = nil
				break
			}
			n.enumStr[str] = struct{}{}
		}
	}
	if s.Format != "" {
		if n.format = formatCheck(s.Format); n.format == nil {
			return fmt.Errorf("%w: format %q", errFastUnsupported, s.Format)
		}
		n.fmtName = s.Format
	}
	for _, p := range []struct {
		dst **fastNode
		id  schemaprog.ID
	}{{&n.ref, s.Ref}, {&n.not, s.Not}, {&n.ifN, s.If}, {&n.thenN, s.Then}, {&n.elseN, s.Else},
		{&n.addl, s.Addl}, {&n.propNames, s.PropNames}, {&n.contains, s.Contains}, {&n.items, s.Items}} {
		if *p.dst, err = c.node(p.id); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		dst *[]*fastNode
		ids []schemaprog.ID
	}{{&n.allOf, s.AllOf}, {&n.anyOf, s.AnyOf}, {&n.oneOf, s.OneOf}, {&n.prefix, s.Prefix}} {
		if *p.dst, err = c.list(p.ids); err != nil {
			return err
		}
	}
	n.propNamesRaw = n.propNames

	// object
	n.minProps, n.maxProps = progCount(s.MinProps), progCount(s.MaxProps)
	n.required = s.Required
	n.addlFalse = s.AddlFalse
	n.object = n.minProps >= 0 || n.maxProps >= 0 || len(s.Required) > 0 || n.propNames != nil ||
		len(s.PropKeys) > 0 || len(s.PatKeys) > 0 || n.addlFalse || n.addl != nil
	if len(s.PropKeys) != len(s.PropIDs) || len(s.PatKeys) != len(s.PatIDs) {
		return errFastUnsupported
	}
	for k, name := range s.PropKeys {
		pn, err := c.node(s.PropIDs[k])
		if err != nil {
			return err
		}
		n.propList = append(n.propList, namedNode{name: name, node: pn})
	}
	for k, re := range s.PatKeys {
		m, err := newMatcher(re)
		if err != nil {
			return err
		}
		pn, err := c.node(s.PatIDs[k])
		if err != nil {
			return err
		}
		n.patProps = append(n.patProps, patternProp{m, pn})
	}
	slices.SortFunc(n.propList, func(a, b namedNode) int { return strings.Compare(a.name, b.name) })
	if len(n.propList) > 0 {
		if len(n.propList) > math.MaxInt16 {
			return errFastUnsupported
		}
		size := 4
		for size < 2*len(n.propList) {
			size *= 2
		}
		n.propTab = make([]int16, size)
		for i := range n.propList {
			p := &n.propList[i]
			p.hash = keyHash(p.name)
			j := int(p.hash) & (size - 1)
			for n.propTab[j] != 0 {
				j = (j + 1) & (size - 1)
			}
			n.propTab[j] = int16(i + 1)
		}
	}
	for _, k := range n.required {
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
	n.array = n.minItems >= 0 || n.maxItems >= 0 || n.unique || n.contains != nil || len(n.prefix) > 0 || n.items != nil

	// string
	n.minLen, n.maxLen = progCount(s.MinLen), progCount(s.MaxLen)
	if s.Pattern != "" {
		if n.pattern, err = newMatcher(s.Pattern); err != nil {
			return err
		}
	}
	n.str = n.minLen >= 0 || n.maxLen >= 0 || n.pattern.ok()

	// number
	for _, p := range []struct {
		dst **bound
		s   string
	}{{&n.minimum, s.Minimum}, {&n.maximum, s.Maximum}, {&n.exMinimum, s.ExMinimum},
		{&n.exMaximum, s.ExMaximum}, {&n.multi, s.MultipleOf}} {
		if *p.dst, err = progBound(p.s); err != nil {
			return err
		}
	}
	if n.multi != nil && n.multi.rat.Sign() <= 0 {
		return errFastUnsupported
	}
	n.num = n.minimum != nil || n.maximum != nil || n.exMinimum != nil || n.exMaximum != nil || n.multi != nil
	return nil
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

// location returns n's schema location relative to schemas.BaseURI.
func (n *fastNode) location() string { return n.doc + n.frag }
