package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// TestNoEffectResponse checks the dispatcher's answer without effects
// against admit, for every interceptable event of the catalogue: the same
// bytes, valid against intercept-response.schema.json and the event's own
// response definition, for string and integer ids.
func TestNoEffectResponse(t *testing.T) {
	ids := map[string]string{
		"short string":   `"x"`,
		"escapes":        `"caf\u00e9 \"quoted\" \\ \/ \n\t \ud83d\ude00"`,
		"unicode":        `"évènement ☃ 😀"`,
		"integer":        `1`,
		"zero":           `0`,
		"negative":       `-42`,
		"large integer":  `123456789012345678901234567890`,
		"negative zero":  `-0`,
		"typical string": `"evt_http_001"`,
	}
	v := validate.Default()
	events := 0
	for _, info := range gen.Events() {
		if !info.Interceptable() {
			continue
		}
		events++
		// The dispatcher's shared catalogue entry, as intercept uses it.
		info, ok := lookupEvent(info.Name)
		require.True(t, ok)
		for name, raw := range ids {
			t.Run(string(info.Name)+"/"+name, func(t *testing.T) {
				var id jsonrpc.ID
				require.NoError(t, id.UnmarshalJSON([]byte(raw)))
				fast, ok := noEffectResponse(id)
				require.True(t, ok)
				for _, res := range []InterceptResult{{}, {Effects: []gen.Effect{}}} {
					full, err := admit(id, info, admission{}, res)
					require.NoError(t, err)
					require.Equal(t, string(full), string(fast))
				}
				require.NoError(t, v.Validate("intercept-response.schema.json", fast))
				if info.ResponseSchema != "" {
					require.NoError(t, v.Validate(info.ResponseSchema, fast))
				}
			})
		}
	}
	require.NotZero(t, events)
}

// TestNoEffectResponseIDs checks that ids a request cannot carry are left to
// admit.
func TestNoEffectResponseIDs(t *testing.T) {
	for _, id := range []jsonrpc.ID{{}, jsonrpc.NullID(), jsonrpc.StringID("")} {
		_, ok := noEffectResponse(id)
		require.False(t, ok, id.String())
	}
	body, ok := noEffectResponse(jsonrpc.StringID("a"))
	require.True(t, ok)
	require.Equal(t, `{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"draft","effects":[]}}`, string(body))
}
