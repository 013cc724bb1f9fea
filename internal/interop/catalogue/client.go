package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// ClientConfig is the catalogue client's configuration: the core
// contract's members plus suite, the control endpoint (HTTP; a stdio
// child's readiness supplies it) and the stdio child's pid file.
type ClientConfig struct {
	interop.ClientConfig
	Suite           string `json:"suite,omitempty"`
	ControlEndpoint string `json:"controlEndpoint,omitempty"`
	ChildPidFile    string `json:"childPidFile,omitempty"`
}

// Source is the harness source of the client's hooks.Hooks, and so of
// every event it sends.
const Source = "urn:ahp:interop:catalogue"

// backendID names the one backend of the client's registration.
const backendID = "org.agenthooks.interop-catalogue"

// Watchdogs.
const (
	startupLimit = 3 * time.Minute
	stepLimit    = 30 * time.Second
)

// Report is the client's report (LIFECYCLE.md, "Catalogue adapter
// extension").
type Report struct {
	Language string        `json:"language"`
	Results  []ReportEntry `json:"results"`
	Receipts *Receipts     `json:"receipts"`
}

// ReportEntry is one scenario's result.
type ReportEntry struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Actual Actual `json:"actual"`
	Error  string `json:"error,omitempty"`
}

// Actual is what a scenario did: every message sent, in order, and the
// outcome of every registration evaluated.
type Actual struct {
	Sent          []json.RawMessage `json:"sent"`
	Registrations []Registration    `json:"registrations"`
}

// Registration is the SDK's load-time verdict on one registration.
type Registration struct {
	Accepted bool `json:"accepted"`
}

// recorder is the client's transport: the SDK transport, with every
// notification body recorded before it is sent.
type recorder struct {
	inner transport.Transport
	mu    sync.Mutex
	sent  []json.RawMessage
}

func (r *recorder) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	return r.inner.Exchange(ctx, msg)
}

func (r *recorder) Notify(ctx context.Context, msg transport.Message) error {
	r.mu.Lock()
	// A body that is not JSON (a raw negative) is recorded as a JSON string.
	r.sent = append(r.sent, asMessage(msg.Body))
	r.mu.Unlock()
	return r.inner.Notify(ctx, msg)
}

func (r *recorder) Close() error { return nil } // borrowed by the Hooks; closed by the client

// take returns and clears the recorded messages.
func (r *recorder) take() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

type client struct {
	cfg      *ClientConfig
	log      *slog.Logger
	inner    transport.Transport
	rec      *recorder
	control  string
	httpc    *http.Client
	auth     *interop.ClientAuth
	manifest *gen.StaticCapabilityManifest
	h        *hooks.Hooks
	regTr    map[string]any
}

// RunClient runs every scenario over one connection and writes the report
// (with the server's receipts). It fails when a scenario failed or the run
// broke; the report is written whenever the run got as far as the
// scenarios.
func RunClient(ctx context.Context, cfg *ClientConfig, log *slog.Logger) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	f, err := Load(cfg.ScenarioFile)
	if err != nil {
		return err
	}
	if cfg.Transport == interop.TransportStdio && cfg.Auth.Mode != interop.AuthNone {
		// Stdio runs on process trust only: every scenario is
		// inapplicable, never passed, and no server is started.
		rep := Report{Language: "go", Results: make([]ReportEntry, 0, len(f.Scenarios)), Receipts: &Receipts{Entries: []Receipt{}}}
		for _, sc := range f.Scenarios {
			rep.Results = append(rep.Results, ReportEntry{ID: sc.ID, Status: "inapplicable",
				Actual: Actual{Sent: []json.RawMessage{}, Registrations: []Registration{}}, Error: "stdio runs on process trust only"})
		}
		log.Info("combination not run", "transport", cfg.Transport, "auth", cfg.Auth.Mode)
		return writeReport(cfg.ReportFile, &rep)
	}
	c := &client{cfg: cfg, log: log, httpc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	defer c.close()
	if err := c.start(ctx); err != nil {
		return err
	}
	if err := c.startHooks(); err != nil {
		return err
	}
	rep := Report{Language: "go", Results: make([]ReportEntry, 0, len(f.Scenarios))}
	failed, total := 0, 0
	for i := range f.Scenarios {
		e := c.runScenario(ctx, &f.Scenarios[i])
		total += len(e.Actual.Sent)
		if e.Status != "passed" {
			failed++
			log.Warn("scenario failed", "id", e.ID, "error", e.Error)
		}
		rep.Results = append(rep.Results, e)
	}
	if err := c.controlPost(ctx, "/wait-messages", map[string]int{"count": total}); err != nil {
		return fmt.Errorf("wait for the receiver: %w", err)
	}
	rc, err := c.receipts(ctx)
	if err != nil {
		return fmt.Errorf("fetch receipts: %w", err)
	}
	rep.Receipts = rc
	if err := writeReport(cfg.ReportFile, &rep); err != nil {
		return err
	}
	if err := c.close(); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d scenarios failed", failed, len(f.Scenarios))
	}
	log.Info("catalogue client finished", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "scenarios", len(f.Scenarios))
	return nil
}

// start connects the run and performs the one capability discovery: over
// HTTP to the runner's server, over stdio by launching the server child
// through the SDK's stdio transport (discovery is its first message) and
// reading its readiness.
func (c *client) start(ctx context.Context) error {
	cfg := c.cfg
	readiness := ""
	switch cfg.Transport {
	case interop.TransportHTTP:
		if cfg.Endpoint == "" || cfg.ControlEndpoint == "" {
			return fmt.Errorf("%w: an http client needs endpoint and controlEndpoint", interop.ErrUsage)
		}
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%w: endpoint is not an absolute http(s) URL", interop.ErrUsage)
		}
		ca, err := interop.NewClientAuth(cfg.Auth, u)
		if err != nil {
			return err
		}
		c.auth = ca
		ev := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if ca.TLS != nil {
			ev.Transport = &http.Transport{TLSClientConfig: ca.TLS}
		}
		c.inner = transport.NewHTTP(cfg.Endpoint, transport.HTTPOptions{BackendID: backendID, Client: ev,
			Authentication: ca.Binding, Credentials: ca.Provider})
		c.control = cfg.ControlEndpoint
		c.regTr = map[string]any{"type": "http", "url": cfg.Endpoint}
	case interop.TransportStdio:
		if len(cfg.ServerCommand) == 0 || cfg.ServerCommand[0] == "" || cfg.ServerConfig == "" {
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
		readiness = sc.ReadinessFile
		c.inner = transport.NewStdio(transport.StdioOptions{
			BackendID: backendID, Command: cfg.ServerCommand[0],
			Args: append(append([]string{}, cfg.ServerCommand[1:]...), "--config", cfg.ServerConfig),
			Dir:  cfg.ServerCwd, Lifecycle: gen.StdioTransportLifecyclePersistent,
			Env: os.Environ(), Stderr: os.Stderr, RelaunchBackoff: -1, CloseGrace: 5 * time.Second,
		})
		c.regTr = map[string]any{"type": "stdio", "command": cfg.ServerCommand[0], "lifecycle": "persistent"}
	default:
		return fmt.Errorf("%w: unknown transport", interop.ErrUsage)
	}
	c.rec = &recorder{inner: c.inner}
	if err := c.discover(ctx); err != nil {
		return fmt.Errorf("capability discovery: %w", err)
	}
	if readiness != "" {
		if err := c.readReadiness(ctx, readiness); err != nil {
			return err
		}
	}
	return nil
}

// discover sends the canonical hooks/capabilities request over the event
// transport, validates the answer canonically and keeps its manifest, the
// one every registration is evaluated against.
func (c *client) discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startupLimit)
	defer cancel()
	id := jsonrpc.StringID("catalogue-discovery")
	body := jsonrpc.AppendRequest(nil, id, jsonrpc.MethodCapabilities, []byte(`{"protocolVersion":"draft"}`))
	raw, err := c.inner.Exchange(ctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodCapabilities, ID: id, Body: body})
	if err != nil {
		return err
	}
	resp, err := gen.ParseCapabilitiesResponse(raw)
	if err != nil {
		return fmt.Errorf("response: %w", err)
	}
	m := resp.Result.Manifest
	if err := CheckManifest(&m); err != nil {
		return err
	}
	c.manifest = &m
	return nil
}

// CheckManifest checks what the catalogue suite requires of the server's
// manifest: observe for every execution and lineage event, nothing for
// hook.failure, managed-policy scopes exactly user and project.
func CheckManifest(m *gen.StaticCapabilityManifest) error {
	modes := map[string][]gen.StaticCapabilityManifestEventMode{}
	for _, e := range m.Events {
		modes[string(e.Event)] = e.Modes
	}
	for _, name := range ObservedEvents() {
		if !slices.Contains(modes[string(name)], gen.StaticCapabilityManifestEventModeObserve) {
			return fmt.Errorf("manifest does not offer %s for observation", name)
		}
	}
	if _, ok := modes[string(gen.EventHookFailure)]; ok {
		return errors.New("manifest lists hook.failure")
	}
	scopes := m.ManagedPolicy.Scopes
	if len(scopes) != 2 || scopes[0] != "user" || scopes[1] != "project" {
		return errors.New(`manifest managedPolicy.scopes is not ["user","project"]`)
	}
	return nil
}

func (c *client) readReadiness(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, startupLimit)
	defer cancel()
	var rd interop.Readiness
	for {
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &rd) == nil && rd.ControlEndpoint != "" {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the stdio server wrote no readiness: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond): // bounded startup polling only
		}
	}
	if c.control == "" {
		c.control = rd.ControlEndpoint
	}
	if c.cfg.ChildPidFile != "" {
		if err := interop.WriteFileAtomic(c.cfg.ChildPidFile, []byte(strconv.Itoa(rd.PID))); err != nil {
			return fmt.Errorf("write childPidFile: %w", err)
		}
	}
	return nil
}

// startHooks builds the harness the notify steps go through: one backend
// (the recording transport, borrowed) with one observe subscription to
// every event the discovered manifest offers for observation, seeing
// bodies and native members, under the discovered manifest.
func (c *client) startHooks() error {
	var events []string
	for _, e := range c.manifest.Events {
		if slices.Contains(e.Modes, gen.StaticCapabilityManifestEventModeObserve) {
			events = append(events, string(e.Event))
		}
	}
	reg, err := json.Marshal(map[string]any{
		"protocolVersion": gen.ProtocolVersion,
		"hooks": []any{map[string]any{
			"id":        backendID,
			"transport": c.regTr,
			"subscriptions": []any{map[string]any{
				"events": events, "mode": "observe",
				"content":       map[string]any{"default": "body"},
				"includeNative": true,
			}},
		}},
	})
	if err != nil {
		return err
	}
	h, err := hooks.New(reg, hooks.Config{
		Source:         Source,
		Manifest:       c.manifest,
		Transports:     map[string]transport.Transport{backendID: c.rec},
		ObserveTimeout: stepLimit,
		Logger:         c.log,
	})
	if err != nil {
		return fmt.Errorf("start the harness: %w", err)
	}
	c.h = h
	return nil
}

// runScenario runs the steps of one scenario. It never reads the expected
// outcome.
func (c *client) runScenario(ctx context.Context, sc *Scenario) ReportEntry {
	e := ReportEntry{ID: sc.ID, Status: "passed", Actual: Actual{Sent: []json.RawMessage{}, Registrations: []Registration{}}}
	c.rec.take()
	fail := func(err error) ReportEntry {
		e.Status, e.Error = "failed", err.Error()
		e.Actual.Sent = append(e.Actual.Sent, c.rec.take()...)
		return e
	}
	for i, st := range sc.Steps {
		var err error
		switch st.Op {
		case OpNotify:
			err = c.notify(ctx, st.Event)
		case OpRawNotify:
			err = c.rawNotify(ctx, st)
		case OpRegister:
			var ok bool
			ok, err = c.register(st.Registration)
			if err == nil {
				e.Actual.Registrations = append(e.Actual.Registrations, Registration{Accepted: ok})
			}
		default:
			err = fmt.Errorf("%w: unknown op %q", ErrFixture, st.Op)
		}
		if err != nil {
			return fail(fmt.Errorf("step %d (%s): %w", i, st.Op, err))
		}
	}
	e.Actual.Sent = append(e.Actual.Sent, c.rec.take()...)
	return e
}

// notify delivers a canonical event through hooks.Hooks.Dispatch: the
// observe subscription gets the hooks/observe notification the harness
// builds.
func (c *client) notify(ctx context.Context, raw json.RawMessage) error {
	if len(raw) == 0 {
		return fmt.Errorf("%w: notify needs event", ErrFixture)
	}
	ev, err := gen.ParseEvent(raw)
	if err != nil {
		return fmt.Errorf("event is not canonical: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	res, err := c.h.Dispatch(ctx, ev)
	if err != nil {
		return err
	}
	for _, d := range res.Diagnostics {
		c.log.Warn("observation diagnostic", "code", d.Code, "reason", d.Reason)
	}
	return nil
}

// rawNotify sends the step's message to the event binding unchanged, over
// the same transport; the receiver's refusal is its receipt, so a
// rejection on the wire is not an error here.
func (c *client) rawNotify(ctx context.Context, st Step) error {
	var body []byte
	switch {
	case st.Raw != nil:
		body = []byte(*st.Raw)
	case len(st.Message) > 0:
		m, err := interop.CompactJSON(st.Message)
		if err != nil {
			return err
		}
		body = m
	default:
		return fmt.Errorf("%w: rawNotify needs message or raw", ErrFixture)
	}
	if bytes.ContainsAny(body, "\r\n") {
		return fmt.Errorf("%w: a raw message is one line", ErrFixture)
	}
	ctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	err := c.rec.Notify(ctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodObserve, Body: body})
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		c.log.Info("raw notification refused", "error", err)
	}
	return nil
}

// register evaluates a registration with the SDK's own load-time checks
// (hooks.New, the same code every harness runs) against the discovered
// manifest. New performs no I/O.
func (c *client) register(raw json.RawMessage) (bool, error) {
	if len(raw) == 0 {
		return false, fmt.Errorf("%w: register needs registration", ErrFixture)
	}
	h, err := hooks.New(raw, hooks.Config{Source: Source, Manifest: c.manifest, Logger: c.log})
	if err != nil {
		if !errors.Is(err, hooks.ErrInvalidRegistration) {
			return false, err
		}
		c.log.Info("registration rejected", "error", err)
		return false, nil
	}
	return true, h.Close()
}

func (c *client) close() error {
	var errs []error
	if c.h != nil {
		errs = append(errs, c.h.Close())
		c.h = nil
	}
	if c.inner != nil {
		errs = append(errs, c.inner.Close())
		c.inner = nil
	}
	if c.auth != nil {
		c.auth.Close()
		c.auth = nil
	}
	return errors.Join(errs...)
}

// controlPost posts a JSON control request and checks for a 200 answer.
func (c *client) controlPost(ctx context.Context, path string, body any) error {
	return interop.ControlPost(ctx, c.httpc, c.control, path, body, stepLimit)
}

// receipts fetches GET /receipts.
func (c *client) receipts(ctx context.Context) (*Receipts, error) {
	var r Receipts
	if err := interop.ControlGet(ctx, c.httpc, c.control, "/receipts", 64<<20, &r, stepLimit); err != nil {
		return nil, err
	}
	return &r, nil
}

func writeReport(path string, rep *Report) error {
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := interop.WriteFileAtomic(path, append(body, '\n')); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
