package hooks_test

import (
	"context"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/stretchr/testify/require"
)

// manifestOf returns the manifest that cfg's capability shorthand derives.
func manifestOf(t *testing.T, cfg hooks.Config) gen.StaticCapabilityManifest {
	t.Helper()
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 500, "fail-open"))), cfg)
	require.NoError(t, err)
	defer h.Close()
	return h.Manifest()
}

// TestObserveWildcardOnlyOfferedModes: an event the manifest offers for
// interception only is not observed through a wildcard ("* matches all
// supported events for the mode", base/registration.md).
func TestObserveWildcardOnlyOfferedModes(t *testing.T) {
	m := manifestOf(t, baseConfig())
	found := false
	for i := range m.Events {
		if string(m.Events[i].Event) == string(gen.EventToolBefore) {
			m.Events[i].Modes = []gen.StaticCapabilityManifestEventMode{gen.StaticCapabilityManifestEventModeIntercept}
			found = true
		}
	}
	require.True(t, found)
	rec := &recorder{}
	h := inproc(t, hooks.Config{Source: "urn:test:harness", Manifest: &m}, map[string]*recorder{"com.example.a": rec},
		registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), observeSub(`"*"`))))
	_, err := h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	_, err = h.TurnEnd(context.Background(), hooks.TurnEndInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"}, Outcome: gen.OutcomeCompleted, ContinuationCount: "0"})
	require.NoError(t, err)
	intercepted, observed := rec.counts()
	require.Zero(t, intercepted)
	require.Equal(t, 1, observed, "turn.end only")
}

// TestTimeoutSpelledAsDecimal: timeoutMs 1000.0 is the integer 1000 under
// Draft 2020-12, accepted as such (it used to be rejected as not a positive
// integer).
func TestTimeoutSpelledAsDecimal(t *testing.T) {
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		`{"events":["tool.before"],"mode":"intercept","timeoutMs":1000.0,"failurePolicy":"fail-open","content":{"default":"body"}}`))
	h, err := hooks.New(reg, baseConfig())
	require.NoError(t, err)
	require.NoError(t, h.Close())
}
