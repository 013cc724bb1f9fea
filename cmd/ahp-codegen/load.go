package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// rawNode is a JSON value that remembers the order of object members. The
// go-jsonschema model keeps properties in a map and does not cover
// if/then/else, contains or prefixItems; those are read from here.
type rawNode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	obj   map[string]*rawNode
	arr   []*rawNode
	str   string
	num   json.Number
	boolv bool
}

func (n *rawNode) get(key string) *rawNode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.obj[key]
}

func (n *rawNode) has(key string) bool { return n.get(key) != nil }

// toAny converts the node into encoding/json's generic representation.
func (n *rawNode) toAny() any {
	switch n.kind {
	case 'o':
		m := make(map[string]any, len(n.keys))
		for _, k := range n.keys {
			m[k] = n.obj[k].toAny()
		}
		return m
	case 'a':
		s := make([]any, len(n.arr))
		for i, v := range n.arr {
			s[i] = v.toAny()
		}
		return s
	case 's':
		return n.str
	case 'n':
		return n.num
	case 'b':
		return n.boolv
	}
	return nil
}

func parseRaw(data []byte) (*rawNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readRaw(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after schema document")
	}
	return n, nil
}

func readRaw(dec *json.Decoder) (*rawNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &rawNode{kind: 'o', obj: map[string]*rawNode{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readRaw(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := n.obj[k]; dup {
					return nil, fmt.Errorf("duplicate member %q", k)
				}
				n.keys = append(n.keys, k)
				n.obj[k] = v
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &rawNode{kind: 'a'}
			for dec.More() {
				v, err := readRaw(dec)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return &rawNode{kind: 's', str: t}, nil
	case json.Number:
		return &rawNode{kind: 'n', num: t}, nil
	case bool:
		return &rawNode{kind: 'b', boolv: t}, nil
	case nil:
		return &rawNode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// document is one canonical schema file.
type document struct {
	File   string          // file name, e.g. "tool-before.schema.json"
	ID     string          // $id
	Bytes  []byte          // exact bytes
	Raw    *rawNode        // ordered raw form
	Schema *schemas.Schema // go-jsonschema model
}

// schemaSet is the loaded corpus plus the manifest.
type schemaSet struct {
	Dir         string
	Docs        map[string]*document // by file name
	Files       []string             // sorted file names (documents only)
	Manifest    *rawNode
	ManifestRaw []byte
	StableNames map[string]string // "file#pointer" -> stable SDK name
}

func loadSchemaSet(dir string) (*schemaSet, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read schema directory: %w", err)
	}
	set := &schemaSet{Dir: dir, Docs: map[string]*document{}, StableNames: map[string]string{}}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		raw, err := parseRaw(data)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if name == "manifest.json" {
			set.Manifest, set.ManifestRaw = raw, data
			continue
		}
		model, err := schemas.FromJSONReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("load %s with go-jsonschema: %w", name, err)
		}
		id := ""
		if n := raw.get("$id"); n != nil {
			id = n.str
		}
		set.Docs[name] = &document{File: name, ID: id, Bytes: data, Raw: raw, Schema: model}
		set.Files = append(set.Files, name)
	}
	sort.Strings(set.Files)
	if set.Manifest == nil {
		return nil, fmt.Errorf("%s: manifest.json missing", dir)
	}
	if sg := set.Manifest.get("sdkGeneration"); sg != nil {
		if sn := sg.get("stableNames"); sn != nil {
			for _, k := range sn.keys {
				set.StableNames[strings.TrimPrefix(k, "schema/draft/")] = sn.obj[k].str
			}
		}
	}
	return set, nil
}

// loc addresses one schema node: a document and a JSON pointer inside it.
type loc struct {
	File    string
	Pointer string // "" for the root, else "/$defs/x/properties/y"
}

func (l loc) String() string { return l.File + "#" + l.Pointer }

func (l loc) child(segs ...string) loc {
	p := l.Pointer
	for _, s := range segs {
		p += "/" + strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	}
	return loc{File: l.File, Pointer: p}
}

// node is a schema node: its raw ordered form and (when go-jsonschema's model
// reaches it) the typed model.
type node struct {
	Loc   loc
	Raw   *rawNode
	Model *schemas.Type
}

func (s *schemaSet) resolvePointer(l loc) (*node, error) {
	doc := s.Docs[l.File]
	if doc == nil {
		return nil, fmt.Errorf("unknown schema document %q", l.File)
	}
	raw := doc.Raw
	var model *schemas.Type
	if doc.Schema != nil {
		model = (*schemas.Type)(doc.Schema.ObjectAsType)
	}
	if l.Pointer == "" {
		return &node{Loc: l, Raw: raw, Model: model}, nil
	}
	segs := strings.Split(strings.TrimPrefix(l.Pointer, "/"), "/")
	for i, seg := range segs {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch raw.kind {
		case 'o':
			next := raw.obj[seg]
			if next == nil {
				return nil, fmt.Errorf("%s: no member %q", l, seg)
			}
			model = modelChild(doc, model, segs[:i], seg)
			raw = next
		case 'a':
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(raw.arr) {
				return nil, fmt.Errorf("%s: bad index %q", l, seg)
			}
			model = modelIndex(model, segs, i, idx)
			raw = raw.arr[idx]
		default:
			return nil, fmt.Errorf("%s: cannot descend into scalar", l)
		}
	}
	return &node{Loc: l, Raw: raw, Model: model}, nil
}

// modelChild follows the go-jsonschema model one keyword down where the
// model covers it; otherwise the model is dropped and only raw is used.
func modelChild(doc *document, m *schemas.Type, parents []string, seg string) *schemas.Type {
	if m == nil {
		return nil
	}
	// Position inside keyword maps: the previous segment names the keyword.
	if len(parents) > 0 {
		switch parents[len(parents)-1] {
		case "$defs":
			if len(parents) == 1 && doc.Schema != nil {
				return doc.Schema.Definitions[seg]
			}
			return m.Definitions[seg]
		case "properties":
			return m.Properties[seg]
		}
	}
	switch seg {
	case "items":
		return m.Items
	case "additionalProperties":
		return m.AdditionalProperties
	case "not":
		return m.Not
	case "$defs", "properties", "allOf", "anyOf", "oneOf":
		return m // resolved by the next segment
	}
	return nil
}

func modelIndex(m *schemas.Type, segs []string, i, idx int) *schemas.Type {
	if m == nil || i == 0 {
		return nil
	}
	var list []*schemas.Type
	switch segs[i-1] {
	case "allOf":
		list = m.AllOf
	case "anyOf":
		list = m.AnyOf
	case "oneOf":
		list = m.OneOf
	}
	if idx < len(list) {
		return list[idx]
	}
	return nil
}

// resolveRef turns a $ref found at l into the location it names.
func (s *schemaSet) resolveRef(from loc, ref string) (loc, error) {
	file, frag, _ := strings.Cut(ref, "#")
	if file == "" {
		file = from.File
	} else {
		file = strings.TrimPrefix(file, "https://agenthooksprotocol.org/schemas/draft/")
		file = strings.TrimPrefix(file, "./")
	}
	if _, ok := s.Docs[file]; !ok {
		return loc{}, fmt.Errorf("%s: $ref %q names an unknown document", from, ref)
	}
	return loc{File: file, Pointer: frag}, nil
}

func sha256Hex(b []byte) string {
	return fmt.Sprintf("%x", sha256Sum(b))
}
