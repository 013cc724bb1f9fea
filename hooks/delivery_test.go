package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// inproc builds a Hooks whose backends are all in-process recorders.
func inproc(t *testing.T, cfg hooks.Config, backends map[string]*recorder, reg []byte) *hooks.Hooks {
	cfg.Transports = map[string]transport.Transport{}
	for id, r := range backends {
		cfg.Transports[id] = transport.NewInProcess(r.handler(), transport.InProcessOptions{})
	}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func TestMatching(t *testing.T) {
	exact, star, family, other, filtered, kinds := &recorder{}, &recorder{}, &recorder{}, &recorder{}, &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	reg := registration(
		backendJSON("com.example.exact", u, interceptSub(`"tool.before"`, 1000, "fail-open")),
		backendJSON("com.example.star", u, interceptSub(`"*"`, 1000, "fail-open"), observeSub(`"*"`)),
		backendJSON("com.example.family", u, observeSub(`"tool.*"`)),
		backendJSON("com.example.other", u, observeSub(`"turn.*"`)),
		backendJSON("com.example.filtered", u, `{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-open","content":{"default":"body"},"filters":{"paths":["mcp"]}}`),
		backendJSON("com.example.kinds", u, `{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-open","content":{"default":"body"},"filters":{"toolKinds":["shell"]}}`),
	)
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.exact": exact, "com.example.star": star, "com.example.family": family, "com.example.other": other, "com.example.filtered": filtered, "com.example.kinds": kinds}, reg)
	_, err := h.ToolBefore(context.Background(), toolInput()) // path native, no kind
	require.NoError(t, err)
	n := func(r *recorder) string { i, o := r.counts(); return fmt.Sprintf("%d/%d", i, o) }
	require.Equal(t, "1/0", n(exact))
	require.Equal(t, "1/1", n(star))
	require.Equal(t, "0/1", n(family))
	require.Equal(t, "0/0", n(other))
	require.Equal(t, "0/0", n(filtered), "a stated path outside filters.paths is skipped")
	require.Equal(t, "1/0", n(kinds), "an absent tool kind never drops a delivery")
	_, err = h.TurnEnd(context.Background(), hooks.TurnEndInput{Turn: gen.ExecutionEventTurn{ID: "t"}, Outcome: gen.OutcomeCompleted, ContinuationCount: "0", Items: []gen.ModelVisibleItem{}})
	require.NoError(t, err)
	require.Equal(t, "1/2", n(star))
	require.Equal(t, "0/1", n(other))
	require.Equal(t, "0/1", n(family))
}

// TestSerialChain: interceptors run in registration order; each sees the
// effective input and state the previous one committed; a denial ends the
// chain and is a Result, never an error.
func TestSerialChain(t *testing.T) {
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	rewrite := &recorder{effects: func(r *gen.InterceptRequest) []gen.Effect {
		note("rewrite")
		return []gen.Effect{server.MergeInput(map[string]any{"path": "/safe/hosts"}), server.Allow(), server.Message("rewritten")}
	}}
	check := &recorder{effects: func(r *gen.InterceptRequest) []gen.Effect {
		note("check")
		var in map[string]any
		_ = json.Unmarshal(r.Params.Event.ToolBefore.Tool.Input, &in)
		if in["path"] != "/safe/hosts" || r.Params.State == nil || r.Params.State.Permission != gen.PermissionAllow {
			return []gen.Effect{server.Deny("did not see the committed state")}
		}
		return nil
	}}
	deny := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { note("deny"); return []gen.Effect{server.Deny("no writes")} }}
	after := &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	reg := registration(
		backendJSON("com.example.rewrite", u, interceptSub(`"tool.before"`, 1000, "fail-closed")),
		backendJSON("com.example.check", u, interceptSub(`"tool.before"`, 1000, "fail-closed")),
		backendJSON("com.example.deny", u, interceptSub(`"tool.before"`, 1000, "fail-open")),
		backendJSON("com.example.after", u, interceptSub(`"tool.before"`, 1000, "fail-closed"), observeSub(`"tool.before"`)),
	)
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.rewrite": rewrite, "com.example.check": check, "com.example.deny": deny, "com.example.after": after}, reg)
	res, err := h.ToolBefore(context.Background(), toolInput(), hooks.WithInitialState(hooks.InitialState(gen.PermissionNone)))
	require.NoError(t, err)
	require.Equal(t, []string{"rewrite", "check", "deny"}, order)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, "no writes", res.DenyReason())
	require.False(t, res.SyntheticDenial)
	require.Equal(t, []string{"rewritten"}, res.Messages)
	require.JSONEq(t, `{"path":"/safe/hosts"}`, string(res.Input))
	require.Len(t, res.Accepted, 3)
	require.Equal(t, "com.example.deny", res.Accepted[2].BackendID)
	ic, oc := after.counts()
	require.Equal(t, 0, ic)
	require.Equal(t, 2, oc, "the uncalled interceptor's owed observation plus its explicit observe subscription")
	after.mu.Lock()
	for _, n := range after.observed {
		require.JSONEq(t, `{"path":"/safe/hosts"}`, string(n.Params.Event.ToolBefore.Tool.Input), "observers get the settled effective event")
	}
	after.mu.Unlock()
	var host struct {
		Path string `json:"path"`
	}
	require.NoError(t, res.DecodeInput(&host))
	require.Equal(t, "/safe/hosts", host.Path)
	var strict struct {
		File string `json:"file"`
	}
	require.Error(t, res.DecodeInput(&strict), "an application shape mismatch is the host's rejection")
	require.Equal(t, gen.PermissionDeny, res.Permission, "a decode failure keeps the settled result")
}

// TestPerCallNarrowing: WithCapabilities only narrows.
func TestPerCallNarrowing(t *testing.T) {
	rec := &recorder{}
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 1000, "fail-closed")))
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": rec}, reg)
	_, err := h.ToolBefore(context.Background(), toolInput(), hooks.WithCapabilities(hooks.Intercept().Deny()))
	require.NoError(t, err)
	rec.mu.Lock()
	require.Equal(t, []gen.EffectFamily{"deny"}, rec.intercept[0].Params.Capabilities.Effects)
	rec.mu.Unlock()
	_, err = h.ToolBefore(context.Background(), toolInput(), hooks.WithCapabilities(hooks.Intercept().Deny().Continue(1)))
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	h2, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny()},
		Transports: map[string]transport.Transport{"com.example.a": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}})
	require.NoError(t, err)
	defer h2.Close()
	_, err = h2.ToolBefore(context.Background(), toolInput(), hooks.WithCapabilities(hooks.Intercept().Deny().Allow()))
	require.ErrorIs(t, err, hooks.ErrWidening)
	// Observation only for this occurrence: the interceptor gets hooks/observe.
	res, err := h2.ToolBefore(context.Background(), toolInput(), hooks.WithCapabilities(hooks.Observe()))
	require.NoError(t, err)
	require.Equal(t, gen.PermissionNone, res.Permission)
	ic, oc := rec.counts()
	require.Equal(t, 1, ic)
	require.Equal(t, 1, oc)
}

// TestNativeOmittedByDefault: native reaches only includeNative subscriptions.
func TestNativeOmittedByDefault(t *testing.T) {
	plain, native := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	reg := registration(
		backendJSON("com.example.plain", u, interceptSub(`"tool.before"`, 1000, "fail-open")),
		backendJSON("com.example.native", u, `{"events":["tool.before"],"mode":"intercept","timeoutMs":1000,"failurePolicy":"fail-open","content":{"default":"body"},"includeNative":true}`),
	)
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.plain": plain, "com.example.native": native}, reg)
	in := toolInput()
	in.Native = json.RawMessage(`{"provider":"x"}`)
	_, err := h.ToolBefore(context.Background(), in)
	require.NoError(t, err)
	require.Nil(t, plain.intercept[0].Params.Event.ToolBefore.Native)
	require.JSONEq(t, `{"provider":"x"}`, string(native.intercept[0].Params.Event.ToolBefore.Native))
}

// TestInterruption: the caller's deadline bounds the whole call; expiry
// returns an error wrapping ctx.Err(), an interrupted Result that denies,
// and starts no owed observation.
func TestInterruption(t *testing.T) {
	srv := faultServer(t)
	after := &recorder{}
	reg := registration(
		backendJSON("com.example.slow", httpTransport(srv.URL+"/timeout"), interceptSub(`"tool.before"`, 30000, "fail-open")),
		backendJSON("com.example.after", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 1000, "fail-open")),
	)
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.after": transport.NewInProcess(after.handler(), transport.InProcessOptions{})}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := h.ToolBefore(ctx, toolInput(), hooks.WithInitialState(hooks.InitialState(gen.PermissionAllow)))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), time.Second, "a subscription timeout never extends the call budget")
	require.True(t, res.Interrupted)
	require.Equal(t, gen.PermissionDeny, res.Permission, "interruption never authorizes execution")
	require.Equal(t, transport.CodeDeadlineExceeded, res.Diagnostics[0].Code)
	ic, oc := after.counts()
	require.Zero(t, ic+oc, "no further deliveries after interruption")

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	res, err = h.ToolBefore(ctx2, toolInput())
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, transport.CodeCancelled, res.Diagnostics[0].Code)
}

// TestConcurrentCallers: 256 goroutines share one Hooks over HTTP and stdio.
func TestConcurrentCallers(t *testing.T) {
	srv := faultServer(t)
	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Allow()} }}
	// Order: mem (allow) first so that every call reaches stdio and http.
	reg := registration(
		backendJSON("com.example.mem", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 20000, "fail-closed"), observeSub(`"*"`)),
		backendJSON("com.example.stdio", backendCmd(t, "allow", "persistent"), interceptSub(`"tool.before"`, 20000, "fail-closed")),
		backendJSON("com.example.http", httpTransport(srv.URL+"/deny"), interceptSub(`"tool.before"`, 20000, "fail-closed")),
	)
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.mem": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	const n = 256
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := toolInput()
			in.CallID = "call-" + strconv.Itoa(i)
			res, err := h.ToolBefore(ctxTimeout(t, 30*time.Second), in)
			if err != nil {
				errs <- err
				return
			}
			if res.Permission != gen.PermissionDeny || res.DenyReason() != "denied over http" || len(res.Diagnostics) != 0 {
				errs <- fmt.Errorf("call %d: %v %q %+v", i, res.Permission, res.DenyReason(), res.Diagnostics)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	ic, oc := rec.counts()
	require.Equal(t, n, ic)
	require.Equal(t, n, oc)
	require.NoError(t, h.Close())
}

// TestClose: idempotent and concurrent; cancels in-flight calls (ErrClosed)
// and refuses new ones; borrowed transports stay open.
func TestClose(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then net/http watches the connection
		arrived <- struct{}{}
		<-r.Context().Done() // answers only when the harness gives up
	}))
	defer srv.Close()
	rec := &recorder{}
	borrowed := transport.NewInProcess(rec.handler(), transport.InProcessOptions{})
	reg := registration(
		backendJSON("com.example.slow", httpTransport(srv.URL), interceptSub(`"tool.before"`, 30000, "fail-open")),
		backendJSON("com.example.mem", httpTransport("http://127.0.0.1:1/x"), observeSub(`"*"`)),
	)
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.mem": borrowed}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := h.ToolBefore(context.Background(), toolInput())
		done <- err
	}()
	<-arrived // the call is in flight
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, h.Close()) }()
	}
	wg.Wait()
	require.ErrorIs(t, <-done, hooks.ErrClosed)
	_, err = h.ToolBefore(context.Background(), toolInput())
	require.ErrorIs(t, err, hooks.ErrClosed)
	require.NoError(t, h.Close())
	// The borrowed transport is still usable.
	_, err = borrowed.Exchange(context.Background(), transport.Message{Body: []byte(`{}`)})
	require.False(t, errors.Is(err, transport.ErrClosed))
}

// TestCloseReapsChildren: persistent and per_event children are gone after
// Close (the backend reports its pid in the denial reason).
func TestCloseReapsChildren(t *testing.T) {
	for _, lc := range []string{"persistent", "per_event"} {
		t.Run(lc, func(t *testing.T) {
			reg := registration(backendJSON("com.example.pid", backendCmd(t, "pid", lc), interceptSub(`"tool.before"`, 10000, "fail-closed")))
			h, err := hooks.New(reg, baseConfig())
			require.NoError(t, err)
			res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimPrefix(res.DenyReason(), "pid:"))
			require.NoError(t, err, res.DenyReason())
			require.NoError(t, h.Close())
			require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "child %d was reaped", pid)
		})
	}
}

// TestCanary: a secret in the environment (a bearer tokenEnv), in a backend's
// error message and data, and on a child's stderr never reaches a
// diagnostic, an error string or a log line; stdio children do not inherit
// the harness environment.
func TestCanary(t *testing.T) {
	t.Setenv("AHP_TEST_CANARY", canary)
	srv := faultServer(t)
	var sawToken bool
	var mu sync.Mutex
	tokenSrv := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, errors.New("backend failure " + canary)
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawToken = r.Header.Get("Authorization") == "Bearer "+canary
		mu.Unlock()
		tokenSrv.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	reg := registration(
		`{"id":"com.example.token","transport":`+httpTransport(ts.URL+"/")+`,"authentication":{"type":"bearer","tokenEnv":"AHP_TEST_CANARY"},"subscriptions":[`+interceptSub(`"tool.before"`, 30000, "fail-open")+`]}`,
		`{"id":"com.example.missing","transport":`+httpTransport(ts.URL+"/")+`,"authentication":{"type":"bearer","tokenEnv":"AHP_TEST_MISSING_TOKEN"},"subscriptions":[`+interceptSub(`"tool.before"`, 30000, "fail-open")+`]}`,
		backendJSON("com.example.rpc", httpTransport(srv.URL+"/rpcerror"), interceptSub(`"tool.before"`, 30000, "fail-open")),
		backendJSON("com.example.stdiorpc", backendCmd(t, "rpcerror", "persistent"), interceptSub(`"tool.before"`, 30000, "fail-open")),
		backendJSON("com.example.env", backendCmd(t, "env", "per_event"), interceptSub(`"tool.before"`, 30000, "fail-open")),
	)
	logs := &capture{}
	var stderr strings.Builder
	cfg := baseConfig()
	cfg.Logger = logs.logger()
	cfg.StdioStderr = &lockedBuilder{b: &stderr}
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	res, err := h.ToolBefore(ctxTimeout(t, 120*time.Second), toolInput())
	require.NoError(t, err)
	require.NoError(t, h.Close())
	mu.Lock()
	require.True(t, sawToken, "the token is resolved at delivery and sent in one Authorization header")
	mu.Unlock()
	require.Equal(t, "env:", res.DenyReason(), "stdio children get a minimal environment")
	codes := map[string]transport.Code{}
	for _, d := range res.Diagnostics {
		codes[d.BackendID] = d.Code
	}
	require.Equal(t, transport.CodeRemoteRPC, codes["com.example.token"])
	require.Equal(t, transport.CodeTransport, codes["com.example.missing"])
	require.Equal(t, transport.CodeRemoteRPC, codes["com.example.rpc"])
	require.Equal(t, transport.CodeRemoteRPC, codes["com.example.stdiorpc"])
	all := fmt.Sprintf("%+v %#v", res.Diagnostics, res.Diagnostics) + logs.String()
	require.NotContains(t, all, canary)
	require.Contains(t, stderr.String(), "backend stderr", "stderr goes only where the host directs it")
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// blockingPreparer signals when it is called and waits for its context to
// end, then reports the context's error and cause.
type blockingPreparer struct {
	entered chan struct{}
	ended   chan [2]error
}

func (p blockingPreparer) Prepare(ctx context.Context, d hooks.Delivery) (*gen.Event, error) {
	close(p.entered)
	<-ctx.Done()
	p.ended <- [2]error{ctx.Err(), context.Cause(ctx)}
	return nil, ctx.Err()
}

// TestCloseCancelsPreparation: Close ends a call waiting in its content
// preparation: the preparer's context is cancelled with ErrClosed as its
// cause and the call returns ErrClosed, interrupted and denying.
func TestCloseCancelsPreparation(t *testing.T) {
	rec := &recorder{}
	reg := registration(backendJSON("com.example.mem", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"tool.before"`, 30000, "fail-open")))
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.mem": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
	prep := blockingPreparer{entered: make(chan struct{}), ended: make(chan [2]error, 1)}
	cfg.Preparer = prep
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	type outcome struct {
		res *hooks.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.ToolBefore(context.Background(), toolInput())
		done <- outcome{res, err}
	}()
	<-prep.entered
	require.NoError(t, h.Close())
	got := <-done
	require.ErrorIs(t, got.err, hooks.ErrClosed)
	require.NotNil(t, got.res)
	require.True(t, got.res.Interrupted)
	require.Equal(t, gen.PermissionDeny, got.res.Permission)
	ended := <-prep.ended
	require.Equal(t, context.Canceled, ended[0])
	require.ErrorIs(t, ended[1], hooks.ErrClosed)
	ic, _ := rec.counts()
	require.Zero(t, ic, "nothing was delivered")
}
