// Spec requirements covered by the hooks tests (agent-hooks-protocol
// spec/draft), with the test that checks each:
//
//	AHP-REG-001  registration shape, canonical validation, pointers   TestNewRejects
//	AHP-REG-002  exact / * / family.* matching, mode matching,
//	             owed observation of uncalled interceptors             TestMatching, TestFaultMatrix, TestShortCircuitObservation
//	AHP-COMP-001 serial registration order, stop on deny / flow stop /
//	             fail-closed / interruption                          TestSerialChain, TestFaultMatrix, TestInterruption
//	AHP-EDIT-001 each interceptor sees the committed effective event  TestSerialChain
//	AHP-FAIL-001 fail-open / fail-closed for every failure class      TestFaultMatrix
//	AHP-FAIL-002 subscription deadline, late response ignored, one
//	             call budget                                          TestFaultMatrix, TestInterruption
//	AHP-CAP-001  only granted effects accepted; narrowing per call    TestFaultMatrix (ungranted), TestPerCallNarrowing
//	AHP-CAP-002  capabilities.effects always present                  TestAllEventMethods
//	AHP-DEC-002  accepted deny is a result that blocks                TestSerialChain
//	AHP-DEC-003 / AHP-SEC-001  no effect is not permission            TestAllEventMethods
//	AHP-CORE-004 explicit event id reused by the caller               TestInputFillsSDKMembers
//	AHP-HTTP-001 POST, JSON media type, status rules, no redirects    TestFaultMatrix (http rows)
//	AHP-STDIO-001 line framing, stdout discipline, persistent and
//	             per_event children, reaping                          TestFaultMatrix (stdio rows), TestCloseReapsChildren
//	AHP-RPC-001/002 intercept request vs observe notification,
//	             JSON-RPC id == event id                              TestAllEventMethods
//	AHP-VER-001  protocolVersion draft on every message               TestAllEventMethods (via server validation)
//	AHP-TB-001   tool.before interception end to end                  TestSerialChain, examples
//	capability-auth.md  manifest/gaps, managed scope, loopback-only
//	             plain HTTP, secrets never in diagnostics/logs        TestManifest*, TestNewRejects, TestCanary
//	observation-disposition.md  settled view to observers, owed
//	             observations, none after interruption               TestShortCircuitObservation, TestInterruption
//	base/composition.md Observers  observations cannot reopen a
//	             settled decision; cut short at the call's end        TestObserverCannotReopenDecision,
//	             (interruption still overrides, AHP-FAIL-002); none   TestObservationsEndedByCallerOrClose,
//	             sent after the end, none left running; timeoutMs     TestOwedObservationBoundedByTimeoutMs,
//	             after preparation (content-upload.md); own failure   TestNoObservationAfterCallEnded,
//	             kept; encode failure diagnosed                       TestObservationJoinedByCall,
//	                                                                  TestOwedObservationPreparationBudget,
//	                                                                  TestObservationPhaseBound,
//	                                                                  TestObserverOwnFailureNotCancellation,
//	                                                                  TestObserveEncodeFailureDiagnosed
package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

func TestNewRejects(t *testing.T) {
	ok := backendJSON("com.example.a", httpTransport("http://127.0.0.1:8080/ahp"), interceptSub(`"tool.before"`, 500, "fail-closed"))
	u := httpTransport("http://127.0.0.1:1/x")
	// withManifest replaces the shorthand with its derived manifest, edited.
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
		kind    error
		pointer string
		keyword string
	}{
		{name: "schema: empty hooks", reg: []byte(`{"protocolVersion":"draft","hooks":[]}`), kind: hooks.ErrInvalidRegistration, pointer: "/hooks", keyword: "minItems"},
		{name: "schema: observe with failurePolicy", reg: registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
			`{"events":["tool.after"],"mode":"observe","failurePolicy":"fail-open","content":{"default":"body"}}`)), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0"},
		{name: "duplicate backend id", reg: registration(ok, ok), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/1/id", keyword: "unique"},
		{name: "intercept of an event not advertised", reg: registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
			interceptSub(`"tool.before","tool.after"`, 500, "fail-open"))), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/events/1", keyword: "advertised"},
		{name: "plain http to a remote host", reg: registration(backendJSON("com.example.a", httpTransport("http://policy.example.com/ahp"),
			interceptSub(`"tool.before"`, 500, "fail-open"))), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/transport/url", keyword: "https"},
		{name: "managed scope not honoured", reg: registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
			`{"events":["tool.before"],"mode":"intercept","timeoutMs":100,"failurePolicy":"fail-closed","content":{"default":"body"},"scope":"managed","disableable":false}`)),
			kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/scope", keyword: "managedPolicy"},
		{name: "source required", reg: registration(ok), cfg: func(c *hooks.Config) { c.Source = "" }, kind: hooks.ErrInvalidConfig, pointer: "/Source", keyword: "required"},
		{name: "capabilities xor manifest", reg: registration(ok), cfg: func(c *hooks.Config) { m := gen.StaticCapabilityManifest{}; c.Manifest = &m }, kind: hooks.ErrInvalidConfig, pointer: "/Manifest", keyword: "oneOf"},
		{name: "observe grant with an effect", reg: registration(ok), cfg: func(c *hooks.Config) { c.Capabilities[gen.EventToolAfter] = hooks.Observe().Deny() }, kind: hooks.ErrInvalidConfig, pointer: "/tool.after", keyword: "grant"},
		{name: "empty operations", reg: registration(ok), cfg: func(c *hooks.Config) { c.Capabilities[gen.EventToolBefore] = hooks.Intercept().Deny().ModifyInput() }, kind: hooks.ErrInvalidConfig, pointer: "/tool.before", keyword: "grant"},
		{name: "effect outside the boundary", reg: registration(ok), cfg: func(c *hooks.Config) {
			c.Capabilities[gen.EventToolBefore] = hooks.Intercept().Deny().ModifyOutput(hooks.Replace)
		}, kind: hooks.ErrInvalidConfig, pointer: "/tool.before/modify", keyword: "propertyNames"},
		{name: "continue at tool.before", reg: registration(ok), cfg: func(c *hooks.Config) { c.Capabilities[gen.EventToolBefore] = hooks.Intercept().Deny().Continue(2) }, kind: hooks.ErrInvalidConfig, pointer: "/tool.before/flow/operations", keyword: "enum"},
		{name: "intercept an observe-only event", reg: registration(ok), cfg: func(c *hooks.Config) { c.Capabilities[gen.EventTurnEnd] = hooks.Intercept() }, kind: hooks.ErrInvalidConfig, pointer: "/turn.end", keyword: "mode"},
		{name: "transport for an unknown backend", reg: registration(ok), cfg: func(c *hooks.Config) {
			c.Transports = map[string]transport.Transport{"com.example.nope": transport.NewInProcess(nil, transport.InProcessOptions{})}
		}, kind: hooks.ErrInvalidConfig, pointer: "/Transports/com.example.nope", keyword: "backend"},
		{name: "tokenRef without a credential provider", reg: registration(`{"id":"com.example.a","transport":` + u + `,"authentication":{"type":"bearer","tokenRef":"vault:policy"},"subscriptions":[` + interceptSub(`"tool.before"`, 500, "fail-open") + `]}`),
			kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/authentication", keyword: "credentials"},
		{name: "observe of an event the host does not offer", reg: registration(backendJSON("com.example.a", u, observeSub(`"tool.after","session.end"`))),
			kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/events/1", keyword: "advertised"},
		{name: "wildcard of an unknown family", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.*","foo.*"`, 500, "fail-open"))),
			kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/events/1", keyword: "family"},
		{name: "credentials in the URL", reg: registration(backendJSON("com.example.a", httpTransport("http://user:s3cret@127.0.0.1:1/x"), interceptSub(`"tool.before"`, 500, "fail-open"))),
			kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/transport/url", keyword: "credentials"},
		{name: "transport the manifest does not list", reg: registration(backendJSON("com.example.a", backendCmd(t, "none", "persistent"), interceptSub(`"tool.before"`, 500, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) {
				m.Transports = []gen.StaticCapabilityManifestTransport{gen.StaticCapabilityManifestTransportHTTP}
				m.Gaps = slices.DeleteFunc(m.Gaps, func(g gen.Gap) bool { return g.Path == "transports" })
			}), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/transport", keyword: "transports"},
		{name: "maxTimeoutMs spelled 1000.0", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 5000, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MaxTimeoutMs = num("1000.0") }), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "maximum"},
		{name: "minTimeoutMs spelled 1e2", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 5, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MinTimeoutMs = num("1e2") }), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "minimum"},
		{name: "minTimeoutMs beyond int64", reg: registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 500, "fail-open"))),
			cfg: withManifest(func(m *gen.StaticCapabilityManifest) { m.Limits.MinTimeoutMs = num("99999999999999999999") }), kind: hooks.ErrInvalidRegistration, pointer: "/hooks/0/subscriptions/0/timeoutMs", keyword: "minimum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			h, err := hooks.New(c.reg, cfg)
			require.Nil(t, h)
			require.ErrorIs(t, err, c.kind)
			var ve *hooks.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, c.pointer, ve.Pointer, err.Error())
			if c.keyword != "" {
				require.Equal(t, c.keyword, ve.Keyword, err.Error())
			}
			require.NotContains(t, err.Error(), "s3cret")
		})
	}
}

// TestNewNoIO: construction starts no process (the command does not exist
// and yet New succeeds) and opens no connection.
func TestNewNoIO(t *testing.T) {
	reg := registration(backendJSON("com.example.a", `{"type":"stdio","command":"/nonexistent/ahp","lifecycle":"persistent"}`, interceptSub(`"tool.before"`, 100, "fail-open")))
	h, err := hooks.New(reg, baseConfig())
	require.NoError(t, err)
	require.NoError(t, h.Close())
}

// TestOverlappingSubscriptions: two subscriptions of one backend for the same
// event and mode are independent (base/composition.md, base/failure.md):
// both are delivered.
func TestOverlappingSubscriptions(t *testing.T) {
	rec := &recorder{}
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		interceptSub(`"tool.before"`, 1000, "fail-open"), interceptSub(`"tool.*"`, 1000, "fail-open"), observeSub(`"tool.before"`), observeSub(`"*"`)))
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.a": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	defer h.Close()
	_, err = h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	ic, oc := rec.counts()
	require.Equal(t, 2, ic)
	require.Equal(t, 2, oc)
}

func TestManifestShorthand(t *testing.T) {
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 100, "fail-open"))), baseConfig())
	require.NoError(t, err)
	defer h.Close()
	m := h.Manifest()
	require.Len(t, m.Events, 3)
	require.Equal(t, gen.StaticCapabilityManifestEventEvent("tool.before"), m.Events[0].Event)
	require.Equal(t, []gen.StaticCapabilityManifestEventMode{"intercept", "observe"}, m.Events[0].Modes)
	require.Equal(t, []gen.StaticCapabilityManifestEventMode{"observe"}, m.Events[1].Modes)
	require.Nil(t, m.Events[1].Capabilities)
	var paths []string
	for _, g := range m.Gaps {
		paths = append(paths, g.Path)
	}
	require.Len(t, m.Gaps, 32-3+6)
	for _, p := range []string{"session.start", "transports", "authentication", "toolPaths", "contentCategories", "limits", "managedPolicy"} {
		require.Contains(t, paths, p)
	}
	// Detached: changing the copy changes nothing.
	m.Events[0].Modes[0] = "observe"
	m.Gaps = nil
	require.Equal(t, gen.StaticCapabilityManifestEventMode("intercept"), h.Manifest().Events[0].Modes[0])
	// Canonically valid.
	data, err := json.Marshal(h.Manifest())
	require.NoError(t, err)
	_, err = gen.ParseCapabilitiesResponse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"draft","manifest":` + string(data) + `}}`))
	require.NoError(t, err)
}

func TestManifestFullKeptExactly(t *testing.T) {
	raw := `{"events":[{"event":"tool.before","modes":["intercept","observe"],"capabilities":{"effects":["deny"]}}],"gaps":[{"path":"model.reasoning","reason":"not exposed"}],
	 "transports":["http","stdio"],"authentication":["bearer"],"toolPaths":["native"],"contentCategories":["text"],"limits":{"minTimeoutMs":100,"maxTimeoutMs":30000},
	 "managedPolicy":{"scopes":["user","managed"],"disableable":false},"correlationIdentityFields":["id","source"]}`
	var m gen.StaticCapabilityManifest
	require.NoError(t, json.Unmarshal([]byte(raw), &m))
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		`{"events":["tool.before"],"mode":"intercept","timeoutMs":100,"failurePolicy":"fail-closed","content":{"default":"body"},"scope":"managed","disableable":false}`))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness", Manifest: &m})
	require.NoError(t, err)
	defer h.Close()
	got, _ := json.Marshal(h.Manifest())
	require.JSONEq(t, raw, string(got))

	// timeoutMs outside the manifest's limits.
	reg = registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 50, "fail-closed")))
	_, err = hooks.New(reg, hooks.Config{Source: "urn:test:harness", Manifest: &m})
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0/subscriptions/0/timeoutMs", ve.Pointer)
}

// TestGrantsImmutable: reusing a base never widens it.
func TestGrantsImmutable(t *testing.T) {
	base := hooks.Intercept().Deny()
	wide := base.Allow().ModifyInput(hooks.Replace)
	require.Equal(t, []gen.EffectFamily{"deny"}, base.Capabilities().Effects)
	require.Equal(t, []gen.EffectFamily{"deny", "allow", "modify"}, wide.Capabilities().Effects)
	require.Nil(t, base.Capabilities().Modify)
	require.True(t, wide.Capabilities().Modify.Input.Replace)
	require.False(t, wide.Capabilities().Modify.Input.Merge)
	require.True(t, hooks.Intercept().Intercepts())
	require.False(t, hooks.Observe().Intercepts())
}

func TestUndeclaredEventAndInvalidInput(t *testing.T) {
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 100, "fail-open"))), baseConfig())
	require.NoError(t, err)
	defer h.Close()
	_, err = h.TurnStart(context.Background(), hooks.TurnStartInput{})
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	in := toolInput()
	in.Input = []int{1, 2} // tool input must be an object
	res, err := h.ToolBefore(context.Background(), in)
	require.Nil(t, res)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/tool/input", ve.Pointer)
	in = toolInput()
	in.Input = json.RawMessage(`{"broken"`)
	_, err = h.ToolBefore(context.Background(), in)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	require.True(t, errors.Is(err, hooks.ErrInvalidInput) && !errors.Is(err, hooks.ErrClosed))
	require.True(t, slices.Contains([]error{hooks.ErrInvalidInput}, hooks.ErrInvalidInput))
}
