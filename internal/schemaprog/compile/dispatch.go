package compile

import (
	"encoding/json"
	"sort"
	"strings"
)

// The canonical unions (the 32-arm event union, the content-item union, …)
// are oneOf/anyOf lists of $refs whose arms each require a member with a
// constant value (the event "type", a part's "kind" and "selection"). A
// generic validator must try every arm in full; here such a union is compiled
// as an equivalent dispatch:
//
//	allOf: [ {anyOf: [sig_1 … sig_n]}, {if: sig_1, then: arm_1}, … ]
//
// where sig_i holds only what arm_i itself requires (required members and
// their const/enum values) and the signatures are pairwise exclusive (every
// two differ on a shared member's value sets). Then "exactly one arm is
// valid" (oneOf) and "some arm is valid" (anyOf) both hold exactly when some
// signature matches and its arm is valid, so verdicts are unchanged, while
// only one arm is validated in full. Unions that do not meet these
// conditions are left as they are. Pointers into an arm's own definition stay
// valid; pointers to the union's positional arms (…/oneOf/3) do not, so
// callers address arms by their $ref target.

// RewriteUnions applies the dispatch rewrite to every document (decoded
// JSON, documents named relative to baseURI) in place.
func RewriteUnions(baseURI string, docs map[string]any) {
	r := &unionRewriter{base: baseURI, docs: docs}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r.walk(n, docs[n])
	}
}

type unionRewriter struct {
	base string
	docs map[string]any
}

func (r *unionRewriter) walk(doc string, n any) {
	switch v := n.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "const" || k == "enum" || k == "examples" || k == "default" {
				continue
			}
			r.walk(doc, v[k])
		}
		for _, kw := range []string{"oneOf", "anyOf"} {
			r.rewrite(doc, v, kw)
		}
	case []any:
		for _, x := range v {
			r.walk(doc, x)
		}
	}
}

// signature maps a required member to its allowed values (canonical JSON).
type signature map[string][]string

func (r *unionRewriter) rewrite(doc string, node map[string]any, kw string) {
	arms, ok := node[kw].([]any)
	if !ok || len(arms) < 2 {
		return
	}
	sigs := make([]signature, len(arms))
	for i, a := range arms {
		am, ok := a.(map[string]any)
		if !ok || len(am) != 1 {
			return
		}
		ref, ok := am["$ref"].(string)
		if !ok {
			return
		}
		sig := signature{}
		if !r.collect(doc, map[string]any{"$ref": ref}, sig, map[string]bool{}, 0) || len(sig) == 0 {
			return
		}
		sigs[i] = sig
	}
	sigs = discriminators(sigs)
	if sigs == nil {
		return
	}
	guard := make([]any, len(arms))
	dispatch := make([]any, 0, len(arms)+1)
	for i := range arms {
		guard[i] = sigs[i].schema()
	}
	dispatch = append(dispatch, map[string]any{"anyOf": guard})
	for i, a := range arms {
		dispatch = append(dispatch, map[string]any{"if": sigs[i].schema(), "then": a})
	}
	if existing, ok := node["allOf"].([]any); ok {
		dispatch = append(existing, dispatch...)
	}
	delete(node, kw)
	node["allOf"] = dispatch
}

func (s signature) schema() map[string]any {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	req := make([]any, len(keys))
	props := map[string]any{}
	for i, k := range keys {
		req[i] = k
		vals := make([]any, 0, len(s[k]))
		for _, v := range s[k] {
			var x any
			_ = json.Unmarshal([]byte(v), &x)
			vals = append(vals, x)
		}
		props[k] = map[string]any{"enum": vals}
	}
	return map[string]any{"required": req, "properties": props}
}

// discriminators projects the signatures onto the smallest set of members
// (one, else two) that every arm requires and that keeps them pairwise
// exclusive, so the guard checks only what tells the arms apart and every
// other constraint is reported by the arm itself. It returns nil when no
// such set exists.
func discriminators(sigs []signature) []signature {
	common := map[string]bool{}
	for k := range sigs[0] {
		common[k] = true
	}
	for _, s := range sigs[1:] {
		for k := range common {
			if _, ok := s[k]; !ok {
				delete(common, k)
			}
		}
	}
	keys := make([]string, 0, len(common))
	for k := range common {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	try := func(ks ...string) []signature {
		out := make([]signature, len(sigs))
		for i, s := range sigs {
			out[i] = signature{}
			for _, k := range ks {
				out[i][k] = s[k]
			}
		}
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if !exclusive(out[i], out[j]) {
					return nil
				}
			}
		}
		return out
	}
	for _, k := range keys {
		if out := try(k); out != nil {
			return out
		}
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if out := try(a, b); out != nil {
				return out
			}
		}
	}
	return nil
}

// exclusive reports whether no instance can match both signatures.
func exclusive(a, b signature) bool {
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			continue
		}
		overlap := false
		for _, x := range av {
			for _, y := range bv {
				if x == y {
					overlap = true
				}
			}
		}
		if !overlap {
			return true
		}
	}
	return false
}

// collect adds to sig what node implies about required constant members,
// following $ref and allOf. It reports false when a reference cannot be
// followed.
func (r *unionRewriter) collect(doc string, n any, sig signature, seen map[string]bool, depth int) bool {
	if depth > 16 {
		return false
	}
	m, ok := n.(map[string]any)
	if !ok {
		return true
	}
	if ref, ok := m["$ref"].(string); ok {
		tdoc, target, ok := r.resolve(doc, ref)
		if !ok {
			return false
		}
		key := tdoc + "#" + ref
		if !seen[key] {
			seen[key] = true
			if !r.collect(tdoc, target, sig, seen, depth+1) {
				return false
			}
		}
	}
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, x := range req {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k := range required {
			vals := constValues(props[k])
			if vals == nil {
				continue
			}
			if prev, ok := sig[k]; ok {
				sig[k] = intersect(prev, vals)
			} else {
				sig[k] = vals
			}
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, x := range all {
			if !r.collect(doc, x, sig, seen, depth+1) {
				return false
			}
		}
	}
	return true
}

// constValues returns the canonical JSON of the values a property schema
// allows when it is a const, an enum, or a oneOf/anyOf of consts.
func constValues(p any) []string {
	m, ok := p.(map[string]any)
	if !ok {
		return nil
	}
	canon := func(v any) (string, bool) {
		switch v.(type) {
		case string, bool, json.Number:
			b, err := json.Marshal(v)
			return string(b), err == nil
		}
		return "", false
	}
	if c, ok := m["const"]; ok {
		if s, ok := canon(c); ok {
			return []string{s}
		}
		return nil
	}
	if e, ok := m["enum"].([]any); ok {
		var out []string
		for _, v := range e {
			s, ok := canon(v)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
			}
		}
	}
	return out
}

// resolve follows a $ref from doc to its target node.
func (r *unionRewriter) resolve(doc, ref string) (string, any, bool) {
	file, frag, _ := strings.Cut(strings.TrimPrefix(ref, r.base), "#")
	if file == "" {
		file = doc
	}
	n, ok := r.docs[file]
	if !ok {
		return "", nil, false
	}
	if frag == "" {
		return file, n, true
	}
	for _, seg := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := n.(map[string]any)
		if !ok {
			return "", nil, false
		}
		if n, ok = m[seg]; !ok {
			return "", nil, false
		}
	}
	return file, n, true
}
