package hooks

import (
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/stretchr/testify/require"
)

// TestInterceptBodyMatchesGeneratedEncoder: the spliced request body is
// byte for byte what gen.EncodeInterceptRequest produces, with and without
// a known event encoding, for initial states that fill the state object
// differently.
func TestInterceptBodyMatchesGeneratedEncoder(t *testing.T) {
	ev, err := gen.ParseEvent([]byte(`{"id":"evt-\u00e9\"1","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts","n":1.50},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`))
	require.NoError(t, err)
	caps := Intercept().Deny().Allow().ModifyInput(Replace).capabilities(0)
	for name, initial := range map[string]settle.Initial{
		"empty":     {},
		"allowed":   {Permission: gen.PermissionAllow},
		"continued": {Permission: gen.PermissionDeny, Flow: gen.FlowStateContinue},
		"candidate": {Candidate: settle.Candidate{Present: true, Value: []byte(`{"cached":true}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			occ, err := settle.New(ev, initial)
			require.NoError(t, err)
			want, err := gen.EncodeInterceptRequest(&gen.InterceptRequest{
				ID: gen.JSONRPCIDFromString(ev.ID()),
				Params: gen.InterceptRequestParams{
					ProtocolVersion: gen.ProtocolVersion,
					Event:           *ev,
					Capabilities:    caps,
					State:           occ.RequestState(),
				},
			})
			require.NoError(t, err)
			encoded, err := gen.EncodeEvent(ev)
			require.NoError(t, err)
			for _, known := range [][]byte{nil, encoded} {
				c := &call{caps: &caps, occ: occ, stateContent: initial.Candidate.Present}
				got, err := c.interceptBody(ev.ID(), ev, known, c.caps, &c.capsJSON, nil)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
				// Allocated once: at its size, or with the room left for a
				// state appended in place.
				require.LessOrEqual(t, len(got), cap(got))
				require.LessOrEqual(t, cap(got)-len(got), stateRoom)
				if c.stateContent {
					require.Equal(t, len(got), cap(got))
				}
				_, err = gen.ParseInterceptRequest(got)
				require.NoError(t, err)
			}
		})
	}
}

// TestNoEffectAnswerShortcut: decodeIntercept's shortcut is taken for the
// canonical no-effect answer and gives what the full path gives; every
// other spelling, id or content goes through the full path.
func TestNoEffectAnswerShortcut(t *testing.T) {
	canonical := func(id string) []byte {
		b, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(gen.JSONRPCIDFromString(id)),
			Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}})
		require.NoError(t, err)
		return b
	}
	for _, id := range []string{"evt-1", "evt_0123456789abcdef", "x", "a b/c:d@e", "evt-\u00e9", "evt-\"q\"", "evt-\\", "evt-<&>", "evt-\u2028"} {
		raw := canonical(id)
		full, ferr := decodeInterceptFull(t.Context(), raw, id)
		require.Nil(t, ferr, "id %q", id)
		got, err := decodeIntercept(t.Context(), raw, id)
		require.Nil(t, err)
		require.Equal(t, full, got, "id %q", id)
		if isNoEffectAnswer(raw, id) {
			require.Equal(t, gen.ProtocolVersion, got.ProtocolVersion)
			require.NotNil(t, got.Effects)
			require.Empty(t, got.Effects)
		}
	}
	require.True(t, isNoEffectAnswer(canonical("evt-1"), "evt-1"), "the common answer takes the shortcut")
	require.True(t, isNoEffectAnswer([]byte(`{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}`), "evt-1"))
	for name, raw := range map[string]string{
		"other id":       `{"jsonrpc":"2.0","id":"evt-2","result":{"protocolVersion":"draft","effects":[]}}`,
		"numeric id":     `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"draft","effects":[]}}`,
		"escaped id":     `{"jsonrpc":"2.0","id":"evt\u002d1","result":{"protocolVersion":"draft","effects":[]}}`,
		"spaces":         `{"jsonrpc": "2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}`,
		"effects":        `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"allow"}]}}`,
		"extension":      `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[],"extensions":{}}}`,
		"trailing bytes": `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}x`,
		"no effects":     `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft"}}`,
		"error":          `{"jsonrpc":"2.0","id":"evt-1","error":{"code":-32603,"message":"x"}}`,
	} {
		require.False(t, isNoEffectAnswer([]byte(raw), "evt-1"), name)
	}
	require.False(t, isNoEffectAnswer([]byte(`{"jsonrpc":"2.0","id":"","result":{"protocolVersion":"draft","effects":[]}}`), ""), "an empty id is never ours")
}
