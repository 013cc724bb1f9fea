package compaction

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/boundedread"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/schemas"
	"github.com/agenthooks/agenthooks-go/server"
)

// TokensEnv names the JSON object {subscription: bearer token} that both
// sides of cmd/compaction-wire read: the receiver authenticates each
// request to exactly one subscription by its token, the host presents the
// token of the subscription it delivers to.
const TokensEnv = "AHP_COMPACTION_TOKENS"

// ReceiptsFile is the receipt log inside the receiver's STORE directory.
const ReceiptsFile = "receipts.jsonl"

// subscriptionName is the pattern of subscription names (they become the
// last label of a reverse-DNS hook id).
var subscriptionName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,62}$`)

// SubsFile is the receiver's SUBS.json: the subscriptions it serves.
type SubsFile struct {
	// Subscriptions are the receiver subscriptions, by unique name.
	Subscriptions []Subscription `json:"subscriptions"`
}

// Subscription is one receiver subscription: its boundary and how it
// replies. Replies derived from content use only what the request carried,
// so a metadata/omit receiver has no text to derive from and replies no
// effects.
type Subscription struct {
	// Name identifies the subscription (and its token).
	Name string `json:"name"`
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// Reply is one of: none (no effects), append (replace the received
	// target text with itself plus a part holding Text), redact (replace
	// each of Words in the received target text with "[redacted]"),
	// return (before: return a summary of one part holding Text), deny
	// (deny with reason Text), fixed (Effects, admitted by package server
	// before they are sent), verbatim (Effects sent as they are, without
	// the backend's admission, to exercise the host's own).
	Reply string `json:"reply"`
	// Text is the appended text, returned summary or deny reason.
	Text string `json:"text,omitempty"`
	// Words are the redacted words.
	Words []string `json:"words,omitempty"`
	// Message, when set, is sent as a message effect before the reply.
	Message string `json:"message,omitempty"`
	// Effects are the fixed or verbatim effects (a JSON array).
	Effects json.RawMessage `json:"effects,omitempty"`
}

// receipt is one line of STORE/receipts.jsonl.
type receipt struct {
	Subscription string          `json:"subscription"`
	Request      json.RawMessage `json:"request"`
	Response     json.RawMessage `json:"response"`
}

// receiver serves the subscriptions of a SubsFile.
type receiver struct {
	log    *slog.Logger
	subs   map[string]*rsub
	tokens map[string]string // subscription -> token

	mu       sync.Mutex
	receipts *os.File
}

// rsub is one served subscription.
type rsub struct {
	Subscription
	boundary gen.EventName
	handler  *server.Handler
	inproc   *transport.InProcess
	verbatim []byte // the effects array of a verbatim reply, compact
}

// checkSchema verifies that the SCHEMA argument (a schema directory or one
// schema document) holds the canonical documents this SDK embeds, byte for
// byte: requests are validated against the embedded copies.
func checkSchema(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: SCHEMA: %v", interop.ErrUsage, err)
	}
	names := []string{filepath.Base(path)}
	dir := filepath.Dir(path)
	if st.IsDir() {
		names, dir = schemas.Documents(), path
	}
	compared := 0
	for _, n := range names {
		want, err := schemas.Read(n)
		if err != nil {
			return fmt.Errorf("%w: SCHEMA: %s is not a canonical schema document", interop.ErrUsage, n)
		}
		got, err := interop.ReadBounded(filepath.Join(dir, n), 16<<20)
		if errors.Is(err, os.ErrNotExist) && st.IsDir() {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: SCHEMA: %s: %v", interop.ErrUsage, n, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%w: SCHEMA: %s differs from the SDK's canonical copy", interop.ErrUsage, n)
		}
		compared++
	}
	if compared == 0 {
		return fmt.Errorf("%w: SCHEMA holds no canonical schema document", interop.ErrUsage)
	}
	return nil
}

// loadTokens reads TokensEnv.
func loadTokens() (map[string]string, error) {
	raw := os.Getenv(TokensEnv)
	if raw == "" {
		return nil, fmt.Errorf("%w: set %s to a JSON object {subscription: token}", interop.ErrUsage, TokensEnv)
	}
	var tokens map[string]string
	if err := decodeStrict([]byte(raw), &tokens); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object of strings", interop.ErrUsage, TokensEnv)
	}
	seen := map[string]bool{}
	for name, t := range tokens {
		if !auth.ValidToken(t) {
			return nil, fmt.Errorf("%w: %s: invalid token for %q", interop.ErrUsage, TokensEnv, name)
		}
		if seen[t] {
			return nil, fmt.Errorf("%w: %s: two subscriptions share a token", interop.ErrUsage, TokensEnv)
		}
		seen[t] = true
	}
	return tokens, nil
}

// newReceiver loads SUBS.json and opens the receipt log. The HTTP
// receiver (withTokens) needs a token for every subscription; a stdio
// receiver runs on process trust.
func newReceiver(store, subsPath string, withTokens bool, log *slog.Logger) (*receiver, error) {
	raw, err := interop.ReadBounded(subsPath, maxMessage)
	if err != nil {
		return nil, fmt.Errorf("%w: SUBS.json: %v", interop.ErrUsage, err)
	}
	var f SubsFile
	if err := decodeStrict(raw, &f); err != nil {
		return nil, fmt.Errorf("%w: SUBS.json: %v", interop.ErrUsage, err)
	}
	tokens := map[string]string{}
	if withTokens {
		if tokens, err = loadTokens(); err != nil {
			return nil, err
		}
	}
	r := &receiver{log: log, subs: map[string]*rsub{}, tokens: tokens}
	for i, s := range f.Subscriptions {
		if !subscriptionName.MatchString(s.Name) || r.subs[s.Name] != nil {
			return nil, fmt.Errorf("%w: SUBS.json: subscription %d: missing, invalid or repeated name", interop.ErrUsage, i)
		}
		if _, ok := tokens[s.Name]; withTokens && !ok {
			return nil, fmt.Errorf("%w: %s has no token for %q", interop.ErrUsage, TokensEnv, s.Name)
		}
		b, ok := boundaryName(s.Boundary)
		if !ok {
			return nil, fmt.Errorf("%w: SUBS.json: %q: boundary must be before or after", interop.ErrUsage, s.Name)
		}
		rs := &rsub{Subscription: s, boundary: b}
		switch s.Reply {
		case "none", "append", "redact", "return", "deny":
		case "fixed", "verbatim":
			if _, err := parseEffects(s.Effects); err != nil {
				return nil, fmt.Errorf("%w: SUBS.json: %q: effects must be an array of effects", interop.ErrUsage, s.Name)
			}
			if rs.verbatim, err = interop.CompactJSON(s.Effects); err != nil {
				return nil, fmt.Errorf("%w: SUBS.json: %q: effects", interop.ErrUsage, s.Name)
			}
		default:
			return nil, fmt.Errorf("%w: SUBS.json: %q: unknown reply %q", interop.ErrUsage, s.Name, s.Reply)
		}
		rs.handler = &server.Handler{Intercept: rs.intercept, InterceptEvents: []gen.EventName{b}, Logger: log, MaxConcurrency: 1}
		if err := rs.handler.Validate(); err != nil {
			return nil, err
		}
		rs.inproc = transport.NewInProcess(rs.handler, transport.InProcessOptions{})
		r.subs[s.Name] = rs
	}
	if err := os.MkdirAll(store, 0o700); err != nil {
		return nil, fmt.Errorf("STORE: %w", err)
	}
	r.receipts, err = os.OpenFile(filepath.Join(store, ReceiptsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("STORE: %w", err)
	}
	return r, nil
}

// close releases the receiver.
func (r *receiver) close() error {
	var err error
	for _, s := range r.subs {
		err = errors.Join(err, s.inproc.Close())
	}
	return errors.Join(err, r.receipts.Close())
}

// byToken returns the subscription a token authenticates.
func (r *receiver) byToken(tok string) *rsub {
	var found *rsub
	for name, t := range r.tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(t)) == 1 {
			found = r.subs[name]
		}
	}
	return found
}

// answer replies to one message for sub and records the receipt.
func (r *receiver) answer(ctx context.Context, sub *rsub, msg []byte) []byte {
	reply := sub.reply(ctx, msg)
	resp := json.RawMessage("null")
	if reply != nil {
		resp = reply
	}
	req := json.RawMessage(msg)
	if !json.Valid(msg) {
		req, _ = json.Marshal(string(msg))
	}
	line, err := json.Marshal(receipt{Subscription: sub.Name, Request: req, Response: resp})
	if err == nil {
		r.mu.Lock()
		_, err = r.receipts.Write(append(line, '\n'))
		r.mu.Unlock()
	}
	if err != nil {
		r.log.Error("receipt not recorded", "subscription", sub.Name)
		return jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeInternalError))
	}
	return reply
}

// reply answers one message: through package server (canonical request
// validation, -32602 for an invalid request, response admission), or for a
// verbatim subscription after the same canonical request validation with
// the fixed effects unchanged.
func (s *rsub) reply(ctx context.Context, msg []byte) []byte {
	env, err := jsonrpc.ClassifyContext(ctx, msg)
	if err != nil {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.AsError(err))
	}
	if env.Kind == jsonrpc.KindNotification {
		return nil
	}
	if env.Kind != jsonrpc.KindRequest {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest))
	}
	if s.Reply == "verbatim" && env.Method == "hooks/intercept" {
		req, err := gen.ParseInterceptRequest(msg)
		if err != nil {
			return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams))
		}
		if gen.EventName(req.Params.Event.Type()) != s.boundary {
			return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeUnsupportedEvent))
		}
		return jsonrpc.AppendResponse(nil, env.ID, []byte(`{"protocolVersion":"draft","effects":`+string(s.verbatim)+`}`))
	}
	reply, err := s.inproc.Exchange(ctx, transport.Message{BackendID: s.Name, Method: env.Method, ID: env.ID, Body: msg})
	if err != nil {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInternalError))
	}
	return reply
}

// intercept is the subscription's server.Handler callback.
func (s *rsub) intercept(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
	var fx []gen.Effect
	if s.Message != "" {
		fx = append(fx, server.Message(s.Message))
	}
	var (
		target   gen.TextParts
		targetID gen.ModifyTextEffectTarget
	)
	switch ev := req.Params.Event; {
	case ev.ContextCompactBefore != nil:
		target, targetID = ev.ContextCompactBefore.Instructions, gen.ModifyTextEffectTargetInstructions
	case ev.ContextCompactAfter != nil:
		target, targetID = ev.ContextCompactAfter.Summary, gen.ModifyTextEffectTargetSummary
	}
	bodies := true
	for _, p := range target {
		bodies = bodies && p.Body != nil
	}
	switch s.Reply {
	case "append":
		if bodies {
			next := append(target[:len(target):len(target)], gen.TextPart{Body: &gen.TextBodyPart{ID: s.Name + "-append", Text: s.Text}})
			fx = append(fx, server.ReplaceText(targetID, next))
		}
	case "redact":
		if bodies {
			next := make(gen.TextParts, len(target))
			for i, p := range target {
				b := *p.Body
				for _, w := range s.Words {
					if w != "" {
						b.Text = strings.ReplaceAll(b.Text, w, "[redacted]")
					}
				}
				next[i] = gen.TextPart{Body: &b}
			}
			fx = append(fx, server.ReplaceText(targetID, next))
		}
	case "return":
		fx = append(fx, server.ReturnText(gen.TextParts{{Body: &gen.TextBodyPart{ID: s.Name + "-summary", Text: s.Text}}}))
	case "deny":
		fx = append(fx, server.Deny(s.Text))
	case "fixed":
		e, err := parseEffects(s.Effects)
		if err != nil {
			return server.InterceptResult{}, err
		}
		fx = append(fx, e...)
	}
	return server.InterceptResult{Effects: fx}, nil
}

// WireServer runs the receiver over loopback HTTP: it prints
// {"endpoint"} and serves POST /hooks/intercept until ctx ends, each
// request authenticated to one subscription by its bearer token.
func WireServer(ctx context.Context, schema, store, subs string, stdout io.Writer, log *slog.Logger) error {
	if err := checkSchema(schema); err != nil {
		return err
	}
	r, err := newReceiver(store, subs, true, log)
	if err != nil {
		return err
	}
	h := http.NewServeMux()
	h.HandleFunc("POST /hooks/intercept", func(w http.ResponseWriter, req *http.Request) {
		tok, ok := interop.BearerToken(req.Header.Values("Authorization"))
		var sub *rsub
		if ok {
			sub = r.byToken(tok)
		}
		if sub == nil {
			log.Warn("request refused", "reason", "missing or invalid bearer credential")
			w.Header().Set("WWW-Authenticate", interop.BearerRealm)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := boundedread.ReadAtMost(req.Body, boundedread.PlusOne(maxMessage), 4096)
		if err != nil || int64(len(body)) > maxMessage {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		reply := r.answer(req.Context(), sub, body)
		if reply == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		interop.WriteJSON(w, http.StatusOK, reply)
	})
	return errors.Join(serveHTTP(ctx, h, "/hooks/intercept", stdout, log), r.close())
}

// WireStdio runs one subscription of the receiver on stdin/stdout (process
// trust: no token), recording receipts like the HTTP receiver.
func WireStdio(ctx context.Context, schema, store, subs, name string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if err := checkSchema(schema); err != nil {
		return err
	}
	r, err := newReceiver(store, subs, false, log)
	if err != nil {
		return err
	}
	sub := r.subs[name]
	if sub == nil {
		return errors.Join(fmt.Errorf("%w: no subscription %q", interop.ErrUsage, name), r.close())
	}
	err = serveStdio(ctx, stdin, stdout, func(ctx context.Context, _ *http.Request, msg []byte) []byte { return r.answer(ctx, sub, msg) })
	return errors.Join(err, r.close())
}

// HostCase is one case of the wire host: a compaction run whose hooks are
// subscriptions of the receiver at Endpoint, or a raw request sent to one
// subscription unchanged (bypassing the host's own validation).
type HostCase struct {
	// Name labels the case in the output.
	Name string `json:"name"`
	// Endpoint is the receiver's {endpoint}.
	Endpoint string `json:"endpoint"`
	// Subscriptions are the hooks of the run, in registration order.
	Subscriptions []HostSubscription `json:"subscriptions,omitempty"`
	// Input is the occurrence.
	Input RunInput `json:"input"`
	// Raw, when set, is sent instead of a run.
	Raw *RawRequest `json:"raw,omitempty"`
}

// HostSubscription is the host's registration of one receiver
// subscription.
type HostSubscription struct {
	// Name is the receiver subscription (and its token in TokensEnv).
	Name string `json:"name"`
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// FailurePolicy is fail-open (default) or fail-closed.
	FailurePolicy string `json:"failurePolicy,omitempty"`
	// Selection is the subscription's content selection: body (default),
	// metadata or omit.
	Selection string `json:"selection,omitempty"`
	// Command, when set, reaches the subscription over stdio instead of
	// the case's endpoint: the receiver's argv ("compaction-wire SCHEMA
	// STORE SUBS.json stdio NAME"), one child per delivery.
	Command []string `json:"command,omitempty"`
}

// RawRequest is a request sent to one subscription unchanged.
type RawRequest struct {
	// Subscription whose token authenticates the request.
	Subscription string `json:"subscription"`
	// Request is the JSON-RPC request.
	Request json.RawMessage `json:"request"`
}

// HostOutput is what the wire host prints for one case.
type HostOutput struct {
	// Name is the case's name.
	Name string `json:"name"`
	// Result is the RunResult of a run, or the JSON-RPC reply of a raw
	// request.
	Result json.RawMessage `json:"result"`
	// Downstream is what the downstream sink received (null unless
	// applied).
	Downstream json.RawMessage `json:"downstream"`
	// Trace lists the deliveries of a run, in order.
	Trace []Step `json:"trace"`
}

// hookIDPrefix makes a subscription name a reverse-DNS hook id.
const hookIDPrefix = "org.agenthooks.compaction."

// tokenProvider presents each backend's token from TokensEnv.
type tokenProvider struct{ tokens map[string]string }

func (p tokenProvider) Credential(_ context.Context, req auth.Request) (auth.Credential, error) {
	t, ok := p.tokens[strings.TrimPrefix(req.BackendID, hookIDPrefix)]
	if !ok {
		return auth.Credential{}, auth.ErrMissingSecret
	}
	return auth.Bearer(t, req.BackendID), nil
}

func (tokenProvider) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return auth.ErrNoReplay
}

// WireHost reads one HostCase or a JSON array of them on stdin, runs each,
// and prints one HostOutput (or the array of them).
func WireHost(ctx context.Context, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	raw, err := boundedread.ReadAtMost(stdin, boundedread.PlusOne(maxMessage), 4096)
	if err != nil || int64(len(raw)) > maxMessage {
		return fmt.Errorf("%w: stdin unreadable or too large", interop.ErrUsage)
	}
	tokens, err := loadTokens()
	if err != nil {
		return err
	}
	raw = bytes.TrimSpace(raw)
	var cases []HostCase
	single := len(raw) > 0 && raw[0] == '{'
	if single {
		var c HostCase
		err = decodeStrict(raw, &c)
		cases = []HostCase{c}
	} else {
		err = decodeStrict(raw, &cases)
	}
	if err != nil {
		return fmt.Errorf("%w: host input: %v", interop.ErrUsage, err)
	}
	outs := make([]HostOutput, 0, len(cases))
	for i := range cases {
		out, err := hostCase(ctx, &cases[i], tokens, log)
		if err != nil {
			return fmt.Errorf("case %q: %w", cases[i].Name, err)
		}
		outs = append(outs, *out)
	}
	var body []byte
	if single {
		body, err = json.Marshal(outs[0])
	} else {
		body, err = json.Marshal(outs)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", body)
	return err
}

// hostCase runs one case.
func hostCase(ctx context.Context, c *HostCase, tokens map[string]string, log *slog.Logger) (*HostOutput, error) {
	if c.Raw != nil {
		if c.Endpoint == "" {
			return nil, fmt.Errorf("%w: endpoint", interop.ErrUsage)
		}
		return rawCase(ctx, c, tokens)
	}
	in, err := compactionInput(c.Input)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", interop.ErrUsage, err)
	}
	var cfg hooks.CompactionConfig
	var closers []*hooks.Hooks
	defer func() {
		for _, h := range closers {
			_ = h.Close()
		}
	}()
	for i, s := range c.Subscriptions {
		b, ok := boundaryName(s.Boundary)
		pol, okp := policy(s.FailurePolicy)
		if !ok || !okp || !subscriptionName.MatchString(s.Name) {
			return nil, fmt.Errorf("%w: subscriptions[%d]", interop.ErrUsage, i)
		}
		h, err := subscriptionHooks(c.Endpoint, s, b, pol, tokens, log)
		if err != nil {
			return nil, err
		}
		closers = append(closers, h)
		cfg.Hooks = append(cfg.Hooks, hooks.CompactionHook{Supplier: s.Name, Boundary: b, FailurePolicy: pol, Callback: hooks.DeliverCompaction(h, b)})
	}
	comp, err := hooks.NewCompactor(cfg)
	if err != nil {
		return nil, err
	}
	defer comp.Close()
	res, err := comp.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	rr := encodeResult(res)
	rr.Seen = []Seen{}
	body, err := json.Marshal(rr)
	if err != nil {
		return nil, err
	}
	return &HostOutput{Name: c.Name, Result: body, Downstream: rr.Downstream, Trace: rr.Trace}, nil
}

// subscriptionHooks builds the one-subscription harness that delivers a
// boundary to a receiver subscription: HTTP to the endpoint with a bearer
// binding whose token the provider takes from TokensEnv, the host's
// content selection projected by the SDK, and the runner's capabilities.
func subscriptionHooks(endpoint string, s HostSubscription, b gen.EventName, pol hooks.FailurePolicy, tokens map[string]string, log *slog.Logger) (*hooks.Hooks, error) {
	sel := s.Selection
	switch sel {
	case "":
		sel = "body"
	case "body", "metadata", "omit":
	default:
		return nil, fmt.Errorf("%w: subscription %q: selection", interop.ErrUsage, s.Name)
	}
	hook := map[string]any{
		"id":             hookIDPrefix + s.Name,
		"transport":      map[string]any{"type": "http", "url": endpoint},
		"authentication": map[string]any{"type": "bearer", "tokenEnv": TokensEnv},
		"subscriptions": []any{map[string]any{
			"events": []string{string(b)}, "mode": "intercept", "timeoutMs": 30000,
			"failurePolicy": string(pol), "content": map[string]any{"default": sel},
		}},
	}
	switch {
	case len(s.Command) > 0:
		hook["transport"] = map[string]any{"type": "stdio", "command": s.Command[0], "args": s.Command[1:], "lifecycle": "per_event"}
		delete(hook, "authentication")
	case endpoint == "":
		return nil, fmt.Errorf("%w: subscription %q: no endpoint or command", interop.ErrUsage, s.Name)
	}
	reg := map[string]any{"protocolVersion": gen.ProtocolVersion, "hooks": []any{hook}}
	regJSON, err := json.Marshal(reg)
	if err != nil {
		return nil, err
	}
	g := hooks.Intercept().Message()
	if b == gen.EventContextCompactBefore {
		g = g.Deny().Return().ModifyInstructions(hooks.Replace)
	} else {
		g = g.ModifySummary(hooks.Replace)
	}
	return hooks.New(regJSON, hooks.Config{
		Source:       "urn:agenthooks-go:compaction-wire",
		Capabilities: map[gen.EventName]hooks.Grant{b: g},
		AuthProvider: tokenProvider{tokens},
		Logger:       log,
	})
}

// rawCase sends a raw request through the SDK's HTTP transport with the
// subscription's token and reports the reply as the result.
func rawCase(ctx context.Context, c *HostCase, tokens map[string]string) (*HostOutput, error) {
	tok, ok := tokens[c.Raw.Subscription]
	if !ok {
		return nil, fmt.Errorf("%w: raw: no token for %q", interop.ErrUsage, c.Raw.Subscription)
	}
	msg, err := requestMessage(0, c.Raw.Request)
	if err != nil {
		return nil, err
	}
	t := transport.NewHTTP(c.Endpoint, transport.HTTPOptions{BackendID: c.Raw.Subscription, Credentials: staticProvider{tok},
		Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: ptr(TokensEnv)}}})
	defer t.Close()
	rctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	reply, err := t.Exchange(rctx, msg)
	if err != nil {
		return nil, fmt.Errorf("raw request: %w", err)
	}
	return &HostOutput{Name: c.Name, Result: reply, Downstream: json.RawMessage("null"), Trace: []Step{}}, nil
}
