// Command lifecycle shows who owns what over a harness's lifetime:
// concurrent callers sharing one Hooks and one persistent stdio backend
// process, a call interrupted by its own deadline (an error wrapping
// context.DeadlineExceeded and a Result that never authorizes execution),
// idempotent Close from several goroutines, and proof that the owned child
// process was reaped.
//
//	go run ./examples/lifecycle
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
	"sync"
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
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lifecycle:", err)
		os.Exit(1)
	}
}

// backend answers quickly, except for the tool "slow", which it ponders for
// longer than any caller is willing to wait.
func backend() int {
	h := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		if req.Params.Event.ToolBefore.Tool.Name == "slow" {
			select {
			case <-time.After(3 * time.Second):
			case <-ctx.Done():
			}
		}
		return server.InterceptResult{Effects: []gen.Effect{server.Message("pid " + strconv.Itoa(os.Getpid()))}}, nil
	}}
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
	tr, _ := json.Marshal(map[string]any{"type": "stdio", "command": exe, "args": []string{"-backend"}, "lifecycle": "persistent"})
	h, err := hooks.New([]byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.audit","transport":`+string(tr)+`,
	  "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":10000,"failurePolicy":"fail-closed","content":{"default":"metadata"}}]}]}`),
		hooks.Config{Source: "urn:example:lifecycle", Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Message()}})
	if err != nil {
		return err
	}
	defer h.Close()
	input := func(name string, i int) hooks.ToolBeforeInput {
		return hooks.ToolBeforeInput{Name: name, Input: map[string]int{"n": i}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-" + strconv.Itoa(i), Path: "native"}
	}

	// 1. Concurrent callers: the host owns its goroutines; the Hooks is shared.
	var wg sync.WaitGroup
	pids := make([]string, 16)
	errs := make([]error, 16)
	for i := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			res, err := h.ToolBefore(cctx, input("read", i))
			if err == nil && len(res.Messages) == 1 {
				pids[i] = res.Messages[0]
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, p := range pids[1:] {
		if p != pids[0] {
			return fmt.Errorf("expected one persistent backend, saw %q and %q", pids[0], p)
		}
	}
	fmt.Fprintf(out, "16 concurrent calls settled by one backend process (%s)\n", pids[0])

	// 2. Interruption: the caller's deadline bounds the whole call.
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	res, err := h.ToolBefore(dctx, input("slow", 99))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || !res.Interrupted || res.Permission != gen.PermissionDeny {
		return fmt.Errorf("expected an interrupted call, got %v", err)
	}
	fmt.Fprintf(out, "interrupted call: err=%q permission=%s\n", err, res.Permission)

	// 3. Idempotent, concurrent Close; calls after Close fail with ErrClosed.
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = h.Close() }()
	}
	wg.Wait()
	if _, err := h.ToolBefore(ctx, input("read", 100)); !errors.Is(err, hooks.ErrClosed) {
		return fmt.Errorf("call after Close: %v", err)
	}

	// 4. The owned child is gone.
	pid, err := strconv.Atoi(strings.TrimPrefix(pids[0], "pid "))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("backend pid %d still exists after Close", pid)
	}
	fmt.Fprintf(out, "closed; backend pid %d reaped\n", pid)
	return nil
}
