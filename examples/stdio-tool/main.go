// Command stdio-tool is a harness with an owned stdio backend process: the
// program re-executes itself with -backend to act as the backend (the same
// public server.Handler served with server.ServeStdio), gets a denial for a
// destructive shell command, closes the harness and proves that the child
// process was reaped.
//
//	go run ./examples/stdio-tool
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-backend" {
		os.Exit(backend())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stdio-tool:", err)
		os.Exit(1)
	}
}

// backend serves the shell policy on stdin/stdout. Diagnostics go to stderr,
// never to stdout, which carries only protocol frames.
func backend() int {
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		var args struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &args)
		pid := server.Message("reviewed by backend pid " + strconv.Itoa(os.Getpid()))
		if strings.Contains(args.Command, "rm -rf") {
			return server.InterceptResult{Effects: []gen.Effect{server.Deny("destructive commands are not allowed"), pid}}, nil
		}
		return server.InterceptResult{Effects: []gen.Effect{pid}}, nil
	}}
	fmt.Fprintln(os.Stderr, "stdio backend ready")
	if err := server.ServeStdio(context.Background(), os.Stdin, os.Stdout, h); err != nil {
		return 1
	}
	return 0
}

func run(ctx context.Context, out io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	transport, _ := json.Marshal(map[string]any{"type": "stdio", "command": exe, "args": []string{"-backend"}, "lifecycle": "persistent"})
	registration := []byte(`{"protocolVersion":"draft","hooks":[{
	  "id": "com.example.shell-guard", "transport": ` + string(transport) + `,
	  "subscriptions": [{"events": ["tool.*"], "mode": "intercept", "timeoutMs": 15000,
	                     "failurePolicy": "fail-closed", "content": {"default": "body"}}]}]}`)
	h, err := hooks.New(registration, hooks.Config{
		Source:       "urn:example:stdio-tool",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Message()},
		StdioStderr:  os.Stderr, // bounded; never parsed as protocol
	})
	if err != nil {
		return err
	}
	defer h.Close()
	res, err := h.ToolBefore(ctx, hooks.ToolBeforeInput{
		Name: "Bash", Kind: ptr("shell"), Input: map[string]string{"command": "rm -rf /"},
		Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native",
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "permission=%s reason=%q\n", res.Permission, res.DenyReason())
	if res.Permission != gen.PermissionDeny || len(res.Messages) != 1 {
		return errors.New("expected a denial with a message")
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(res.Messages[0], "reviewed by backend pid "))
	if err != nil {
		return err
	}
	if err := h.Close(); err != nil {
		return err
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("backend pid %d still exists after Close", pid)
	}
	fmt.Fprintf(out, "backend pid %d reaped\n", pid)
	return nil
}

func ptr[T any](v T) *T { return &v }
