package hooks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// noEffectTransport answers every exchange with the canonical no-effect
// answer to its request.
type noEffectTransport struct{}

func (noEffectTransport) Exchange(_ context.Context, m transport.Message) ([]byte, error) {
	return []byte(noEffectPrefix + m.ID.String() + noEffectSuffix), nil
}
func (noEffectTransport) Notify(context.Context, transport.Message) error { return nil }
func (noEffectTransport) Close() error                                    { return nil }

func noEffectHooks(t *testing.T) *Hooks {
	reg := []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.none","transport":{"type":"http","url":"http://127.0.0.1:1/x"},
		"subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":5000,"failurePolicy":"fail-closed","content":{"default":"body"}}]}]}`)
	h, err := New(reg, Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]Grant{gen.EventToolBefore: Intercept().Deny().Allow()},
		Transports:   map[string]transport.Transport{"com.example.none": noEffectTransport{}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestNoEffectResultShared: every delivery answered with the canonical
// no-effect answer admits the one shared noEffectResult, which nothing
// writes: concurrent named calls and Invocations (whose retained response
// is it, shown by Response and published by Accept) leave it as it was,
// and under -race any write to it among them is reported. What reaches the
// caller is its own: changing a Result's or Response's effects does not
// reach the shared value or another call.
func TestNoEffectResultShared(t *testing.T) {
	want := gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}
	h := noEffectHooks(t)
	in := ToolBeforeInput{Name: "read_file", Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
	var wg sync.WaitGroup
	results := make([]*Result, 8)
	responses := make([]*gen.InterceptResponseResult, 8)
	errs := make([]error, 16)
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			in := in
			in.ID = fmt.Sprintf("evt-named-%d", i)
			results[i], errs[i] = h.ToolBefore(t.Context(), in)
		}()
		go func() {
			defer wg.Done()
			ev, err := gen.ParseEvent([]byte(fmt.Sprintf(`{"id":"evt-inv-%d","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`, i)))
			if err != nil {
				errs[8+i] = err
				return
			}
			inv, err := h.Begin(t.Context(), ev)
			if err != nil {
				errs[8+i] = err
				return
			}
			if err := inv.Acquire(t.Context()); err != nil {
				inv.Cancel()
				errs[8+i] = err
				return
			}
			resp, ok := inv.Response()
			if !ok {
				inv.Cancel()
				errs[8+i] = fmt.Errorf("no retained response")
				return
			}
			responses[i] = resp
			resp.ProtocolVersion, resp.Effects = "changed", append(resp.Effects, gen.Effect{})
			_, errs[8+i] = inv.Accept(t.Context())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	for i, res := range results {
		require.Equal(t, gen.PermissionNone, res.Permission)
		require.Len(t, res.Accepted, 1)
		require.Empty(t, res.Accepted[0].Effects)
		res.Accepted[0].Effects = append(res.Accepted[0].Effects, gen.Effect{})
		require.Len(t, responses[i].Effects, 1, "a Response is the caller's copy")
	}
	require.Equal(t, want, noEffectResult, "the shared answer is unchanged")
	res, err := h.ToolBefore(t.Context(), in)
	require.NoError(t, err)
	require.Len(t, res.Accepted, 1)
	require.Empty(t, res.Accepted[0].Effects, "an earlier caller's change reaches no later call")
}

// TestCallSize: the state of a common call (no options, one interceptor)
// stays small: options, a request to begin from and a call's own
// advertisement live in callRare (allocated with the call only when it has
// them), diagnostics apart. The first delivery's context, embedded, is
// counted apart: its layout is timeouts.go's. Without it the call was 936
// bytes before callRare, 352 with it.
func TestCallSize(t *testing.T) {
	own := unsafe.Sizeof(call{}) - unsafe.Sizeof(deliveryContext{})
	require.LessOrEqual(t, own, uintptr(384), "the call's own state, without its first delivery context")
	// The whole call, its first delivery context included, in the 448-byte
	// size class (the next is 480).
	require.LessOrEqual(t, unsafe.Sizeof(call{}), uintptr(448), "the call with its first delivery context")
}
