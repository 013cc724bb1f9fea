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
				c := &call{caps: caps, occ: occ}
				got, err := c.interceptBody(ev.ID(), ev, known)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
				_, err = gen.ParseInterceptRequest(got)
				require.NoError(t, err)
			}
		})
	}
}
