package validate

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile"
	"github.com/agenthooks/agenthooks-go/schemas"
)

// TestGeneratedProgramCurrent checks that the generated program is the one
// the schemas compile to now.
func TestGeneratedProgramCurrent(t *testing.T) {
	docs := map[string][]byte{}
	for _, name := range schemas.Documents() {
		raw, err := schemas.Read(name)
		require.NoError(t, err)
		docs[name] = raw
	}
	p, err := compile.Program(schemas.BaseURI, docs, true)
	require.NoError(t, err)
	require.Equal(t, p, validation.Program())
}

// TestErrorsAgreeWithV6 holds the generated program's verdicts and errors to
// jsonschema/v6's (converted as the validator did while it ran v6) on every
// fixture message and on systematic mutations of the valid ones: every
// verdict is compared, and the complete error (pointer, keyword, schema
// location, missing names and every cause) of a deterministic sample of
// rejections.
func TestErrorsAgreeWithV6(t *testing.T) {
	oracle, err := newValidator(true)
	require.NoError(t, err)
	every, verdictEvery := uint32(5), uint32(1)
	if testing.Short() || raceEnabled {
		every, verdictEvery = 60, 30
	}
	var verdicts, errs atomic.Int64
	compare := func(t *testing.T, what, ref string, value any, full bool) {
		if !full && !sampled("verdict "+what, verdictEvery) {
			return
		}
		key, sch, err := oracle.schema(ref)
		require.NoError(t, err)
		want := check(key, sch, value)
		got := oracle.ValidateValue(ref, value)
		verdicts.Add(1)
		require.Equal(t, want == nil, got == nil, "%s against %s: v6 says %v", what, ref, want)
		if want != nil && full {
			errs.Add(1)
			require.Equal(t, want, got, "%s against %s", what, ref)
		}
	}
	for _, m := range fixtureMessages(t) {
		value, derr := decode(m.raw)
		if derr != nil {
			continue
		}
		t.Run(m.id, func(t *testing.T) {
			compare(t, m.id, m.ref, value, true)
			key, sch, err := oracle.schema(m.ref)
			require.NoError(t, err)
			if want := check(key, sch, value); want != nil {
				require.Equal(t, want, oracle.Validate(m.ref, m.raw), "bytes of %s", m.id)
			}
			if !m.valid {
				return
			}
			eachMutation(value, func(p []string, mu mutation, mv any) {
				what := m.id + " " + pointer(p) + " " + mu.name
				compare(t, what, m.ref, mv, sampled(what, every))
				if len(p) > 2 && p[0] == "params" && p[1] == "event" {
					if ev, ok := eventOf(mv); ok {
						compare(t, what+" params.event", "event.schema.json", ev, sampled(what+" event", every))
					}
				}
			})
		})
	}
	t.Logf("%d verdicts compared with v6, %d complete errors", verdicts.Load(), errs.Load())
	require.Positive(t, errs.Load())
}
