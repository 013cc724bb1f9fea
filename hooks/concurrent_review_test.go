package hooks_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestConcurrentCallsChainModify: 64 callers on one Hooks, each call
// through a chain of two HTTP backends that merge into the tool input
// depending on the caller's own values (Go maps, and raw JSON with
// whitespace): every Result carries its own caller's input with exactly
// the merges its backends made (run under -race).
func TestConcurrentCallsChainModify(t *testing.T) {
	ra := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		var in map[string]any
		_ = json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &in)
		if int(in["i"].(float64))%2 == 0 {
			return []gen.Effect{server.MergeInput(map[string]any{"by": "a"})}
		}
		return nil
	}}
	rb := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		var in map[string]any
		_ = json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &in)
		if int(in["i"].(float64))%3 == 0 {
			return []gen.Effect{server.MergeInput(map[string]any{"b": "x"})}
		}
		return nil
	}}
	sa := httptest.NewServer(ra.handler())
	defer sa.Close()
	sb := httptest.NewServer(rb.handler())
	defer sb.Close()
	sub := interceptSub(`"tool.before"`, 10000, "fail-closed")
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport(sa.URL), sub), backendJSON("com.example.b", httpTransport(sb.URL), sub)), baseConfig())
	require.NoError(t, err)
	defer h.Close()
	ctx := ctxTimeout(t, 60e9)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				i := g*8 + k
				in := toolInput()
				in.CallID = fmt.Sprintf("call-%d", i)
				if i%4 == 1 {
					in.Input = json.RawMessage(fmt.Sprintf(` { "path" : "/p/%d" , "i" : %d } `, i, i))
				} else {
					in.Input = map[string]any{"path": fmt.Sprintf("/p/%d", i), "i": i}
				}
				res, err := h.ToolBefore(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				want := map[string]any{"path": fmt.Sprintf("/p/%d", i), "i": float64(i)}
				if i%2 == 0 {
					want["by"] = "a"
				}
				if i%3 == 0 {
					want["b"] = "x"
				}
				var got map[string]any
				if err := json.Unmarshal(res.Input, &got); err != nil {
					errs <- fmt.Errorf("%d: %s: %w", i, res.Input, err)
					return
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Errorf("%d: got %s want %v", i, res.Input, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestCloseDuringModifyingCalls: Close while 64 callers are in calls whose
// backend merges into the tool input: every call either settles with its
// own input and the merge, or fails with ErrClosed; nothing outlives
// Close (goleak in TestMain).
func TestCloseDuringModifyingCalls(t *testing.T) {
	ra := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{server.MergeInput(map[string]any{"by": "a"})}
	}}
	sa := httptest.NewServer(ra.handler())
	defer sa.Close()
	sub := interceptSub(`"tool.before"`, 10000, "fail-closed")
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport(sa.URL), sub)), baseConfig())
	require.NoError(t, err)
	ctx := ctxTimeout(t, 60e9)
	var wg sync.WaitGroup
	started := make(chan struct{}, 64)
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				in := toolInput()
				in.Input = map[string]any{"g": g, "k": k}
				res, err := h.ToolBefore(ctx, in)
				if k == 0 {
					started <- struct{}{}
				}
				if err != nil {
					if !errors.Is(err, hooks.ErrClosed) {
						errs <- err
					}
					return
				}
				if string(res.Input) != fmt.Sprintf(`{"g":%d,"k":%d,"by":"a"}`, g, k) {
					errs <- fmt.Errorf("got %s", res.Input)
					return
				}
			}
		}()
	}
	for range 64 {
		<-started
	}
	require.NoError(t, h.Close())
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
