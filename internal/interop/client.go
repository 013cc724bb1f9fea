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

// backendID names the single backend in transport diagnostics.
const backendID = "interop-server"

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

// interopClient delivers scenario requests through one SDK transport.
type interopClient struct {
	cfg *ClientConfig
	log *slog.Logger
	tr  transport.Transport
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
	err := c.tr.Close()
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

// runScenario delivers one scenario request and settles the response under
// the synthetic-host semantics. It never looks at the expected answer before
// the result is derived.
func (c *interopClient) runScenario(ctx context.Context, sc *Scenario) rowOutcome {
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
	body, err := CompactJSON(sc.Request)
	if err != nil {
		return fail("scenario request is not JSON")
	}
	host, err := newSyntheticHost(req)
	if err != nil {
		return fail("cannot start the synthetic host: " + err.Error())
	}
	before := host.snapshot()

	xctx, cancel := context.WithTimeout(ctx, c.perRow)
	raw, err := c.tr.Exchange(xctx, transport.Message{BackendID: backendID, Method: jsonrpc.MethodIntercept, ID: host.rpcID, Body: body})
	cancel()
	var rej *rejection
	if err != nil {
		rej = scriptedRejection(err)
		if rej == nil {
			// Transport failure, timeout or spawn failure: never a pass.
			return fail("delivery failed: " + err.Error())
		}
	} else {
		rej = host.accept(raw)
	}

	out := rowOutcome{rejection: rej, before: &before}
	if rej != nil {
		after := host.snapshot()
		out.after = &after
		out.entry = reportEntry{ID: sc.ID, Actual: json.RawMessage(`{"rejected":true}`)}
		if !reflect.DeepEqual(before, after) {
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
	actual := host.derive()
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

// scriptedRejection classifies a transport error that is itself a
// rejection of the scripted response: the persistent stdio transport
// correlates frames by id and refuses a frame that is not a correlated
// JSON-RPC response after reading it. Every other transport error (status,
// connection, process exit, framing, timeout, media type) is a delivery
// failure.
func scriptedRejection(err error) *rejection {
	var te *transport.Error
	if !errors.As(err, &te) || te.Code != transport.CodeProtocolRejection || te.Stage != transport.StageReceive {
		return nil
	}
	switch te.Reason {
	case "id_mismatch":
		return &rejection{stageCorrelation, "response id does not match the request id"}
	case "not_response":
		return &rejection{stageEnvelope, "not a JSON-RPC 2.0 response"}
	}
	return nil
}
