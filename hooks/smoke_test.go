package hooks_test

import (
	"context"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	reg := []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.policy","transport":{"type":"http","url":"http://127.0.0.1:1/ahp"},
	 "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-closed","content":{"default":"body"}}]}]}`)
	srv := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("no")}}, nil
	}}
	h, err := hooks.New(reg, hooks.Config{
		Source:       "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
		Transports:   map[string]transport.Transport{"com.example.policy": transport.NewInProcess(srv, transport.InProcessOptions{})},
	})
	require.NoError(t, err)
	defer h.Close()
	res, err := h.ToolBefore(context.Background(), hooks.ToolBeforeInput{Name: "Bash", Input: map[string]any{"command": "ls"}, Origin: "native", CallID: "c1", Path: "native"})
	require.NoError(t, err)
	t.Logf("%+v", res)
	require.Equal(t, gen.PermissionDeny, res.Permission)
}
