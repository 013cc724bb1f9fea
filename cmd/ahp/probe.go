package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// probeBackendID is the id of the one backend of the synthetic registration.
const probeBackendID = "org.agenthooks.probe"

// closeGrace bounds how long a probed stdio child may take to exit after
// its stdin is closed.
const closeGrace = time.Second

// headerList is a repeatable --header flag.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, ", ") }

func (h *headerList) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(val, "\r\n") {
		return errors.New(`want 'Name: value'`)
	}
	*h = append(*h, v)
	return nil
}

// probeConfig is a parsed probe command line.
type probeConfig struct {
	eventFile     string
	method        gen.Mode
	timeout       time.Duration
	policy        string
	capabilities  string
	tokenEnv      string
	headers       http.Header
	retry         int
	duplicate     bool
	export        string
	verbose       bool
	format        string
	url           string
	command       []string
	event         []byte
	eventType     gen.EventName
	eventID       string
	grantOverride *gen.Capabilities
}

const probeSynopsis = `probe --event FILE|- [flags] (URL | -- COMMAND ARGS...)

Sends one canonical event to one backend through the SDK's own transports
(HTTP to URL, or a stdio child started without a shell) and the harness's own
settlement, and classifies the outcome: no effect, explicit deny, allow, ask,
modification, return, flow, message, inject, or an operational failure with
its diagnostic code and stage. The event is validated before any I/O; one
absolute deadline (--timeout) covers every attempt. For an operational
failure it also shows what a fail-open and a fail-closed harness would do
(a simulation). A bearer token is read from the environment at send time and
is never printed or exported. Exit status: 0 when the backend answered (any
decision), 1 for an invalid event or an operational failure, 2 for a usage
or configuration error.`

func parseProbe(e *env, args []string) (*probeConfig, error) {
	fs := newFlags(e, "probe", probeSynopsis)
	c := &probeConfig{headers: http.Header{}}
	var headers headerList
	method := fs.String("method", "", "delivery `mode`: intercept or observe (default intercept when the event allows it)")
	fs.StringVar(&c.eventFile, "event", "", "the event document `FILE` (- for standard input)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "absolute `deadline` for the whole exchange, every attempt included")
	fs.StringVar(&c.policy, "failure-policy", "fail-closed", "the subscription's failure `policy`: fail-open or fail-closed")
	fs.StringVar(&c.capabilities, "capabilities", "", "capabilities `JSON` to advertise (default: everything the event's boundary allows)")
	fs.StringVar(&c.tokenEnv, "bearer-token-env", "", "environment variable `NAME` holding a bearer token for HTTP")
	fs.Var(&headers, "header", "extra HTTP header `'Name: value'` (repeatable)")
	fs.IntVar(&c.retry, "retry", 0, "retry an operational failure up to `N` times (same event id), within the deadline")
	fs.BoolVar(&c.duplicate, "duplicate-delivery", false, "deliver the same event a second time and compare the outcomes")
	fs.StringVar(&c.export, "export", "", "write a diagnostic bundle to `FILE` (never overwritten)")
	fs.BoolVar(&c.verbose, "verbose", false, "print every raw request and response")
	format := formatFlag(fs)
	ops, dashed, err := parseFlags(e, fs, args)
	if err != nil {
		return nil, err
	}
	c.format = *format
	if err := checkFormat(c.format); err != nil {
		return nil, err
	}
	switch {
	case c.eventFile == "":
		return nil, usageError("probe needs --event FILE (or -)")
	case c.timeout <= 0:
		return nil, usageError("--timeout must be positive")
	case c.timeout > time.Duration(1<<31-1)*time.Millisecond:
		return nil, usageError("--timeout is too long")
	case c.policy != "fail-open" && c.policy != "fail-closed":
		return nil, usageError("--failure-policy must be fail-open or fail-closed")
	case c.retry < 0 || c.retry > 100:
		return nil, usageError("--retry must be between 0 and 100")
	case *method != "" && *method != "intercept" && *method != "observe":
		return nil, usageError("--method must be intercept or observe")
	}
	c.method = gen.Mode(*method)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		c.headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if dashed {
		if len(ops) == 0 || ops[0] == "" {
			return nil, usageError("probe needs a COMMAND after --")
		}
		c.command = ops
	} else {
		if len(ops) != 1 {
			return nil, usageError("probe needs exactly one URL, or -- COMMAND ARGS...")
		}
		u, err := url.Parse(ops[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageError("%q is not an http(s) URL", ops[0])
		}
		c.url = ops[0]
	}
	if c.command != nil && (c.tokenEnv != "" || len(c.headers) > 0) {
		return nil, usageError("--bearer-token-env and --header apply to HTTP only (stdio runs on process trust)")
	}
	if c.tokenEnv != "" && e.getenv(c.tokenEnv) == "" {
		return nil, usageError("the environment variable named by --bearer-token-env is empty or unset")
	}
	if c.export != "" {
		if _, err := os.Lstat(c.export); err == nil {
			return nil, usageError("--export %s: the file exists; it is never overwritten", c.export)
		}
	}
	return c, nil
}

// attempt is one delivery and its classified outcome (one JSON object per
// attempt with --format json).
type attempt struct {
	Attempt    int         `json:"attempt"`
	Kind       string      `json:"kind"` // first, retry or duplicate
	Event      string      `json:"event"`
	EventID    string      `json:"eventId"`
	Method     string      `json:"method"`
	Backend    string      `json:"backend"`
	StartedAt  string      `json:"startedAt"`
	DurationMs int64       `json:"durationMs"`
	Outcome    string      `json:"outcome"`
	Effects    []string    `json:"effects"`
	Failure    *failure    `json:"failure,omitempty"`
	Settled    *settled    `json:"settled,omitempty"`
	Simulation *simulation `json:"simulation,omitempty"`
	Findings   []string    `json:"findings"`

	exchanges []exchange
	res       *hooks.Result
}

// failure is an operational failure, as the harness diagnosed it.
type failure struct {
	Code   string `json:"code"`
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
	Status int    `json:"status,omitempty"`
}

// settled is the harness's settled result.
type settled struct {
	Permission      string            `json:"permission"`
	DenyReason      string            `json:"denyReason,omitempty"`
	SyntheticDenial bool              `json:"syntheticDenial"`
	Flow            string            `json:"flow"`
	StopReason      string            `json:"stopReason,omitempty"`
	Messages        []string          `json:"messages"`
	Injections      int               `json:"injections"`
	Input           json.RawMessage   `json:"input,omitempty"`
	Candidate       json.RawMessage   `json:"candidate,omitempty"`
	Targets         map[string]string `json:"targets,omitempty"`
	Interrupted     bool              `json:"interrupted,omitempty"`
}

// simulation says what a harness with either failure policy would do with
// the same operational failure. It is computed, not observed.
type simulation struct {
	Note       string `json:"note"`
	FailOpen   string `json:"failOpen"`
	FailClosed string `json:"failClosed"`
}

// exchange is one raw message on the wire, as the transport carried it.
type exchange struct {
	Method     string          `json:"method"`
	Request    json.RawMessage `json:"request"`
	Response   *string         `json:"response"`
	Status     int             `json:"httpStatus,omitempty"`
	Error      string          `json:"error,omitempty"`
	StartedAt  string          `json:"startedAt"`
	DurationMs int64           `json:"durationMs"`
}

func runProbe(e *env, args []string) error {
	c, err := parseProbe(e, args)
	if err != nil {
		return err
	}
	data, err := readDocument(e, c.eventFile)
	if err != nil {
		return fmt.Errorf("%s: %w", displayName(c.eventFile), err)
	}
	// The event is validated before anything is started or sent.
	if probs := validateProblems("event.schema.json", data); len(probs) > 0 {
		r := checkReport{File: c.eventFile, Schema: "event.schema.json", Problems: probs}
		if c.format == "json" {
			_ = json.NewEncoder(e.stdout).Encode(r)
		} else {
			printCheck(e.stderr, r)
		}
		return errFailed
	}
	var head struct {
		Type gen.EventName `json:"type"`
		ID   string        `json:"id"`
	}
	_ = json.Unmarshal(data, &head)
	info, ok := gen.LookupEvent(head.Type)
	if !ok {
		return usageError("event type %q is not in the catalogue", head.Type)
	}
	c.event, c.eventType, c.eventID = data, head.Type, head.ID
	if c.method == "" {
		c.method = gen.ModeObserve
		if info.Interceptable() {
			c.method = gen.ModeIntercept
		}
	}
	if c.method == gen.ModeIntercept && !info.Interceptable() {
		return usageError("%s cannot be intercepted; use --method observe", c.eventType)
	}
	if c.capabilities != "" {
		if c.method != gen.ModeIntercept {
			return usageError("--capabilities applies to interception only")
		}
		caps, err := gen.ParseCapabilities([]byte(c.capabilities))
		if err != nil {
			var pe *gen.ParseError
			if errors.As(err, &pe) {
				return usageError("--capabilities: %s: %s", displayPointer(pe.Pointer), pe.Keyword)
			}
			return usageError("--capabilities is not a capabilities object")
		}
		c.grantOverride = caps
	}

	p, err := newProber(e, c)
	if err != nil {
		return err
	}
	attempts, runErr := p.run()
	closeErr := p.close()
	if c.export != "" {
		if err := writeBundle(c, attempts); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if closeErr != nil {
		fmt.Fprintf(e.stderr, "ahp: closing the backend: %v\n", closeErr)
	}
	if last := attempts[len(attempts)-1]; last.Failure != nil {
		return errFailed
	}
	return nil
}

// prober owns the Hooks built for one probe.
type prober struct {
	e      *env
	c      *probeConfig
	h      *hooks.Hooks
	rec    *recorder
	client *http.Client
	owned  transport.Transport // the stdio transport, borrowed by the Hooks
}

// registration is the synthetic one-backend registration of a probe.
func (c *probeConfig) registration() ([]byte, error) {
	sub := map[string]any{"events": []string{string(c.eventType)}, "mode": string(c.method), "content": map[string]any{"default": "body"}}
	if c.method == gen.ModeIntercept {
		sub["timeoutMs"] = c.timeout.Milliseconds()
		sub["failurePolicy"] = c.policy
	}
	be := map[string]any{"id": probeBackendID, "subscriptions": []any{sub}}
	if c.url != "" {
		be["transport"] = map[string]any{"type": "http", "url": c.url}
		if c.tokenEnv != "" {
			be["authentication"] = map[string]any{"type": "bearer", "tokenEnv": c.tokenEnv}
		}
	} else {
		be["transport"] = map[string]any{"type": "stdio", "command": c.command[0], "args": c.command[1:], "lifecycle": "persistent"}
	}
	return json.Marshal(map[string]any{"protocolVersion": gen.ProtocolVersion, "hooks": []any{be}})
}

func newProber(e *env, c *probeConfig) (*prober, error) {
	reg, err := c.registration()
	if err != nil {
		return nil, err
	}
	p := &prober{e: e, c: c, rec: &recorder{}}
	cfg := hooks.Config{Source: checkSource, Capabilities: fullGrants()}
	// The harness's own load-time checks of the synthetic registration.
	h0, err := hooks.New(reg, cfg)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if c.grantOverride != nil {
		m := h0.Manifest()
		for i := range m.Events {
			if gen.EventName(m.Events[i].Event) == c.eventType {
				m.Events[i].Capabilities = c.grantOverride
			}
		}
		cfg = hooks.Config{Source: checkSource, Manifest: &m}
	}
	_ = h0.Close() // never used: New performs no I/O
	if c.url != "" {
		// The harness's own HTTP transport, over a client that records the
		// exchange and adds the --header fields; it never follows a
		// redirect.
		p.client = &http.Client{
			Transport:     &recordingRoundTripper{next: http.DefaultTransport.(*http.Transport).Clone(), headers: c.headers, rec: p.rec},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		cfg.HTTPClient = p.client
	} else {
		// The SDK's stdio transport, as the harness builds it, wrapped to
		// record the frames. The child gets this environment; it is the
		// caller's own command.
		inner := transport.NewStdio(transport.StdioOptions{
			BackendID:  probeBackendID,
			Command:    c.command[0],
			Args:       slices.Clone(c.command[1:]),
			Lifecycle:  gen.StdioTransportLifecyclePersistent,
			Env:        os.Environ(),
			Stderr:     e.stderr,
			CloseGrace: closeGrace,
			// A retry relaunches a crashed child at once.
			RelaunchBackoff: -1,
		})
		p.owned = &recordingTransport{next: inner, rec: p.rec}
		cfg.Transports = map[string]transport.Transport{probeBackendID: p.owned}
	}
	if p.h, err = hooks.New(reg, cfg); err != nil {
		if p.owned != nil {
			_ = p.owned.Close()
		}
		return nil, usageError("%v", err)
	}
	return p, nil
}

func (p *prober) close() error {
	err := p.h.Close()
	if p.owned != nil {
		err = errors.Join(err, p.owned.Close())
	}
	if p.client != nil {
		p.client.CloseIdleConnections()
	}
	return err
}

// run delivers the event: once, then retries of an operational failure,
// then the duplicate delivery, all before one absolute deadline.
func (p *prober) run() ([]*attempt, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	deadline := time.Now().Add(p.c.timeout)
	// The subscription's timeoutMs ends a slow first delivery as a
	// diagnosed deadline; the call's context gets a short grace past it so
	// that the harness, not the context, reports it. Later attempts only
	// get what is left.
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(250*time.Millisecond))
	defer cancel()
	var out []*attempt
	kind := "first"
	for n := 1; ; n++ {
		actx, acancel := ctx, context.CancelFunc(func() {})
		if n > 1 {
			actx, acancel = context.WithDeadline(ctx, deadline)
		}
		a := p.deliver(actx, n, kind)
		acancel()
		if kind == "duplicate" {
			first := out[len(out)-1]
			note := "duplicate delivery: same outcome (" + a.Outcome + ")"
			if first.Outcome != a.Outcome || !slices.Equal(first.Effects, a.Effects) {
				note = "duplicate delivery: different outcome (" + first.Outcome + ", then " + a.Outcome + "); the backend is not idempotent for a repeated event id"
			}
			a.Findings = append(a.Findings, note)
		}
		out = append(out, a)
		switch {
		case a.Failure != nil && n <= p.c.retry && time.Now().Before(deadline) && ctx.Err() == nil:
			p.report(a, n)
			kind = "retry"
			continue
		case p.c.duplicate && kind != "duplicate" && a.Failure == nil && time.Now().Before(deadline):
			p.report(a, n)
			kind = "duplicate"
			continue
		}
		if p.c.duplicate && kind != "duplicate" {
			a.Findings = append(a.Findings, "duplicate delivery not attempted: the delivery failed or the deadline passed")
		}
		p.report(a, n)
		break
	}
	return out, nil
}

// deliver runs one attempt through hooks.Deliver and classifies it.
func (p *prober) deliver(ctx context.Context, n int, kind string) *attempt {
	backend := p.c.url
	if backend == "" {
		backend = strings.Join(p.c.command, " ")
	}
	a := &attempt{Attempt: n, Kind: kind, Event: string(p.c.eventType), EventID: p.c.eventID, Method: string(p.c.method), Backend: backend,
		Effects: []string{}, Findings: []string{}}
	start := time.Now()
	a.StartedAt = start.UTC().Format(time.RFC3339Nano)
	p.rec.begin()
	res, err := p.h.Deliver(ctx, p.c.event)
	a.DurationMs = time.Since(start).Milliseconds()
	a.exchanges = p.rec.take()
	a.res = res
	classify(a, res, err, p.c)
	return a
}

// classify fills the outcome from the harness's settled result.
func classify(a *attempt, res *hooks.Result, err error, c *probeConfig) {
	if res != nil {
		a.Settled = settledOf(res)
		for _, d := range res.Diagnostics {
			if a.Failure == nil {
				a.Failure = &failure{Code: string(d.Code), Stage: string(d.Stage), Reason: d.Reason, Status: d.Status}
			}
		}
		for _, acc := range res.Accepted {
			for _, ef := range acc.Effects {
				if f := effectFamily(ef); !slices.Contains(a.Effects, f) {
					a.Effects = append(a.Effects, f)
				}
			}
		}
	}
	if err != nil && a.Failure == nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			a.Failure = &failure{Code: string(transport.CodeDeadlineExceeded), Reason: "probe_deadline"}
		case errors.Is(err, context.Canceled):
			a.Failure = &failure{Code: string(transport.CodeCancelled), Reason: "interrupted"}
		default:
			a.Failure = &failure{Code: "harness", Reason: "rejected"}
			a.Findings = append(a.Findings, "the harness refused the call: "+err.Error())
		}
	}
	switch {
	case a.Failure != nil:
		a.Outcome = "operational failure"
		a.Simulation = &simulation{
			Note:       "simulation: what a harness with each failure policy does with this failure; only --failure-policy " + c.policy + " was applied",
			FailOpen:   "proceeds without this backend's effects (permission none, no effects)",
			FailClosed: fmt.Sprintf("denies the operation with a synthetic denial: %q", hooks.SyntheticDenialReason),
		}
		if c.method == gen.ModeObserve {
			a.Simulation.FailOpen = "an observation never blocks: the operation proceeds"
			a.Simulation.FailClosed = "an observation never blocks: the operation proceeds"
		}
	case c.method == gen.ModeObserve:
		a.Outcome = "delivered (observation)"
	case len(a.Effects) == 0:
		a.Outcome = "no effect"
	default:
		names := make([]string, 0, len(a.Effects))
		for _, f := range a.Effects {
			switch f {
			case "deny":
				names = append(names, "explicit deny")
			case "modify":
				names = append(names, "modification")
			default:
				names = append(names, f)
			}
		}
		a.Outcome = strings.Join(names, ", ")
	}
}

// effectFamily names the family of an admitted effect.
func effectFamily(ef gen.Effect) string {
	switch {
	case ef.Deny != nil:
		return "deny"
	case ef.Allow != nil:
		return "allow"
	case ef.Ask != nil:
		return "ask"
	case ef.ModifyMessages != nil, ef.ModifyText != nil, ef.ModifyWorkspace != nil, ef.ModifyForm != nil, ef.ModifyInput != nil:
		return "modify"
	case ef.Message != nil:
		return "message"
	case ef.ReturnTool != nil:
		return "return"
	case ef.StopFlow != nil, ef.ContinueFlow != nil:
		return "flow"
	case ef.Inject != nil:
		return "inject"
	}
	b, _ := gen.EncodeEffect(&ef)
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &head)
	return head.Type
}

func settledOf(r *hooks.Result) *settled {
	s := &settled{Permission: string(r.Permission), DenyReason: r.DenyReason(), SyntheticDenial: r.SyntheticDenial, Flow: string(r.Flow),
		StopReason: r.StopReason, Messages: append([]string{}, r.Messages...), Injections: len(r.Injections), Input: r.Input, Interrupted: r.Interrupted}
	if s.Flow == "" {
		s.Flow = "none"
	}
	if r.Candidate.Present {
		s.Candidate = r.Candidate.Value
	}
	for t, v := range r.Targets {
		if s.Targets == nil {
			s.Targets = map[string]string{}
		}
		s.Targets[string(t)] = string(v)
	}
	return s
}

// report prints one attempt.
func (p *prober) report(a *attempt, n int) {
	if p.c.format == "json" {
		_ = json.NewEncoder(p.e.stdout).Encode(a)
		return
	}
	w := p.e.stdout
	fmt.Fprintf(w, "attempt %d (%s): %s %s over %s to %s, %d ms\n", n, a.Kind, a.Event, a.Method, bindingName(p.c), a.Backend, a.DurationMs)
	if p.c.verbose {
		for _, x := range a.exchanges {
			fmt.Fprintf(w, "  > %s\n", x.Request)
			switch {
			case x.Response != nil:
				fmt.Fprintf(w, "  < %s\n", strings.TrimRight(*x.Response, "\n"))
			case x.Error != "":
				fmt.Fprintf(w, "  < (no response: %s)\n", x.Error)
			}
		}
	}
	fmt.Fprintf(w, "  outcome: %s\n", a.Outcome)
	if f := a.Failure; f != nil {
		fmt.Fprintf(w, "  failure: code %s", f.Code)
		if f.Stage != "" {
			fmt.Fprintf(w, ", stage %s", f.Stage)
		}
		if f.Reason != "" {
			fmt.Fprintf(w, ", reason %s", f.Reason)
		}
		if f.Status != 0 {
			fmt.Fprintf(w, ", status %d", f.Status)
		}
		fmt.Fprintln(w)
	}
	if s := a.Settled; s != nil {
		fmt.Fprintf(w, "  settled: permission %s", s.Permission)
		if s.DenyReason != "" {
			fmt.Fprintf(w, " (%q)", s.DenyReason)
		}
		if s.SyntheticDenial {
			fmt.Fprint(w, ", synthetic denial under fail-closed")
		}
		fmt.Fprintf(w, ", flow %s", s.Flow)
		if s.StopReason != "" {
			fmt.Fprintf(w, " (%q)", s.StopReason)
		}
		if len(s.Messages) > 0 {
			fmt.Fprintf(w, ", messages %q", s.Messages)
		}
		if s.Injections > 0 {
			fmt.Fprintf(w, ", %d injection(s)", s.Injections)
		}
		fmt.Fprintln(w)
		if s.Input != nil && slices.Contains(a.Effects, "modify") {
			fmt.Fprintf(w, "  effective input: %s\n", s.Input)
		}
		for t, v := range s.Targets {
			if slices.Contains(a.Effects, "modify") {
				fmt.Fprintf(w, "  effective %s: %s\n", t, v)
			}
		}
		if s.Candidate != nil {
			fmt.Fprintf(w, "  returned result: %s\n", s.Candidate)
		}
	}
	if sim := a.Simulation; sim != nil {
		fmt.Fprintf(w, "  [simulation] a fail-open harness: %s\n", sim.FailOpen)
		fmt.Fprintf(w, "  [simulation] a fail-closed harness: %s\n", sim.FailClosed)
	}
	for _, f := range a.Findings {
		fmt.Fprintf(w, "  finding: %s\n", f)
	}
}

func bindingName(c *probeConfig) string {
	if c.url != "" {
		return "http"
	}
	return "stdio"
}

// bundle is the --export diagnostic bundle.
type bundle struct {
	Tool     string          `json:"tool"`
	Event    json.RawMessage `json:"event"`
	Binding  string          `json:"binding"`
	Backend  string          `json:"backend"`
	Method   string          `json:"method"`
	Timeout  string          `json:"timeout"`
	Policy   string          `json:"failurePolicy"`
	Attempts []bundleAttempt `json:"attempts"`
	Findings []string        `json:"findings"`
	Result   *settled        `json:"result"`
}

type bundleAttempt struct {
	*attempt
	Exchanges []exchange `json:"exchanges"`
}

// writeBundle writes the diagnostic bundle; it never replaces a file.
// Credentials are never in it: the token is sent by the transport and
// header values are not recorded.
func writeBundle(c *probeConfig, attempts []*attempt) error {
	b := bundle{Tool: "ahp probe", Event: json.RawMessage(compact(c.event)), Binding: bindingName(c), Method: string(c.method),
		Timeout: c.timeout.String(), Policy: c.policy, Findings: []string{}, Attempts: []bundleAttempt{}}
	b.Backend = c.url
	if c.url == "" {
		b.Backend = strings.Join(c.command, " ")
	}
	for _, a := range attempts {
		ex := a.exchanges
		if ex == nil {
			ex = []exchange{}
		}
		b.Attempts = append(b.Attempts, bundleAttempt{attempt: a, Exchanges: ex})
		b.Findings = append(b.Findings, a.Findings...)
	}
	if n := len(attempts); n > 0 {
		b.Result = attempts[n-1].Settled
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(c.export, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usageError("--export %s: the file exists; it is never overwritten", c.export)
		}
		return fmt.Errorf("--export: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("--export: %w", err)
	}
	return f.Close()
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// recorder collects the exchanges of the current attempt.
type recorder struct {
	mu  sync.Mutex
	cur []exchange
}

func (r *recorder) begin() {
	r.mu.Lock()
	r.cur = nil
	r.mu.Unlock()
}

func (r *recorder) take() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.cur
	r.cur = nil
	return out
}

func (r *recorder) add(x exchange) {
	r.mu.Lock()
	r.cur = append(r.cur, x)
	r.mu.Unlock()
}

func requestJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(slices.Clone(b))
	}
	q, _ := json.Marshal(string(b))
	return q
}

// recordingTransport records the frames of a stdio transport.
type recordingTransport struct {
	next transport.Transport
	rec  *recorder
}

func (t *recordingTransport) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	start := time.Now()
	resp, err := t.next.Exchange(ctx, msg)
	x := exchange{Method: msg.Method, Request: requestJSON(msg.Body), StartedAt: start.UTC().Format(time.RFC3339Nano), DurationMs: time.Since(start).Milliseconds()}
	if resp != nil {
		s := string(resp)
		x.Response = &s
	}
	if err != nil {
		x.Error = errorToken(err)
	}
	t.rec.add(x)
	return resp, err
}

func (t *recordingTransport) Notify(ctx context.Context, msg transport.Message) error {
	start := time.Now()
	err := t.next.Notify(ctx, msg)
	x := exchange{Method: msg.Method, Request: requestJSON(msg.Body), StartedAt: start.UTC().Format(time.RFC3339Nano), DurationMs: time.Since(start).Milliseconds()}
	if err != nil {
		x.Error = errorToken(err)
	}
	t.rec.add(x)
	return err
}

func (t *recordingTransport) Close() error { return t.next.Close() }

// errorToken is a transport error's fixed description (never backend text).
func errorToken(err error) string {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.Error()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "failed"
}

// maxRecordedBytes bounds a recorded HTTP response; the transport applies
// its own (smaller) limit to what it reads from the recorded copy.
const maxRecordedBytes = 64 << 20

// recordingRoundTripper adds the --header fields and records each HTTP
// exchange's bodies and status. It never records request headers, so
// neither the bearer token nor header values reach the output.
type recordingRoundTripper struct {
	next    http.RoundTripper
	headers http.Header
	rec     *recorder
}

func (rt *recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	var body []byte
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(io.LimitReader(rc, maxRecordedBytes))
			_ = rc.Close()
		}
	}
	out := req.Clone(req.Context())
	for k, vs := range rt.headers {
		out.Header.Del(k)
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	x := exchange{Method: methodOf(body), Request: requestJSON(body), StartedAt: start.UTC().Format(time.RFC3339Nano)}
	resp, err := rt.next.RoundTrip(out)
	if err != nil {
		x.Error = "no HTTP response"
		x.DurationMs = time.Since(start).Milliseconds()
		rt.rec.add(x)
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBytes))
	_ = resp.Body.Close()
	x.Status = resp.StatusCode
	s := string(data)
	x.Response = &s
	x.DurationMs = time.Since(start).Milliseconds()
	rt.rec.add(x)
	if rerr != nil {
		return nil, rerr
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

func methodOf(body []byte) string {
	var head struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &head)
	return head.Method
}
