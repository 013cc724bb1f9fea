// Command common-cases walks through the everyday outcomes of a gated tool
// call against in-process backends (server.Handler behind
// transport.NewInProcess): a rewrite then allow, a denial, an effective input
// of the wrong application shape, the host's own prior decision, per-call
// narrowing, and fail-open versus fail-closed reports. The host operation is
// an in-memory execution recorder, not a shell.
//
//	go run ./examples/common-cases
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// WriteArgs is the host's tool argument type.
type WriteArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// executions records what the host would have executed.
type executions []string

// gate runs the host's side of one call: settle, decode, decide, record.
func (x *executions) gate(out io.Writer, name string, res *hooks.Result, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var args WriteArgs
	decodeErr := res.DecodeInput(&args)
	switch {
	case res.Permission == gen.PermissionDeny:
		fmt.Fprintf(out, "%-22s denied (%q), not executed\n", name, res.DenyReason())
	case res.Permission == gen.PermissionAsk:
		fmt.Fprintf(out, "%-22s needs the user's approval, not executed yet\n", name)
	case decodeErr != nil:
		fmt.Fprintf(out, "%-22s effective input rejected by the host, not executed\n", name)
	default: // allow, or none (the host's ordinary policy allows writes here)
		*x = append(*x, args.Path)
		fmt.Fprintf(out, "%-22s executed write to %s (permission %s)\n", name, args.Path, res.Permission)
	}
	for _, d := range res.Diagnostics {
		fmt.Fprintf(out, "%-22s   diagnostic: code=%s backend=%s policy=%s synthetic_denial=%v\n", "", d.Code, d.BackendID, d.FailurePolicy, d.SyntheticDenial)
	}
	return nil
}

func backend(f func(args WriteArgs) ([]gen.Effect, error)) transport.Transport {
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		var args WriteArgs
		if err := json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &args); err != nil {
			return server.InterceptResult{}, err
		}
		effects, err := f(args)
		return server.InterceptResult{Effects: effects}, err
	}}
	return transport.NewInProcess(h, transport.InProcessOptions{})
}

// registration subscribes com.example.policy, served in-process through
// Config.Transports, so its entry names no transport (no made-up URL).
func registration(policy string) []byte {
	return []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.policy",
	  "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,
	    "failurePolicy":"` + policy + `","content":{"default":"body"}}]}]}`)
}

func harness(policy string, tr transport.Transport) (*hooks.Hooks, error) {
	return hooks.New(registration(policy), hooks.Config{
		Source: "urn:example:common-cases",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventToolBefore: hooks.Intercept().Deny().Allow().Ask().ModifyInput(hooks.Replace, hooks.Merge),
		},
		Transports: map[string]transport.Transport{"com.example.policy": tr},
	})
}

func call(ctx context.Context, h *hooks.Hooks, path string, opts ...hooks.CallOption) (*hooks.Result, error) {
	defer h.Close()
	return h.ToolBefore(ctx, hooks.ToolBeforeInput{
		Name: "write_file", Input: WriteArgs{Path: path, Text: "hello"},
		Origin: gen.ExecutionEventToolOriginNative, CallID: "call-" + path, Path: "native",
	}, opts...)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "common-cases:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) (executions, error) {
	var x executions
	steps := []struct {
		name   string
		policy string
		tr     func(args WriteArgs) ([]gen.Effect, error)
		path   string
		opts   []hooks.CallOption
	}{
		{"rewrite then allow", "fail-closed", func(a WriteArgs) ([]gen.Effect, error) {
			return []gen.Effect{server.MergeInput(map[string]string{"path": "/sandbox" + a.Path}), server.Allow()}, nil
		}, "/notes.txt", nil},
		{"deny", "fail-closed", func(WriteArgs) ([]gen.Effect, error) {
			return []gen.Effect{server.Deny("writes to /etc are not allowed")}, nil
		}, "/etc/passwd", nil},
		{"invalid app shape", "fail-closed", func(WriteArgs) ([]gen.Effect, error) {
			return []gen.Effect{server.MergeInput(map[string]any{"mode": 0o777})}, nil // not a WriteArgs member
		}, "/tmp/a", nil},
		{"host policy: ask", "fail-closed", func(WriteArgs) ([]gen.Effect, error) {
			return []gen.Effect{server.Allow()}, nil // allow cannot override the host's ask
		}, "/home/u/.ssh/config", []hooks.CallOption{hooks.WithInitialState(hooks.InitialState(gen.PermissionAsk))}},
		{"narrowed per call", "fail-open", func(WriteArgs) ([]gen.Effect, error) {
			return []gen.Effect{server.Allow()}, nil // not advertised for this call: the server refuses to send it
		}, "/tmp/b", []hooks.CallOption{hooks.WithCapabilities(hooks.Intercept().Deny())}},
		{"backend down, open", "fail-open", func(WriteArgs) ([]gen.Effect, error) {
			return nil, errors.New("database unavailable")
		}, "/tmp/c", nil},
		{"backend down, closed", "fail-closed", func(WriteArgs) ([]gen.Effect, error) {
			return nil, errors.New("database unavailable")
		}, "/tmp/d", nil},
	}
	for _, s := range steps {
		h, err := harness(s.policy, backend(s.tr))
		if err != nil {
			return nil, err
		}
		res, err := call(ctx, h, s.path, s.opts...)
		if err := x.gate(out, s.name, res, err); err != nil {
			return nil, err
		}
	}
	want := []string{"/sandbox/notes.txt", "/tmp/b", "/tmp/c"}
	if fmt.Sprint(x) != fmt.Sprint(want) {
		return x, fmt.Errorf("executed %v, want %v", x, want)
	}
	return x, nil
}
