package hooks_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestInvocationReceiveHostile hands hostile raw responses to Receive: none
// is retained or published, none panics, and the valid one afterwards is
// published exactly once.
func TestInvocationReceiveHostile(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	inv, err := h.Begin(ctx, toolEvent(t, "1"))
	require.NoError(t, err)
	req, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "1", req.ID)
	result := `"result":{"protocolVersion":"` + gen.ProtocolVersion + `","effects":[{"type":"permission","decision":"deny","reason":"x"}]}`
	hostile := map[string]string{
		"number id":            `{"jsonrpc":"2.0","id":1,` + result + `}`,
		"null id":              `{"jsonrpc":"2.0","id":null,` + result + `}`,
		"float id":             `{"jsonrpc":"2.0","id":1.0,` + result + `}`,
		"duplicate id":         `{"jsonrpc":"2.0","id":"2","id":"1",` + result + `}`,
		"duplicate id reverse": `{"jsonrpc":"2.0","id":"1","id":"2",` + result + `}`,
		"duplicate result":     `{"jsonrpc":"2.0","id":"1",` + result + `,` + result + `}`,
		"deep":                 `{"jsonrpc":"2.0","id":"1","result":{"protocolVersion":"` + gen.ProtocolVersion + `","effects":[],"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`,
		"huge":                 `{"jsonrpc":"2.0","id":"1","result":{"protocolVersion":"` + gen.ProtocolVersion + `","effects":[{"type":"permission","decision":"deny","reason":"` + strings.Repeat("a", 8<<20) + `"}]}}`,
		"not json":             `{"jsonrpc":"2.0","id":"1",`,
		"request not response": `{"jsonrpc":"2.0","id":"1","method":"hooks/intercept","params":{}}`,
		"empty":                ``,
	}
	for name, raw := range hostile {
		err := inv.Receive([]byte(raw))
		require.Error(t, err, name)
		require.True(t, errors.Is(err, hooks.ErrUncorrelated) || errors.Is(err, hooks.ErrRejected), "%s: %v", name, err)
		_, ok := inv.Response()
		require.False(t, ok, "%s: nothing retained", name)
	}
	require.NoError(t, inv.Receive(response(t, "1", server.Allow())))
	require.ErrorIs(t, inv.Receive(response(t, "1", server.Deny("second"))), hooks.ErrDuplicate)
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionAllow, res.Permission)
	require.Len(t, res.Accepted, 1)
	require.Equal(t, 0, hb.requests(), "nothing was sent")
}

// TestInvocationConcurrentSteps races Cancel, Accept, Receive and Acquire
// from different goroutines: every outcome is consistent, Accept's answers
// agree, and nothing outlives the invocation (goleak in TestMain).
func TestInvocationConcurrentSteps(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	for i := 0; i < 20; i++ {
		id := "evt-race-" + string(rune('a'+i))
		hb.script(id, true, server.Deny("backend"))
		inv, err := h.Begin(ctx, toolEvent(t, id))
		require.NoError(t, err)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var res1, res2 *hooks.Result
		var err1, err2 error
		wg.Add(5)
		go func() { defer wg.Done(); <-start; inv.Cancel() }()
		go func() { defer wg.Done(); <-start; res1, err1 = inv.Accept(ctx) }()
		go func() { defer wg.Done(); <-start; res2, err2 = inv.Accept(ctx) }()
		go func() { defer wg.Done(); <-start; _ = inv.Receive(response(t, id, server.Allow())) }()
		go func() { defer wg.Done(); <-start; _ = inv.Acquire(ctx) }()
		close(start)
		wg.Wait()
		require.Same(t, res1, res2, "Accept is idempotent")
		require.Equal(t, err1, err2)
		if err1 != nil {
			require.ErrorIs(t, err1, hooks.ErrCancelled)
			require.True(t, res1.Interrupted)
			require.Equal(t, gen.PermissionDeny, res1.Permission)
			// Cancel sets its cause at once (so that it cuts an Acquire in
			// flight short) and takes the step lock after: an Accept holding
			// the lock may publish the response just before it sees the
			// cause. That response is then listed, and the Result is still
			// the interrupted one (deny); a response Cancel finds retained is
			// never published.
			require.LessOrEqual(t, len(res1.Accepted), 1, "at most the one response, published before the cancel")
		} else {
			require.Len(t, res1.Accepted, 1, "one response published, once")
		}
		inv.Cancel() // after the end: nothing
		again, aerr := inv.Accept(ctx)
		require.Same(t, res1, again)
		require.Equal(t, err1, aerr)
	}
}

// TestInvocationCloseDuringAcquire: Close interrupts an Acquire in flight,
// which returns ErrClosed; Accept then reports the interruption.
func TestInvocationCloseDuringAcquire(t *testing.T) {
	hb := newHeldBackend(t)
	h, err := hooks.New(registration(backendJSON("com.example.b", httpTransport(hb.srv.URL), interceptSub(`"tool.before"`, 10000, "fail-open"))), baseConfig())
	require.NoError(t, err)
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-cda", false, server.Allow())
	inv, err := h.Begin(ctx, toolEvent(t, "evt-cda"))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- inv.Acquire(ctx) }()
	hb.wait("evt-cda")
	require.NoError(t, h.Close())
	require.ErrorIs(t, <-done, hooks.ErrClosed)
	res, err := inv.Accept(ctx)
	require.ErrorIs(t, err, hooks.ErrClosed)
	require.True(t, res.Interrupted)
	require.Empty(t, res.Accepted)
}

// TestInvocationRejectThenDuplicate: a response the host rejected is the
// first valid response of the request; a further one (a duplicate reply)
// is discarded with ErrDuplicate and never published over the rejection.
func TestInvocationRejectThenDuplicate(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	inv, err := h.Begin(ctx, toolEvent(t, "evt-rd"))
	require.NoError(t, err)
	require.NoError(t, inv.Receive(response(t, "evt-rd", server.Allow())))
	require.NoError(t, inv.Reject())
	require.ErrorIs(t, inv.Receive(response(t, "evt-rd", server.Allow())), hooks.ErrDuplicate)
	_, ok := inv.Response()
	require.False(t, ok, "nothing retained after the rejection")
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Empty(t, res.Accepted, "the rejected delivery publishes nothing")
	require.Equal(t, gen.PermissionDeny, res.Permission, "fail-closed charges the rejection")
}
