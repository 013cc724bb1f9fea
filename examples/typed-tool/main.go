// Command typed-tool is a harness that gates a typed tool call with AHP: a
// JSON registration, typed capability grants, the host's initial state, a
// real loopback HTTP backend built on package server, a borrowed
// *http.Client, and explicit decoding of the effective input into the
// host's own type after settlement.
//
//	go run ./examples/typed-tool
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

// ReadFileArgs is the host's own tool argument type.
type ReadFileArgs struct {
	Path  string `json:"path"`
	Lines int    `json:"lines,omitempty"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "typed-tool:", err)
		os.Exit(1)
	}
}

// policy is the backend: reads outside /workspace are redirected into it.
func policy(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
	var args ReadFileArgs
	if err := json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &args); err != nil {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("unreadable arguments")}}, nil
	}
	if strings.HasPrefix(args.Path, "/workspace/") {
		return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
	}
	merge := server.MergeInput(map[string]any{"path": "/workspace" + args.Path})
	return server.InterceptResult{Effects: []gen.Effect{merge, server.Allow()}}, nil
}

func run(ctx context.Context, out io.Writer) error {
	// A real loopback HTTP backend.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	backend := &server.Handler{Intercept: policy}
	if err := backend.Validate(); err != nil {
		return err
	}
	// NewHTTPServer sets read, write and idle timeouts: a backend served
	// without them can be held open by clients that never finish a request.
	srv := server.NewHTTPServer(ln.Addr().String(), backend)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Shutdown(context.Background())
		<-served
	}()

	registration := []byte(`{
	  "protocolVersion": "draft",
	  "hooks": [{
	    "id": "com.example.workspace-guard",
	    "transport": {"type": "http", "url": "http://` + ln.Addr().String() + `/ahp"},
	    "subscriptions": [{
	      "events": ["tool.before"], "mode": "intercept",
	      "timeoutMs": 2000, "failurePolicy": "fail-closed",
	      "content": {"default": "body"}
	    }]
	  }]
	}`)
	client := &http.Client{Timeout: 5 * time.Second} // borrowed: the harness never closes it
	defer client.CloseIdleConnections()
	h, err := hooks.New(registration, hooks.Config{
		Source: "urn:example:typed-tool",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventToolBefore: hooks.Intercept().Deny().Allow().ModifyInput(hooks.Replace, hooks.Merge),
		},
		HTTPClient: client,
	})
	if err != nil {
		return err
	}
	defer h.Close()

	res, err := h.ToolBefore(ctx, hooks.ToolBeforeInput{
		Name:   "read_file",
		Input:  ReadFileArgs{Path: "/notes.txt", Lines: 20},
		Origin: gen.ExecutionEventToolOriginNative,
		CallID: "call-1",
		Path:   "native",
	}, hooks.WithInitialState(hooks.InitialState(gen.PermissionNone)))
	if err != nil {
		return err
	}
	// Host validation and authorization still precede execution.
	var args ReadFileArgs
	if err := res.DecodeInput(&args); err != nil {
		return fmt.Errorf("effective input rejected by the host: %w", err)
	}
	fmt.Fprintf(out, "permission=%s path=%s lines=%d diagnostics=%d\n", res.Permission, args.Path, args.Lines, len(res.Diagnostics))
	if res.Permission != gen.PermissionAllow || args.Path != "/workspace/notes.txt" {
		return errors.New("unexpected settlement")
	}
	return nil
}
