package settle_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestEarlierSnapshotsStayDetached: what State, RequestState and Event
// returned before a response is not changed by accepting later responses
// that write every part of the committed state (a supplied result, a stop
// reason, continuation instructions, injections, the workspace and form
// targets), and writing into a returned State does not change the
// occurrence.
func TestEarlierSnapshotsStayDetached(t *testing.T) {
	for _, tc := range []struct {
		name      gen.EventName
		responses []string
	}{
		{gen.EventToolBefore, []string{
			`[{"type":"return","value":{"ok":1}},` + injectNow + `]`,
			`[{"type":"return","value":{"ok":2}},` + injectNow + `,{"type":"message","text":"m"}]`,
			`[{"type":"modify","target":"input","operation":"merge","value":{"path":"x.md"}},{"type":"flow","operation":"stop","reason":"s"}]`,
		}},
		{gen.EventTurnFinishBefore, []string{
			`[{"type":"flow","operation":"continue","instruction":"one"}]`,
			`[{"type":"flow","operation":"continue","instruction":"two"},{"type":"modify","target":"response","operation":"merge","value":[` + message("m2", "assistant", "more") + `]}]`,
			`[{"type":"flow","operation":"stop","reason":"s"}]`,
		}},
		{gen.EventWorkspaceChangeBefore, []string{
			`[{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/a"]}}]`,
			`[{"type":"modify","target":"workspace","operation":"merge","value":{"cwd":"/b"}}]`,
			`[{"type":"modify","target":"workspace","operation":"replace","value":{"cwd":"/c"}}]`,
		}},
		{gen.EventUserElicitationResult, []string{
			`[{"type":"modify","target":"content","operation":"merge","value":{"count":3}}]`,
			`[{"type":"modify","target":"content","operation":"merge","value":{"tags":["a"]}}]`,
			`[{"type":"modify","target":"content","operation":"replace","value":{"answer":"no"}}]`,
		}},
	} {
		t.Run(string(tc.name), func(t *testing.T) {
			o := newOcc(t, tc.name)
			g := fullGrant(t, tc.name)
			type snap struct {
				state   settle.State
				request []byte
				event   []byte
			}
			take := func() snap {
				st, err := o.RequestState().MarshalJSON()
				require.NoError(t, err)
				ev, err := o.Event()
				require.NoError(t, err)
				evb, err := ev.MarshalJSON()
				require.NoError(t, err)
				return snap{o.State(), st, evb}
			}
			var snaps, copies []snap
			for _, resp := range tc.responses {
				s := take()
				snaps = append(snaps, s)
				copies = append(copies, take())
				require.NoError(t, apply(t, o, g, resp), resp)
			}
			for i := range snaps {
				require.Equal(t, copies[i], snaps[i], "snapshot %d changed by later responses", i)
			}
			// Writing into a returned State leaves the occurrence as it was.
			want := take()
			s := o.State()
			for i := range s.Instructions {
				s.Instructions[i] = "x"
			}
			for i := range s.Injections {
				s.Injections[i].Value[0].ID = "x"
			}
			if len(s.Candidate.Value) > 0 {
				s.Candidate.Value[0] = ' '
			}
			for _, v := range s.Targets {
				if len(v) > 0 {
					v[0] = ' '
				}
			}
			if len(s.Input) > 0 {
				s.Input[0] = ' '
			}
			require.Equal(t, want, take())
		})
	}
}
