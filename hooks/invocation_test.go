package hooks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

// toolEvent is a canonical tool.before event with the given id.
func toolEvent(t *testing.T, id string) *gen.Event {
	t.Helper()
	ev, err := gen.ParseEvent([]byte(`{"id":"` + id + `","source":"urn:test:harness","type":"tool.before","time":"2026-01-15T10:00:00Z",` +
		`"session":{"id":"sess-1"},"tool":{"name":"edit_task","input":{"task":1,"path":"a"},"origin":"native"},"call":{"id":"call-` + id + `"},"path":"native"}`))
	require.NoError(t, err)
	return ev
}

// heldBackend is a loopback HTTP backend (server.Handler) whose answers
// are scripted per request id and held until released; every request body
// it receives is recorded before it waits.
type heldBackend struct {
	srv *httptest.Server

	mu       sync.Mutex
	bodies   [][]byte
	arrived  map[string]chan struct{} // closed when the request with this id arrived
	release  map[string]chan struct{} // closed to let its answer go
	effects  map[string][]gen.Effect
	observed []*gen.ObserveNotification
}

func newHeldBackend(t *testing.T) *heldBackend {
	hb := &heldBackend{arrived: map[string]chan struct{}{}, release: map[string]chan struct{}{}, effects: map[string][]gen.Effect{}}
	h := &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			id, _ := req.ID.AsString()
			hb.mu.Lock()
			arrived, release, effects := hb.chans(id)
			hb.mu.Unlock()
			select {
			case <-arrived:
			default:
				close(arrived)
			}
			select {
			case <-release:
			case <-ctx.Done():
				return server.InterceptResult{}, ctx.Err()
			}
			return server.InterceptResult{Effects: effects}, nil
		},
		Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
			hb.mu.Lock()
			hb.observed = append(hb.observed, n)
			hb.mu.Unlock()
			return nil
		},
	}
	hb.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hb.mu.Lock()
		hb.bodies = append(hb.bodies, body)
		hb.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hb.srv.Close)
	t.Cleanup(hb.releaseAll) // before the server closes
	return hb
}

// chans returns the channels and effects of id. hb.mu is held.
func (hb *heldBackend) chans(id string) (arrived, release chan struct{}, effects []gen.Effect) {
	if hb.arrived[id] == nil {
		hb.arrived[id], hb.release[id] = make(chan struct{}), make(chan struct{})
	}
	return hb.arrived[id], hb.release[id], hb.effects[id]
}

// script sets the answer of id; free releases it at once.
func (hb *heldBackend) script(id string, free bool, effects ...gen.Effect) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	_, release, _ := hb.chans(id)
	hb.effects[id] = effects
	if free {
		select {
		case <-release:
		default:
			close(release)
		}
	}
}

func (hb *heldBackend) wait(id string) {
	hb.mu.Lock()
	arrived, _, _ := hb.chans(id)
	hb.mu.Unlock()
	<-arrived
}

func (hb *heldBackend) free(id string) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	_, release, _ := hb.chans(id)
	select {
	case <-release:
	default:
		close(release)
	}
}

func (hb *heldBackend) releaseAll() {
	hb.mu.Lock()
	ids := make([]string, 0, len(hb.release))
	for id := range hb.release {
		ids = append(ids, id)
	}
	hb.mu.Unlock()
	for _, id := range ids {
		hb.free(id)
	}
}

func (hb *heldBackend) requests() int {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return len(hb.bodies)
}

// newInvHooks builds a Hooks with one intercept subscription (and the
// given extra subscriptions) on hb.
func newInvHooks(t *testing.T, hb *heldBackend, policy string, extra ...string) *hooks.Hooks {
	t.Helper()
	subs := append([]string{interceptSub(`"tool.before"`, 10000, policy)}, extra...)
	h, err := hooks.New(registration(backendJSON("com.example.b", httpTransport(hb.srv.URL), subs...)), baseConfig())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	return h
}

func replaceTask(t *testing.T, task int) gen.Effect {
	t.Helper()
	return server.ReplaceInput(map[string]any{"task": task})
}

// TestDispatchTypedEvent checks that the typed low-level dispatch settles
// exactly as Deliver (and so the named methods) do, and refuses an event
// without a type.
func TestDispatchTypedEvent(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ev := toolEvent(t, "evt-d1")
	hb.script("evt-d1", true, replaceTask(t, 7), server.Allow())
	ctx := ctxTimeout(t, 30e9)
	res, err := h.Dispatch(ctx, ev)
	require.NoError(t, err)
	raw, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	viaDeliver, err := h.Deliver(ctx, raw)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":7}`, string(res.Input))
	require.Equal(t, viaDeliver.Input, res.Input)
	require.Equal(t, viaDeliver.Permission, res.Permission)
	require.Equal(t, gen.PermissionAllow, res.Permission)
	require.Len(t, res.Accepted, 1)

	_, err = h.Dispatch(ctx, &gen.Event{})
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	_, err = h.Dispatch(ctx, nil)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
}

// TestInvocationAcquireAccept: nothing is published before Accept; the
// request is the one a named call sends; Accept settles as Dispatch does.
func TestInvocationAcquireAccept(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-a1", true, replaceTask(t, 9), server.Message("edited"))

	inv, err := h.Begin(ctx, toolEvent(t, "evt-a1"))
	require.NoError(t, err)
	req, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "evt-a1", req.ID)
	require.Equal(t, "com.example.b", req.BackendID)
	_, err = gen.ParseInterceptRequest(req.Body)
	require.NoError(t, err, "the pending request is canonical")
	_, ok = inv.Response()
	require.False(t, ok, "nothing retained before acquisition")

	require.NoError(t, inv.Acquire(ctx))
	retained, ok := inv.Response()
	require.True(t, ok)
	require.Len(t, retained.Effects, 2)
	require.Equal(t, 1, hb.requests())
	require.Equal(t, req.Body, hb.bodies[0], "the request sent is the pending request")

	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":9}`, string(res.Input))
	require.Equal(t, []string{"edited"}, res.Messages)
	again, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Same(t, res, again, "a second Accept returns the same outcome")
	require.ErrorIs(t, inv.Acquire(ctx), hooks.ErrFinished)
	_, ok = inv.Request()
	require.False(t, ok)
}

// response renders a canonical intercept response for id.
func response(t *testing.T, id string, effects ...gen.Effect) []byte {
	t.Helper()
	if effects == nil {
		effects = []gen.Effect{}
	}
	b, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(gen.JSONRPCIDFromString(id)), Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: effects}})
	require.NoError(t, err)
	return b
}

// TestInvocationReceive drives the host-transport path: responses the host
// obtained itself, with the retention rules.
func TestInvocationReceive(t *testing.T) {
	deny := server.Deny("first")
	cases := []struct {
		name    string
		policy  string
		steps   func(t *testing.T, inv *hooks.Invocation, id string)
		wantErr error // of Accept
		check   func(t *testing.T, res *hooks.Result)
	}{
		{
			name: "first valid response retained, duplicate with other effects discarded", policy: "fail-open",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				require.NoError(t, inv.Receive(response(t, id, deny)))
				require.ErrorIs(t, inv.Receive(response(t, id, server.Allow())), hooks.ErrDuplicate)
				require.ErrorIs(t, inv.Receive(response(t, id, deny)), hooks.ErrDuplicate)
			},
			check: func(t *testing.T, res *hooks.Result) {
				require.Equal(t, gen.PermissionDeny, res.Permission)
				require.Len(t, res.Accepted, 1, "published once")
				require.Equal(t, "first", res.DenyReason())
			},
		},
		{
			name: "uncorrelated response leaves the request pending", policy: "fail-open",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				require.ErrorIs(t, inv.Receive(response(t, "other-request", deny)), hooks.ErrUncorrelated)
				_, ok := inv.Response()
				require.False(t, ok)
				require.NoError(t, inv.Receive(response(t, id, server.Allow())))
			},
			check: func(t *testing.T, res *hooks.Result) {
				require.Equal(t, gen.PermissionAllow, res.Permission)
				require.Empty(t, res.Diagnostics)
			},
		},
		{
			name: "invalid response is a failed attempt; a later valid one is retained", policy: "fail-closed",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				err := inv.Receive([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"protocolVersion":"draft","effects":[{"type":"no-such-effect"}]}}`))
				require.ErrorIs(t, err, hooks.ErrRejected)
				var ae *hooks.AttemptError
				require.ErrorAs(t, err, &ae)
				require.Equal(t, "schema", ae.Reason)
				require.NoError(t, inv.Receive(response(t, id, server.Allow())))
			},
			check: func(t *testing.T, res *hooks.Result) {
				require.Equal(t, gen.PermissionAllow, res.Permission)
				require.False(t, res.SyntheticDenial)
			},
		},
		{
			name: "only invalid responses: the failure policy applies at acceptance", policy: "fail-closed",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				require.ErrorIs(t, inv.Receive([]byte(`not json`)), hooks.ErrRejected)
			},
			check: func(t *testing.T, res *hooks.Result) {
				require.True(t, res.SyntheticDenial)
				require.Len(t, res.Diagnostics, 1)
				require.Equal(t, "malformed_json", res.Diagnostics[0].Reason)
			},
		},
		{
			name: "host rejection of the retained response, fail-open: nothing published", policy: "fail-open",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				require.NoError(t, inv.Receive(response(t, id, replaceTask(t, 0))))
				require.NoError(t, inv.Reject())
				require.ErrorIs(t, inv.Reject(), hooks.ErrNoPending)
			},
			check: func(t *testing.T, res *hooks.Result) {
				require.JSONEq(t, `{"task":1,"path":"a"}`, string(res.Input))
				require.Equal(t, gen.PermissionNone, res.Permission)
				require.Empty(t, res.Accepted)
				require.Equal(t, "host_rejected", res.Diagnostics[0].Reason)
			},
		},
		{
			name: "cancel after acquisition, before acceptance: retained response discarded", policy: "fail-open",
			steps: func(t *testing.T, inv *hooks.Invocation, id string) {
				require.NoError(t, inv.Receive(response(t, id, replaceTask(t, 5), server.Allow())))
				inv.Cancel()
				require.ErrorIs(t, inv.Receive(response(t, id, server.Allow())), hooks.ErrCancelled, "a response after cancel is discarded")
				_, ok := inv.Response()
				require.False(t, ok)
			},
			wantErr: hooks.ErrCancelled,
			check: func(t *testing.T, res *hooks.Result) {
				require.True(t, res.Interrupted)
				require.Equal(t, gen.PermissionDeny, res.Permission)
				require.Empty(t, res.Accepted)
				require.JSONEq(t, `{"task":1,"path":"a"}`, string(res.Input), "the discarded modification is not published")
			},
		},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hb := newHeldBackend(t)
			h := newInvHooks(t, hb, c.policy)
			ctx := ctxTimeout(t, 30e9)
			id := fmt.Sprintf("evt-r%d", i)
			inv, err := h.Begin(ctx, toolEvent(t, id))
			require.NoError(t, err)
			c.steps(t, inv, id)
			res, err := inv.Accept(ctx)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
			}
			c.check(t, res)
			require.Zero(t, hb.requests(), "the host's own transport was used, never the configured one")
		})
	}
}

// TestInvocationCancelBeforeReply: Cancel interrupts an Acquire in flight;
// the late reply is never published.
func TestInvocationCancelBeforeReply(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-open")
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-c1", false, server.Allow())
	inv, err := h.Begin(ctx, toolEvent(t, "evt-c1"))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- inv.Acquire(ctx) }()
	hb.wait("evt-c1")
	inv.Cancel()
	require.ErrorIs(t, <-done, hooks.ErrCancelled)
	hb.free("evt-c1")
	res, err := inv.Accept(ctx)
	require.ErrorIs(t, err, hooks.ErrCancelled)
	require.True(t, res.Interrupted)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Empty(t, res.Accepted)
	inv.Cancel() // idempotent
}

// TestInvocationReverseAcceptance: two held requests answered in reverse
// order and accepted in reverse order; each acceptance publishes its own
// request's response.
func TestInvocationReverseAcceptance(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-1", false, replaceTask(t, 11))
	hb.script("evt-2", false, replaceTask(t, 22))
	inv1, err := h.Begin(ctx, toolEvent(t, "evt-1"))
	require.NoError(t, err)
	inv2, err := h.Begin(ctx, toolEvent(t, "evt-2"))
	require.NoError(t, err)
	errs := make(chan error, 2)
	go func() { errs <- inv1.Acquire(ctx) }()
	go func() { errs <- inv2.Acquire(ctx) }()
	hb.wait("evt-1")
	hb.wait("evt-2")
	hb.free("evt-2") // the later request is answered first
	hb.free("evt-1")
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	res2, err := inv2.Accept(ctx)
	require.NoError(t, err)
	res1, err := inv1.Accept(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":22}`, string(res2.Input))
	require.JSONEq(t, `{"task":11}`, string(res1.Input))
}

// TestInvocationDuplicateAttempt: a second transport attempt gets a
// response with other effects; the first stands, published once.
func TestInvocationDuplicateAttempt(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-dup", true, replaceTask(t, 3))
	inv, err := h.Begin(ctx, toolEvent(t, "evt-dup"))
	require.NoError(t, err)
	require.NoError(t, inv.Acquire(ctx))
	hb.script("evt-dup", false, replaceTask(t, 4)) // the retry's answer differs (already released)
	require.ErrorIs(t, inv.Acquire(ctx), hooks.ErrDuplicate)
	require.Equal(t, 2, hb.requests())
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":3}`, string(res.Input))
	require.Len(t, res.Accepted, 1)
}

// TestInvocationAcceptAcquires: Accept with nothing attempted acquires
// through the transport, as a named call does, then observes.
func TestInvocationAcceptAcquires(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed", observeSub(`"tool.before"`))
	ctx := ctxTimeout(t, 30e9)
	hb.script("evt-x", true, server.Deny("no"))
	inv, err := h.Begin(ctx, toolEvent(t, "evt-x"))
	require.NoError(t, err)
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	hb.mu.Lock()
	defer hb.mu.Unlock()
	require.Len(t, hb.observed, 1, "the explicit observer sees the settled event")
	require.Equal(t, "evt-x", hb.observed[0].Params.Event.ID())
}

// TestInvocationAdvanceChain: a host delivering every request itself; the
// second interceptor's request carries the first one's committed edit.
func TestInvocationAdvanceChain(t *testing.T) {
	hb := newHeldBackend(t)
	reg := registration(
		backendJSON("com.example.one", httpTransport(hb.srv.URL), interceptSub(`"tool.before"`, 10000, "fail-closed")),
		backendJSON("com.example.two", httpTransport(hb.srv.URL), interceptSub(`"tool.before"`, 10000, "fail-closed")))
	h, err := hooks.New(reg, baseConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Close()) }()
	ctx := ctxTimeout(t, 30e9)
	inv, err := h.Begin(ctx, toolEvent(t, "evt-ch"))
	require.NoError(t, err)
	req, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "com.example.one", req.BackendID)
	_, err = inv.Advance(ctx)
	require.ErrorIs(t, err, hooks.ErrRejected, "nothing acquired yet")
	require.NoError(t, inv.Receive(response(t, req.ID, replaceTask(t, 42))))
	more, err := inv.Advance(ctx)
	require.NoError(t, err)
	require.True(t, more)
	req2, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "com.example.two", req2.BackendID)
	parsed, err := gen.ParseInterceptRequest(req2.Body)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":42}`, string(parsed.Params.Event.ToolBefore.Tool.Input), "the serial receiver sees the committed state")
	require.NoError(t, inv.Receive(response(t, req2.ID, server.Allow())))
	more, err = inv.Advance(ctx)
	require.NoError(t, err)
	require.False(t, more)
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionAllow, res.Permission)
	require.Len(t, res.Accepted, 2)
	require.Zero(t, hb.requests())
}

// TestBeginRequest: the request is sent exactly as given when the
// receiver's view is the event; its capabilities must narrow the grant;
// its id must be a string.
func TestBeginRequest(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-closed")
	ctx := ctxTimeout(t, 30e9)
	ev, err := gen.EncodeEvent(toolEvent(t, "evt-q"))
	require.NoError(t, err)
	given := `{"jsonrpc":"2.0","id":"evt-q","method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + string(ev) + `,"capabilities":{"effects":["deny","allow"]}}}`
	hb.script("evt-q", true, server.Deny("by request"))
	inv, err := h.BeginRequest(ctx, []byte(given))
	require.NoError(t, err)
	req, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "evt-q", req.ID)
	require.Equal(t, given, string(req.Body))
	require.NoError(t, inv.Acquire(ctx))
	require.Equal(t, given, string(hb.bodies[0]), "the receiver got the request as given")
	res, err := inv.Accept(ctx)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)

	// A request whose state already denies (decided by an earlier
	// receiver) is still delivered; its response cannot reopen the denial.
	denied := `{"jsonrpc":"2.0","id":"evt-q","method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + string(ev) +
		`,"capabilities":{"effects":["deny","allow","return"]},"state":{"permission":"deny","candidate":null}}}`
	hb.script("evt-q", true, server.Allow())
	inv, err = h.BeginRequest(ctx, []byte(denied))
	require.NoError(t, err)
	_, ok = inv.Request()
	require.True(t, ok, "the host's own request is pending")
	res, err = inv.Accept(ctx)
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, 2, hb.requests())
	require.Equal(t, denied, string(hb.bodies[1]))

	bad := []struct {
		name string
		req  string
		want error
	}{
		{"widening capabilities", `{"jsonrpc":"2.0","id":"evt-q","method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + string(ev) + `,"capabilities":{"effects":["deny","inject"],"inject":{"context":{"append":true,"deliverAt":["now"]}}}}}`, hooks.ErrWidening},
		{"numeric id", `{"jsonrpc":"2.0","id":7,"method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + string(ev) + `,"capabilities":{"effects":["deny"]}}}`, hooks.ErrInvalidInput},
		{"not canonical", `{"jsonrpc":"2.0","id":"evt-q","method":"hooks/intercept","params":{}}`, hooks.ErrInvalidInput},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := h.BeginRequest(ctx, []byte(b.req))
			require.ErrorIs(t, err, b.want)
		})
	}
}

// TestInvocationClose: Close ends an unfinished invocation (it does not
// wait for the host to finish it), and the invocation reports ErrClosed.
func TestInvocationClose(t *testing.T) {
	hb := newHeldBackend(t)
	h, err := hooks.New(registration(backendJSON("com.example.b", httpTransport(hb.srv.URL), interceptSub(`"tool.before"`, 10000, "fail-open"))), baseConfig())
	require.NoError(t, err)
	ctx := ctxTimeout(t, 30e9)
	inv, err := h.Begin(ctx, toolEvent(t, "evt-cl"))
	require.NoError(t, err)
	require.NoError(t, h.Close())
	res, err := inv.Accept(ctx)
	require.ErrorIs(t, err, hooks.ErrClosed)
	require.True(t, res.Interrupted)
	require.ErrorIs(t, inv.Receive(response(t, "evt-cl", server.Allow())), hooks.ErrClosed)
	_, err = h.Begin(ctx, toolEvent(t, "evt-cl2"))
	require.ErrorIs(t, err, hooks.ErrClosed)
}

// TestInvocationContextDeadline: the invocation's budget is Begin's
// context: once it ends, steps fail with its error and Accept interrupts.
func TestInvocationContextDeadline(t *testing.T) {
	hb := newHeldBackend(t)
	h := newInvHooks(t, hb, "fail-open")
	bctx, cancel := context.WithCancel(context.Background())
	inv, err := h.Begin(bctx, toolEvent(t, "evt-dl"))
	require.NoError(t, err)
	cancel()
	err = inv.Receive(response(t, "evt-dl", server.Allow()))
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	res, err := inv.Accept(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, res.Interrupted)
}

// TestInvocationAcceptContent: an elicitation answer begun with its
// original request settles a backend's edit of the answer object, and
// AcceptContent returns the settled content.
func TestInvocationAcceptContent(t *testing.T) {
	ctx := ctxTimeout(t, 30e9)
	h, rec := elicitHooks(t, mergeAge())
	sess := &gen.Session{ID: "s1"}
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Session: sess, Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	original := reqRes.Event()
	parent := original.UserElicitationRequest.ID
	// The canonical result event (the edit is refused without the original
	// request, so the event comes back unchanged).
	plain, err := h.UserElicitationResult(ctx, hooks.UserElicitationResultInput{Session: sess, ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept, Result: elicitPart("r", `{"action":"accept","content":{"name":"Ada"}}`)}})
	require.NoError(t, err)

	inv, err := h.Begin(ctx, plain.Event(), hooks.WithOriginalElicitationRequest(original))
	require.NoError(t, err)
	require.NoError(t, inv.Acquire(ctx))
	res, content, err := inv.AcceptContent(ctx)
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.JSONEq(t, `{"name":"Ada","age":41}`, string(content))
	i, _ := rec.counts()
	require.Equal(t, 3, i)
}

// TestInvocationBudget: each delivery keeps its subscription's timeoutMs
// from the moment its request is prepared; a response after it is a
// deadline failure and publishes nothing. An Acquire abandoned through its
// own context leaves the request pending for another attempt.
func TestInvocationBudget(t *testing.T) {
	t.Run("timeoutMs", func(t *testing.T) {
		hb := newHeldBackend(t)
		h, err := hooks.New(registration(backendJSON("com.example.b", httpTransport(hb.srv.URL), interceptSub(`"tool.before"`, 20, "fail-closed"))), baseConfig())
		require.NoError(t, err)
		defer func() { require.NoError(t, h.Close()) }()
		ctx := ctxTimeout(t, 30e9)
		hb.script("evt-b1", false, server.Allow()) // held: never answered in time
		inv, err := h.Begin(ctx, toolEvent(t, "evt-b1"))
		require.NoError(t, err)
		err = inv.Acquire(ctx)
		var ae *hooks.AttemptError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, hooks.Code("deadline_exceeded"), ae.Code)
		err = inv.Receive(response(t, "evt-b1", server.Allow()))
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "late_response", ae.Reason, "a response after the budget is not retained")
		res, err := inv.Accept(ctx)
		require.NoError(t, err)
		require.True(t, res.SyntheticDenial)
		require.Equal(t, gen.PermissionDeny, res.Permission)
		require.Empty(t, res.Accepted)
	})
	t.Run("abandoned attempt", func(t *testing.T) {
		hb := newHeldBackend(t)
		h := newInvHooks(t, hb, "fail-closed")
		ctx := ctxTimeout(t, 30e9)
		hb.script("evt-b2", false, server.Allow())
		inv, err := h.Begin(ctx, toolEvent(t, "evt-b2"))
		require.NoError(t, err)
		step, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- inv.Acquire(step) }()
		hb.wait("evt-b2")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		_, ok := inv.Request()
		require.True(t, ok, "still pending")
		hb.free("evt-b2")
		require.NoError(t, inv.Acquire(ctx))
		res, err := inv.Accept(ctx)
		require.NoError(t, err)
		require.Equal(t, gen.PermissionAllow, res.Permission)
		require.Equal(t, 2, hb.requests())
	})
}
