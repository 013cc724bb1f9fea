package hooks_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestDeliverRawEvent: Deliver runs a complete event document as given
// (its id and source kept) through interception, settlement and
// observation, and rejects an invalid one before any delivery.
func TestDeliverRawEvent(t *testing.T) {
	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }}
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 1000, "fail-open"), observeSub(`"tool.before"`)))
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.a": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	defer h.Close()

	ev := []byte(`{"id":"evt_raw","source":"urn:example:other","type":"tool.before","time":"2026-08-24T08:51:14Z",
		"tool":{"name":"Bash","input":{"command":"ls"},"origin":"native"},"call":{"id":"call_1"},"path":"example"}`)
	res, err := h.Deliver(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, "no", res.DenyReason())
	ic, oc := rec.counts()
	require.Equal(t, 1, ic)
	require.Equal(t, 1, oc)
	require.Equal(t, "evt_raw", rec.intercept[0].Params.Event.ToolBefore.ID)
	require.Equal(t, "urn:example:other", rec.intercept[0].Params.Event.ToolBefore.Source)

	_, err = h.Deliver(context.Background(), []byte(`{"type":"tool.before"}`))
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.True(t, errors.Is(err, hooks.ErrInvalidInput))
	require.Equal(t, "event", ve.Doc)
	ic, _ = rec.counts()
	require.Equal(t, 1, ic, "an invalid event is never delivered")
}
