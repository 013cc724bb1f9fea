package agenthooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
)

// decodeAny decodes JSON with exact numbers for semantic comparison.
func decodeAny(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// TestFixtureConformance runs every case of the vendored fixture manifest:
// each fixture is accepted or rejected by its schema's Parse function exactly
// as the manifest says, and every valid message round-trips Parse → Encode →
// Parse to a semantically equal document.
func TestFixtureConformance(t *testing.T) {
	cases, err := fixtures.Load()
	require.NoError(t, err)
	require.Len(t, cases, 121, "vendored manifest size")
	passed := 0
	for _, c := range cases {
		ok := t.Run(c.ID, func(t *testing.T) {
			data, err := c.Read()
			require.NoError(t, err)
			codec, found := gen.LookupRoot(c.SchemaFile())
			require.True(t, found, "no codec for %s", c.SchemaFile())
			msgs := c.Messages(data)
			valid := true
			var firstErr error
			parsed := make([]any, len(msgs))
			for i, m := range msgs {
				v, err := codec.Parse(m)
				if err != nil {
					valid = false
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				parsed[i] = v
			}
			require.Equal(t, c.ExpectedValid, valid, "verdict of %s (first error: %v)", c.SchemaFile(), firstErr)
			if firstErr != nil {
				var pe *gen.ParseError
				require.True(t, errors.As(firstErr, &pe), "error type %T", firstErr)
				require.True(t, errors.Is(firstErr, gen.ErrInvalid))
			}
			if c.AggregateExpectedValid != nil {
				agg := true
				for _, m := range msgs {
					if _, err := gen.ParseWireMessage(m); err != nil {
						agg = false
					}
				}
				require.Equal(t, *c.AggregateExpectedValid, agg, "aggregate (schema.json) verdict")
			}
			if !valid {
				return
			}
			if es := c.EventSchemaFile(); es != "" {
				var env struct {
					Params struct {
						Event json.RawMessage `json:"event"`
					} `json:"params"`
				}
				require.NoError(t, json.Unmarshal(data, &env))
				ec, found := gen.LookupRoot(es)
				require.True(t, found)
				_, err := ec.Parse(env.Params.Event)
				require.NoError(t, err, "event against %s", es)
			}
			for i, m := range msgs {
				out, err := codec.Encode(parsed[i])
				require.NoError(t, err)
				require.NotContains(t, string(out), "\n", "encoding is one line")
				again, err := codec.Parse(out)
				require.NoError(t, err, "re-parse of encoded output")
				require.Equal(t, decodeAny(t, m), decodeAny(t, out), "round trip is semantically equal")
				out2, err := codec.Encode(again)
				require.NoError(t, err)
				require.Equal(t, string(out), string(out2), "encoding is stable")
			}
		})
		if ok {
			passed++
		}
	}
	t.Logf("fixture conformance: %d/%d cases passed", passed, len(cases))
}
