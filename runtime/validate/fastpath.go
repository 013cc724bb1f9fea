package validate

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path is an accept-only validator. It is compiled from the schema
// graph that jsonschema/v6 has already built (so $ref resolution, the union
// dispatch rewrite of dispatch.go, the regular expressions and the format
// checkers are exactly the oracle's) into a small tree of fastNodes that
// checks a decoded instance without building any error values.
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

// maxFastDepth bounds the fast path's recursion; deeper input falls back to
// v6.
const maxFastDepth = 512

// JSON types as a bit set, as the "type" keyword uses them.
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

// valid reports whether value is certainly valid. false means "unknown":
// the caller must ask v6.
func (f *fastSchema) valid(value any) bool {
	if f == nil || f.root == nil {
		return false
	}
	r := fastRun{}
	ok := r.valid(f.root, value)
	return ok && !r.abort
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
	node *fastNode
	req  bool // name is required
}

type patternProp struct {
	re   jsonschema.Regexp
	node *fastNode
}

// fastNode is one compiled subschema.
type fastNode struct {
	// always is +1 for the schema true, -1 for false, 0 otherwise.
	always int8
	types  uint8 // 0: no "type" keyword

	hasConst bool
	constV   any
	enum     []any
	format   func(any) error

	ref                 *fastNode
	not                 *fastNode
	allOf, anyOf, oneOf []*fastNode
	ifN, thenN, elseN   *fastNode

	// allOfRest and switches replace allOf when some of its entries form a
	// dispatch switch (see buildSwitches).
	allOfRest []*fastNode
	switches  []*dispatchSwitch

	// object
	object             bool // some object keyword is present
	minProps, maxProps int  // -1: absent
	required           []string
	reqOutside         []string // required names that are not in props
	props              map[string]*fastNode
	propList           []namedNode // props, for iteration
	patProps           []patternProp
	addl               *fastNode // additionalProperties schema
	addlFalse          bool      // additionalProperties: false
	propNames          *fastNode

	// array
	array              bool
	minItems, maxItems int
	unique             bool
	contains           *fastNode
	prefix             []*fastNode
	items              *fastNode

	// string
	str            bool
	minLen, maxLen int
	pattern        jsonschema.Regexp

	// number
	num                         bool
	minimum, maximum            *bound
	exMinimum, exMaximum, multi *bound
}

// newFastSchema compiles sch for the fast path; an unsupported schema
// yields a fastSchema that always defers to v6.
func newFastSchema(sch *jsonschema.Schema) *fastSchema {
	root, err := compileFast(sch)
	if err != nil {
		return &fastSchema{}
	}
	return &fastSchema{root: root}
}

// compileFast compiles the graph reachable from sch.
func compileFast(sch *jsonschema.Schema) (*fastNode, error) {
	c := fastCompiler{memo: map[*jsonschema.Schema]*fastNode{}}
	root, err := c.node(sch)
	if err != nil {
		return nil, err
	}
	for _, n := range c.memo {
		buildSwitches(n)
	}
	if err := checkInPlaceCycles(root); err != nil {
		return nil, err
	}
	return root, nil
}

type fastCompiler struct {
	memo map[*jsonschema.Schema]*fastNode
}

func (c *fastCompiler) node(s *jsonschema.Schema) (*fastNode, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.memo[s]; ok {
		return n, nil
	}
	n := &fastNode{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	c.memo[s] = n
	if err := c.fill(n, s); err != nil {
		return nil, err
	}
	return n, nil
}

func (c *fastCompiler) list(ss []*jsonschema.Schema) ([]*fastNode, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	out := make([]*fastNode, len(ss))
	for i, s := range ss {
		n, err := c.node(s)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (c *fastCompiler) fill(n *fastNode, s *jsonschema.Schema) error {
	if s.Bool != nil {
		if *s.Bool {
			n.always = 1
		} else {
			n.always = -1
		}
		return nil
	}
	// Keywords outside the modelled set, and pre-2020 semantics.
	if s.DraftVersion < 2020 ||
		s.RecursiveRef != nil || s.DynamicRef != nil ||
		len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
		s.MinContains != nil || s.MaxContains != nil ||
		s.Items != nil || s.AdditionalItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		len(s.Extensions) > 0 {
		return errFastUnsupported
	}

	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				n.types |= tNull
			case "boolean":
				n.types |= tBool
			case "number":
				n.types |= tNumber
			case "integer":
				n.types |= tInteger
			case "string":
				n.types |= tString
			case "array":
				n.types |= tArray
			case "object":
				n.types |= tObject
			default:
				return errFastUnsupported
			}
		}
	}
	if s.Const != nil {
		if !plainJSON(*s.Const, 0) {
			return errFastUnsupported
		}
		n.hasConst, n.constV = true, *s.Const
	}
	if s.Enum != nil {
		for _, e := range s.Enum.Values {
			if !plainJSON(e, 0) {
				return errFastUnsupported
			}
		}
		// A non-nil empty slice keeps "enum: []" (nothing matches) apart
		// from an absent enum.
		n.enum = append(make([]any, 0, len(s.Enum.Values)), s.Enum.Values...)
	}
	if s.Format != nil {
		if s.Format.Validate == nil || s.Format.Name == "regex" {
			return errFastUnsupported
		}
		n.format = s.Format.Validate
	}

	var err error
	if n.ref, err = c.node(s.Ref); err != nil {
		return err
	}
	if n.not, err = c.node(s.Not); err != nil {
		return err
	}
	if n.allOf, err = c.list(s.AllOf); err != nil {
		return err
	}
	if n.anyOf, err = c.list(s.AnyOf); err != nil {
		return err
	}
	if n.oneOf, err = c.list(s.OneOf); err != nil {
		return err
	}
	if n.ifN, err = c.node(s.If); err != nil {
		return err
	}
	if n.thenN, err = c.node(s.Then); err != nil {
		return err
	}
	if n.elseN, err = c.node(s.Else); err != nil {
		return err
	}

	// object
	if s.MinProperties != nil {
		n.minProps, n.object = *s.MinProperties, true
	}
	if s.MaxProperties != nil {
		n.maxProps, n.object = *s.MaxProperties, true
	}
	if len(s.Required) > 0 {
		n.required, n.object = s.Required, true
	}
	if s.PropertyNames != nil {
		if n.propNames, err = c.node(s.PropertyNames); err != nil {
			return err
		}
		n.object = true
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for k, ps := range s.Properties {
			if n.props[k], err = c.node(ps); err != nil {
				return err
			}
			n.propList = append(n.propList, namedNode{name: k, node: n.props[k]})
		}
		n.object = true
	}
	for re, ps := range s.PatternProperties {
		pn, err := c.node(ps)
		if err != nil {
			return err
		}
		n.patProps = append(n.patProps, patternProp{re, pn})
		n.object = true
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		n.addlFalse, n.object = !a, true
	case *jsonschema.Schema:
		if n.addl, err = c.node(a); err != nil {
			return err
		}
		n.object = true
	default:
		return errFastUnsupported
	}

	slices.SortFunc(n.propList, func(a, b namedNode) int { return strings.Compare(a.name, b.name) })
	for _, k := range n.required {
		if i, ok := slices.BinarySearchFunc(n.propList, k, func(a namedNode, k string) int { return strings.Compare(a.name, k) }); ok {
			n.propList[i].req = true
		} else {
			n.reqOutside = append(n.reqOutside, k)
		}
	}

	// array
	if s.MinItems != nil {
		n.minItems, n.array = *s.MinItems, true
	}
	if s.MaxItems != nil {
		n.maxItems, n.array = *s.MaxItems, true
	}
	if s.UniqueItems {
		n.unique, n.array = true, true
	}
	if s.Contains != nil {
		if n.contains, err = c.node(s.Contains); err != nil {
			return err
		}
		n.array = true
	}
	if len(s.PrefixItems) > 0 {
		if n.prefix, err = c.list(s.PrefixItems); err != nil {
			return err
		}
		n.array = true
	}
	if s.Items2020 != nil {
		if n.items, err = c.node(s.Items2020); err != nil {
			return err
		}
		n.array = true
	}

	// string
	if s.MinLength != nil {
		n.minLen, n.str = *s.MinLength, true
	}
	if s.MaxLength != nil {
		n.maxLen, n.str = *s.MaxLength, true
	}
	if s.Pattern != nil {
		n.pattern, n.str = s.Pattern, true
	}

	// number
	n.minimum = newBound(s.Minimum)
	n.maximum = newBound(s.Maximum)
	n.exMinimum = newBound(s.ExclusiveMinimum)
	n.exMaximum = newBound(s.ExclusiveMaximum)
	n.multi = newBound(s.MultipleOf)
	if n.multi != nil && n.multi.rat.Sign() <= 0 {
		return errFastUnsupported
	}
	n.num = n.minimum != nil || n.maximum != nil || n.exMinimum != nil || n.exMaximum != nil || n.multi != nil
	return nil
}

// dispatchSwitch stands for allOf entries of the form
//
//	{"if": {"required": [key], "properties": {key: {"enum": [strings]}}}, "then": T}
//
// (or "const" instead of "enum"), which is what dispatch.go emits for a
// union and what the canonical schemas write by hand for conditional
// rules. For an object holding key with a string value, exactly the entries
// listing that value apply their "then"; for an object without key, or with
// a non-string value, none does; for any other instance every "if" holds
// vacuously and every "then" applies.
type dispatchSwitch struct {
	key  string
	arms map[string][]*fastNode
	all  []*fastNode
}

// minSwitch is the number of if/then entries on one key worth a switch.
const minSwitch = 3

// buildSwitches groups n's allOf entries into dispatch switches; the
// others stay in allOfRest, in order.
func buildSwitches(n *fastNode) {
	n.allOfRest = n.allOf
	if len(n.allOf) < minSwitch {
		return
	}
	type entry struct {
		key    string
		values []string
		then   *fastNode
	}
	groups := map[string][]int{}
	entries := make([]entry, len(n.allOf))
	for i, e := range n.allOf {
		key, values, ok := ifThenOnKey(e)
		if !ok {
			continue
		}
		entries[i] = entry{key, values, e.thenN}
		groups[key] = append(groups[key], i)
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
		sw := &dispatchSwitch{key: k, arms: map[string][]*fastNode{}}
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

// ifThenOnKey reports whether e is exactly {"if": sig, "then": T} with sig
// exactly {"required": [key], "properties": {key: {"enum"|"const": strings}}}
// and returns key and the strings.
func ifThenOnKey(e *fastNode) (string, []string, bool) {
	if e.ifN == nil || e.thenN == nil || !onlyKeywords(e, kwIf|kwThen) {
		return "", nil, false
	}
	sig := e.ifN
	if !onlyKeywords(sig, kwObject) || len(sig.required) != 1 || len(sig.propList) != 1 ||
		sig.propList[0].name != sig.required[0] || len(sig.reqOutside) != 0 ||
		sig.minProps >= 0 || sig.maxProps >= 0 || sig.propNames != nil || len(sig.patProps) != 0 ||
		sig.addl != nil || sig.addlFalse {
		return "", nil, false
	}
	p := sig.propList[0].node
	var vals []any
	switch {
	case p.hasConst && p.enum == nil && onlyKeywords(p, kwConst):
		vals = []any{p.constV}
	case !p.hasConst && p.enum != nil && onlyKeywords(p, kwEnum):
		vals = p.enum
	default:
		return "", nil, false
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		str, ok := v.(string)
		if !ok {
			return "", nil, false
		}
		out = append(out, str)
	}
	return sig.required[0], out, true
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

func (r *fastRun) dispatch(sw *dispatchSwitch, v any) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		for _, t := range sw.all {
			if !r.valid(t, v) {
				return false
			}
		}
		return true
	}
	str, ok := obj[sw.key].(string)
	if !ok {
		return true
	}
	for _, t := range sw.arms[str] {
		if !r.valid(t, v) {
			return false
		}
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
		for _, p := range n.props {
			out = append(out, p)
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

// fastRun is the state of one fast-path validation. abort is set when the
// instance holds something the fast path does not model (a Go type that
// decoded JSON cannot hold, an exotic number, excessive depth); the verdict
// is then "unknown" whatever valid returned, which keeps negations (not,
// oneOf, if) from turning an unmodelled case into an accept.
type fastRun struct {
	abort bool
	depth int
}

func (r *fastRun) valid(n *fastNode, v any) bool {
	if r.abort {
		return false
	}
	switch n.always {
	case 1:
		return true
	case -1:
		return false
	}
	r.depth++
	ok := r.check(n, v)
	r.depth--
	return ok
}

func (r *fastRun) check(n *fastNode, v any) bool {
	if r.depth > maxFastDepth {
		r.abort = true
		return false
	}
	var t uint8
	switch x := v.(type) {
	case nil:
		t = tNull
	case bool:
		t = tBool
	case json.Number:
		// Only numbers v6 and the fast path read alike (the JSON grammar,
		// within the exact-parse limits) are modelled.
		if _, _, _, ok := scanNumber(string(x)); !ok {
			r.abort = true
			return false
		}
		t = tNumber
	case string:
		t = tString
	case []any:
		t = tArray
	case map[string]any:
		t = tObject
	default:
		r.abort = true
		return false
	}
	if n.types != 0 && n.types&t == 0 {
		if t != tNumber || n.types&tInteger == 0 || !r.isInteger(v.(json.Number)) {
			return false
		}
	}
	if n.hasConst && !r.equal(v, n.constV) {
		return false
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if r.equal(v, e) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if n.format != nil && n.format(v) != nil {
		return false
	}
	if n.ref != nil && !r.valid(n.ref, v) {
		return false
	}

	switch x := v.(type) {
	case map[string]any:
		if n.object && !r.object(n, x) {
			return false
		}
	case []any:
		if n.array && !r.array(n, x) {
			return false
		}
	case string:
		if n.str && !r.str(n, x) {
			return false
		}
	case json.Number:
		if n.num && !r.number(n, x) {
			return false
		}
	}

	if n.not != nil && r.valid(n.not, v) {
		return false
	}
	for _, s := range n.allOfRest {
		if !r.valid(s, v) {
			return false
		}
	}
	for _, sw := range n.switches {
		if !r.dispatch(sw, v) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, s := range n.anyOf {
			if r.valid(s, v) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			if r.valid(s, v) {
				if matched++; matched > 1 {
					break
				}
			}
		}
		if matched != 1 {
			return false
		}
	}
	if n.ifN != nil {
		if r.valid(n.ifN, v) {
			if n.thenN != nil && !r.valid(n.thenN, v) {
				return false
			}
		} else if n.elseN != nil && !r.valid(n.elseN, v) {
			return false
		}
	}
	return !r.abort
}

func (r *fastRun) object(n *fastNode, obj map[string]any) bool {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return false
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return false
	}
	if len(n.patProps) == 0 && len(n.propList) <= len(obj)+2 {
		// Walk the schema's properties and look them up, which is cheaper
		// than iterating the instance map; count the instance members
		// they cover to find out whether there are others. Required
		// names among them are checked by the same lookup.
		for _, k := range n.reqOutside {
			if _, ok := obj[k]; !ok {
				return false
			}
		}
		covered := 0
		for _, p := range n.propList {
			pv, ok := obj[p.name]
			if !ok {
				if p.req {
					return false
				}
				continue
			}
			covered++
			if !r.valid(p.node, pv) {
				return false
			}
		}
		if covered < len(obj) {
			if n.addlFalse {
				return false
			}
			if n.addl != nil {
				for k, pv := range obj {
					if _, ok := n.props[k]; !ok && !r.valid(n.addl, pv) {
						return false
					}
				}
			}
		}
	} else {
		for _, k := range n.required {
			if _, ok := obj[k]; !ok {
				return false
			}
		}
		for k, pv := range obj {
			evaluated := false
			if ps, ok := n.props[k]; ok {
				evaluated = true
				if !r.valid(ps, pv) {
					return false
				}
			}
			for _, pp := range n.patProps {
				if pp.re.MatchString(k) {
					evaluated = true
					if !r.valid(pp.node, pv) {
						return false
					}
				}
			}
			if !evaluated {
				if n.addlFalse {
					return false
				}
				if n.addl != nil && !r.valid(n.addl, pv) {
					return false
				}
			}
		}
	}
	if n.propNames != nil {
		for k := range obj {
			if !r.valid(n.propNames, k) {
				return false
			}
		}
	}
	return true
}

func (r *fastRun) array(n *fastNode, arr []any) bool {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return false
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return false
	}
	if n.unique && len(arr) > 1 && !r.uniqueItems(arr) {
		return false
	}
	evaluated := min(len(n.prefix), len(arr))
	for i := range evaluated {
		if !r.valid(n.prefix[i], arr[i]) {
			return false
		}
	}
	if n.items != nil {
		for _, e := range arr[evaluated:] {
			if !r.valid(n.items, e) {
				return false
			}
		}
	}
	if n.contains != nil {
		found := false
		for _, e := range arr {
			if r.valid(n.contains, e) {
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

func (r *fastRun) uniqueItems(arr []any) bool {
	allStrings := true
	for _, e := range arr {
		if _, ok := e.(string); !ok {
			allStrings = false
			break
		}
	}
	if allStrings && len(arr) > 8 {
		seen := make(map[string]struct{}, len(arr))
		for _, e := range arr {
			s := e.(string)
			if _, dup := seen[s]; dup {
				return false
			}
			seen[s] = struct{}{}
		}
		return true
	}
	if len(arr) > maxPairwiseUnique {
		r.abort = true
		return false
	}
	for i := 1; i < len(arr); i++ {
		for j := range i {
			if r.equal(arr[i], arr[j]) {
				return false
			}
		}
	}
	return true
}

func (r *fastRun) str(n *fastNode, s string) bool {
	if n.minLen >= 0 || n.maxLen >= 0 {
		// Lengths count code points (an invalid byte counts as one, as
		// in v6).
		l := len(s)
		if !asciiOnly(s) {
			l = utf8.RuneCountInString(s)
		}
		if n.minLen >= 0 && l < n.minLen {
			return false
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return false
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return false
	}
	return true
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (r *fastRun) number(n *fastNode, x json.Number) bool {
	num, ok := parseNumber(string(x))
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
	if n.multi != nil {
		if num.small && n.multi.small {
			if num.i%n.multi.i != 0 {
				return false
			}
		} else if !new(big.Rat).Quo(num.exact(), n.multi.rat).IsInt() {
			return false
		}
	}
	return true
}

func (r *fastRun) isInteger(x json.Number) bool {
	num, ok := parseNumber(string(x))
	if !ok {
		r.abort = true
		return false
	}
	return num.small || num.rat.IsInt()
}

// equal is JSON equality as v6 defines it (numbers by value).
func (r *fastRun) equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		nx, ok1 := parseNumber(string(x))
		ny, ok2 := parseNumber(string(y))
		if !ok1 || !ok2 {
			r.abort = true
			return false
		}
		return nx.cmpNum(ny) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !r.equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !r.equal(xv, yv) {
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
func scanNumber(s string) (plain bool, intStart, intEnd int, ok bool) {
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
func parseNumber(s string) (number, bool) {
	plain, intStart, intEnd, ok := scanNumber(s)
	if !ok {
		return number{}, false
	}
	if plain && intEnd-intStart <= 18 {
		var v int64
		for _, c := range []byte(s[intStart:intEnd]) {
			v = v*10 + int64(c-'0')
		}
		if s[0] == '-' {
			v = -v
		}
		return number{i: v, small: true}, true
	}
	rat, ok := new(big.Rat).SetString(s)
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
