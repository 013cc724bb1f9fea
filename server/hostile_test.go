package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// withInput is the tool.before intercept request with the given tool
// input text.
func withInput(t testing.TB, input string) []byte {
	base := string(interceptBase(t))
	const from = `"input":{"path":"README.md","content":"example"}`
	require.Contains(t, base, from)
	return []byte(strings.Replace(base, from, `"input":`+input, 1))
}

// TestRequestDuplicateMembers: a request that repeats a member name at any
// depth (tool input included: I-JSON) is an invalid request (-32600, the
// id echoed) on every binding, and never reaches the callback; so is a
// notification, which gets the null id an invalid envelope gets.
func TestRequestDuplicateMembers(t *testing.T) {
	var calls atomic.Int32
	h := &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			calls.Add(1)
			return server.InterceptResult{}, nil
		},
		Observe: func(context.Context, *gen.ObserveNotification) error { calls.Add(1); return nil },
	}
	base := string(interceptBase(t))
	observe := string(compact(t, readFixture(t, "http/observe-tool-before.valid.json")))
	const id = `"evt_http_001"`
	cases := []replyCase{
		{name: "event type", msg: []byte(strings.Replace(base, `"type":"tool.before"`, `"type":"tool.before","type":"tool.after"`, 1)),
			code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "capabilities", msg: []byte(strings.Replace(base, `"capabilities":{`, `"capabilities":{"effects":[],`, 1)),
			code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "tool input", msg: withInput(t, `{"path":"README.md","path":"/etc/passwd"}`), code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "escaped in tool input", msg: withInput(t, `{"path":"a","\u0070ath":"b"}`), code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "deep in tool input", msg: withInput(t, hostile.Deep(2000, `{"x":1,"x":2}`)), code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "end of a large tool input", msg: withInput(t, hostile.ObjectDup(100000)), code: jsonrpc.CodeInvalidRequest, id: id},
		{name: "notification", msg: []byte(strings.Replace(observe, `"type":"tool.before"`, `"type":"tool.before","type":"tool.before"`, 1)),
			code: jsonrpc.CodeInvalidRequest, id: "null"},
	}
	runReplyCases(t, h, cases)
	require.Zero(t, calls.Load())
}

// TestRequestLarge: a request whose tool input has a hundred thousand
// members, or is nested thousands deep, is validated (linearly) and
// handed to the callback intact on every binding.
func TestRequestLarge(t *testing.T) {
	var got atomic.Int64
	h := &server.Handler{
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			var in map[string]any
			if err := json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &in); err != nil {
				return server.InterceptResult{}, err
			}
			got.Add(int64(len(in)))
			return server.InterceptResult{}, nil
		},
	}
	runReplyCases(t, h, []replyCase{
		{name: "large tool input", msg: withInput(t, hostile.Object(100000)), id: `"evt_http_001"`},
		{name: "deep tool input", msg: withInput(t, hostile.Deep(2000, hostile.Object(10))), id: `"evt_http_001"`},
	})
	require.Equal(t, int64(2*(100000+1)), got.Load())
}
