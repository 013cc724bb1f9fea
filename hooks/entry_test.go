package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// TestEntryCheckPublicInputs: through the named method, Dispatch and Begin,
// host input is accepted or rejected as the canonical validation of the
// encoded event decides, with a ValidationError naming the JSON pointer
// and keyword of the failure.
func TestEntryCheckPublicInputs(t *testing.T) {
	h := noTransportHooksT(t)
	ctx := context.Background()
	base := func() hooks.ToolBeforeInput {
		return hooks.ToolBeforeInput{ID: "evt-bench", Name: "read_file", Input: json.RawMessage(`{"path":"/etc/hosts"}`), Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name    string
		mut     func(*hooks.ToolBeforeInput)
		pointer string // "" : accepted
		keyword string
	}{
		{"valid", func(*hooks.ToolBeforeInput) {}, "", ""},
		{"valid time", func(in *hooks.ToolBeforeInput) { in.Time = time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC) }, "", ""},
		{"valid kind", func(in *hooks.ToolBeforeInput) { in.Kind = str("file_read") }, "", ""},
		{"valid map input", func(in *hooks.ToolBeforeInput) { in.Input = map[string]any{"path": "/x"} }, "", ""},
		{"empty name", func(in *hooks.ToolBeforeInput) { in.Name = "" }, "/tool/name", "minLength"},
		{"empty call id", func(in *hooks.ToolBeforeInput) { in.CallID = "" }, "/call/id", "minLength"},
		{"empty path", func(in *hooks.ToolBeforeInput) { in.Path = "" }, "/path", "minLength"},
		{"unknown origin", func(in *hooks.ToolBeforeInput) { in.Origin = "elsewhere" }, "/tool/origin", "enum"},
		{"mcp origin without mcp", func(in *hooks.ToolBeforeInput) { in.Origin = gen.ExecutionEventToolOriginMCP }, "/tool", "required"},
		{"year 10000", func(in *hooks.ToolBeforeInput) { in.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "/time", "format"},
		{"input not an object", func(in *hooks.ToolBeforeInput) { in.Input = json.RawMessage(`[1]`) }, "/tool/input", "type"},
		{"input repeats a name", func(in *hooks.ToolBeforeInput) { in.Input = json.RawMessage(`{"a":1,"a":2}`) }, "/tool/input/a", "duplicateMember"},
		{"native repeats a name", func(in *hooks.ToolBeforeInput) { in.Native = json.RawMessage(`{"x":{"b":1,"b":2}}`) }, "/native/x/b", "duplicateMember"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.mut(&in)
			res, err := h.ToolBefore(ctx, in)
			if tc.pointer == "" {
				require.NoError(t, err)
				require.Equal(t, gen.PermissionNone, res.Permission)
				return
			}
			requireInputError(t, err, tc.pointer, tc.keyword)
		})
	}
	t.Run("Dispatch and Begin", func(t *testing.T) {
		var ev gen.Event
		require.NoError(t, ev.UnmarshalJSON([]byte(`{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`)))
		_, err := h.Dispatch(ctx, &ev)
		require.NoError(t, err)
		bad := ev
		tb := *ev.ToolBefore
		tb.Unknown = []gen.Member{{Name: "path", Value: json.RawMessage(`"again"`)}}
		bad.ToolBefore = &tb
		_, err = h.Dispatch(ctx, &bad)
		requireInputError(t, err, "/path", "duplicateMember")
		tb.Unknown, tb.Time = nil, "yesterday"
		_, err = h.Begin(ctx, &bad)
		requireInputError(t, err, "/time", "format")
	})
}

func requireInputError(t *testing.T, err error, pointer, keyword string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	var ve *hooks.ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	require.Equal(t, pointer, ve.Pointer, "%v", err)
	require.Equal(t, keyword, ve.Keyword, "%v", err)
}

func noTransportHooksT(t *testing.T) *hooks.Hooks {
	reg := registration(backendJSON("com.example.bench", httpTransport("http://127.0.0.1:1"), interceptSub(`"tool.before"`, 5000, "fail-closed")))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
		Transports:   map[string]transport.Transport{"com.example.bench": cannedTransport{[]byte(benchResponse)}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h
}
