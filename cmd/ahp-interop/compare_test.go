package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestComparePartial pins the README's verifier rules.
func TestComparePartial(t *testing.T) {
	actual := `{"decision":"allow","executed":false,"input":{"task":1,"a":null},"messages":["x"],"result":0}`
	ok := []string{
		`{"decision":"allow","result":0}`,
		`{"decision":"allow","executed":false,"result":0}`,
		`{"result":0.0,"input":{"a":null,"task":1}}`,
		`{"messages":["x"],"result":0}`,
	}
	for _, e := range ok {
		require.NoError(t, comparePartial([]byte(e), []byte(actual)), e)
	}
	bad := []string{
		`{"result":false}`,           // booleans are not numbers
		`{"result":null}`,            // explicit null is an assertion
		`{"messages":[]}`,            // arrays have exact length
		`{"input":{"task":1}}`,       // nested objects are exact
		`{"flow":"stop","result":0}`, // an expected key must be present
		`{"decision":"allow"}`,       // result is present but not asserted
		`{"result":0}` + " x",        // not JSON
	}
	for _, e := range bad {
		require.Error(t, comparePartial([]byte(e), []byte(actual)), e)
	}
	// Presence of an unasserted result/flow/injections/continuation key fails.
	require.Error(t, comparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","result":null}`)))
	require.Error(t, comparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","injections":[]}`)))
	require.Error(t, comparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","rejected":true}`)))
	require.NoError(t, comparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","input":{}}`)), "input placeholders are tolerated when unasserted")
	require.Error(t, comparePartial([]byte(`{"messages":["a","b"]}`), []byte(`{"messages":["b","a"]}`)), "order matters")
}
