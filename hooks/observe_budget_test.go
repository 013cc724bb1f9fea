package hooks_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// hangingBackend is an HTTP backend that never answers: each request is
// read, announced on arrived, and held until the harness gives up on it (its
// request context ends) or the test ends.
func hangingBackend(t *testing.T) (*httptest.Server, <-chan struct{}) {
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then net/http watches the connection
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: nothing holds srv.Close
	return srv, arrived
}

// observeBudgetConfig is baseConfig with an observation cap far beyond any
// caller budget of these tests, so that only the caller's context can end a
// hanging observation: a call that returns at all was cut short by it.
func observeBudgetConfig(transports map[string]transport.Transport) hooks.Config {
	cfg := baseConfig()
	cfg.ObserveTimeout = time.Hour
	cfg.Transports = transports
	return cfg
}

// requireCutShort checks that the only diagnostic is one observe delivery to
// backendID, cut short by the end of the caller's context with code.
func requireCutShort(t *testing.T, res *hooks.Result, backendID string, downgraded bool, code hooks.Code) {
	t.Helper()
	require.Len(t, res.Diagnostics, 1, "%+v", res.Diagnostics)
	d := res.Diagnostics[0]
	require.Equal(t, backendID, d.BackendID)
	require.Equal(t, gen.ModeObserve, d.Mode)
	require.Equal(t, downgraded, d.Downgraded)
	require.Equal(t, code, d.Code)
	require.Equal(t, "interrupted", d.Reason)
	require.Empty(t, d.FailurePolicy, "observations never block")
	require.False(t, d.SyntheticDenial)
}

// TestObserverCannotReopenDecision: "Observations cannot reopen a settled
// decision" and observation "effectively fails open" (base/composition.md,
// base/failure.md). When the caller's budget, shorter than ObserveTimeout,
// runs out while only observations remain, the call returns the settled
// Result without error, not interrupted, with an observe diagnostic for the
// observation cut short; the observer never answers, so the call returning
// at all shows the budget ended it.
func TestObserverCannotReopenDecision(t *testing.T) {
	httpSrv, _ := hangingBackend(t)
	cases := []struct {
		name       string
		observer   string // the hanging backend's transport
		sub        string // its subscription
		decide     *recorder
		permission gen.Permission
		downgraded bool
	}{
		{name: "explicit observer over http", observer: httpTransport(httpSrv.URL), sub: observeSub(`"tool.before"`),
			decide: &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{allowEffect()} }}, permission: gen.PermissionAllow},
		{name: "owed observation after a deny over http", observer: httpTransport(httpSrv.URL), sub: interceptSub(`"tool.before"`, 30000, "fail-closed"),
			decide: &recorder{effects: denyAll}, permission: gen.PermissionDeny, downgraded: true},
		{name: "explicit observer over stdio", observer: backendCmd(t, "hang", "per_event"), sub: observeSub(`"tool.before"`),
			decide: &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{allowEffect()} }}, permission: gen.PermissionAllow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its budget
			audit := &recorder{}
			reg := registration(
				backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-closed")),
				backendJSON("com.example.hang", tc.observer, tc.sub),
				backendJSON("com.example.audit", httpTransport("http://127.0.0.1:1/x"), observeSub(`"tool.before"`)),
			)
			h, err := hooks.New(reg, observeBudgetConfig(map[string]transport.Transport{
				"com.example.decide": transport.NewInProcess(tc.decide.handler(), transport.InProcessOptions{}),
				"com.example.audit":  transport.NewInProcess(audit.handler(), transport.InProcessOptions{}),
			}))
			require.NoError(t, err)
			defer h.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			res, err := h.ToolBefore(ctx, toolInput())
			require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "only the caller's budget ended the observation")
			require.NoError(t, err, "the decision was settled before the budget ran out")
			require.False(t, res.Interrupted)
			require.Equal(t, tc.permission, res.Permission)
			require.Len(t, res.Accepted, 1)
			requireCutShort(t, res, "com.example.hang", tc.downgraded, transport.CodeDeadlineExceeded)
			_, observed := audit.counts()
			require.Equal(t, 1, observed, "the other observer was notified")
		})
	}
}

func denyAll(*gen.InterceptRequest) []gen.Effect {
	return []gen.Effect{server.Deny("no")}
}

// TestObservationsEndedByCallerOrClose: the caller's own cancellation, or
// Close, during the observation phase also leaves the settled decision
// standing: the hanging observation is cut short with code cancelled, and
// the call returns the settled Result without error. The same holds for an
// observe-only event, whose Result carries only diagnostics.
func TestObservationsEndedByCallerOrClose(t *testing.T) {
	events := []struct {
		name       string
		call       func(context.Context, *hooks.Hooks) (*hooks.Result, error)
		permission gen.Permission
	}{
		{name: "tool.before", permission: gen.PermissionAllow, call: func(ctx context.Context, h *hooks.Hooks) (*hooks.Result, error) {
			return h.ToolBefore(ctx, toolInput())
		}},
		{name: "turn.end", permission: gen.PermissionNone, call: func(ctx context.Context, h *hooks.Hooks) (*hooks.Result, error) {
			return h.TurnEnd(ctx, hooks.TurnEndInput{Turn: gen.ExecutionEventTurn{ID: "t"}, Outcome: gen.OutcomeCompleted, ContinuationCount: "0", Items: []gen.ModelVisibleItem{}})
		}},
	}
	for _, ev := range events {
		for _, how := range []string{"cancel", "close"} {
			t.Run(ev.name+"/"+how, func(t *testing.T) {
				srv, arrived := hangingBackend(t)
				decide := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{allowEffect()} }}
				reg := registration(
					backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-closed")),
					backendJSON("com.example.hang", httpTransport(srv.URL), observeSub(`"tool.before","turn.end"`)),
				)
				h, err := hooks.New(reg, observeBudgetConfig(map[string]transport.Transport{
					"com.example.decide": transport.NewInProcess(decide.handler(), transport.InProcessOptions{}),
				}))
				require.NoError(t, err)
				defer h.Close()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type outcome struct {
					res *hooks.Result
					err error
				}
				done := make(chan outcome, 1)
				go func() {
					res, err := ev.call(ctx, h)
					done <- outcome{res, err}
				}()
				<-arrived // the decision is settled; the observation is in flight
				if how == "cancel" {
					cancel()
				} else {
					require.NoError(t, h.Close())
				}
				got := <-done
				require.NoError(t, got.err)
				require.False(t, got.res.Interrupted)
				require.Equal(t, ev.permission, got.res.Permission)
				requireCutShort(t, got.res, "com.example.hang", false, transport.CodeCancelled)
			})
		}
	}
}

// TestOwedObservationBoundedByTimeoutMs: an observation owed to an uncalled
// interceptor is bounded by that subscription's timeoutMs as well as by
// ObserveTimeout and the caller's budget (here both far longer): its
// deadline is the subscription's own, and the settled denial stands.
func TestOwedObservationBoundedByTimeoutMs(t *testing.T) {
	srv, _ := hangingBackend(t)
	decide := &recorder{effects: denyAll}
	reg := registration(
		backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-open")),
		backendJSON("com.example.hang", httpTransport(srv.URL), interceptSub(`"tool.before"`, 100, "fail-closed")),
	)
	h, err := hooks.New(reg, observeBudgetConfig(map[string]transport.Transport{
		"com.example.decide": transport.NewInProcess(decide.handler(), transport.InProcessOptions{}),
	}))
	require.NoError(t, err)
	defer h.Close()
	ctx := ctxTimeout(t, 10*time.Second)
	res, err := h.ToolBefore(ctx, toolInput())
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "the subscription's timeout, not the caller's budget, ended the observation")
	require.False(t, res.Interrupted)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, "no", res.DenyReason())
	require.False(t, res.SyntheticDenial, "an observation failure never applies a failure policy")
	require.Len(t, res.Diagnostics, 1)
	d := res.Diagnostics[0]
	require.Equal(t, "com.example.hang", d.BackendID)
	require.Equal(t, gen.ModeObserve, d.Mode)
	require.True(t, d.Downgraded)
	require.Equal(t, transport.CodeDeadlineExceeded, d.Code)
	require.Equal(t, "timeout", d.Reason)
}
