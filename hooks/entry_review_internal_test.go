package hooks

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

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
				if plan.accepts(reflect.ValueOf(val)) {
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
					got, gotErr := checkEvent(e, &ev)
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
