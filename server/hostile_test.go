package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
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

// validationAttrs returns the pointer and keyword attributes of the logged
// validation failures, in order.
func validationAttrs(l *logRecorder) [][2]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][2]string
	for _, r := range l.records {
		if r.Message != "ahp server: request failed validation" {
			continue
		}
		var pk [2]string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "pointer":
				pk[0] = a.Value.String()
			case "keyword":
				pk[1] = a.Value.String()
			}
			return true
		})
		out = append(out, pk)
	}
	return out
}

// TestRequestInvalidLarge: an invalid request of about 4 MB (a tool input
// of 250k members and a tool kind of the wrong type) is -32602 on every
// binding, decided by the linear validator alone: the log names the
// keyword "schema" without a pointer, which the exact validator (v6, whose
// time on such a request is a quarter of a second that nothing interrupts)
// would have located. The same violation in a small request is located
// exactly.
func TestRequestInvalidLarge(t *testing.T) {
	var calls atomic.Int32
	logs := &logRecorder{}
	h := &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			calls.Add(1)
			return server.InterceptResult{}, nil
		},
		Logger: slog.New(logs),
	}
	badKind := func(msg []byte) []byte {
		const from = `"kind":"file_write"`
		require.Contains(t, string(msg), from)
		return []byte(strings.Replace(string(msg), from, `"kind":7`, 1))
	}
	large := badKind(withInput(t, hostile.Object(250000)))
	require.Greater(t, len(large), 3<<20)
	require.Less(t, len(large), server.DefaultMaxBodyBytes)
	small := badKind(interceptBase(t))
	const id = `"evt_http_001"`
	runReplyCases(t, h, []replyCase{{name: "large", msg: large, code: jsonrpc.CodeInvalidParams, id: id}})
	got := validationAttrs(logs)
	require.Len(t, got, len(bindings))
	for _, pk := range got {
		require.Equal(t, [2]string{"", validate.KeywordSchema}, pk)
	}
	runReplyCases(t, h, []replyCase{{name: "small", msg: small, code: jsonrpc.CodeInvalidParams, id: id}})
	got = validationAttrs(logs)[len(bindings):]
	require.Len(t, got, len(bindings))
	for _, pk := range got {
		require.Equal(t, [2]string{"/params/event/tool/kind", "type"}, pk)
	}
	require.Zero(t, calls.Load())
}

// endedCtx is a context that has ended but whose Done channel never
// closes: a request's validation that observes its context sees that it
// ended by asking (Err), the way it looks while it works.
type endedCtx struct{ context.Context }

func (endedCtx) Err() error { return context.DeadlineExceeded }

// TestRequestValidationObservesContext: the validation of a request, valid
// or not, large or small, observes the request's context: once it has
// ended the request is -32003 backend_unavailable, as for a callback
// interrupted by it, and the callback is not called.
func TestRequestValidationObservesContext(t *testing.T) {
	var calls atomic.Int32
	h := &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			calls.Add(1)
			return server.InterceptResult{}, nil
		},
	}
	for _, msg := range [][]byte{interceptBase(t), withInput(t, hostile.Object(250000))} {
		req := httptest.NewRequestWithContext(endedCtx{t.Context()}, http.MethodPost, "/", bytes.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		r := decodeReply(t, rec.Body.Bytes())
		require.Equal(t, jsonrpc.CodeBackendUnavailable, r.code(), "reply: %s", rec.Body.Bytes())
	}
	require.Zero(t, calls.Load())
}
