package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

func TestMember(t *testing.T) {
	obj := []byte(` {"a":1, "b" : {"c":[1,2]}, "\u0064":"dee", "A":"upper", "a":"last"} `)
	for name, want := range map[string]string{
		"a": `"last"`, // the last occurrence wins, as for encoding/json
		"b": `{"c":[1,2]}`,
		"d": `"dee"`, // escaped names are unescaped
		"A": `"upper"`,
	} {
		got, ok := Member(obj, name)
		require.True(t, ok, name)
		require.Equal(t, want, string(got), name)
	}
	_, ok := Member(obj, "c") // nested members are not top-level
	require.False(t, ok)
	_, ok = Member(obj, "B") // exact, case-sensitive
	require.False(t, ok)

	for _, bad := range []string{``, `[]`, `"a"`, `{"a":1`, `{"a":1}x`, `{"a" 1}`, `{a:1}`, `{"a":1,}`, "{\"a\":\"\xff\"}"} {
		_, ok := Member([]byte(bad), "a")
		require.False(t, ok, bad)
	}
	got, ok := Member([]byte(`{}`), "a")
	require.False(t, ok)
	require.Nil(t, got)
}

func TestStringValue(t *testing.T) {
	for tok, want := range map[string]string{`"draft"`: "draft", ` "dr\u0061ft" `: "draft", `""`: ""} {
		got, ok := StringValue([]byte(tok))
		require.True(t, ok, tok)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{``, `1`, `null`, `"a`, `"a"b`, "\"\xff\"", `"\x"`} {
		_, ok := StringValue([]byte(bad))
		require.False(t, ok, bad)
	}
}

func FuzzMember(f *testing.F) {
	f.Add([]byte(`{"protocolVersion":"draft","event":{"type":"tool.before"}}`), "event")
	f.Add([]byte(`{"a":1,"a":2}`), "a")
	f.Add([]byte("{\"\xc3\":\"\",\"event\":{}}"), "event")
	for _, v := range hostile.Values() {
		f.Add([]byte(`{"a":`+v+`,"event":`+v+`}`), "event")
		f.Add([]byte(v), "k2999")
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		got, ok := Member(data, name)
		if !json.Valid(data) || !utf8.Valid(data) {
			// Member is as strict as Classify: UTF-8 only (AHP-RPC-001).
			require.False(t, ok, "invalid JSON has no members")
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			require.False(t, ok, "not an object")
			return
		}
		// encoding/json folds case; compare only when name is the only key
		// that folds to itself.
		folds := 0
		for k := range m {
			if strings.EqualFold(k, name) {
				folds++
			}
		}
		if folds > 1 {
			return
		}
		want, present := m[name]
		require.Equal(t, present, ok)
		if ok {
			require.JSONEq(t, string(want), string(got))
		}
	})
}

// TestMembers: one pass gives, name by name, what Member gives, including
// the last occurrence, escaped names, absent names and malformed objects;
// it does not allocate.
func TestMembers(t *testing.T) {
	names := []string{"a", "b", "d", "A", "c", "B"}
	for _, obj := range []string{
		` {"a":1, "b" : {"c":[1,2]}, "\u0064":"dee", "A":"upper", "a":"last"} `,
		`{}`, `{"c":1}`, `{"a":1`, `{"a":1}x`, `[]`, `{"a":1,}`, "{\"a\":\"\xff\"}",
	} {
		values := make([][]byte, len(names))
		found := make([]bool, len(names))
		ok := Members([]byte(obj), names, values, found)
		require.Equal(t, strings.HasSuffix(obj, "} ") || obj == `{}` || obj == `{"c":1}`, ok, obj)
		for i, name := range names {
			want, wantOK := Member([]byte(obj), name)
			require.Equal(t, wantOK, found[i], "%s %s", obj, name)
			require.Equal(t, string(want), string(values[i]), "%s %s", obj, name)
		}
	}
	obj := []byte(`{"protocolVersion":"draft","event":{"type":"tool.before"},"x":[1,{"event":2}]}`)
	var values [2][]byte
	var found [2]bool
	allocs := testing.AllocsPerRun(100, func() {
		Members(obj, []string{"protocolVersion", "event"}, values[:], found[:])
	})
	require.Zero(t, allocs)
	require.Equal(t, `{"type":"tool.before"}`, string(values[1]))
}
