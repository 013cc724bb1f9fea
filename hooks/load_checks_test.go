package hooks_test

import (
	"context"
	"encoding/json"
	"slices"
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

// TestNewRejectsWhatTheHostDoesNotOffer: load-time checks on selectors,
// transports, URLs and limits, each naming the JSON pointer.
func TestNewRejectsWhatTheHostDoesNotOffer(t *testing.T) {
	u := httpTransport("http://127.0.0.1:1/x")
	withManifest := func(edit func(*gen.StaticCapabilityManifest)) func(*hooks.Config) {
		return func(c *hooks.Config) {
			m := manifestOf(t, *c)
			edit(&m)
			c.Capabilities, c.Manifest = nil, &m
		}
	}
	num := func(s string) *json.Number { n := json.Number(s); return &n }
	cases := []struct {
		name    string
		reg     []byte
		cfg     func(*hooks.Config)
		pointer string
		keyword string
	}{
		{name: "observe of an event the host does not offer", reg: registration(backendJSON("com.example.a", u, observeSub(`"tool.after","session.end"`))),
			pointer: "/hooks/0/subscriptions/0/events/1", keyword: "advertised"},
		{name: "wildcard of an unknown family", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.*","foo.*"`, 500, "fail-open"))),
			pointer: "/hooks/0/subscriptions/0/events/1", keyword: "family"},
		{name: "credentials in the URL", reg: registration(backendJSON("com.example.a", httpTransport("http://user:s3cret@127.0.0.1:1/x"), interceptSub(`"tool.before"`, 500, "fail-open"))),
			pointer: "/hooks/0/transport/url", keyword: "credentials"},
		{name: "transport the manifest does not list", reg: registration(backendJSON("com.example.a", backendCmd(t, "none", "persistent"), interceptSub(`"tool.before"`, 500, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) {
				m.Transports = []gen.StaticCapabilityManifestTransport{gen.StaticCapabilityManifestTransportHTTP}
				m.Gaps = slices.DeleteFunc(m.Gaps, func(g gen.Gap) bool { return g.Path == "transports" })
			}), pointer: "/hooks/0/transport", keyword: "transports"},
		{name: "maxTimeoutMs spelled 1000.0", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 5000, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MaxTimeoutMs = num("1000.0") }), pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "maximum"},
		{name: "minTimeoutMs spelled 1e2", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 5, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MinTimeoutMs = num("1e2") }), pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "minimum"},
		{name: "minTimeoutMs beyond int64", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 500, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MinTimeoutMs = num("99999999999999999999") }), pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "minimum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			h, err := hooks.New(c.reg, cfg)
			require.Nil(t, h)
			require.ErrorIs(t, err, hooks.ErrInvalidRegistration)
			var ve *hooks.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, c.pointer, ve.Pointer, err.Error())
			require.Equal(t, c.keyword, ve.Keyword, err.Error())
			require.NotContains(t, err.Error(), "s3cret")
		})
	}
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
