package settle_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// FuzzApply decodes arbitrary bytes as an intercept result with the
// lossless codec (no schema validation, so values the canonical parser
// would refuse reach the engine) and applies it at several boundaries. It
// must never panic, and a rejection must leave the state unchanged.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"protocolVersion":"draft","effects":[]}`))
	f.Add([]byte(`{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"a":{"b":[1,2,{"c":null}]}}},{"type":"return","value":null}]}`))
	f.Add([]byte(`{"protocolVersion":"draft","effects":[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x","n":[1]}}]}`))
	f.Add([]byte(`{"protocolVersion":"draft","effects":[{"type":"flow","operation":"continue"},{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[{"id":"x","role":"system","parts":[]}]}]}`))
	if cases, err := fixtures.Load(); err == nil {
		for _, c := range cases {
			if c.SchemaFile() != "intercept-response.schema.json" {
				continue
			}
			if data, err := c.Read(); err == nil {
				var r gen.InterceptResponse
				if r.UnmarshalJSON(data) == nil {
					if b, err := r.Result.MarshalJSON(); err == nil {
						f.Add(b)
					}
				}
			}
		}
	}
	for _, v := range hostile.Values() {
		f.Add([]byte(`{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":` + v + `}]}`))
		f.Add([]byte(`{"protocolVersion":"draft","effects":[{"type":"return","value":` + v + `}]}`))
	}
	names := []gen.EventName{gen.EventToolBefore, gen.EventTurnFinishBefore, gen.EventToolAfter, gen.EventUserMessageOutbound,
		gen.EventUserElicitationResult, gen.EventUserElicitationRequest, gen.EventContextCompactBefore, gen.EventWorkspaceChangeBefore}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res gen.InterceptResponseResult
		if res.UnmarshalJSON(data) != nil {
			return
		}
		for _, name := range names {
			o := newOcc(t, name)
			before := o.State()
			if err := o.Apply(fullGrant(t, name), &res); err != nil {
				require.Equal(t, before, o.State())
				continue
			}
			_ = o.State()
			_ = o.RequestState()
			_, err := o.Event()
			require.NoError(t, err)
		}
	})
}
