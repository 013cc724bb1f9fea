package hooks_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestChangedInputDropsEarlierCandidate: over loopback HTTP, a first
// interceptor supplies a tool result for the input it saw; a second one
// changes the input (and injects context, or stops, or denies). The
// changed operation invalidates the earlier candidate (base/composition.md:
// "A later changed operation invalidates an earlier candidate"), and a
// denial or a stop drops it: the Result carries no candidate, so that the
// host never skips execution of the changed call with the result of the
// original one, and a later receiver is not sent that result as the
// candidate in its request state.
func TestChangedInputDropsEarlierCandidate(t *testing.T) {
	var ctxMsg gen.CanonicalMessages
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"c1","role":"system","parts":[{"id":"c1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"ctx"}]}]`), &ctxMsg))
	for _, tc := range []struct {
		name   string
		second []gen.Effect
	}{
		{"changed input and an injection", []gen.Effect{server.MergeInput(map[string]any{"path": "/etc/shadow"}), server.Inject(gen.DeliverAtNow, ctxMsg)}},
		{"changed input and a stop", []gen.Effect{server.MergeInput(map[string]any{"path": "/etc/shadow"}), server.StopFlow("s")}},
		{"a denial and a stop", []gen.Effect{server.Deny("no"), server.StopFlow("s")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
				return []gen.Effect{server.Return(map[string]any{"content": "hosts file"})}
			}}
			second := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return tc.second }}
			sa := httptest.NewServer(first.handler())
			defer sa.Close()
			sb := httptest.NewServer(second.handler())
			defer sb.Close()
			third := &recorder{}
			sc := httptest.NewServer(third.handler())
			defer sc.Close()
			sub := interceptSub(`"tool.before"`, 10000, "fail-closed")
			cfg := baseConfig()
			cfg.Capabilities[gen.EventToolBefore] = toolGrant().Inject(gen.DeliverAtNow)
			h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport(sa.URL), sub), backendJSON("com.example.b", httpTransport(sb.URL), sub),
				backendJSON("com.example.c", httpTransport(sc.URL), sub)), cfg)
			require.NoError(t, err)
			defer h.Close()
			res, err := h.ToolBefore(ctxTimeout(t, 30e9), toolInput())
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(res.Accepted), 2, "both responses are admitted: %+v", res.Diagnostics)
			require.False(t, res.Candidate.Present, "the result supplied for the original input survives: %s (input now %s)", res.Candidate.Value, res.Input)
			third.mu.Lock()
			defer third.mu.Unlock()
			for _, req := range third.intercept { // none after a denial or a stop
				require.False(t, req.Params.State.Candidate.Valid, "a later receiver is sent the invalidated result: %s", req.Params.State.Candidate.Value.Value)
			}
		})
	}
}
