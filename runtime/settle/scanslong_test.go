package settle_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestOnlyLongScansLookAtStop: staging effects that scansLong does not
// report looks at no stop flag (ApplyContext gives them none): with the
// flag set they stage exactly as without it, at every interceptable
// boundary, admitted and rejected alike; and each kind it reports does
// look at the flag when its value is long.
func TestOnlyLongScansLookAtStop(t *testing.T) {
	short := []string{
		`[{"type":"deny","reason":"r"}]`,
		`[{"type":"deny","reason":"r","code":"com.example.code"}]`,
		`[{"type":"allow"}]`,
		`[{"type":"ask"}]`,
		`[{"type":"message","text":"m"}]`,
		`[{"type":"flow","operation":"stop","reason":"s"}]`,
		`[{"type":"flow","operation":"continue","instruction":"again"}]`,
		`[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[` + message("i1", "system", "x") + `]}]`,
		`[{"type":"modify","target":"prompt","operation":"merge","value":[` + message("m9", "user", "more") + `]}]`,
		`[{"type":"modify","target":"request","operation":"replace","value":[]}]`,
		`[{"type":"modify","target":"response","operation":"merge","value":[` + message("m9", "assistant", "more") + `]}]`,
		`[{"type":"modify","target":"instructions","operation":"replace","value":[` + textPart("i9", "more") + `]}]`,
		`[{"type":"modify","target":"summary","operation":"merge","value":[` + textPart("s9", "more") + `]}]`,
		`[{"type":"modify","target":"workspace","operation":"merge","value":{"cwd":"/w"}}]`,
		`[{"type":"modify","target":"content","operation":"merge","value":{"answer":"x"}}]`,
		`[{"type":"modify","target":"content","operation":"merge","value":{"count":"many"}}]`,
		`[{"type":"allow"},{"type":"message","text":"m"},{"type":"flow","operation":"stop","reason":"s"}]`,
	}
	staged := 0
	for _, info := range interceptable() {
		name := info.Name
		g := fullGrant(t, name)
		for _, data := range short {
			es := effects(t, data)
			require.False(t, settle.ScansLong(es), data)
			want := newOcc(t, name).StageOnly(g, es)
			require.Equal(t, want, newOcc(t, name).StageStopped(g, es), "%s at %s", data, name)
			if want == nil {
				staged++
			}
		}
	}
	require.Positive(t, staged)

	big := hostile.Object(5000)
	g := fullGrant(t, gen.EventToolBefore)
	for _, data := range []string{
		`[{"type":"deny","reason":"r","extensions":{"com.example.x":` + big + `}}]`,
		`[{"type":"modify","target":"input","operation":"merge","value":` + big + `}]`,
		`[{"type":"return","value":` + big + `}]`,
	} {
		es := effects(t, data)
		require.True(t, settle.ScansLong(es), data[:40])
		require.NoError(t, newOcc(t, gen.EventToolBefore).StageOnly(g, es), "%s: admissible", data[:40])
		require.Error(t, newOcc(t, gen.EventToolBefore).StageStopped(g, es), "%s: the stage gave up", data[:40])
	}
}
