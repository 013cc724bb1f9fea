package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/stretchr/testify/require"
)

// fixtureEvents returns every event of the valid protocol fixtures
// (params.event of an intercept request or observe notification), by file.
func fixtureEvents(t *testing.T) map[string]*gen.Event {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "draft", "*", "*.valid.json"))
	require.NoError(t, err)
	out := map[string]*gen.Event{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var env struct {
			Params struct {
				Event json.RawMessage `json:"event"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &env) != nil || env.Params.Event == nil {
			continue
		}
		ev, err := gen.ParseEvent(env.Params.Event)
		require.NoError(t, err, f)
		out[filepath.Base(f)] = ev
	}
	require.NotEmpty(t, out)
	return out
}

// partObjects returns the JSON pointers of every object in v that has the
// shape of a content part (kind text or attachment, with a selection),
// outside the members that are opaque JSON.
func partObjects(v any, ptr string, out map[string]map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if k, _ := x["kind"].(string); (k == "text" || k == "attachment") && x["selection"] != nil {
			out[ptr] = x
		}
		for name, m := range x {
			if name == "native" || name == "extensions" || name == "input" {
				continue // opaque: the host projects it, the SDK does not
			}
			partObjects(m, ptr+"/"+name, out)
		}
	case []any:
		for i, m := range x {
			partObjects(m, ptr+"/"+strconv.Itoa(i), out)
		}
	}
}

// TestWalkCoversEveryFixturePart: every content part that a valid protocol
// fixture carries in its event is a slot of the generated walk (none is
// missed by the schema-derived walker), and an omit selection leaves none
// of them with inline text or an attachment reference.
func TestWalkCoversEveryFixturePart(t *testing.T) {
	omit, err := newContentPolicy(gen.ContentSelection{Default: "omit"})
	require.NoError(t, err)
	seen := 0
	for name, ev := range fixtureEvents(t) {
		ev = withoutNative(ev)
		data, err := gen.EncodeEvent(ev)
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(data, &doc))
		found := map[string]map[string]any{}
		partObjects(doc, "", found)
		walked := 0
		for _, e := range slotsOf(ev) {
			if e.list < 0 && e.msg == nil {
				walked++
			}
		}
		require.Equal(t, len(found), walked, "%s: parts outside the walk: %v", name, found)
		seen += walked

		view := project(ev, omit)
		vdata, err := gen.EncodeEvent(view)
		require.NoError(t, err)
		var vdoc any
		require.NoError(t, json.Unmarshal(vdata, &vdoc))
		vfound := map[string]map[string]any{}
		partObjects(vdoc, "", vfound)
		require.Len(t, vfound, len(found), name)
		for ptr, p := range vfound {
			require.Equal(t, "omit", p["selection"], "%s%s", name, ptr)
			require.NotContains(t, p, "text", "%s%s", name, ptr)
			require.NotContains(t, p, "body", "%s%s", name, ptr)
			require.NotContains(t, p, "sha256", "%s%s", name, ptr)
		}
		// The view is valid against the event's schema, and the
		// canonical event is untouched.
		_, err = gen.ParseEvent(vdata)
		require.NoError(t, err, name)
		again, err := gen.EncodeEvent(ev)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, again), name)
		// Every fixture part has its id: nothing is synthesized.
		require.Same(t, ev, synthesizeIDs(ev), name)
	}
	require.Greater(t, seen, 20, "the fixtures exercise the walk")
}

// TestProjectionSharesNothingMutable: two views of one event share no
// slice with each other that either changed; a body view of an event whose
// parts are all bodies is the event itself.
func TestProjectionSharesNothingMutable(t *testing.T) {
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[{"id":"p","kind":"text","mediaType":"text/plain","selection":"body","text":"x"}]}]`), &items))
	ev := &gen.Event{TurnStart: &gen.ExecutionEventTurnStart{ID: "e", Source: "urn:s", Time: "2026-01-01T00:00:00Z", Type: "turn.start", Items: items, Trigger: "user"}}
	meta, err := newContentPolicy(gen.ContentSelection{Default: "metadata"})
	require.NoError(t, err)
	omit, err := newContentPolicy(gen.ContentSelection{Default: "omit"})
	require.NoError(t, err)
	body, err := newContentPolicy(gen.ContentSelection{Default: "body"})
	require.NoError(t, err)
	a, b := project(ev, meta), project(ev, omit)
	require.NotSame(t, a, b)
	require.NotSame(t, &a.TurnStart.Items[0], &b.TurnStart.Items[0])
	require.NotSame(t, &a.TurnStart.Items[0].Parts[0], &b.TurnStart.Items[0].Parts[0])
	require.NotSame(t, &ev.TurnStart.Items[0], &a.TurnStart.Items[0])
	require.NotNil(t, a.TurnStart.Items[0].Parts[0].TextMetadataPart)
	require.NotNil(t, b.TurnStart.Items[0].Parts[0].TextOmittedPart)
	require.NotNil(t, ev.TurnStart.Items[0].Parts[0].TextBodyPart)
	require.Same(t, ev, project(ev, body))
}
