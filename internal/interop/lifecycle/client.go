package lifecycle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// ClientConfig is the lifecycle client's configuration: the core
// contract's members plus the lifecycle ones (LIFECYCLE.md, "Executables"
// and "Raw upload configuration").
type ClientConfig struct {
	interop.ClientConfig
	Suite           string `json:"suite,omitempty"`
	ControlEndpoint string `json:"controlEndpoint,omitempty"`
	// ChildPidFile receives the pid of the stdio server child once it is
	// ready, so the runner can check that it was reaped.
	ChildPidFile string `json:"childPidFile,omitempty"`
	// ContentSources names files an attachment can take its bytes from
	// (AttachmentSpec.Source), read lazily by the SDK.
	ContentSources map[string]string `json:"contentSources,omitempty"`
	Upload         UploadConfig      `json:"upload"`
}

// UploadConfig is the client's upload configuration: the endpoint (the
// stdio child's readiness supplies it when absent), the bounds, and the
// credential, a bearer token in an environment variable, never the event
// endpoint's.
type UploadConfig struct {
	Auth struct {
		Type     string `json:"type"`
		TokenEnv string `json:"tokenEnv"`
	} `json:"auth"`
	Endpoint  string `json:"endpoint,omitempty"`
	TimeoutMs int    `json:"timeoutMs,omitempty"`
	MaxBytes  int64  `json:"maxBytes,omitempty"`
}

// Report is the client's report (LIFECYCLE.md, "Receipt export").
type Report struct {
	Language string        `json:"language"`
	Results  []ReportEntry `json:"results"`
	Receipts *Receipts     `json:"receipts,omitempty"`
}

// ReportEntry is one scenario's outcome. Error comes from this adapter's
// fixed vocabulary and step names, never from a backend or a credential.
type ReportEntry struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Actual json.RawMessage `json:"actual"`
	Error  string          `json:"error,omitempty"`
}

// Watchdogs of the client.
const (
	startupLimit  = 3 * time.Minute
	scenarioLimit = 90 * time.Second
	stepLimit     = 60 * time.Second
	backendID     = "org.agenthooks.interop.lifecycle"
	defaultSource = "urn:agenthooks:interop:lifecycle"
)

// client is one run: the real transport, the control endpoint and the
// upload settings shared by every scenario.
type client struct {
	cfg      *ClientConfig
	log      *slog.Logger
	inner    transport.Transport
	gate     *gate
	control  string
	upload   string
	binding  *gen.Authentication
	provider auth.Provider
	eventURL string
	httpc    *http.Client // control and raw upload probes (no credentials)
	uploads  *uploadLog
	upClient *http.Client // the SDK's upload client, recorded
	closeFns []func() error
}

// uploadLog records the uploads this client made, through the SDK or
// through upload steps: the framing it declared and the status it got.
type uploadLog struct {
	mu      sync.Mutex
	entries []contentUpload
}

type contentUpload struct {
	Status int    `json:"status"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func (l *uploadLog) add(u contentUpload) {
	l.mu.Lock()
	l.entries = append(l.entries, u)
	l.mu.Unlock()
}

// take returns the entries recorded since the last take, sorted (uploads
// of one call run concurrently).
func (l *uploadLog) take() []contentUpload {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.entries
	l.entries = nil
	if out == nil {
		out = []contentUpload{}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SHA256 != out[j].SHA256 {
			return out[i].SHA256 < out[j].SHA256
		}
		return out[i].Status < out[j].Status
	})
	return out
}

// recordingTransport is the SDK's upload RoundTripper: it records the
// declared size and digest and the receiver's status of every upload.
type recordingTransport struct {
	base http.RoundTripper
	log  *uploadLog
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	u := contentUpload{Size: req.ContentLength, SHA256: req.Header.Get("AHP-Content-SHA256")}
	if err == nil {
		u.Status = resp.StatusCode
	}
	r.log.add(u)
	return resp, err
}

// RunClient runs every scenario and writes the report; it returns an error
// when a scenario failed or the run broke (the report is written in both
// cases when possible).
func RunClient(ctx context.Context, cfg *ClientConfig, log *slog.Logger) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	f, err := Load(cfg.ScenarioFile)
	if err != nil {
		return err
	}
	if cfg.Transport == interop.TransportStdio && cfg.Auth.Mode != interop.AuthNone {
		// Stdio runs on process trust only: every scenario is inapplicable
		// (reported, never passed), and no server is started.
		rep := Report{Language: "go", Results: []ReportEntry{}}
		for _, sc := range f.Scenarios {
			rep.Results = append(rep.Results, ReportEntry{ID: sc.ID, Status: "inapplicable", Actual: json.RawMessage("null"),
				Error: "stdio runs on process trust; auth " + cfg.Auth.Mode + " is inapplicable"})
		}
		body, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		return interop.WriteFileAtomic(cfg.ReportFile, body)
	}
	c := &client{cfg: cfg, log: log, uploads: &uploadLog{}, httpc: &http.Client{
		Timeout:       stepLimit + 10*time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	c.upClient = &http.Client{Transport: &recordingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), log: c.uploads}}
	defer c.close()
	if err := c.start(ctx); err != nil {
		return err
	}
	rep := Report{Language: "go", Results: []ReportEntry{}}
	failed := 0
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		if !sc.Runs(cfg.Transport) {
			rep.Results = append(rep.Results, ReportEntry{ID: sc.ID, Status: "inapplicable", Actual: json.RawMessage("null"),
				Error: "scenario does not run over " + cfg.Transport})
			continue
		}
		entry := c.runScenario(ctx, sc)
		if entry.Status != "passed" {
			failed++
			log.Warn("scenario failed", "id", sc.ID, "error", entry.Error)
		}
		rep.Results = append(rep.Results, entry)
	}
	// The receipts are fetched before shutdown, over both transports.
	rcpt, rerr := c.receipts(ctx)
	if rerr == nil {
		rep.Receipts = rcpt
	}
	closeErr := c.close()
	body, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = interop.WriteFileAtomic(cfg.ReportFile, body)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("write report: %w", err), closeErr)
	}
	switch {
	case rerr != nil:
		return fmt.Errorf("fetch receipts: %w", rerr)
	case closeErr != nil:
		return fmt.Errorf("cleanup: %w", closeErr)
	case failed > 0:
		return fmt.Errorf("%d of %d scenarios failed", failed, len(f.Scenarios))
	}
	log.Info("lifecycle client finished", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "scenarios", len(f.Scenarios))
	return nil
}

// start connects the run: over HTTP to the runner's server, over stdio by
// launching the server child (through the SDK's stdio transport) and
// reading its readiness.
func (c *client) start(ctx context.Context) error {
	cfg := c.cfg
	switch cfg.Transport {
	case interop.TransportHTTP:
		if cfg.Endpoint == "" || cfg.ControlEndpoint == "" {
			return fmt.Errorf("%w: an http client needs endpoint and controlEndpoint", interop.ErrUsage)
		}
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || !u.IsAbs() {
			return fmt.Errorf("%w: endpoint is not an absolute URL", interop.ErrUsage)
		}
		ca, err := interop.NewClientAuth(cfg.Auth, u)
		if err != nil {
			return err
		}
		c.closeFns = append(c.closeFns, func() error { ca.Close(); return nil })
		c.binding, c.provider = ca.Binding, ca.Provider
		evClient := &http.Client{}
		if ca.TLS != nil {
			evClient.Transport = &http.Transport{TLSClientConfig: ca.TLS}
		}
		c.eventURL = cfg.Endpoint
		c.inner = transport.NewHTTP(cfg.Endpoint, transport.HTTPOptions{BackendID: backendID, Client: evClient,
			Authentication: ca.Binding, Credentials: c.credentials()})
		c.control = cfg.ControlEndpoint
		c.upload = cfg.Upload.Endpoint
	case interop.TransportStdio:
		if len(cfg.ServerCommand) == 0 || cfg.ServerConfig == "" {
			return fmt.Errorf("%w: a stdio client needs serverCommand and serverConfig", interop.ErrUsage)
		}
		var sc struct {
			ReadinessFile string `json:"readinessFile"`
		}
		if err := interop.LoadConfig(cfg.ServerConfig, &sc); err != nil {
			return err
		}
		if sc.ReadinessFile == "" {
			return fmt.Errorf("%w: the server config has no readinessFile", interop.ErrUsage)
		}
		_ = os.Remove(sc.ReadinessFile)
		std := transport.NewStdio(transport.StdioOptions{
			BackendID: backendID, Command: cfg.ServerCommand[0],
			Args: append(append([]string{}, cfg.ServerCommand[1:]...), "--config", cfg.ServerConfig),
			Dir:  cfg.ServerCwd, Lifecycle: gen.StdioTransportLifecyclePersistent,
			Env: childEnv(cfg.Upload.Auth.TokenEnv), Stderr: os.Stderr, MaxInFlight: 64,
			// The lifecycle receiver writes unsolicited and stale frames
			// (its reply to every observation among them); they must not
			// consume a live request.
			DiscardUncorrelated: true,
			RelaunchBackoff:     -1, CloseGrace: 5 * time.Second,
		})
		c.inner = std
		if err := c.launch(ctx, std, sc.ReadinessFile); err != nil {
			return err
		}
	}
	c.gate = &gate{inner: c.inner}
	if c.upload == "" {
		return fmt.Errorf("%w: no upload endpoint (config upload.endpoint, or the child's readiness)", interop.ErrUsage)
	}
	return nil
}

// childEnv is the stdio server's environment: the client's, without the
// upload credential (the server gets its upload trust from its config).
func childEnv(tokenEnv string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if tokenEnv != "" && strings.HasPrefix(kv, tokenEnv+"=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// launch starts the stdio child with a discovery request (the SDK's
// stdio transport launches its child on the first message) and reads the
// readiness file the child writes once listening: bounded startup polling,
// never ordering.
func (c *client) launch(ctx context.Context, std *transport.Stdio, readinessFile string) error {
	ctx, cancel := context.WithTimeout(ctx, startupLimit)
	defer cancel()
	body := jsonrpc.AppendRequest(nil, jsonrpc.StringID("lifecycle-launch"), jsonrpc.MethodCapabilities, []byte(`{"protocolVersion":"draft"}`))
	if _, err := std.Exchange(ctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodCapabilities, ID: jsonrpc.StringID("lifecycle-launch"), Body: body}); err != nil {
		return fmt.Errorf("launch the stdio server: %w", err)
	}
	var rd interop.Readiness
	for {
		data, err := os.ReadFile(readinessFile)
		if err == nil && json.Unmarshal(data, &rd) == nil && rd.ControlEndpoint != "" {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the stdio server wrote no readiness: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.control = rd.ControlEndpoint
	c.upload = c.cfg.Upload.Endpoint
	if c.upload == "" && rd.UploadEndpoint != nil {
		c.upload = *rd.UploadEndpoint
	}
	if c.cfg.ChildPidFile != "" {
		if err := interop.WriteFileAtomic(c.cfg.ChildPidFile, []byte(strconv.Itoa(rd.PID))); err != nil {
			return fmt.Errorf("write childPidFile: %w", err)
		}
	}
	return nil
}

// credentials resolves the event endpoint's binding with the configured
// provider and upload credentials from the environment (tokenEnv), never
// one for the other.
func (c *client) credentials() auth.Provider {
	return splitProvider{event: c.provider, upload: auth.EnvironmentProvider{}}
}

type splitProvider struct {
	event  auth.Provider
	upload auth.Provider
}

func (p splitProvider) pick(req auth.Request) auth.Provider {
	if req.Purpose == auth.PurposeUpload || p.event == nil {
		return p.upload
	}
	return p.event
}

func (p splitProvider) Credential(ctx context.Context, req auth.Request) (auth.Credential, error) {
	return p.pick(req).Credential(ctx, req)
}

func (p splitProvider) Challenge(ctx context.Context, req auth.Request, ch auth.Challenge) error {
	return p.pick(req).Challenge(ctx, req, ch)
}

// close shuts the child down (stdio: the end of its stdin, then the
// transport's kill and reap) and releases the run. Idempotent.
func (c *client) close() error {
	var errs []error
	if c.inner != nil {
		errs = append(errs, c.inner.Close())
		c.inner = nil
	}
	for _, f := range c.closeFns {
		errs = append(errs, f())
	}
	c.closeFns = nil
	return errors.Join(errs...)
}

// controlPost posts a JSON control request and checks for a 200 answer.
func (c *client) controlPost(ctx context.Context, path string, body any) error {
	return interop.ControlPost(ctx, c.httpc, c.control, path, body, stepLimit)
}

// receipts fetches GET /receipts.
func (c *client) receipts(ctx context.Context) (*Receipts, error) {
	var r Receipts
	if err := interop.ControlGet(ctx, c.httpc, c.control, "/receipts", 256<<20, &r, stepLimit); err != nil {
		return nil, err
	}
	return &r, nil
}

// scenarioRun is the state of one scenario: its Hooks, its invocations
// and the goroutines it started (joined at its end).
type scenarioRun struct {
	c      *client
	sc     *Scenario
	ctx    context.Context
	cancel context.CancelFunc
	h      *hooks.Hooks
	wg     sync.WaitGroup

	mu      sync.Mutex
	invs    map[string]*invocation   // by key
	ids     map[string]*invocation   // by request id
	order   []string                 // keys in begin order
	settled map[string]chan struct{} // closed once chain-settled is marked, by id
}

func (r *scenarioRun) byID(id string) *invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

// mark posts a client milestone; a failure is logged (the proof will miss
// it and fail verification).
func (r *scenarioRun) mark(ctx context.Context, kind, id string) {
	if err := r.c.controlPost(context.WithoutCancel(ctx), "/mark", map[string]string{"scenario": r.sc.ID, "kind": kind, "id": id}); err != nil {
		r.c.log.Warn("mark failed", "kind", kind, "error", err)
	}
}

// invocation is one host call of a scenario request.
type invocation struct {
	key, id string
	observe bool
	finish  bool
	cancel  context.CancelFunc
	done    chan struct{}
	res     *hooks.Result
	err     error

	// A held call is a hooks.Invocation driven step by step: its request
	// is sent by an Acquire started at begin; acquire waits for it, accept
	// and cancel end it.
	hinv     *hooks.Invocation
	acqDone  chan struct{}
	acqErr   error
	retained bool // acquired and not yet accepted or discarded

	mu  sync.Mutex
	exs []*exchange
}

func (inv *invocation) addExchange(ex *exchange) {
	inv.mu.Lock()
	inv.exs = append(inv.exs, ex)
	inv.mu.Unlock()
}

func (inv *invocation) exchanges() []*exchange {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return append([]*exchange{}, inv.exs...)
}

func (inv *invocation) finished() bool {
	select {
	case <-inv.done:
		return true
	default:
		return false
	}
}

// runScenario runs one scenario and returns its report entry.
func (c *client) runScenario(parent context.Context, sc *Scenario) ReportEntry {
	ctx, cancel := context.WithTimeout(parent, scenarioLimit)
	defer cancel()
	r := &scenarioRun{c: c, sc: sc, ctx: ctx, cancel: cancel, invs: map[string]*invocation{}, ids: map[string]*invocation{}, settled: map[string]chan struct{}{}}
	fail := func(err error) ReportEntry {
		return ReportEntry{ID: sc.ID, Status: "failed", Actual: json.RawMessage("null"), Error: err.Error()}
	}
	if len(sc.Requests) > 0 {
		h, err := c.newHooks(r)
		if err != nil {
			return fail(fmt.Errorf("build the harness: %w", err))
		}
		r.h = h
	}
	c.gate.setRun(r)
	c.uploads.take()
	var stepErr error
	for i, st := range sc.Steps {
		if err := r.step(st); err != nil {
			stepErr = fmt.Errorf("step %d (%s): %w", i, st.Op, err)
			break
		}
	}
	// End every call still running: a scenario leaves nothing behind.
	r.mu.Lock()
	invs := make([]*invocation, 0, len(r.order))
	for _, k := range r.order {
		invs = append(invs, r.invs[k])
	}
	r.mu.Unlock()
	for _, inv := range invs {
		if inv.finished() {
			continue
		}
		if inv.hinv != nil {
			inv.hinv.Cancel()
			<-inv.acqDone
			inv.finishHeld(ctx)
			continue
		}
		inv.cancel()
		<-inv.done
	}
	cancel()
	if r.h != nil {
		_ = r.h.Close()
	}
	r.wg.Wait()
	c.gate.setRun(nil)
	actual := map[string]any{"outcomes": r.outcomes(invs), "contentUploads": c.uploads.take()}
	body, err := json.Marshal(actual)
	if err != nil {
		return fail(err)
	}
	for _, inv := range invs {
		if inv.res != nil {
			_ = inv.res.Close()
		}
	}
	if stepErr != nil {
		return ReportEntry{ID: sc.ID, Status: "failed", Actual: body, Error: stepErr.Error()}
	}
	if err := interop.CompareExact(sc.Expected, body); err != nil {
		return ReportEntry{ID: sc.ID, Status: "failed", Actual: body, Error: "actual differs from expected: " + err.Error()}
	}
	return ReportEntry{ID: sc.ID, Status: "passed", Actual: body}
}

// registration builds the scenario's registration: its chain, or one
// body-selecting fail-closed interceptor, for the event types of its
// requests, each intercept subscription with the configured upload.
func (c *client) registration(sc *Scenario, events []string) ([]byte, error) {
	subs := []Subscription{{Name: "body", Mode: "intercept", FailurePolicy: "fail-closed"}}
	if sc.Chain != nil {
		subs = sc.Chain.Subscriptions
	}
	var tr any
	if c.cfg.Transport == interop.TransportHTTP {
		tr = map[string]any{"type": "http", "url": c.eventURL}
	} else {
		tr = map[string]any{"type": "stdio", "command": c.cfg.ServerCommand[0], "lifecycle": "persistent"}
	}
	upload := map[string]any{"endpoint": c.upload, "timeoutMs": max(c.cfg.Upload.TimeoutMs, 1), "maxBytes": max(c.cfg.Upload.MaxBytes, 1)}
	if c.cfg.Upload.TimeoutMs == 0 {
		upload["timeoutMs"] = 5000
	}
	if c.cfg.Upload.MaxBytes == 0 {
		upload["maxBytes"] = 1 << 20
	}
	if c.cfg.Upload.Auth.TokenEnv != "" {
		upload["auth"] = map[string]any{"type": "bearer", "tokenEnv": c.cfg.Upload.Auth.TokenEnv}
	}
	var list []map[string]any
	for _, s := range subs {
		sel := json.RawMessage(`{"default":"body"}`)
		if len(s.Content) > 0 {
			sel = s.Content
		}
		m := map[string]any{"events": events, "mode": s.Mode, "content": sel}
		if s.Mode == "intercept" {
			m["timeoutMs"] = 60000
			m["failurePolicy"] = s.FailurePolicy
		}
		if !s.NoUpload {
			m["upload"] = upload
		}
		list = append(list, m)
	}
	backend := map[string]any{"id": backendID, "transport": tr, "subscriptions": list}
	if c.binding != nil {
		backend["authentication"] = c.binding
	}
	return json.Marshal(map[string]any{"protocolVersion": "draft", "hooks": []any{backend}})
}

// grantFor is the synthetic host's grant of an event: every effect family,
// target and operation its catalogue entry allows.
func grantFor(info gen.EventInfo) hooks.Grant {
	if !info.Interceptable() {
		return hooks.Observe()
	}
	g := hooks.Intercept()
	for _, fam := range info.EffectFamilies {
		switch fam {
		case gen.EffectFamilyAllow:
			g = g.Allow()
		case gen.EffectFamilyDeny:
			g = g.Deny()
		case gen.EffectFamilyAsk:
			g = g.Ask()
		case gen.EffectFamilyMessage:
			g = g.Message()
		case gen.EffectFamilyReturn:
			g = g.Return()
		case gen.EffectFamilyModify:
			for _, t := range info.ModifyTargets {
				g = g.Modify(t, hooks.Replace, hooks.Merge)
			}
		case gen.EffectFamilyFlow:
			for _, op := range info.FlowOperations {
				switch op {
				case "stop":
					g = g.Stop()
				case "continue":
					g = g.Continue(3)
				}
			}
		case gen.EffectFamilyInject:
			g = g.Inject(gen.DeliverAtNow, gen.DeliverAtNextTurn)
		}
	}
	return g
}

func (c *client) newHooks(r *scenarioRun) (*hooks.Hooks, error) {
	types := map[string]bool{}
	for _, raw := range r.sc.Requests {
		var head struct {
			Params struct {
				Event struct {
					Type string `json:"type"`
				} `json:"event"`
			} `json:"params"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Params.Event.Type == "" {
			return nil, fmt.Errorf("%w: a request without params.event.type", ErrFixture)
		}
		types[head.Params.Event.Type] = true
	}
	var events []string
	caps := map[gen.EventName]hooks.Grant{}
	for _, info := range gen.Events() {
		if types[string(info.Name)] {
			events = append(events, string(info.Name))
			caps[info.Name] = grantFor(info)
		}
	}
	reg, err := c.registration(r.sc, events)
	if err != nil {
		return nil, err
	}
	return hooks.New(reg, hooks.Config{
		Source:                   defaultSource,
		Capabilities:             caps,
		Transports:               map[string]transport.Transport{backendID: c.gate},
		AuthProvider:             c.credentials(),
		UploadHTTPClient:         c.upClient,
		AllowLoopbackHTTPUploads: true,
		Preparer:                 settledMarker{r},
		Logger:                   c.log,
	})
}

// settledMarker marks chain-settled when the first observation of a call
// is prepared: the SDK prepares observations only once the decision is
// settled (a call that settles without observers is marked when it
// returns).
type settledMarker struct{ r *scenarioRun }

func (m settledMarker) Prepare(ctx context.Context, d hooks.Delivery) (*gen.Event, error) {
	if d.Mode == gen.ModeObserve && m.r.sc.Chain != nil && d.Event != nil {
		m.r.settle(ctx, d.Event.ID())
	}
	return d.Event, nil
}

// settle marks chain-settled for id once; concurrent callers (the
// observations of one call are prepared concurrently) wait until the mark
// is recorded, so that it precedes every observation.
func (r *scenarioRun) settle(ctx context.Context, id string) {
	r.mu.Lock()
	ch, done := r.settled[id]
	if !done {
		ch = make(chan struct{})
		r.settled[id] = ch
	}
	r.mu.Unlock()
	if done {
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	}
	r.mark(ctx, KindChainSettled, id)
	close(ch)
}

// request returns the parts of a scenario request the client uses.
func (r *scenarioRun) request(key string) (id string, event json.RawMessage, state *requestState, err error) {
	var env struct {
		ID     string `json:"id"`
		Params struct {
			Event json.RawMessage `json:"event"`
			State *requestState   `json:"state"`
		} `json:"params"`
	}
	if err := json.Unmarshal(r.sc.Requests[key], &env); err != nil {
		return "", nil, nil, fmt.Errorf("%w: request %q", ErrFixture, key)
	}
	return env.ID, env.Params.Event, env.Params.State, nil
}

// requestState is the incoming state of a fixture request.
type requestState struct {
	Permission gen.Permission `json:"permission"`
	Candidate  *struct {
		Value      json.RawMessage `json:"value"`
		Provenance json.RawMessage `json:"provenance,omitempty"`
	} `json:"candidate"`
}

// step runs one step.
func (r *scenarioRun) step(st Step) error {
	ctx, cancel := context.WithTimeout(r.ctx, stepLimit)
	defer cancel()
	switch st.Op {
	case OpBegin, OpObserve:
		return r.begin(st)
	case OpWait:
		return r.c.controlPost(ctx, "/wait", map[string]any{"id": st.ID, "count": max(st.Count, 1)})
	case OpWaitObserved:
		return r.c.controlPost(ctx, "/wait-observed", map[string]any{"eventId": st.ID, "count": max(st.Count, 1)})
	case OpRelease:
		body := map[string]any{"id": st.ID}
		if st.Count > 0 {
			body["count"] = st.Count
		}
		return r.c.controlPost(ctx, "/release", body)
	case OpUpload:
		return r.c.rawUpload(ctx, st)
	}
	inv := r.invs[st.Request]
	if inv == nil {
		return fmt.Errorf("request %q was not begun", st.Request)
	}
	switch st.Op {
	case OpAcquire:
		if inv.hinv == nil {
			return errors.New("acquire needs a held call")
		}
		select {
		case <-inv.acqDone:
		case <-ctx.Done():
			return ctx.Err()
		}
		if inv.acqErr == nil {
			// The first valid response is retained, unpublished.
			inv.retained = true
			r.mark(ctx, KindAcquired, inv.id)
		}
		return nil
	case OpAccept:
		if inv.hinv == nil {
			return errors.New("accept needs a held call")
		}
		select {
		case <-inv.acqDone:
		case <-ctx.Done():
			return ctx.Err()
		}
		inv.finishHeld(ctx)
		return r.await(ctx, inv)
	case OpAwait:
		return r.await(ctx, inv)
	case OpCancel:
		wasDone := inv.finished()
		if inv.hinv != nil {
			retained := inv.retained
			inv.hinv.Cancel()
			select {
			case <-inv.acqDone:
			case <-ctx.Done():
				return ctx.Err()
			}
			inv.finishHeld(ctx)
			r.mark(ctx, KindCancelled, inv.id)
			if !wasDone && retained {
				r.mark(ctx, KindDiscarded, inv.id)
			}
			return nil
		}
		inv.cancel()
		select {
		case <-inv.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		r.mark(ctx, KindCancelled, inv.id)
		return nil
	case OpDrain:
		for _, ex := range inv.exchanges() {
			ex.mu.Lock()
			abandoned := ex.abandoned
			ex.mu.Unlock()
			if !abandoned {
				continue
			}
			select {
			case <-ex.got:
			case <-ctx.Done():
				return ctx.Err()
			}
			r.mark(ctx, KindDiscarded, inv.id)
		}
		return nil
	case OpDuplicate:
		exs := inv.exchanges()
		if len(exs) == 0 {
			return errors.New("no exchange to duplicate")
		}
		last := exs[len(exs)-1]
		select {
		case <-last.got:
		case <-ctx.Done():
			return ctx.Err()
		}
		raw, err := r.c.inner.Exchange(ctx, last.msg)
		if err != nil {
			return fmt.Errorf("duplicate attempt: %w", err)
		}
		if inv.hinv != nil {
			// The SDK decides: a further response for the retained request
			// is discarded (ErrDuplicate), after acceptance it is too late
			// (ErrFinished); it must never be retained.
			switch err := inv.hinv.Receive(raw); {
			case errors.Is(err, hooks.ErrDuplicate), errors.Is(err, hooks.ErrFinished):
			case err == nil:
				return errors.New("the duplicate response was retained")
			default:
				return fmt.Errorf("the duplicate response: %w", err)
			}
		}
		r.mark(ctx, KindDiscarded, inv.id)
		return nil
	}
	return fmt.Errorf("unknown op %q", st.Op)
}

// await waits for the call to return and marks accepted when it settled.
func (r *scenarioRun) await(ctx context.Context, inv *invocation) error {
	select {
	case <-inv.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if inv.res != nil && !inv.res.Interrupted && !inv.observe {
		if r.sc.Chain != nil {
			r.settle(ctx, inv.id)
		}
		r.mark(ctx, KindAccepted, inv.id)
	}
	return nil
}

// begin starts the call of a request: Deliver of its event, with its
// incoming state, its attachments and, for observe, observation only.
func (r *scenarioRun) begin(st Step) error {
	if r.invs[st.Request] != nil {
		return fmt.Errorf("request %q already begun", st.Request)
	}
	id, event, state, err := r.request(st.Request)
	if err != nil {
		return err
	}
	if len(st.Items) > 0 {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(event, &ev); err != nil {
			return fmt.Errorf("%w: event of %q", ErrFixture, st.Request)
		}
		ev["items"] = st.Items
		if event, err = json.Marshal(ev); err != nil {
			return err
		}
	}
	var opts []hooks.CallOption
	if st.Op == OpObserve {
		opts = append(opts, hooks.WithCapabilities(hooks.Observe()))
	}
	if state != nil {
		init := hooks.InitialState(state.Permission)
		if state.Candidate != nil {
			init = init.WithCandidate(state.Candidate.Value, state.Candidate.Provenance)
		}
		opts = append(opts, hooks.WithInitialState(init))
	}
	for _, a := range st.Attachments {
		if event, err = bindPlaceholder(event, a.PartID); err != nil {
			return err
		}
	}
	ev, err := gen.ParseEvent(event)
	if err != nil {
		return fmt.Errorf("%w: event of %q: %w", ErrFixture, st.Request, err)
	}
	// The attachments belong to the call from here on (it closes them).
	var atts []*content.Attachment
	for _, a := range st.Attachments {
		att, err := r.c.attachment(a)
		if err != nil {
			for _, made := range atts {
				_ = made.Close()
			}
			return err
		}
		opts = append(opts, hooks.WithAttachment(a.PartID, att))
		atts = append(atts, att)
	}
	var input struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(event, &input)
	ctx, cancel := context.WithCancel(r.ctx)
	inv := &invocation{key: st.Request, id: id, observe: st.Op == OpObserve, finish: input.Type == string(gen.EventTurnFinishBefore),
		cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.invs[st.Request] = inv
	r.ids[id] = inv
	r.order = append(r.order, st.Request)
	r.mu.Unlock()
	if st.Hold {
		hinv, err := r.h.Begin(ctx, ev, opts...)
		if err != nil {
			cancel()
			return fmt.Errorf("begin: %w", err)
		}
		inv.hinv, inv.acqDone = hinv, make(chan struct{})
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(inv.acqDone)
			inv.acqErr = hinv.Acquire(ctx)
		}()
		return nil
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(inv.done)
		defer cancel()
		inv.res, inv.err = r.h.Dispatch(ctx, ev, opts...)
		if inv.err != nil && inv.res == nil {
			r.c.log.Warn("call failed", "scenario", r.sc.ID, "request", inv.key, "error", inv.err)
		}
	}()
	return nil
}

// finishHeld ends a held call with Accept (after Cancel, the interrupted
// Result) and records its outcome.
func (inv *invocation) finishHeld(ctx context.Context) {
	if inv.finished() {
		return
	}
	inv.res, inv.err = inv.hinv.Accept(ctx)
	inv.retained = false
	inv.cancel()
	close(inv.done)
}

// bindPlaceholder puts the SDK's placeholder of partID into the event's
// attachment part of that id, which WithAttachment then fills.
func bindPlaceholder(event json.RawMessage, partID string) (json.RawMessage, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(event))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if t["id"] == partID && t["kind"] == "attachment" {
				t["body"] = map[string]any{"ref": hooks.AttachmentRef(partID)}
				found = true
			}
			for _, c := range t {
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(doc)
	if !found {
		return nil, fmt.Errorf("%w: no attachment part %q in the event", ErrFixture, partID)
	}
	return json.Marshal(doc)
}

// attachment builds an owned attachment from a spec: inline bytes, or a
// configured content source read lazily.
func (c *client) attachment(a AttachmentSpec) (*content.Attachment, error) {
	if a.Source != "" {
		path, ok := c.cfg.ContentSources[a.Source]
		if !ok {
			return nil, fmt.Errorf("%w: unknown content source %q", ErrFixture, a.Source)
		}
		return content.Lazy(a.MediaType, func(context.Context) (io.ReadCloser, error) { return os.Open(path) }, nil)
	}
	data, err := base64.StdEncoding.DecodeString(a.BodyBase64)
	if err != nil {
		return nil, fmt.Errorf("%w: attachment %q: bodyBase64", ErrFixture, a.PartID)
	}
	return content.FromBytes(a.MediaType, data)
}

// rawUpload is the upload step: raw octets to the upload endpoint with the
// declared framing, over a connection of its own (so that a declared
// Content-Length other than the body's is sent as declared), recording the
// receiver's actual status. A transport failure is an error, never a
// receiver status.
func (c *client) rawUpload(ctx context.Context, st Step) error {
	data, err := base64.StdEncoding.DecodeString(st.BodyBase64)
	if err != nil {
		return fmt.Errorf("%w: bodyBase64", ErrFixture)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	size := int64(len(data))
	if st.DeclaredSHA256 != "" {
		digest = st.DeclaredSHA256
	}
	if st.DeclaredSize != nil {
		size = *st.DeclaredSize
	}
	u, err := url.Parse(c.upload)
	if err != nil || u.Scheme != "http" || !transport.IsLoopbackHost(u.Hostname()) {
		return errors.New("upload steps need a plain http loopback upload endpoint")
	}
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\nAHP-Content-SHA256: %s\r\nConnection: close\r\n",
		u.RequestURI(), u.Host, size, digest)
	switch st.Credential {
	case "", "upload":
		tok := os.Getenv(c.cfg.Upload.Auth.TokenEnv)
		if tok == "" || strings.ContainsAny(tok, "\r\n") {
			return errors.New("the upload token variable is not set or not a header value")
		}
		head.WriteString("Authorization: Bearer " + tok + "\r\n")
	case "invalid":
		head.WriteString("Authorization: Bearer invalid-upload-credential\r\n")
	}
	head.WriteString("\r\n")
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(append([]byte(head.String()), data...)); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if tc, ok := conn.(*net.TCPConn); ok && size > int64(len(data)) {
		_ = tc.CloseWrite() // a declared length beyond the body ends short
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return fmt.Errorf("upload: no response: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	c.uploads.add(contentUpload{Status: resp.StatusCode, Size: size, SHA256: digest})
	return nil
}
