package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// nameOverrides names a few anonymous nodes whose positional names would be
// long or ambiguous; keys are schema locations.
var nameOverrides = map[string]string{
	"capabilities.schema.json#/properties/effects/items":                                              "EffectFamily",
	"capabilities.schema.json#/properties/flow/properties/operations/items":                           "FlowOperation",
	"capabilities.schema.json#/properties/inject/properties/context/properties/deliverAt/items":       "DeliverAt",
	"registration.schema.json#/$defs/interceptSubscription/properties/events/items":                   "InterceptEventSelector",
	"registration.schema.json#/$defs/observeSubscription/properties/events/items":                     "ObserveEventSelector",
	"registration.schema.json#/$defs/backend/properties/transport":                                    "Transport",
	"registration.schema.json#/$defs/backend/properties/subscriptions/items":                          "Subscription",
	"intercept-request.schema.json#/allOf/1/properties/params/properties/state/properties/permission": "Permission",
	"intercept-request.schema.json#/allOf/1/properties/params/properties/state/properties/flow":       "FlowState",
	"intercept-request.schema.json#/allOf/1/properties/params/properties/state":                       "InterceptState",
	"intercept-request.schema.json#/allOf/1/properties/params/properties/state/properties/candidate":  "Candidate",
}

// fingerprint is a canonical form of an anonymous schema node, with $refs
// made absolute, so that identical inline schemas share one Go type.
func (b *builder) fingerprint(l loc, r *rawNode) string {
	var canon func(n *rawNode, at loc) any
	canon = func(n *rawNode, at loc) any {
		switch n.kind {
		case 'o':
			m := map[string]any{}
			for _, k := range n.keys {
				switch k {
				case "description", "$comment":
					continue
				case "$ref":
					if t, err := b.set.resolveRef(at, n.obj[k].str); err == nil {
						m[k] = t.String()
						continue
					}
				}
				m[k] = canon(n.obj[k], at)
			}
			return m
		case 'a':
			s := make([]any, len(n.arr))
			for i, v := range n.arr {
				s[i] = canon(v, at)
			}
			return s
		}
		return n.toAny()
	}
	data, _ := json.Marshal(canon(r, l)) // map keys are sorted by encoding/json
	return string(data)
}

// directName returns the name a location has by itself: a stable SDK name,
// an override, a root document name or a $defs key.
func (b *builder) directName(l loc) string {
	if sn, ok := b.set.StableNames[l.String()]; ok {
		return renderStableName(sn, l)
	}
	if o, ok := nameOverrides[l.String()]; ok {
		return o
	}
	if l.Pointer == "" {
		if l.File == "schema.json" {
			return "WireMessage"
		}
		return goCase(strings.TrimSuffix(strings.TrimSuffix(l.File, ".json"), ".schema"))
	}
	segs := strings.Split(strings.TrimPrefix(l.Pointer, "/"), "/")
	if len(segs) == 2 && segs[0] == "$defs" {
		return goCase(unescapePointer(segs[1]))
	}
	return ""
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// locName derives a Go name for a location from its nearest named ancestor
// and the member names on the way down.
func (b *builder) locName(l loc) string {
	if n := b.directName(l); n != "" {
		return n
	}
	segs := strings.Split(strings.TrimPrefix(l.Pointer, "/"), "/")
	base, start := "", 0
	for i := len(segs) - 1; i >= 0; i-- {
		pl := loc{File: l.File, Pointer: "/" + strings.Join(segs[:i], "/")}
		if i == 0 {
			pl.Pointer = ""
		}
		if n := b.directName(pl); n != "" {
			base, start = n, i
			break
		}
	}
	name := base
	for i := start; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "$defs":
			if i+1 < len(segs) {
				i++
				name += goCase(unescapePointer(segs[i]))
			}
		case "items":
			name = singular(name)
		case "additionalProperties":
			name += "Value"
		case "allOf", "anyOf", "oneOf":
			i++
		default:
			name += goCase(unescapePointer(segs[i]))
		}
	}
	return name
}

// claim reserves name for l, qualifying it when another location holds it.
func (b *builder) claim(name string, l loc) string {
	if name == "" {
		name = "Value"
	}
	if prev, ok := b.names[name]; !ok || prev == l {
		b.names[name] = l
		return name
	}
	alt := goCase(strings.TrimSuffix(strings.TrimSuffix(l.File, ".json"), ".schema")) + name
	if prev, ok := b.names[alt]; !ok || prev == l {
		b.names[alt] = l
		return alt
	}
	for i := 2; ; i++ {
		cand := fmt.Sprintf("%s%d", name, i)
		if _, ok := b.names[cand]; !ok {
			b.names[cand] = l
			return cand
		}
	}
}

// sharedName names a type used at several locations by the words their
// derived names end with, when they share any; else the first name.
func (b *builder) sharedName(t *goType) string {
	first := b.locName(t.Loc)
	if len(t.AlsoAt) == 0 || b.directName(t.Loc) != "" {
		return first
	}
	words := splitWords(first)
	common := len(words)
	for _, l := range t.AlsoAt {
		w := splitWords(b.locName(l))
		n := 0
		for n < len(w) && n < len(words) && w[len(w)-1-n] == words[len(words)-1-n] {
			n++
		}
		if n < common {
			common = n
		}
	}
	if common == 0 || common == len(words) {
		return first
	}
	return strings.Join(words[len(words)-common:], "")
}

// assignNames names every reachable named type, then the union arm fields
// and the inline arm types after their unions.
func (b *builder) assignNames(reach map[*goType]bool) {
	inlineArm := map[*goType]bool{}
	for _, t := range b.ordered {
		if t.Kind == kindUnion {
			for _, a := range t.Arms {
				if a.Inline && a.Type.named() {
					inlineArm[a.Type] = true
				}
			}
		}
	}
	// Locations with their own names first, so derived names never take them.
	sorted := append([]*goType(nil), b.ordered...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return b.directName(sorted[i].Loc) != "" && b.directName(sorted[j].Loc) == ""
	})
	for _, t := range sorted {
		if !reach[t] || inlineArm[t] || !t.named() {
			continue
		}
		t.Name = b.claim(b.sharedName(t), t.Loc)
	}
	pending := true
	for round := 0; pending && round < 16; round++ {
		pending = false
		for _, t := range b.ordered {
			if !reach[t] || t.Kind != kindUnion {
				continue
			}
			if t.Name == "" || t.Name == "?" {
				pending = true
				continue
			}
			if len(t.Arms) > 0 && t.Arms[0].Field != "" {
				continue
			}
			used := map[string]bool{}
			for i, a := range t.Arms {
				f := armFieldName(t.Name, a.Type, a.Raw, a.DiscKey, a.Discs)
				if f == "" || used[f] {
					f = fmt.Sprintf("%sArm%d", f, i+1)
				}
				used[f] = true
				a.Field = f
				if a.Inline && inlineArm[a.Type] && (a.Type.Name == "" || a.Type.Name == "?") {
					a.Type.Name = b.claim(t.Name+f, a.Type.Loc)
				}
			}
		}
	}
}
