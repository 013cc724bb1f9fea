package hooks

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile"
)

// Go types whose JSON encoding is not the value the entry plan reads at the
// field's offset: a []byte is written in base64, a string, bool or struct
// with its own MarshalJSON or MarshalText is written as that method says.
type (
	textName  string
	jsonBool  bool
	customObj struct {
		X string `json:"x"`
	}
	bytesProbe struct {
		R []byte `json:"r"`
	}
	textProbe struct {
		A textName `json:"a"`
	}
	ptrTextProbe struct {
		A *textName `json:"a,omitempty"`
	}
	boolProbe struct {
		D jsonBool `json:"d"`
	}
	objProbe struct {
		N customObj `json:"n"`
	}
	// plainProbe is the control: the same members in types encoded as
	// the plan reads them.
	plainProbe struct {
		R json.RawMessage `json:"r"`
		A string          `json:"a"`
		D bool            `json:"d"`
		N struct {
			X string `json:"x"`
		} `json:"n"`
	}
)

func (textName) MarshalText() ([]byte, error)  { return []byte("zz"), nil }
func (jsonBool) MarshalJSON() ([]byte, error)  { return []byte(`"yes"`), nil }
func (customObj) MarshalJSON() ([]byte, error) { return []byte(`[]`), nil }

// planAdHoc returns the plan of the Go type of *val against the ad hoc
// schema (a JSON object without $schema/$id) and jsonschema/v6's
// compilation of it.
func planAdHoc[T any](t *testing.T, schema string) (*objPlan, *jsonschema.Schema) {
	t.Helper()
	const base = "https://example.test/"
	doc := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"` + base + `m.schema.json",` + schema[1:]
	prog, err := compile.Program(base, map[string][]byte{"m.schema.json": []byte(doc)}, false)
	require.NoError(t, err)
	p := &planner{prog: prog, docs: map[string]int{}}
	for i, d := range prog.Docs {
		p.docs[d.Name] = i
	}
	id, ok := p.lookup("m.schema.json")
	require.True(t, ok)
	c := jsonschema.NewCompiler()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
	require.NoError(t, err)
	require.NoError(t, c.AddResource(base+"m.schema.json", v))
	sch, err := c.Compile(base + "m.schema.json")
	require.NoError(t, err)
	return p.object(reflect.TypeFor[T](), []schemaprog.ID{id}, 0), sch
}

// planAccepts reports whether plan (nil: not covered) accepts val, and
// requires that val's JSON encoding is then valid for sch.
func planAccepts[T any](t *testing.T, plan *objPlan, sch *jsonschema.Schema, val T) bool {
	t.Helper()
	if plan == nil || !plan.accepts(unsafe.Pointer(&val), nil) {
		return false
	}
	data, err := json.Marshal(val)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst), "the plan accepted %T, encoded %s", val, data)
	return true
}

// TestEntryPlanOnlyTypesEncodedAsRead: the plan reads a member's value at
// its field's offset as a string, a bool, raw JSON bytes or a struct of
// members, so it may only cover fields whose encoding is that value: a
// json.RawMessage (not any []byte-shaped slice, which is written in
// base64), strings and bools without MarshalJSON or MarshalText, structs
// without their own MarshalJSON (outside the generated types, whose
// methods are the generated encoder that follows the tags). On each pair
// below the plan must never accept a value whose encoding the schema
// rejects, and still accepts the plain control.
func TestEntryPlanOnlyTypesEncodedAsRead(t *testing.T) {
	x := textName("x")
	t.Run("bytes", func(t *testing.T) {
		plan, sch := planAdHoc[bytesProbe](t, `{"properties":{"r":{"type":"object"}},"required":["r"]}`)
		planAccepts(t, plan, sch, bytesProbe{R: []byte(`{}`)})
	})
	t.Run("text marshaler", func(t *testing.T) {
		plan, sch := planAdHoc[textProbe](t, `{"properties":{"a":{"const":"x"}},"required":["a"]}`)
		planAccepts(t, plan, sch, textProbe{A: "x"})
	})
	t.Run("text marshaler pointer", func(t *testing.T) {
		plan, sch := planAdHoc[ptrTextProbe](t, `{"properties":{"a":{"enum":["x"]}}}`)
		planAccepts(t, plan, sch, ptrTextProbe{A: &x})
	})
	t.Run("bool marshaler", func(t *testing.T) {
		plan, sch := planAdHoc[boolProbe](t, `{"properties":{"d":{"type":"boolean"}},"required":["d"]}`)
		planAccepts(t, plan, sch, boolProbe{D: true})
	})
	t.Run("struct marshaler", func(t *testing.T) {
		plan, sch := planAdHoc[objProbe](t, `{"properties":{"n":{"type":"object","properties":{"x":{"type":"string"}}}},"required":["n"]}`)
		planAccepts(t, plan, sch, objProbe{N: customObj{X: "a"}})
	})
	t.Run("plain control", func(t *testing.T) {
		plan, sch := planAdHoc[plainProbe](t, `{"properties":{"r":{"type":"object"},"a":{"const":"x"},"d":{"type":"boolean"},"n":{"type":"object","properties":{"x":{"type":"string"}}}},"required":["r","a","d","n"]}`)
		val := plainProbe{R: json.RawMessage(`{}`), A: "x", D: true}
		val.N.X = "a"
		require.True(t, planAccepts(t, plan, sch, val), "the plan covers the plain types")
	})
}
