package settle_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestZeroOccurrenceDoesNotPanic: an Occurrence not set up by New (its zero
// value, as new(settle.Occurrence) gives a caller) answers every method
// without a panic: nothing is admissible at it, its state is the default.
func TestZeroOccurrenceDoesNotPanic(t *testing.T) {
	g := fullGrant(t, gen.EventToolBefore)
	for _, tc := range []struct {
		name string
		call func(o *settle.Occurrence)
	}{
		{"Apply no effect", func(o *settle.Occurrence) { _ = o.Apply(g, result(nil)) }},
		{"Apply an approval", func(o *settle.Occurrence) { _ = apply(t, o, g, `[{"type":"allow"}]`) }},
		{"State", func(o *settle.Occurrence) { _ = o.State() }},
		{"RequestState", func(o *settle.Occurrence) { _ = o.RequestState() }},
		{"RequestStateJSON", func(o *settle.Occurrence) { _, _ = o.RequestStateJSON() }},
		{"Done", func(o *settle.Occurrence) { _ = o.Done() }},
		{"ReplaceWithheld", func(o *settle.Occurrence) { _, _ = o.ReplaceWithheld() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotPanics(t, func() { tc.call(new(settle.Occurrence)) })
		})
	}
}
