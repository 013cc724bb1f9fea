package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemberDocsFollowRefs shows that a member whose property is a bare $ref
// is documented with the description of the definition it names, both in the
// typed model and in the flattened hooks inputs.
func TestMemberDocsFollowRefs(t *testing.T) {
	schemas := copySchemas(t)
	outs, err := generate(schemas, filepath.Join(filepath.Dir(schemas), "gen"), filepath.Join(filepath.Dir(schemas), "lock.json"))
	require.NoError(t, err)
	files := map[string]string{}
	for _, o := range outs {
		files[filepath.Base(o.Path)] = string(o.Data)
	}
	tests := []struct {
		file, line string
	}{
		// common.schema.json#/$defs/native carries the description.
		{"tool_before.go", `// Native is the "native" member (optional; nil when absent). Opaque implementation-defined JSON, delivered only when includeNative is authorized.`},
		{"events_gen.go", `// Native is the "native" member (optional; nil when absent). Opaque implementation-defined JSON, delivered only when includeNative is authorized.`},
		// a description on the property itself still wins.
		{"tool_before.go", `// ParentEventID is the "parentEventId" member (optional; nil when absent). Optional event ID scoped to this event source`},
	}
	for _, tc := range tests {
		src, ok := files[tc.file]
		require.True(t, ok, "%s not generated", tc.file)
		require.True(t, strings.Contains(src, tc.line), "%s lacks %q", tc.file, tc.line)
	}
	require.False(t, strings.Contains(files["tool_before.go"], `// Native is the "native" member (optional; nil when absent).`+"\n"), "undocumented native member")
}
