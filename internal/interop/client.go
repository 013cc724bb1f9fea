package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// Report statuses of the adapter contract.
const (
	statusPassed       = "passed"
	statusFailed       = "failed"
	statusUnsupported  = "unsupported"
	statusInapplicable = "inapplicable"
)

// Watchdogs. The first exchange over stdio launches the server (possibly
// compiling it with go run), so discovery gets the startup budget; each
// scenario gets its own bounded exchange.
const (
	startupTimeout  = 3 * time.Minute
	scenarioTimeout = 30 * time.Second
)

// backendID names the single backend: in the registration the client's
// hooks.Hooks is built from, and in transport diagnostics.
const backendID = "org.agenthooks.interop-server"

// report is the client's report document.
type report struct {
	Language string        `json:"language"`
	Results  []reportEntry `json:"results"`
}

// reportEntry is one scenario's outcome. Error text comes from fixed
// vocabularies and never contains credentials, endpoints or backend text.
type reportEntry struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Actual json.RawMessage `json:"actual"`
	Error  string          `json:"error,omitempty"`
}

// rowOutcome is a scenario's report entry plus what our tests inspect: the
// rejection, if any, and the host state before and after the response.
type rowOutcome struct {
	entry     reportEntry
	rejection *rejection
	before    *hostSnapshot
	after     *hostSnapshot
}

// clientApplicability returns the status every row gets when this adapter
// does not run the configured combination, or "" when it does: every auth
// label runs over HTTP; over stdio only none does (process trust).
func clientApplicability(cfg *ClientConfig) (string, error) {
	switch cfg.Auth.Mode {
	case AuthNone:
		return "", nil
	case AuthBearer, AuthOAuth, AuthMTLS, AuthWorkload:
		if cfg.Transport == TransportStdio {
			return statusInapplicable, nil // stdio runs on process trust only
		}
		return "", nil
	default:
		return "", fmt.Errorf("%w: unknown auth mode", ErrUsage)
	}
}

// RunClient runs every scenario and writes the report. It returns an error
// when any applicable scenario failed or the run itself broke; the report is
// written in both cases.
func RunClient(ctx context.Context, cfg *ClientConfig, log *slog.Logger) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	f, err := LoadScenarios(cfg.ScenarioFile)
	if err != nil {
		return err
	}
	skip, err := clientApplicability(cfg)
	if err != nil {
		return err
	}
	rep := report{Language: "go", Results: make([]reportEntry, 0, len(f.Scenarios))}
	if skip != "" {
		for _, sc := range f.Scenarios {
			rep.Results = append(rep.Results, reportEntry{ID: sc.ID, Status: skip, Actual: json.RawMessage("null"),
				Error: fmt.Sprintf("%s over %s is %s for the Go adapter", cfg.Auth.Mode, cfg.Transport, skip)})
		}
		log.Info("combination not run", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "status", skip)
		return writeReport(cfg.ReportFile, &rep)
	}

	c, err := newInteropClient(cfg, log)
	if err != nil {
		return err
	}
	if err := c.startHooks(f); err != nil {
		return errors.Join(err, c.close())
	}
	discErr := c.discover(ctx)
	if discErr != nil {
		log.Error("capability discovery failed", "error", discErr)
	}
	failed := 0
	for i := range f.Scenarios {
		var out rowOutcome
		if discErr != nil {
			out.entry = reportEntry{ID: f.Scenarios[i].ID, Status: statusFailed, Actual: json.RawMessage("null"), Error: "capability discovery failed: " + discErr.Error()}
		} else {
			out = c.runScenario(ctx, &f.Scenarios[i])
		}
		if out.entry.Status == statusFailed {
			failed++
			log.Warn("scenario failed", "id", out.entry.ID, "error", out.entry.Error)
		}
		rep.Results = append(rep.Results, out.entry)
	}
	closeErr := c.close()
	if err := writeReport(cfg.ReportFile, &rep); err != nil {
		return errors.Join(err, closeErr)
	}
	log.Info("client finished", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "scenarios", len(f.Scenarios), "failed", failed)
	if closeErr != nil {
		return fmt.Errorf("cleanup: %w", closeErr)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d applicable scenarios failed", failed, len(f.Scenarios))
	}
	return nil
}

func writeReport(path string, rep *report) error {
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := WriteFileAtomic(path, append(body, '\n')); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// interopClient delivers scenario requests through the SDK's harness
// (hooks.Hooks, one backend borrowing one SDK transport) and settles them
// with it.
type interopClient struct {
	cfg *ClientConfig
	log *slog.Logger
	tr  transport.Transport
	h   *hooks.Hooks
	// endpoint is the HTTP endpoint the registration names (its transport
	// is tr); empty for stdio and in-process tests.
	endpoint string
	// startup bounds discovery (which launches a stdio child); perRow
	// bounds each scenario exchange.
	startup, perRow time.Duration
	// discovery over HTTP is GET {origin}/capabilities (CONTRACT.md).
	discoveryURL string
	httpClient   *http.Client
	// auth is the HTTP endpoint authentication; areq is the credential
	// request of its discovery GET (the transport builds its own).
	auth *ClientAuth
	areq auth.Request
}

// newInteropClient builds the transport: HTTP to the endpoint (POST
// /intercept when the endpoint names no path), or an owned persistent stdio
// child running serverCommand --config serverConfig.
func newInteropClient(cfg *ClientConfig, log *slog.Logger) (*interopClient, error) {
	c := &interopClient{cfg: cfg, log: log, startup: startupTimeout, perRow: scenarioTimeout}
	switch cfg.Transport {
	case TransportHTTP:
		if cfg.Endpoint == "" {
			return nil, fmt.Errorf("%w: http client config needs endpoint", ErrUsage)
		}
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: endpoint is not an http(s) URL", ErrUsage)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/intercept"
		}
		ca, err := NewClientAuth(cfg.Auth, u)
		if err != nil {
			return nil, err
		}
		c.auth = ca
		// One client for discovery and interception, borrowed by the
		// transport: its TLS configuration carries the mtls identity, and
		// neither follows a redirect.
		ht := http.DefaultTransport.(*http.Transport).Clone()
		ht.TLSClientConfig = ca.TLS
		c.httpClient = &http.Client{Transport: ht, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		opts := transport.HTTPOptions{BackendID: backendID, Client: c.httpClient, Authentication: ca.Binding, Credentials: ca.Provider}
		c.tr = transport.NewHTTP(u.String(), opts)
		c.endpoint = u.String()
		d := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/capabilities"}
		c.discoveryURL = d.String()
		c.areq = auth.Request{BackendID: backendID, URL: c.discoveryURL, Purpose: auth.PurposeEvent}
		if ca.Binding != nil {
			c.areq.Binding = *ca.Binding
		}
	case TransportStdio:
		if len(cfg.ServerCommand) == 0 || cfg.ServerCommand[0] == "" {
			return nil, fmt.Errorf("%w: stdio client config needs serverCommand", ErrUsage)
		}
		args := append([]string{}, cfg.ServerCommand[1:]...)
		if cfg.ServerConfig != "" {
			args = append(args, "--config", cfg.ServerConfig)
		}
		c.tr = transport.NewStdio(transport.StdioOptions{
			BackendID: backendID,
			Command:   cfg.ServerCommand[0],
			Args:      args,
			Dir:       cfg.ServerCwd,
			Lifecycle: gen.StdioTransportLifecyclePersistent,
			// The server command is the runner's (or our test's) own
			// process, typically `go run`, which needs the toolchain's
			// environment; the client holds no secret in its environment.
			Env:    os.Environ(),
			Stderr: os.Stderr,
			// Scripted negative rows deliberately answer with uncorrelated
			// ids; they must not get the shared child restarted.
			MaxMalformed: 1 << 30,
		})
	}
	return c, nil
}

func (c *interopClient) close() error {
	var err error
	if c.h != nil {
		err = c.h.Close()
	}
	err = errors.Join(err, c.tr.Close())
	if c.httpClient != nil {
		c.httpClient.CloseIdleConnections()
	}
	c.auth.Close()
	return err
}

// discover performs capability discovery before any scenario, independent
// of a session: hooks/capabilities over stdio (this exchange also launches
// the child, so it runs under the startup watchdog), GET /capabilities over
// HTTP. The answer must be a canonical capabilities response.
func (c *interopClient) discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.startup)
	defer cancel()
	codec, ok := gen.LookupRoot("capabilities-response.schema.json")
	if !ok {
		return errors.New("no codec for capabilities-response.schema.json")
	}
	if c.cfg.Transport == TransportStdio {
		id := jsonrpc.StringID("go-interop-discovery")
		body := jsonrpc.AppendRequest(nil, id, jsonrpc.MethodCapabilities, []byte(`{"protocolVersion":"draft"}`))
		raw, err := c.tr.Exchange(ctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodCapabilities, ID: id, Body: body})
		if err != nil {
			return fmt.Errorf("exchange: %w", err)
		}
		if _, err := codec.Parse(raw); err != nil {
			return fmt.Errorf("response: %w", err)
		}
		return nil
	}
	resp, err := c.getDiscovery(ctx)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil || len(raw) > MaxBody {
		return errors.New("discovery response unreadable or too large")
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discovery answered HTTP status %d", resp.StatusCode)
	}
	if _, err := codec.Parse(raw); err != nil {
		// Accept a bare result object as well, validated the same way.
		wrapped := jsonrpc.AppendResponse(nil, jsonrpc.StringID("discovery"), raw)
		if _, err2 := codec.Parse(wrapped); err2 != nil {
			return fmt.Errorf("response: %w", err)
		}
	}
	return nil
}

// getDiscovery performs GET /capabilities with the endpoint's credential
// (the discovery endpoint uses the endpoint's authentication,
// capability-auth.md). A 401 is reported to the provider; after a Bearer
// challenge the request is made once more with the provider's new
// credential, as the transport does for requests.
func (c *interopClient) getDiscovery(ctx context.Context) (*http.Response, error) {
	get := func(cred auth.Credential) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.discoveryURL, nil)
		if err != nil {
			return nil, errors.New("cannot build the discovery request")
		}
		req.Header.Set("Accept", "application/json")
		if cred.Token != "" {
			req.Header.Set("Authorization", "Bearer "+cred.Token)
		}
		resp, err := c.httpClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("discovery: %w", ctx.Err())
			}
			return nil, errors.New("discovery endpoint unreachable") // the net error names the URL
		}
		return resp, nil
	}
	p := c.auth.Provider
	if p == nil {
		return get(auth.Credential{})
	}
	credential := func() (auth.Credential, error) {
		cred, err := p.Credential(ctx, c.areq)
		if err != nil || !auth.ValidToken(cred.Token) {
			if ctx.Err() != nil {
				return auth.Credential{}, fmt.Errorf("discovery: %w", ctx.Err())
			}
			return auth.Credential{}, errors.New("discovery credential unavailable")
		}
		return cred, nil
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	resp, err := get(cred)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxBody))
	resp.Body.Close()
	ch := auth.Challenge{Status: resp.StatusCode, Header: resp.Header, Attempt: cred.Identity}
	ch.Challenges, _ = auth.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	_, ch.Replay = ch.Bearer()
	if err := p.Challenge(ctx, c.areq, ch); err != nil || !ch.Replay {
		return nil, errors.New("discovery answered HTTP status 401")
	}
	next, err := credential()
	if err != nil {
		return nil, err
	}
	if next.Token == cred.Token {
		return nil, errors.New("discovery answered HTTP status 401")
	}
	return get(next)
}

// startHooks builds the harness every scenario runs through: a
// registration with the one backend (its transport borrowed: c.tr) and one
// fail-open intercept subscription to every event the scenarios use,
// seeing bodies and native members, so that each receives the scenario's
// request exactly as written; and a manifest granting every capability of
// those events, of which each request's capabilities are a narrowing.
// Fail-open keeps a rejected response from publishing anything: the
// rejection is the call's diagnostic.
func (c *interopClient) startHooks(f *ScenarioFile) error {
	events := map[string]bool{}
	var names []string
	for i := range f.Scenarios {
		var head struct {
			Params struct {
				Event struct {
					Type string `json:"type"`
				} `json:"event"`
			} `json:"params"`
		}
		if json.Unmarshal(f.Scenarios[i].Request, &head) != nil || head.Params.Event.Type == "" || events[head.Params.Event.Type] {
			continue
		}
		info, ok := gen.LookupEvent(gen.EventName(head.Params.Event.Type))
		if !ok || !info.Interceptable() {
			continue
		}
		events[head.Params.Event.Type] = true
		names = append(names, head.Params.Event.Type)
	}
	if len(names) == 0 {
		return nil // no interception row: each fails on its own
	}
	kind := TransportHTTP
	endpoint := c.endpoint
	if endpoint == "" {
		endpoint = "http://127.0.0.1/intercept" // a borrowed in-process transport
	}
	tr := map[string]any{"type": "http", "url": endpoint}
	if c.cfg.Transport == TransportStdio {
		kind = TransportStdio
		tr = map[string]any{"type": "stdio", "command": "interop-server", "lifecycle": "persistent"}
	}
	reg, err := json.Marshal(map[string]any{
		"protocolVersion": gen.ProtocolVersion,
		"hooks": []any{map[string]any{
			"id":        backendID,
			"transport": tr,
			"subscriptions": []any{map[string]any{
				"events": names, "mode": "intercept", "failurePolicy": "fail-open",
				"timeoutMs":     max(1, c.perRow.Milliseconds()),
				"content":       map[string]any{"default": "body"},
				"includeNative": true,
			}},
		}},
	})
	if err != nil {
		return fmt.Errorf("encode registration: %w", err)
	}
	manifest, err := discoveryManifest(events, kind, &ServerAuth{Mode: AuthNone}, hostAllowance)
	if err != nil {
		return err
	}
	h, err := hooks.New(reg, hooks.Config{
		Source:     "urn:ahp:interop:go-client",
		Manifest:   manifest,
		Transports: map[string]transport.Transport{backendID: c.tr},
		Logger:     c.log,
	})
	if err != nil {
		return fmt.Errorf("start the harness: %w", err)
	}
	c.h = h
	return nil
}

// hostAllowance is the synthetic host's continuation allowance in its
// manifest: any scenario's remainingContinuations is a narrowing of it.
const hostAllowance = 1 << 20

// runScenario delivers one scenario request and settles the response under
// the synthetic-host semantics, through a hooks.Invocation begun from the
// scenario's canonical request: the response is acquired over the
// harness's transport and retained, checked against the synthetic tool's
// codec, and accepted (published atomically) or rejected. It never looks at
// the expected answer before the result is derived.
func (c *interopClient) runScenario(ctx context.Context, sc *Scenario) rowOutcome {
	return c.settleRow(ctx, sc, func(ctx context.Context, inv *hooks.Invocation) error { return inv.Acquire(ctx) })
}

// settleRow runs one row with obtain getting the response into the
// invocation (Acquire over the harness's transport, or Receive of bytes
// obtained otherwise).
func (c *interopClient) settleRow(ctx context.Context, sc *Scenario, obtain func(context.Context, *hooks.Invocation) error) rowOutcome {
	fail := func(msg string) rowOutcome {
		return rowOutcome{entry: reportEntry{ID: sc.ID, Status: statusFailed, Actual: json.RawMessage("null"), Error: msg}}
	}
	req, err := gen.ParseInterceptRequest(sc.Request)
	if err != nil {
		return fail("scenario request is not canonical: " + err.Error())
	}
	if id, ok := req.ID.AsString(); !ok || id != sc.ID || req.Params.Event.ID() != sc.ID {
		return fail("scenario request id, event id and scenario id differ")
	}
	host, err := newSyntheticHost(req, sc.Request)
	if err != nil {
		return fail("cannot start the synthetic host: " + err.Error())
	}
	if c.h == nil {
		return fail("cannot start the synthetic host: no harness")
	}
	before := host.snapshot()

	xctx, cancel := context.WithTimeout(ctx, c.perRow)
	defer cancel()
	inv, err := c.h.BeginRequest(xctx, sc.Request)
	if err != nil {
		return fail("cannot begin the interception: " + err.Error())
	}
	if _, ok := inv.Request(); !ok {
		inv.Cancel()
		return fail("cannot begin the interception: nothing to deliver")
	}
	var rej *rejection
	err = obtain(xctx, inv)
	var ae *hooks.AttemptError
	switch {
	case errors.Is(err, hooks.ErrUncorrelated):
		// A response for another request: this one's was never received,
		// and nothing may be published for it.
		inv.Cancel()
		out := rowOutcome{rejection: &rejection{stageCorrelation, "response id does not match the request id"}, before: &before}
		after := host.snapshot()
		out.after = &after
		out.entry = reportEntry{ID: sc.ID, Actual: json.RawMessage(`{"rejected":true}`), Status: statusFailed, Error: out.rejection.Error()}
		if sc.ExpectError {
			out.entry.Status = statusPassed
		}
		return out
	case err == nil:
		if retained, ok := inv.Response(); ok {
			if cerr := host.checkToolCodec(retained.Effects); cerr != nil {
				rej = &rejection{stageApplication, cerr.Error()}
				if err := inv.Reject(); err != nil {
					inv.Cancel()
					return fail("cannot reject the response: " + err.Error())
				}
			}
		}
	case errors.As(err, &ae):
		if rej = rejectionFor(ae.Code, ae.Stage, ae.Reason); rej == nil {
			// Transport failure, timeout or spawn failure: never a pass.
			inv.Cancel()
			return fail("delivery failed: " + err.Error())
		}
	default:
		inv.Cancel()
		return fail("delivery failed: " + err.Error())
	}
	res, err := inv.Accept(xctx)
	if err != nil {
		return fail("settlement failed: " + err.Error())
	}
	if rej == nil {
		for _, d := range res.Diagnostics {
			if d.Mode == gen.ModeIntercept {
				if rej = rejectionFor(d.Code, d.Stage, d.Reason); rej == nil {
					return fail("delivery failed: " + string(d.Code) + " at " + string(d.Stage) + ": " + d.Reason)
				}
				break
			}
		}
	}

	out := rowOutcome{rejection: rej, before: &before}
	if rej != nil {
		host.res = res // what the harness settled without the response
		after := host.snapshot()
		out.after = &after
		out.entry = reportEntry{ID: sc.ID, Actual: json.RawMessage(`{"rejected":true}`)}
		if !reflect.DeepEqual(before, after) || len(res.Accepted) > 0 || res.SyntheticDenial {
			out.entry.Status = statusFailed
			out.entry.Error = "rejected response leaked partial state"
			return out
		}
		if sc.ExpectError {
			out.entry.Status = statusPassed
			out.entry.Error = rej.Error()
		} else {
			out.entry.Status = statusFailed
			out.entry.Error = rej.Error()
		}
		return out
	}
	actual := host.derive(res)
	after := host.snapshot()
	out.after = &after
	actualJSON, err := json.Marshal(actual)
	if err != nil {
		return fail("cannot encode the result")
	}
	out.entry = reportEntry{ID: sc.ID, Actual: actualJSON}
	if sc.ExpectError {
		out.entry.Status = statusFailed
		out.entry.Error = "expected a rejection but the response was accepted"
		return out
	}
	if err := ComparePartial(sc.Expected, actualJSON); err != nil {
		out.entry.Status = statusFailed
		out.entry.Error = err.Error()
		return out
	}
	out.entry.Status = statusPassed
	return out
}
