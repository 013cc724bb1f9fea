// Package schemaprog defines the form in which cmd/ahp-codegen emits the
// validation program of the canonical schemas (package gen/validation), and
// which package runtime/validate runs. It holds data types only: the program
// is produced at generation time from the schemas compiled by
// jsonschema/v6 (package schemaprog/compile, never linked into production
// binaries) and read at run time without compiling anything.
//
// A program is one node per compiled subschema. Nodes refer to each other by
// [ID]: the document's index in [Program.Docs] in the upper 16 bits, the
// node's index in [Doc.Nodes] plus one in the lower 16, so that the zero ID
// means "absent" and composite literals stay short. Integer keyword values
// are stored plus one for the same reason (0: absent).
package schemaprog

// ID names a node of a [Program]; 0 is no node.
type ID uint32

// MakeID returns the ID of node index idx of document doc.
func MakeID(doc, idx int) ID { return ID(doc<<16 | (idx + 1)) }

// Doc returns the index of the document holding node id.
func (id ID) Doc() int { return int(id >> 16) }

// Index returns the node's index within its document.
func (id ID) Index() int { return int(id&0xffff) - 1 }

// Program is the validation program of a set of schema documents.
type Program struct {
	Docs []Doc
}

// Doc is one schema document of a [Program].
type Doc struct {
	// Name is the document's name relative to the schemas' base URI, such
	// as "effect.schema.json".
	Name string
	// Nodes are the document's compiled subschemas; the document itself
	// is Nodes[0].
	Nodes []Node
	// Dispatch holds the dispatch tables of the document's nodes that
	// have any, sorted by [Dispatch.Node].
	Dispatch []Dispatch
}

// A signature is a schema of the form
//
//	{"required": [k1], "properties": {k1: {"required": [k2], "properties": {k2: … {"enum": [strings]}}}}}
//
// (each "required" optional, "const" instead of "enum" allowed, any number
// of levels including none), which the union dispatch rewrite emits to tell
// union arms apart and which the canonical schemas write by hand for
// conditional rules. Whether it holds depends only on the value found by
// walking the instance along its path of keys: where the value at some step
// is not an object, or lacks an optional key, it holds vacuously; where it
// lacks a required key, it does not hold; at the end of the path, it holds
// when the value is one of its strings. Many signatures on one path are
// therefore decided by one walk, which the dispatch tables record.

// Step is one level of a signature's path.
type Step struct {
	Key string
	// Req is set when the level's "required" lists Key.
	Req bool
}

// Switch stands for the allOf entries {"if": signature, "then": arm} of a
// node whose signatures share one path: when the path resolves to a
// string, exactly the entries listing it apply their arm; when every
// signature holds vacuously, every arm applies; otherwise none does.
type Switch struct {
	Path []Step
	// Values are the strings the signatures list, sorted; Arms[k] are
	// the arms that apply when the path resolves to Values[k], in allOf
	// order.
	Values []string
	Arms   [][]ID
	// All are the arms of every entry, in allOf order.
	All []ID
}

// Dispatch holds the dispatch tables of one node, computed at generation
// time so that the run time does not look into the signatures.
type Dispatch struct {
	// Node is the node's index in its document's Nodes.
	Node uint32
	// Switches, when not empty, stand for some of the node's allOf
	// entries; Rest lists the others, in order.
	Switches []Switch
	Rest     []ID
	// Guard, when set, stands for the node's anyOf, all of whose entries
	// are signatures on GuardPath: it holds when they hold vacuously or
	// the path resolves to one of GuardValues (sorted).
	Guard       bool
	GuardPath   []Step
	GuardValues []string
}

// Node returns the node named by id, or nil for 0.
func (p *Program) Node(id ID) *Node {
	if id == 0 {
		return nil
	}
	return &p.Docs[id.Doc()].Nodes[id.Index()]
}

// Type bits of [Node.Types], as the "type" keyword lists them.
const (
	TNull uint8 = 1 << iota
	TBool
	TNumber
	TInteger
	TString
	TArray
	TObject
)

// Node is one compiled subschema, keyword by keyword as JSON Schema draft
// 2020-12 defines them. Counts are stored plus one (0: keyword absent);
// bounds are exact decimal or fractional numbers in the form math/big.Rat
// SetString reads ("" absent).
type Node struct {
	// Loc is the node's location within its document: "" for the
	// document itself, otherwise "#" followed by a JSON pointer.
	Loc string
	// Bool is +1 for the schema true, -1 for false, 0 otherwise.
	Bool  int8
	Types uint8
	// Const and Enum are canonical JSON ("" absent); Enum is an array.
	Const, Enum string
	// Format is the name of an asserted format ("" none).
	Format string

	Ref, Not, If, Then, Else ID
	AllOf, AnyOf, OneOf      []ID

	MinProps, MaxProps uint32
	Required           []string
	// PropKeys and PropIDs are the properties, sorted by name;
	// PatKeys and PatIDs the pattern properties, sorted by pattern.
	PropKeys  []string
	PropIDs   []ID
	PatKeys   []string
	PatIDs    []ID
	Addl      ID
	AddlFalse bool
	PropNames ID

	MinItems, MaxItems uint32
	Unique             bool
	Contains, Items    ID
	Prefix             []ID

	MinLen, MaxLen uint32
	// Pattern is the regular expression of "pattern" ("" absent, which
	// is also what the empty pattern means).
	Pattern string

	Minimum, Maximum, ExMinimum, ExMaximum, MultipleOf string
}
