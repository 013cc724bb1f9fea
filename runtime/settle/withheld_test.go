package settle_test

import (
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/stretchr/testify/require"
)

// TestWithheldTextMergedIn: a merge that brings withheld text (an
// established metadata part) into the target makes the target one that
// "contains text withheld by metadata/omit selection" (base/composition.md):
// a later whole-list replace is neither advertised nor admitted. The
// rejected replace leaves the state as it was.
func TestWithheldTextMergedIn(t *testing.T) {
	meta := `{"id":"r1","kind":"text","mediaType":"text/plain","selection":"metadata"}`
	ev := parseEvent(t, `{"id":"evt1",`+envelope+`,"type":"context.compact.after","summary":[`+textPart("s1", "Summary.")+`],"removed":[],"execution":{"status":"executed"},"items":[{"id":"m1","role":"assistant","parts":[`+meta+`]}]}`)
	o, err := settle.New(ev, settle.Initial{})
	require.NoError(t, err)
	g := fullGrant(t, gen.EventContextCompactAfter)
	_, withheld := o.ReplaceWithheld()
	require.False(t, withheld)
	require.NoError(t, apply(t, o, g, `[{"type":"modify","target":"summary","operation":"merge","value":[`+meta+`]}]`))
	target, withheld := o.ReplaceWithheld()
	require.True(t, withheld)
	require.Equal(t, gen.ModifyTargetSummary, target)
	before := o.State()
	err = apply(t, o, g, `[{"type":"modify","target":"summary","operation":"replace","value":[`+textPart("s2", "new")+`]}]`)
	var rj *settle.Rejection
	require.ErrorAs(t, err, &rj)
	require.Equal(t, settle.ReasonHiddenContent, rj.Reason)
	require.Equal(t, before.Targets, o.State().Targets)
}
