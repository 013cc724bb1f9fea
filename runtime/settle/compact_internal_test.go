package settle

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// requireCompactTopSound checks compactTop on the object b: when it holds,
// encoding b's members writes b itself (what inputJSON relies on), and the
// compact form of b always satisfies it.
func requireCompactTopSound(t *testing.T, b []byte) {
	t.Helper()
	ms, err := splitObject(b, true)
	if err != nil {
		return // not a valid object without repeated names: outside the contract
	}
	if compactTop(b) {
		require.Equal(t, string(b), string(encodeObject(ms)), "compactTop(%q)", b)
	}
	var c bytes.Buffer
	require.NoError(t, json.Compact(&c, b))
	require.True(t, compactTop(c.Bytes()), "compact form of %q", b)
}

// TestCompactTop: compactTop tells objects written as encodeObject writes
// their members from those with whitespace between top-level tokens,
// whatever the strings and nested values hold.
func TestCompactTop(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{}`, true},
		{`{"path":"/etc/hosts"}`, true},
		{`{"cmd":"ls -la","a":{"b":[1, 2, {"c" : null}]}}`, true},
		{`{"q":"a\"b , c","r":"x\\","s":" "}`, true},
		{`{"a\u0022 ":"}\" ","b":1}`, true},
		{` {"a":1}`, false},
		{`{"a":1} `, false},
		{`{ "a":1}`, false},
		{`{"a" :1}`, false},
		{`{"a": 1}`, false},
		{`{"a":1 ,"b":2}`, false},
		{`{"a":1,` + "\n" + `"b":2}`, false},
		{`{"a":{"b":1},"c":[1],` + "\t" + `"d":2}`, false},
		{`{"a":"\\"` + "\r" + `}`, false},
	} {
		require.Equal(t, c.want, compactTop([]byte(c.in)), "%s", c.in)
		requireCompactTopSound(t, []byte(c.in))
	}
}

// FuzzCompactTop: for any object without repeated names, compactTop
// holds only when encodeObject writes the object itself, and always for
// its compact form.
func FuzzCompactTop(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` { "a" : [ 1 , "b\"" ] } `, `{"a":"\\\\","b":{"c":" "}}`,
		hostile.Object(2000), hostile.Deep(200, `{"x":1}`)} {
		f.Add([]byte(s))
	}
	for _, v := range hostile.Values() {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		requireCompactTopSound(t, b)
	})
}
