package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDispatchKeepsVerdicts compares the dispatching validator with a plain
// compilation of the canonical schemas: on every fixture message, on its
// event alone, and on variants whose event type is swapped for each other
// event type, both must give the same verdict.
func TestDispatchKeepsVerdicts(t *testing.T) {
	plain, err := newValidator(false)
	require.NoError(t, err)
	fast, err := newValidator(true)
	require.NoError(t, err)

	root := filepath.Join("..", "..", "testdata")
	data, err := os.ReadFile(filepath.Join(root, "fixtures", "draft", "manifest.json"))
	require.NoError(t, err)
	var m struct {
		Cases []struct {
			Path, Schema string
		}
	}
	require.NoError(t, json.Unmarshal(data, &m))

	eventTypes := []string{"tool.before", "tool.after", "session.start", "session.end", "turn.start", "turn.finish.before",
		"model.request.before", "model.response.after", "user.message.inbound", "user.elicitation.result", "hook.failure", "file.changed", "no.such.event"}
	compared := 0
	check := func(ref string, doc []byte) {
		t.Helper()
		a, b := plain.Validate(ref, doc), fast.Validate(ref, doc)
		require.Equal(t, a == nil, b == nil, "verdict of %s differs (plain: %v, dispatch: %v) on %s", ref, a, b, doc)
		compared++
	}
	for _, c := range m.Cases {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.Path)))
		require.NoError(t, err)
		schema := filepath.Base(c.Schema)
		lines := []string{string(raw)}
		if strings.HasSuffix(c.Path, ".jsonl") {
			lines = strings.Split(strings.TrimSpace(string(raw)), "\n")
		}
		for _, line := range lines {
			check(schema, []byte(line))
			check("schema.json", []byte(line))
			var env map[string]any
			if json.Unmarshal([]byte(line), &env) != nil {
				continue
			}
			params, _ := env["params"].(map[string]any)
			ev, _ := params["event"].(map[string]any)
			if ev == nil {
				continue
			}
			evDoc, _ := json.Marshal(ev)
			check("event.schema.json", evDoc)
			for _, typ := range eventTypes {
				ev["type"] = typ
				mutated, _ := json.Marshal(env)
				check(schema, mutated)
			}
		}
	}
	t.Logf("compared %d verdicts", compared)
}
