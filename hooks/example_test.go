package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// exampleRegistration subscribes one backend, com.example.policy, to
// tool.before interception. The examples serve it in-process
// (Config.Transports), so its entry names no transport.
func exampleRegistration(failurePolicy string) []byte {
	return []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.policy",
	  "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,
	    "failurePolicy":"` + failurePolicy + `","content":{"default":"body"}}]}]}`)
}

// exampleHooks builds a Hooks whose backend is the in-process server.Handler
// running intercept.
func exampleHooks(failurePolicy string, intercept func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error)) (*hooks.Hooks, error) {
	backend := &server.Handler{Intercept: intercept}
	return hooks.New(exampleRegistration(failurePolicy), hooks.Config{
		Source: "urn:example:harness",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventToolBefore: hooks.Intercept().Deny().Allow().Ask().ModifyInput(hooks.Replace, hooks.Merge),
		},
		Transports: map[string]transport.Transport{
			"com.example.policy": transport.NewInProcess(backend, transport.InProcessOptions{}),
		},
	})
}

// writeArgs is the host's own type for the arguments of its write_file tool.
type writeArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

func writeCall(path string) hooks.ToolBeforeInput {
	return hooks.ToolBeforeInput{
		Name:   "write_file",
		Input:  writeArgs{Path: path, Text: "hello"},
		Origin: gen.ExecutionEventToolOriginNative,
		CallID: "call-1",
		Path:   "native",
	}
}

// A host builds one Hooks from its registration and what it can enforce, asks
// it at each tool call, and acts on the settled Result. Here the backend
// rewrites the path into a sandbox and allows the call.
func Example() {
	h, err := exampleHooks("fail-closed", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		var args writeArgs
		if err := json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &args); err != nil {
			return server.InterceptResult{}, err
		}
		rewrite := server.MergeInput(map[string]string{"path": "/sandbox" + args.Path})
		return server.InterceptResult{Effects: []gen.Effect{rewrite, server.Allow()}}, nil
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	res, err := h.ToolBefore(context.Background(), writeCall("/notes.txt"))
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	var args writeArgs
	if err := res.DecodeInput(&args); err != nil {
		fmt.Println("not executed:", err)
		return
	}
	fmt.Println("permission:", res.Permission)
	fmt.Println("write to:", args.Path)
	fmt.Println("accepted from:", res.Accepted[0].BackendID)
	// Output:
	// permission: allow
	// write to: /sandbox/notes.txt
	// accepted from: com.example.policy
}

// A denial is a Result, not an error: the call succeeds and the host does not
// run the operation.
func ExampleResult_DenyReason() {
	h, err := exampleHooks("fail-closed", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("writes to /etc are not allowed")}}, nil
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	res, err := h.ToolBefore(context.Background(), writeCall("/etc/passwd"))
	fmt.Println("error:", err)
	fmt.Println("permission:", res.Permission)
	fmt.Println("reason:", res.DenyReason())
	// Output:
	// error: <nil>
	// permission: deny
	// reason: writes to /etc are not allowed
}

// A failing backend under a fail-closed subscription denies with the generic
// SyntheticDenialReason; the Diagnostic names the backend and the failure
// class, never the backend's error text.
func ExampleResult_DenyReason_failClosed() {
	h, err := exampleHooks("fail-closed", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, errors.New("policy database unavailable")
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	res, err := h.ToolBefore(context.Background(), writeCall("/tmp/a"))
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println("permission:", res.Permission, "synthetic:", res.SyntheticDenial)
	fmt.Println("reason:", res.DenyReason())
	d := res.Diagnostics[0]
	fmt.Println("diagnostic:", d.BackendID, d.Code, d.FailurePolicy)
	// Output:
	// permission: deny synthetic: true
	// reason: Required policy backend unavailable.
	// diagnostic: com.example.policy remote_rpc fail-closed
}

// DecodeInput is the host's own check of the effective input: a member its
// type does not declare makes the input unusable, and the operation must not
// run, although the backend's effects were accepted.
func ExampleResult_DecodeInput() {
	h, err := exampleHooks("fail-closed", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		rewrite := server.MergeInput(map[string]any{"mode": 0o777}) // not a writeArgs member
		return server.InterceptResult{Effects: []gen.Effect{rewrite}}, nil
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	res, err := h.ToolBefore(context.Background(), writeCall("/tmp/a"))
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println("effective input:", string(res.Input))
	var args writeArgs
	err = res.DecodeInput(&args)
	fmt.Println("decodes:", err == nil)
	// Output:
	// effective input: {"path":"/tmp/a","text":"hello","mode":511}
	// decodes: false
}

// WithCapabilities narrows what one call advertises: the first call offers
// the backend the configured grant, the second only deny. A grant wider than
// the configured one (here the flow stop) is refused before any delivery.
func ExampleWithCapabilities() {
	h, err := exampleHooks("fail-open", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		caps, err := gen.EncodeCapabilities(&req.Params.Capabilities)
		fmt.Println("offered:", string(caps))
		return server.InterceptResult{}, err
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	ctx := context.Background()
	if _, err := h.ToolBefore(ctx, writeCall("/tmp/b")); err != nil {
		fmt.Println("call:", err)
	}
	if _, err := h.ToolBefore(ctx, writeCall("/tmp/b"), hooks.WithCapabilities(hooks.Intercept().Deny())); err != nil {
		fmt.Println("call:", err)
	}
	_, err = h.ToolBefore(ctx, writeCall("/tmp/b"), hooks.WithCapabilities(hooks.Intercept().Deny().Stop()))
	fmt.Println("widening refused:", errors.Is(err, hooks.ErrWidening), errors.Is(err, hooks.ErrInvalidInput))
	// Output:
	// offered: {"effects":["deny","allow","ask","modify"],"modify":{"input":{"replace":true,"merge":true}}}
	// offered: {"effects":["deny"]}
	// widening refused: true true
}

// The host's own prior decision is part of the request state; a backend's
// allow cannot lift the host's ask.
func ExampleWithInitialState() {
	h, err := exampleHooks("fail-closed", func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer h.Close()

	res, err := h.ToolBefore(context.Background(), writeCall("/home/u/.ssh/config"),
		hooks.WithInitialState(hooks.InitialState(gen.PermissionAsk)))
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println("permission:", res.Permission)
	// Output:
	// permission: ask
}

// New rejects a bad registration before any I/O, naming the JSON pointer of
// the offending member.
func ExampleNew_invalidRegistration() {
	reg := strings.Replace(string(exampleRegistration("fail-closed")), `"timeoutMs":1000,`, ``, 1)
	_, err := hooks.New([]byte(reg), hooks.Config{
		Source:       "urn:example:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny()},
		Transports: map[string]transport.Transport{
			"com.example.policy": transport.NewInProcess(&server.Handler{}, transport.InProcessOptions{}),
		},
	})
	var ve *hooks.ValidationError
	if errors.As(err, &ve) {
		fmt.Println("invalid registration:", errors.Is(err, hooks.ErrInvalidRegistration))
		fmt.Println("at:", ve.Pointer, ve.Keyword, ve.Detail)
	}
	fmt.Println(err)
	// Output:
	// invalid registration: true
	// at: /hooks/0/subscriptions/0 required missing "timeoutMs"
	// hooks: invalid registration: registration "/hooks/0/subscriptions/0": required: missing "timeoutMs"
}
