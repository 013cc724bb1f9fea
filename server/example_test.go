package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// interceptRequest is a hooks/intercept request for a tool.before event whose
// tool input is input, advertising capabilities (a JSON object).
func interceptRequest(id, input, capabilities string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{` +
		`"protocolVersion":"draft","event":{"id":"` + id + `","source":"https://harness.example/runtime/42",` +
		`"type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"tool":{"name":"shell","input":` + input + `,"origin":"native"},` +
		`"call":{"id":"call-1"},"path":"native"},` +
		`"capabilities":` + capabilities + `}}`
}

// shellGuard denies shell commands that remove files recursively.
func shellGuard() *server.Handler {
	return &server.Handler{
		InterceptEvents: []gen.EventName{gen.EventToolBefore},
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			var in struct {
				Command string `json:"command"`
			}
			if err := json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &in); err != nil {
				return server.InterceptResult{}, err
			}
			if strings.Contains(in.Command, "rm -rf") {
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("recursive removal is not allowed")}}, nil
			}
			return server.InterceptResult{}, nil // no objection
		},
	}
}

// A Handler is an http.Handler for the HTTP binding: here a guard denies a
// destructive command and has no objection to a harmless one.
func Example() {
	guard := shellGuard()
	for _, cmd := range []string{"rm -rf /", "ls"} {
		body := interceptRequest("evt-1", `{"command":"`+cmd+`"}`, `{"effects":["deny"]}`)
		r := httptest.NewRequest(http.MethodPost, "/ahp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		guard.ServeHTTP(w, r)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	// Output:
	// 200 {"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"recursive removal is not allowed"}]}}
	// 200 {"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}
}

// ServeStdio serves the same Handler on the stdio binding: one message per
// line in, one compact response line out. Here the backend rewrites the tool
// input with MergeInput, which the request's capabilities grant.
func ExampleServeStdio() {
	h := &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{Effects: []gen.Effect{server.MergeInput(map[string]string{"cwd": "/sandbox"})}}, nil
		},
	}
	in := strings.NewReader(interceptRequest("evt-2", `{"command":"make"}`,
		`{"effects":["modify"],"modify":{"input":{"replace":false,"merge":true}}}`) + "\n")
	var out bytes.Buffer
	if err := server.ServeStdio(context.Background(), in, &out, h); err != nil {
		fmt.Println("serve:", err)
		return
	}
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":"evt-2","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"cwd":"/sandbox"}}]}}
}

// An answer is admitted against the capabilities the request advertised
// before it is sent. A deny to a request that grants only modify(input) is
// never sent: the harness gets the generic -32004 error, and Handler.Logger
// (nil here) would get the *AdmissionError.
func ExampleHandler_ServeHTTP_admission() {
	guard := shellGuard()
	body := interceptRequest("evt-3", `{"command":"rm -rf /"}`, `{"effects":["modify"],"modify":{"input":{"replace":true,"merge":false}}}`)
	r := httptest.NewRequest(http.MethodPost, "/ahp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	guard.ServeHTTP(w, r)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	// Output:
	// 200 {"jsonrpc":"2.0","id":"evt-3","error":{"code":-32004,"message":"Backend internal error"}}
}

// Notifications (hooks/observe) are never answered on the wire: an accepted
// one is 204 No Content over HTTP.
func ExampleHandler_ServeHTTP_observe() {
	var seen []string
	h := &server.Handler{
		Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
			seen = append(seen, n.Params.Event.ToolBefore.Tool.Name)
			return nil
		},
	}
	body := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{` +
		`"id":"evt-4","source":"https://harness.example/runtime/42","type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"tool":{"name":"shell","input":{"command":"ls"},"origin":"native"},"call":{"id":"call-4"},"path":"native"}}}`
	r := httptest.NewRequest(http.MethodPost, "/ahp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.Len(), seen)
	// Output:
	// 204 0 [shell]
}
