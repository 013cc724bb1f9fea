package hooks_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

// TestObservationsEndedByCallerOrClose: "Interruption ... overrides
// fail-open or accepted approval" (base/failure.md, AHP-FAIL-002). The
// caller's own cancellation, or Close, during the observation phase cuts
// the hanging observation short (code cancelled, reason interrupted) and
// the call returns as any interrupted call does: an error wrapping
// context.Canceled or ErrClosed, with an interrupted Result that does not
// authorize the accepted allow. With Close the caller's context is still
// live, so the error is the host's only signal. The same holds for an
// observe-only event. (Only the caller's deadline leaves a settled decision
// standing: TestObserverCannotReopenDecision.)
func TestObservationsEndedByCallerOrClose(t *testing.T) {
	events := []struct {
		name string
		call func(context.Context, *hooks.Hooks) (*hooks.Result, error)
	}{
		{name: "tool.before", call: func(ctx context.Context, h *hooks.Hooks) (*hooks.Result, error) {
			return h.ToolBefore(ctx, toolInput())
		}},
		{name: "turn.end", call: func(ctx context.Context, h *hooks.Hooks) (*hooks.Result, error) {
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
				cause := context.Canceled
				if how == "cancel" {
					cancel()
				} else {
					require.NoError(t, h.Close())
					cause = hooks.ErrClosed
				}
				got := <-done
				requireInterruptedBy(t, got.res, got.err, cause)
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

// cancellingPreparer ends the caller's context while it prepares an
// observation, and returns the event unchanged.
type cancellingPreparer struct{ cancel context.CancelFunc }

func (p cancellingPreparer) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	if d.Mode == gen.ModeObserve {
		p.cancel()
	}
	return d.Event, nil
}

// notifyProbe is a custom transport that counts its notifications and
// answers each with what notify returns (nil: success); an Exchange fails.
type notifyProbe struct {
	mu     sync.Mutex
	calls  int
	notify func(ctx context.Context) error
}

func (p *notifyProbe) Exchange(ctx context.Context, _ transport.Message) ([]byte, error) {
	return nil, errors.New("notifyProbe: no exchange")
}

func (p *notifyProbe) Notify(ctx context.Context, _ transport.Message) error {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	if p.notify != nil {
		return p.notify(ctx)
	}
	return ctx.Err()
}

func (p *notifyProbe) Close() error { return nil }

func (p *notifyProbe) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// allowAll answers every interception with allow.
func allowAll(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{allowEffect()} }

// requireInterruptedBy checks a call that the caller's cancellation (or
// Close) ended during its observations: an error wrapping cause, and an
// interrupted Result that never authorizes execution.
func requireInterruptedBy(t *testing.T, res *hooks.Result, err, cause error) {
	t.Helper()
	require.ErrorIs(t, err, cause)
	require.NotNil(t, res)
	require.True(t, res.Interrupted)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.False(t, res.Candidate.Present)
}

// TestNoObservationAfterCallEnded: "Interruption stops new deliveries ...
// it MUST NOT initiate further best-effort observations"
// (base/composition.md, Observers). The caller cancels while an
// observation is being prepared, and the preparation succeeds: the
// observation is not sent, over a custom transport or in-process, and is
// recorded as cut short at preparation.
func TestNoObservationAfterCallEnded(t *testing.T) {
	probe := &notifyProbe{}
	audit := &recorder{}
	cases := []struct {
		name     string
		observer transport.Transport
		notified func() int
	}{
		{name: "custom transport", observer: probe, notified: probe.count},
		{name: "in-process", observer: transport.NewInProcess(audit.handler(), transport.InProcessOptions{}), notified: func() int {
			_, n := audit.counts()
			return n
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := registration(
				backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-closed")),
				backendJSON("com.example.audit", httpTransport("http://127.0.0.1:1/x"), observeSub(`"tool.before"`)),
			)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := observeBudgetConfig(map[string]transport.Transport{
				"com.example.decide": transport.NewInProcess((&recorder{effects: allowAll}).handler(), transport.InProcessOptions{}),
				"com.example.audit":  tc.observer,
			})
			cfg.Preparer = cancellingPreparer{cancel}
			h, err := hooks.New(reg, cfg)
			require.NoError(t, err)
			defer h.Close()
			res, err := h.ToolBefore(ctx, toolInput())
			require.Zero(t, tc.notified(), "no observation is sent once the call has ended")
			require.NotNil(t, res)
			require.Len(t, res.Diagnostics, 1, "%+v", res.Diagnostics)
			d := res.Diagnostics[0]
			require.Equal(t, "com.example.audit", d.BackendID)
			require.Equal(t, gen.ModeObserve, d.Mode)
			require.Equal(t, transport.CodeCancelled, d.Code)
			require.Equal(t, transport.StagePrepare, d.Stage)
			require.Equal(t, "interrupted", d.Reason)
			requireInterruptedBy(t, res, err, context.Canceled)
		})
	}
}

// TestObservationJoinedByCall: "A hook call owns the deliveries it
// initiates ... MUST NOT leave detached observer deliveries running after
// that completion" (base/composition.md, Observers). An in-process
// observer that is still working when the caller cancels is waited for:
// the call returns only after the observer has.
func TestObservationJoinedByCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var exited atomic.Bool
		observer := &server.Handler{Observe: func(context.Context, *gen.ObserveNotification) error {
			close(entered)
			<-release // ignores its context until released
			exited.Store(true)
			return nil
		}}
		reg := registration(
			backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-closed")),
			backendJSON("com.example.audit", httpTransport("http://127.0.0.1:1/x"), observeSub(`"tool.before"`)),
		)
		h, err := hooks.New(reg, observeBudgetConfig(map[string]transport.Transport{
			"com.example.decide": transport.NewInProcess((&recorder{effects: allowAll}).handler(), transport.InProcessOptions{}),
			"com.example.audit":  transport.NewInProcess(observer, transport.InProcessOptions{}),
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
			res, err := h.ToolBefore(ctx, toolInput())
			done <- outcome{res, err}
		}()
		<-entered
		cancel()
		synctest.Wait() // all blocked: the observer on release
		select {
		case got := <-done:
			close(release) // let the observer end before the test does
			t.Fatalf("the call returned (%v) while its observer was still running", got.err)
		default:
		}
		close(release)
		got := <-done
		require.True(t, exited.Load())
		requireInterruptedBy(t, got.res, got.err, context.Canceled)
		requireCutShort(t, got.res, "com.example.audit", false, transport.CodeCancelled)
	})
}

// budgetRecorder is a Preparer that records the budget each observation's
// preparation gets (the time left before its context's deadline) and takes
// prepTime doing it.
type budgetRecorder struct {
	mu       sync.Mutex
	budgets  []time.Duration
	prepTime time.Duration
}

func (p *budgetRecorder) Prepare(ctx context.Context, d hooks.Delivery) (*gen.Event, error) {
	if d.Mode == gen.ModeObserve {
		dl, ok := ctx.Deadline()
		p.mu.Lock()
		if ok {
			p.budgets = append(p.budgets, time.Until(dl))
		} else {
			p.budgets = append(p.budgets, -1)
		}
		p.mu.Unlock()
		time.Sleep(p.prepTime)
	}
	return d.Event, nil
}

// TestOwedObservationPreparationBudget: "The configured transfer budget is
// separate from the per-interceptor timeout, which starts at interception
// dispatch" (content-upload.md) and "Selected uploads use their separate
// preparation budget before dispatch" (base/failure.md, AHP-FAIL-002). The
// preparation of an observation owed to an uncalled interceptor with
// timeoutMs 100 gets the observation budget (ObserveTimeout), takes longer
// than 100 ms, and the observation is still delivered; the notification
// itself then runs under the 100 ms. Time is the synctest bubble's, so the
// budgets are exact.
func TestOwedObservationPreparationBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var notifyBudget time.Duration
		owed := &server.Handler{Observe: func(ctx context.Context, _ *gen.ObserveNotification) error {
			dl, _ := ctx.Deadline()
			notifyBudget = time.Until(dl)
			return nil
		}}
		reg := registration(
			backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-open")),
			backendJSON("com.example.owed", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 100, "fail-closed")),
		)
		cfg := baseConfig()
		cfg.ObserveTimeout = 5 * time.Second
		prep := &budgetRecorder{prepTime: 300 * time.Millisecond}
		cfg.Preparer = prep
		cfg.Transports = map[string]transport.Transport{
			"com.example.decide": transport.NewInProcess((&recorder{effects: denyAll}).handler(), transport.InProcessOptions{}),
			"com.example.owed":   transport.NewInProcess(owed, transport.InProcessOptions{}),
		}
		h, err := hooks.New(reg, cfg)
		require.NoError(t, err)
		defer h.Close()
		res, err := h.ToolBefore(context.Background(), toolInput())
		require.NoError(t, err)
		require.Equal(t, gen.PermissionDeny, res.Permission)
		require.Empty(t, res.Diagnostics, "the owed observation was delivered")
		require.Equal(t, []time.Duration{5 * time.Second}, prep.budgets, "preparation runs under ObserveTimeout, not timeoutMs")
		require.Equal(t, 100*time.Millisecond, notifyBudget, "the notification runs under timeoutMs")
	})
}

// TestObservationPhaseBound: observations run concurrently, so after
// settlement a call lasts as long as its slowest observation: the least of
// the remaining caller budget and ObserveTimeout. An owed observation's
// timeoutMs shortens only its own delivery. Both observers here hang until
// their context ends; time is the synctest bubble's, so durations are
// exact.
func TestObservationPhaseBound(t *testing.T) {
	cases := []struct {
		name   string
		budget time.Duration // the caller's; zero: none
		want   time.Duration
		code   hooks.Code // of the explicit observer's diagnostic
		reason string
	}{
		{name: "ObserveTimeout first", want: time.Second, code: transport.CodeDeadlineExceeded, reason: "timeout"},
		{name: "caller budget first", budget: 500 * time.Millisecond, want: 500 * time.Millisecond, code: transport.CodeDeadlineExceeded, reason: "interrupted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hang := &server.Handler{Observe: func(ctx context.Context, _ *gen.ObserveNotification) error {
					<-ctx.Done()
					return ctx.Err()
				}}
				reg := registration(
					backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-open")),
					backendJSON("com.example.owed", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 100, "fail-closed")),
					backendJSON("com.example.audit", httpTransport("http://127.0.0.1:1/x"), observeSub(`"tool.before"`)),
				)
				cfg := baseConfig()
				cfg.ObserveTimeout = time.Second
				cfg.Transports = map[string]transport.Transport{
					"com.example.decide": transport.NewInProcess((&recorder{effects: denyAll}).handler(), transport.InProcessOptions{}),
					"com.example.owed":   transport.NewInProcess(hang, transport.InProcessOptions{}),
					"com.example.audit":  transport.NewInProcess(hang, transport.InProcessOptions{}),
				}
				h, err := hooks.New(reg, cfg)
				require.NoError(t, err)
				defer h.Close()
				ctx := context.Background()
				if tc.budget > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.budget)
					defer cancel()
				}
				start := time.Now()
				res, err := h.ToolBefore(ctx, toolInput())
				require.Equal(t, tc.want, time.Since(start))
				require.NoError(t, err, "the settled denial stands")
				require.Equal(t, gen.PermissionDeny, res.Permission)
				require.Len(t, res.Diagnostics, 2, "%+v", res.Diagnostics)
				byBackend := map[string]hooks.Diagnostic{}
				for _, d := range res.Diagnostics {
					byBackend[d.BackendID] = d
				}
				owed := byBackend["com.example.owed"]
				require.True(t, owed.Downgraded)
				require.Equal(t, transport.CodeDeadlineExceeded, owed.Code)
				require.Equal(t, "timeout", owed.Reason, "timeoutMs ended the owed observation")
				audit := byBackend["com.example.audit"]
				require.Equal(t, tc.code, audit.Code)
				require.Equal(t, tc.reason, audit.Reason)
			})
		})
	}
}

// TestObserverOwnFailureNotCancellation: a notification that failed by
// itself (HTTP 500) is recorded as that failure even when the caller
// cancels right after it: only a failure caused by the end of the call is
// recorded as interrupted.
func TestObserverOwnFailureNotCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe := &notifyProbe{notify: func(context.Context) error {
		defer cancel()
		return &transport.Error{Code: transport.CodeTransport, Stage: transport.StageReceive, Reason: "http_status", Status: 500}
	}}
	reg := registration(
		backendJSON("com.example.decide", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-closed")),
		backendJSON("com.example.audit", httpTransport("http://127.0.0.1:1/x"), observeSub(`"tool.before"`)),
	)
	h, err := hooks.New(reg, observeBudgetConfig(map[string]transport.Transport{
		"com.example.decide": transport.NewInProcess((&recorder{effects: allowAll}).handler(), transport.InProcessOptions{}),
		"com.example.audit":  probe,
	}))
	require.NoError(t, err)
	defer h.Close()
	res, err := h.ToolBefore(ctx, toolInput())
	require.Equal(t, 1, probe.count())
	require.NotNil(t, res)
	require.Len(t, res.Diagnostics, 1, "%+v", res.Diagnostics)
	d := res.Diagnostics[0]
	require.Equal(t, "com.example.audit", d.BackendID)
	require.Equal(t, gen.ModeObserve, d.Mode)
	require.Equal(t, transport.CodeTransport, d.Code)
	require.Equal(t, transport.StageReceive, d.Stage)
	require.Equal(t, "http_status", d.Reason)
	require.Equal(t, 500, d.Status)
	requireInterruptedBy(t, res, err, context.Canceled)
}
