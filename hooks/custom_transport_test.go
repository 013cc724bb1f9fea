package hooks_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestCustomTransportNeedsNoURL: a backend served by a Config.Transports
// transport may leave its transport out of the registration; nothing
// stands in for it afterwards, and the rest is still validated.
func TestCustomTransportNeedsNoURL(t *testing.T) {
	noTransport := func(extra string) []byte {
		return registration(`{"id":"com.example.inproc"` + extra + `,"subscriptions":[` + interceptSub(`"tool.before"`, 500, "fail-closed") + `]}`)
	}
	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("in-process says no")} }}
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.inproc": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}

	h, err := hooks.New(noTransport(""), cfg)
	require.NoError(t, err)
	defer h.Close()
	res, err := h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, "in-process says no", res.DenyReason())
	n, _ := rec.counts()
	require.Equal(t, 1, n)

	// Without a transport for it, the entry is what the schema says: a
	// backend without its required transport.
	_, err = hooks.New(noTransport(""), baseConfig())
	require.ErrorIs(t, err, hooks.ErrInvalidRegistration)
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0", ve.Pointer)
	require.Equal(t, `missing "transport"`, ve.Detail)

	// Everything else is still validated canonically.
	bad := registration(`{"id":"com.example.inproc","subscriptions":[{"events":["tool.before"],"mode":"intercept","failurePolicy":"fail-open","content":{"default":"body"}}]}`)
	_, err = hooks.New(bad, cfg)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0/subscriptions/0", ve.Pointer)
	require.Equal(t, `missing "timeoutMs"`, ve.Detail)

	// No endpoint, so no authentication to bind to one.
	_, err = hooks.New(noTransport(`,"authentication":{"type":"bearer","tokenEnv":"AHP_TOKEN"}`), cfg)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0/authentication", ve.Pointer)
}
