package interop

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
		require.NoError(t, ComparePartial([]byte(e), []byte(actual)), e)
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
		require.Error(t, ComparePartial([]byte(e), []byte(actual)), e)
	}
	// Presence of an unasserted result/flow/injections/continuation key fails.
	require.Error(t, ComparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","result":null}`)))
	require.Error(t, ComparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","injections":[]}`)))
	require.Error(t, ComparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","rejected":true}`)))
	require.NoError(t, ComparePartial([]byte(`{"decision":"allow"}`), []byte(`{"decision":"allow","input":{}}`)), "input placeholders are tolerated when unasserted")
	require.Error(t, ComparePartial([]byte(`{"messages":["a","b"]}`), []byte(`{"messages":["b","a"]}`)), "order matters")
}

// TestCompareExact pins the exact-equality rule of the lifecycle and
// catalogue verifiers and that its error names a pointer, never a value.
func TestCompareExact(t *testing.T) {
	cases := []struct {
		name      string
		expected  string
		actual    string
		wantError string // "" for equal
	}{
		{"equal with member order and number spelling", `{"a":1,"b":[true,null,{"c":"x"}]}`, `{"b":[true,null,{"c":"x"}],"a":1.0}`, ""},
		{"extra member", `{"a":1}`, `{"a":1,"secret":"zz"}`, "/secret"},
		{"missing member", `{"a":1,"b":2}`, `{"a":1}`, "/b"},
		{"array length", `{"a":[1,2]}`, `{"a":[1]}`, "/a"},
		{"array order", `{"a":[1,2]}`, `{"a":[2,1]}`, "/a/0"},
		{"boolean is not a number", `{"a":0}`, `{"a":false}`, "/a"},
		{"null is asserted", `{"a":null}`, `{"a":{}}`, "/a"},
		{"escaped pointer", `{"x/y":1}`, `{"x/y":2}`, "/x~1y"},
		{"root", `[]`, `{}`, "root"},
		{"not JSON", `{}`, `{} x`, "not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CompareExact([]byte(c.expected), []byte(c.actual))
			if c.wantError == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), c.wantError)
			require.NotContains(t, err.Error(), "zz")
		})
	}
}
