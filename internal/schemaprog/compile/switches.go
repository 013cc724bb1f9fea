package compile

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// minSwitch is the number of if/then entries on one path worth a switch.
const minSwitch = 3

// maxSignatureDepth bounds the paths of signatures.
const maxSignatureDepth = 8

// maxRefChain bounds the chains of bare references followed to their
// target (only a reference cycle makes longer ones).
const maxRefChain = 1 << 10

// addDispatch computes the dispatch tables ([schemaprog.Dispatch]) of
// every node of p.
func addDispatch(p *schemaprog.Program) {
	for d := range p.Docs {
		doc := &p.Docs[d]
		doc.Dispatch = nil
		for i := range doc.Nodes {
			if t, ok := dispatchOf(p, &doc.Nodes[i]); ok {
				t.Node = uint32(i)
				doc.Dispatch = append(doc.Dispatch, t)
			}
		}
	}
}

// pureRef reports whether s is a bare {"$ref": …}, which validates exactly
// as its target does (runtime/validate follows such chains).
func pureRef(s *schemaprog.Node) bool {
	return s.Ref != 0 && s.Bool == 0 && s.Types == 0 && s.Const == "" && s.Enum == "" && s.Format == "" &&
		s.Not == 0 && s.If == 0 && s.Then == 0 && s.Else == 0 &&
		len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		!objectKw(s) && !arrayKw(s) && !stringKw(s) && !numberKw(s)
}

func objectKw(s *schemaprog.Node) bool {
	return s.MinProps != 0 || s.MaxProps != 0 || len(s.Required) > 0 || s.PropNames != 0 ||
		len(s.PropKeys) > 0 || len(s.PatKeys) > 0 || s.AddlFalse || s.Addl != 0
}

func arrayKw(s *schemaprog.Node) bool {
	return s.MinItems != 0 || s.MaxItems != 0 || s.Unique || s.Contains != 0 || len(s.Prefix) > 0 || s.Items != 0
}

func stringKw(s *schemaprog.Node) bool { return s.MinLen != 0 || s.MaxLen != 0 || s.Pattern != "" }

func numberKw(s *schemaprog.Node) bool {
	return s.Minimum != "" || s.Maximum != "" || s.ExMinimum != "" || s.ExMaximum != "" || s.MultipleOf != ""
}

// target returns the node at the end of id's chain of bare references, or
// nil.
func target(p *schemaprog.Program, id schemaprog.ID) *schemaprog.Node {
	for range maxRefChain {
		if id == 0 {
			return nil
		}
		s := p.Node(id)
		if !pureRef(s) {
			return s
		}
		id = s.Ref
	}
	return nil
}

// Keyword families for only.
const (
	kwIf = 1 << iota
	kwThen
	kwObject
	kwConst
	kwEnum
)

// only reports whether s uses no keyword outside allowed.
func only(s *schemaprog.Node, allowed int) bool {
	if s.Bool != 0 || s.Types != 0 || s.Format != "" || s.Ref != 0 || s.Not != 0 ||
		len(s.AllOf) != 0 || len(s.AnyOf) != 0 || len(s.OneOf) != 0 || s.Else != 0 ||
		arrayKw(s) || stringKw(s) || numberKw(s) {
		return false
	}
	return (s.If == 0 || allowed&kwIf != 0) && (s.Then == 0 || allowed&kwThen != 0) &&
		(!objectKw(s) || allowed&kwObject != 0) && (s.Const == "" || allowed&kwConst != 0) &&
		(s.Enum == "" || allowed&kwEnum != 0)
}

// strs decodes canonical JSON holding one string (array false) or an
// array of strings.
func strs(s string, array bool) ([]string, bool) {
	if !array {
		var v string
		if json.Unmarshal([]byte(s), &v) != nil {
			return nil, false
		}
		return []string{v}, true
	}
	var raw []json.RawMessage
	if json.Unmarshal([]byte(s), &raw) != nil {
		return nil, false
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		if json.Unmarshal(r, &out[i]) != nil {
			return nil, false
		}
	}
	return out, true
}

// sigOf reports whether s (a reference target) is exactly a signature
// and returns its path and strings.
func sigOf(p *schemaprog.Program, s *schemaprog.Node) ([]schemaprog.Step, []string, bool) {
	var path []schemaprog.Step
	for range maxSignatureDepth {
		if s == nil {
			return nil, nil, false
		}
		switch {
		case s.Const != "" && s.Enum == "" && only(s, kwConst):
			vals, ok := strs(s.Const, false)
			return path, vals, ok
		case s.Const == "" && s.Enum != "" && only(s, kwEnum):
			vals, ok := strs(s.Enum, true)
			return path, vals, ok
		}
		if !only(s, kwObject) || len(s.PropKeys) != 1 || len(s.Required) > 1 ||
			(len(s.Required) == 1 && s.Required[0] != s.PropKeys[0]) ||
			s.MinProps != 0 || s.MaxProps != 0 || s.PropNames != 0 || len(s.PatKeys) != 0 ||
			s.Addl != 0 || s.AddlFalse || len(s.PropIDs) != 1 {
			return nil, nil, false
		}
		path = append(path, schemaprog.Step{Key: s.PropKeys[0], Req: len(s.Required) == 1})
		s = target(p, s.PropIDs[0])
	}
	return nil, nil, false
}

// pathKey identifies a path, for grouping signatures.
func pathKey(path []schemaprog.Step) string {
	var b strings.Builder
	for _, lv := range path {
		b.WriteString(strconv.Itoa(len(lv.Key)))
		b.WriteByte(':')
		b.WriteString(lv.Key)
		b.WriteByte(':')
		b.WriteString(strconv.FormatBool(lv.Req))
		b.WriteByte(';')
	}
	return b.String()
}

// dispatchOf returns the dispatch tables of n, if it has any: its allOf
// entries {"if": signature, "then": arm} grouped into switches by path
// (groups of at least minSwitch), and a guard for an anyOf whose entries
// are all signatures on one path.
func dispatchOf(p *schemaprog.Program, n *schemaprog.Node) (schemaprog.Dispatch, bool) {
	var t schemaprog.Dispatch
	if len(n.AnyOf) >= 2 {
		t.Guard = true
		values := map[string]bool{}
		for i, id := range n.AnyOf {
			path, vals, ok := sigOf(p, target(p, id))
			if !ok || (i > 0 && pathKey(path) != pathKey(t.GuardPath)) {
				t.Guard = false
				break
			}
			t.GuardPath = path
			for _, v := range vals {
				values[v] = true
			}
		}
		if t.Guard {
			for v := range values {
				t.GuardValues = append(t.GuardValues, v)
			}
			sort.Strings(t.GuardValues)
		} else {
			t.GuardPath = nil
		}
	}
	if len(n.AllOf) >= minSwitch {
		type entry struct {
			path   []schemaprog.Step
			values []string
			then   schemaprog.ID
		}
		groups := map[string][]int{}
		entries := make([]entry, len(n.AllOf))
		for i, id := range n.AllOf {
			e := target(p, id)
			if e == nil || e.If == 0 || e.Then == 0 || !only(e, kwIf|kwThen) {
				continue
			}
			path, values, ok := sigOf(p, target(p, e.If))
			if !ok {
				continue
			}
			entries[i] = entry{path, values, e.Then}
			k := pathKey(path)
			groups[k] = append(groups[k], i)
		}
		used := make([]bool, len(n.AllOf))
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
			sw := schemaprog.Switch{Path: entries[idx[0]].path}
			arms := map[string][]schemaprog.ID{}
			for _, i := range idx {
				used[i] = true
				e := entries[i]
				sw.All = append(sw.All, e.then)
				seen := map[string]bool{}
				for _, v := range e.values {
					if !seen[v] {
						seen[v] = true
						arms[v] = append(arms[v], e.then)
					}
				}
			}
			for v := range arms {
				sw.Values = append(sw.Values, v)
			}
			sort.Strings(sw.Values)
			for _, v := range sw.Values {
				sw.Arms = append(sw.Arms, arms[v])
			}
			t.Switches = append(t.Switches, sw)
		}
		if len(t.Switches) > 0 {
			for i, id := range n.AllOf {
				if !used[i] {
					t.Rest = append(t.Rest, id)
				}
			}
		}
	}
	return t, t.Guard || len(t.Switches) > 0
}
