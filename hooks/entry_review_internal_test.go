package hooks

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile"
)

// closedProbe is a payload-shaped Go type for ad hoc schemas: two string
// members, the second optional.
type closedProbe struct {
	A string  `json:"a"`
	B *string `json:"b,omitempty"`
}

// TestEntryPlanAdditionalPropertiesPerSchema: additionalProperties: false
// only sees the properties of its own schema object, not those that a
// sibling $ref or another allOf branch names (JSON Schema 2020-12, 10.3.2.3).
// The plan must not accept a member that one closed subschema does not
// name just because another subschema names it: on each schema below, an
// object the plan accepts is valid for jsonschema/v6.
func TestEntryPlanAdditionalPropertiesPerSchema(t *testing.T) {
	const base = "https://example.test/"
	b := "b"
	for _, tc := range []struct {
		name   string
		schema string
	}{
		{"allOf branches", `{"allOf":[{"properties":{"a":{"type":"string"}},"additionalProperties":false},{"properties":{"b":{"type":"string"}}}]}`},
		{"sibling ref", `{"$defs":{"more":{"properties":{"b":{"type":"string"}}}},"$ref":"#/$defs/more","properties":{"a":{"type":"string"}},"additionalProperties":false}`},
		{"closed ref", `{"$defs":{"closed":{"properties":{"a":{"type":"string"}},"additionalProperties":false}},"$ref":"#/$defs/closed","properties":{"b":{"type":"string"}}}`},
		{"both closed, both named", `{"allOf":[{"properties":{"a":{},"b":{}},"additionalProperties":false},{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"additionalProperties":false}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"` + base + `t.schema.json",` + tc.schema[1:]
			prog, err := compile.Program(base, map[string][]byte{"t.schema.json": []byte(doc)}, false)
			require.NoError(t, err)
			p := &planner{prog: prog, docs: map[string]int{}}
			for i, d := range prog.Docs {
				p.docs[d.Name] = i
			}
			id, ok := p.lookup("t.schema.json")
			require.True(t, ok)
			plan := p.object(reflect.TypeFor[closedProbe](), []schemaprog.ID{id}, 0)
			require.NotNil(t, plan, "the plan covers the schema")

			c := jsonschema.NewCompiler()
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
			require.NoError(t, err)
			require.NoError(t, c.AddResource(base+"t.schema.json", v))
			sch, err := c.Compile(base + "t.schema.json")
			require.NoError(t, err)
			for _, val := range []closedProbe{{A: "x"}, {A: "x", B: &b}} {
				data, err := json.Marshal(val)
				require.NoError(t, err)
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				require.NoError(t, err)
				if plan.accepts(unsafe.Pointer(&val), nil) {
					require.NoError(t, sch.Validate(inst), "the plan accepted %s", data)
				}
			}
		})
	}
}

// TestEntryPlanConcurrentFirstUse: the first calls of an event, made at
// once from many goroutines, derive its plan once and agree with the
// canonical validation of the encoding (run with -race: the plan, the
// remembered strings and the format checks are shared).
func TestEntryPlanConcurrentFirstUse(t *testing.T) {
	fixtures := entryFixtures(t)
	for _, name := range []gen.EventName{gen.EventToolBefore, gen.EventHookFailure, gen.EventSessionEnd} {
		docs := fixtures[name]
		require.NotEmpty(t, docs, "%s", name)
		e := entryFor(name)
		const workers = 8
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 20 {
					var ev gen.Event
					if err := ev.UnmarshalJSON(docs[(w+i)%len(docs)]); err != nil {
						errs <- err
						return
					}
					setTime(&ev, []string{"2026-09-15T12:00:00Z", "2026-09-15T12:00:00.5Z", "yesterday", "2026-02-30T00:00:00Z"}[(w+i)%4])
					want, wantErr := oldCheck(e.info, &ev)
					got, gotErr := checkEvent(e, &ev, nil)
					if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) || !bytes.Equal(want, got) {
						errs <- &checkMismatch{name: name, want: wantErr, got: gotErr}
						return
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
}

type checkMismatch struct {
	name      gen.EventName
	want, got error
}

func (m *checkMismatch) Error() string {
	return string(m.name) + ": entry check and canonical validation disagree"
}

// setTime sets the time member of the payload of ev.
func setTime(ev *gen.Event, s string) {
	v := reflect.ValueOf(ev).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsNil() {
			if tf := f.Elem().FieldByName("Time"); tf.IsValid() && tf.Kind() == reflect.String {
				tf.SetString(s)
			}
		}
	}
}

type adhocNested struct {
	X string  `json:"x"`
	Y *string `json:"y,omitempty"`
}

// adhocProbe is a payload-shaped Go type for ad hoc schemas: strings,
// booleans, raw JSON and a nested object, required and optional.
type adhocProbe struct {
	A string          `json:"a"`
	B *string         `json:"b,omitempty"`
	C *bool           `json:"c,omitempty"`
	D bool            `json:"d"`
	R json.RawMessage `json:"r,omitempty"`
	N *adhocNested    `json:"n,omitempty"`
}

// TestEntryPlanAgreesWithV6OnAdHocSchemas: the plan is derived from any
// generated program, not only from today's schemas, so it is held to
// jsonschema/v6 on ad hoc schemas using the keywords it evaluates itself
// (lengths in code points, enum and const, required, properties, false
// schemas, type-only raw values, nested objects, additionalProperties:
// false, not/anyOf/oneOf/if-then-else, $ref and allOf): every value the
// plan accepts is valid. Keywords the program does not model fail to
// compile, so no plan can overlook them.
func TestEntryPlanAgreesWithV6OnAdHocSchemas(t *testing.T) {
	const base = "https://example.test/"
	schemas := []string{
		`{"properties":{"a":{"minLength":2,"maxLength":3}}}`,
		`{"properties":{"a":{"enum":["x","y",1]}}}`,
		`{"properties":{"a":{"const":"x"}},"required":["b"]}`,
		`{"oneOf":[{"required":["b"]},{"required":["c"]}]}`,
		`{"anyOf":[{"properties":{"a":{"const":"x"}}},{"required":["n"]}]}`,
		`{"not":{"properties":{"a":{"maxLength":1}}}}`,
		`{"if":{"properties":{"d":{"const":true}}},"then":{"required":["b"]},"else":{"not":{"required":["b"]}}}`,
		`{"if":{"type":"string"},"then":false}`,
		`{"if":{"type":"string"},"else":{"required":["c"]}}`,
		`{"properties":{"b":false}}`,
		`{"properties":{"r":{"type":["array","object"]}}}`,
		`{"properties":{"r":{"type":"number"}}}`,
		`{"properties":{"r":{"type":"integer"}}}`,
		`{"properties":{"r":{"type":"string"}}}`,
		`{"properties":{"c":{"const":false}}}`,
		`{"properties":{"c":{"type":"string"}}}`,
		`{"properties":{"n":{"properties":{"x":{"minLength":1}},"required":["y"]}}}`,
		`{"properties":{"n":{"properties":{"x":{"const":"q"}},"additionalProperties":false}}}`,
		`{"properties":{"n":{"properties":{"y":{}},"additionalProperties":false}}}`,
		`{"properties":{"n":{"type":"object"}},"allOf":[{"properties":{"n":{"required":["y"]}}}]}`,
		`{"oneOf":[{"properties":{"a":{"const":"x"}}},{"properties":{"a":{"minLength":1}}}]}`,
		`{"anyOf":[{"properties":{"b":{"type":"string","maxLength":0}},"required":["b"]}]}`,
		`{"properties":{"a":{"type":["string","null"],"minLength":1}}}`,
		`{"properties":{"a":{"format":"date-time"}}}`,
		`{"properties":{"a":{"allOf":[{"minLength":1},{"maxLength":1}]}}}`,
		`{"properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","maxLength":2}}}`,
		`{"allOf":[{"$ref":"#/$defs/o"}],"$defs":{"o":{"required":["n"],"properties":{"n":{"required":["x"]}}}}}`,
		`{"properties":{"d":{"enum":[true]}}}`,
		`{"properties":{"a":{"minLength":1}},"if":{"required":["a"]},"then":{"properties":{"b":{"const":"z"}}}}`,
		`{"allOf":[{"properties":{"a":{},"b":{},"c":{}},"additionalProperties":false},{"properties":{"d":{}}}]}`,
		`{"dependentRequired":{"b":["c"]}}`,
		`{"dependentSchemas":{"b":{"required":["c"]}}}`,
		`{"unevaluatedProperties":false,"properties":{"a":{},"d":{}}}`,
	}
	strs := []string{"", "x", "y", "q", "z", "ab", "abc", "abcd", "é", "😀😀", "\xff", "1", "2026-09-15T12:00:00Z"}
	raws := []string{"", "null", "{}", "[]", "[1,1]", "1", "1.5", "2", `"s"`, `{"k":1}`, "true"}
	yes, no := true, false
	for _, sch := range schemas {
		t.Run(sch, func(t *testing.T) {
			doc := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"` + base + `t.schema.json",` + sch[1:]
			prog, err := compile.Program(base, map[string][]byte{"t.schema.json": []byte(doc)}, false)
			if err != nil {
				require.ErrorIs(t, err, compile.ErrUnsupported)
				return
			}
			p := &planner{prog: prog, docs: map[string]int{}}
			for i, d := range prog.Docs {
				p.docs[d.Name] = i
			}
			id, ok := p.lookup("t.schema.json")
			require.True(t, ok)
			plan := p.object(reflect.TypeFor[adhocProbe](), []schemaprog.ID{id}, 0)
			if plan == nil {
				return // not covered: every call validates canonically
			}
			c := jsonschema.NewCompiler()
			c.AssertFormat()
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
			require.NoError(t, err)
			require.NoError(t, c.AddResource(base+"t.schema.json", v))
			cs, err := c.Compile(base + "t.schema.json")
			require.NoError(t, err)
			accepted := 0
			for ai, a := range strs {
				for bi := -1; bi < len(strs); bi++ {
					for ci := range 3 {
						for ri, r := range raws {
							for ni := range 4 {
								val := adhocProbe{A: a, D: (ai+ri)%2 == 0}
								if bi >= 0 {
									val.B = &strs[bi]
								}
								switch ci {
								case 1:
									val.C = &yes
								case 2:
									val.C = &no
								}
								if r != "" {
									val.R = json.RawMessage(r)
								}
								switch ni {
								case 1:
									val.N = &adhocNested{X: strs[(ai+bi+5)%len(strs)]}
								case 2:
									val.N = &adhocNested{X: "q", Y: &strs[ai]}
								case 3:
									val.N = &adhocNested{}
								}
								if !plan.accepts(unsafe.Pointer(&val), nil) {
									continue
								}
								accepted++
								data, err := json.Marshal(val) // as the generated encoder writes these tags
								require.NoError(t, err)
								inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
								require.NoError(t, err)
								require.NoError(t, cs.Validate(inst), "the plan accepted %s", data)
							}
						}
					}
				}
			}
			t.Logf("the plan accepted %d values", accepted)
		})
	}
}
