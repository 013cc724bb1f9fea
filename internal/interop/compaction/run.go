// Package compaction holds the Go SDK's adapters for the protocol's two
// compaction matrices (agent-hooks-protocol/interop/COMPACTION.md):
//
//   - cmd/compaction, the host-orchestration harness: a receiver that
//     serves the test-only JSON-RPC method compaction/run, which registers
//     fixed callback responses and runs them through the public
//     hooks.Compactor, over loopback HTTP with a bearer token
//     (AHP_COMPACTION_TOKEN) or NDJSON on stdin/stdout; and a client that
//     sends a list of requests through the SDK's HTTP or stdio transport and
//     prints the replies.
//   - cmd/compaction-wire, the canonical wire matrix: a receiver whose
//     subscriptions answer canonical hooks/intercept requests for
//     context.compact.before/.after (validated canonically by package
//     server) and record receipts; and a host that runs hooks.Compactor with
//     one callback per subscription, each delivering a canonical intercept
//     with inline text parts through the public hooks API (per-subscription
//     content selection, bearer credentials), and prints the settled result,
//     the downstream sink and the trace.
//
// The mains in cmd/ only call Main and WireMain.
package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// MethodRun is the test-only host-orchestration method of cmd/compaction.
const MethodRun = "compaction/run"

// errParams marks invalid compaction/run params (JSON-RPC -32602).
var errParams = errors.New("invalid params")

// RunParams are the params of compaction/run: the occurrence and the fixed
// callback responses, in registration order.
type RunParams struct {
	// Input is the occurrence.
	Input RunInput `json:"input"`
	// Hooks are the fixed callbacks.
	Hooks []FixedHook `json:"hooks"`
}

// RunInput is the occurrence of a run.
type RunInput struct {
	// Trigger is auto, manual or hook; empty means manual.
	Trigger string `json:"trigger,omitempty"`
	// Instructions are the initial instructions (canonical text parts).
	Instructions json.RawMessage `json:"instructions,omitempty"`
	// Items are the model-visible items (canonical); absent is empty.
	Items json.RawMessage `json:"items,omitempty"`
	// Removed are the after event's removed item identities.
	Removed json.RawMessage `json:"removed,omitempty"`
}

// FixedHook is one callback with a fixed reply.
type FixedHook struct {
	// Supplier is the host-configured subscription identity.
	Supplier string `json:"supplier"`
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// FailurePolicy is fail-open (default) or fail-closed.
	FailurePolicy string `json:"failurePolicy,omitempty"`
	// Response is the callback's reply: a JSON array of draft effects. Any
	// other JSON (a malformed array) makes the callback fail with
	// invalid_effect; absent with Error set, the callback returns an error.
	Response json.RawMessage `json:"response,omitempty"`
	// Error makes the callback return an error.
	Error bool `json:"error,omitempty"`
	// Observe makes an after hook an observer (observeOnly): it is
	// notified of the settled result and its response has no authority.
	Observe bool `json:"observe,omitempty"`
}

// RunResult is the result of compaction/run: the settled outcome and what
// each callback saw.
type RunResult struct {
	// Applied is hooks.CompactionResult.Applied.
	Applied bool `json:"applied"`
	// Denied reports an accepted deny before compaction.
	Denied bool `json:"denied"`
	// DenyReason is the accepted deny's reason.
	DenyReason string `json:"denyReason,omitempty"`
	// FailedClosed reports a fail-closed failure; FailedAt its boundary.
	FailedClosed bool `json:"failedClosed"`
	// FailedAt is "before" or "after" when FailedClosed.
	FailedAt string `json:"failedAt,omitempty"`
	// Generated reports that the generator ran.
	Generated bool `json:"generated"`
	// Instructions are the effective instructions (text parts).
	Instructions json.RawMessage `json:"instructions"`
	// Summary is the settled summary (text parts), null when the after
	// boundary was not reached.
	Summary json.RawMessage `json:"summary"`
	// Downstream is what the synthetic downstream sink received: the
	// summary of an applied result, otherwise null.
	Downstream json.RawMessage `json:"downstream"`
	// Provenance is the summary's origin.
	Provenance Provenance `json:"provenance"`
	// Messages are the accepted messages.
	Messages []Message `json:"messages"`
	// Trace lists every callback, in order.
	Trace []Step `json:"trace"`
	// Seen lists the prepared snapshots, in order (compaction/run only).
	Seen []Seen `json:"seen"`
	// Observed is the settled summary each observer was notified with,
	// in configuration order (compaction/run only; absent without
	// observers).
	Observed []json.RawMessage `json:"observed,omitempty"`
}

// Provenance is the summary's origin.
type Provenance struct {
	// Generated reports a generated summary.
	Generated bool `json:"generated"`
	// Supplier is the supplying subscription of a returned summary.
	Supplier string `json:"supplier,omitempty"`
}

// Message is one accepted message.
type Message struct {
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// Supplier is the sending subscription.
	Supplier string `json:"supplier"`
	// Text is the message text.
	Text string `json:"text"`
}

// Step is one callback of the trace.
type Step struct {
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// Supplier is the subscription.
	Supplier string `json:"supplier"`
	// Outcome is accepted, rejected or failed.
	Outcome string `json:"outcome"`
	// Reason is the rejection or failure reason (a fixed vocabulary).
	Reason string `json:"reason,omitempty"`
	// FailurePolicy is the policy that applied.
	FailurePolicy string `json:"failurePolicy"`
}

// Seen is one prepared snapshot: the text the callback was given (the
// instructions before, the summary after) and whether a supplied summary
// was pending (before) or had replaced generation (after).
type Seen struct {
	// Boundary is "before" or "after".
	Boundary string `json:"boundary"`
	// Supplier is the subscription.
	Supplier string `json:"supplier"`
	// Text is the instructions (before) or summary (after) given.
	Text json.RawMessage `json:"text"`
	// Supplied reports a pending (before) or installed (after) returned
	// summary.
	Supplied bool `json:"supplied"`
}

// boundaryName maps the short boundary names of the adapters.
func boundaryName(s string) (gen.EventName, bool) {
	switch s {
	case "before", string(gen.EventContextCompactBefore):
		return gen.EventContextCompactBefore, true
	case "after", string(gen.EventContextCompactAfter):
		return gen.EventContextCompactAfter, true
	}
	return "", false
}

// shortBoundary is the inverse of boundaryName.
func shortBoundary(b gen.EventName) string {
	if b == gen.EventContextCompactBefore {
		return "before"
	}
	return "after"
}

// decodeStrict decodes one JSON value into v, rejecting repeated member
// names at any depth (encoding/json would keep the last), unknown members
// and trailing data.
func decodeStrict(data []byte, v any) error {
	sc := jsonlex.Acquire(true)
	defer sc.Release()
	i := jsonlex.SkipSpace(data, 0)
	end, ok := sc.Value(data, i, 0)
	if !ok {
		return errors.New("not a JSON value")
	}
	if off, dup := sc.Dup(); dup {
		return fmt.Errorf("repeated member name at %s", jsonlex.Pointer(data, off))
	}
	if jsonlex.SkipSpace(data, end) != len(data) {
		return errors.New("trailing data")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// policy parses a failure policy.
func policy(s string) (hooks.FailurePolicy, bool) {
	switch s {
	case "", string(hooks.FailOpen):
		return hooks.FailOpen, true
	case string(hooks.FailClosed):
		return hooks.FailClosed, true
	}
	return "", false
}

// compactionInput converts a RunInput; an error wraps errParams.
func compactionInput(in RunInput) (hooks.CompactionInput, error) {
	out := hooks.CompactionInput{Source: "urn:agenthooks-go:compaction", Trigger: "manual", BeforeID: "evt-compact-before", AfterID: "evt-compact-after"}
	if in.Trigger != "" {
		out.Trigger = gen.ExecutionEventContextCompactBeforeTrigger(in.Trigger)
	}
	if len(in.Instructions) > 0 {
		if err := out.Instructions.UnmarshalJSON(in.Instructions); err != nil {
			return out, fmt.Errorf("%w: instructions", errParams)
		}
	}
	if len(in.Items) > 0 {
		if err := json.Unmarshal(in.Items, &out.Items); err != nil {
			return out, fmt.Errorf("%w: items", errParams)
		}
	}
	if len(in.Removed) > 0 {
		if err := json.Unmarshal(in.Removed, &out.Removed); err != nil {
			return out, fmt.Errorf("%w: removed", errParams)
		}
	}
	return out, nil
}

// parseEffects decodes a reply as a JSON array of draft effects with the
// generated codecs; a malformed reply is an invalid_effect rejection.
func parseEffects(raw json.RawMessage) ([]gen.Effect, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, &settle.Rejection{EffectIndex: -1, Reason: settle.ReasonInvalidEffect}
	}
	out := make([]gen.Effect, len(items))
	for i, it := range items {
		if err := out[i].UnmarshalJSON(it); err != nil {
			return nil, &settle.Rejection{EffectIndex: i, Reason: settle.ReasonInvalidEffect}
		}
	}
	return out, nil
}

// Run executes one compaction/run request with hooks.Compactor. An error
// wraps errParams for invalid params, anything else is an internal error.
func Run(ctx context.Context, raw json.RawMessage) (*RunResult, error) {
	var p RunParams
	if err := decodeStrict(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", errParams, err)
	}
	if p.Hooks == nil {
		return nil, fmt.Errorf("%w: hooks", errParams)
	}
	in, err := compactionInput(p.Input)
	if err != nil {
		return nil, err
	}
	var (
		seen     []Seen
		obsMu    sync.Mutex
		observed []json.RawMessage
	)
	cfg := hooks.CompactionConfig{}
	for i, fh := range p.Hooks {
		b, ok := boundaryName(fh.Boundary)
		if !ok {
			return nil, fmt.Errorf("%w: hooks[%d].boundary", errParams, i)
		}
		pol, ok := policy(fh.FailurePolicy)
		if !ok {
			return nil, fmt.Errorf("%w: hooks[%d].failurePolicy", errParams, i)
		}
		if fh.Supplier == "" || (fh.Response == nil) == !fh.Error || (fh.Observe && fh.Error) {
			return nil, fmt.Errorf("%w: hooks[%d] needs a supplier and exactly one of response and error", errParams, i)
		}
		fh := fh
		if fh.Observe {
			if b != gen.EventContextCompactAfter || fh.FailurePolicy != "" {
				return nil, fmt.Errorf("%w: hooks[%d]: an observer is an after hook without a failure policy", errParams, i)
			}
			k := len(cfg.Observers)
			observed = append(observed, nil)
			cfg.Observers = append(cfg.Observers, func(_ context.Context, snap hooks.CompactionSnapshot) {
				// The response is parsed and dropped: an observer has no
				// effect authority. Its snapshot is its own to change.
				_, _ = parseEffects(fh.Response)
				text := mustText(snap.Event.ContextCompactAfter.Summary)
				if len(snap.Event.ContextCompactAfter.Summary) > 0 && snap.Event.ContextCompactAfter.Summary[0].Body != nil {
					snap.Event.ContextCompactAfter.Summary[0].Body.Text = "changed by an observer"
				}
				obsMu.Lock()
				observed[k] = text
				obsMu.Unlock()
			})
			continue
		}
		cfg.Hooks = append(cfg.Hooks, hooks.CompactionHook{Supplier: fh.Supplier, Boundary: b, FailurePolicy: pol,
			Callback: func(_ context.Context, snap hooks.CompactionSnapshot) ([]gen.Effect, error) {
				seen = append(seen, seenOf(snap, b))
				if fh.Error {
					return nil, errors.New("fixed callback error")
				}
				return parseEffects(fh.Response)
			}})
	}
	c, err := hooks.NewCompactor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errParams, err)
	}
	res, err := c.Run(ctx, in)
	// The observers run detached from Run; Close joins them before the
	// reply reports what they saw.
	_ = c.Close()
	if err != nil {
		if errors.Is(err, hooks.ErrInvalidInput) {
			return nil, fmt.Errorf("%w: input", errParams)
		}
		return nil, err
	}
	out := encodeResult(res)
	obsMu.Lock()
	out.Observed = observed
	obsMu.Unlock()
	for i := range out.Observed {
		if out.Observed[i] == nil {
			out.Observed[i] = json.RawMessage("null") // not notified: the after boundary was not reached
		}
	}
	out.Seen = seen
	if out.Seen == nil {
		out.Seen = []Seen{}
	}
	return out, nil
}

// seenOf records a prepared snapshot.
func seenOf(snap hooks.CompactionSnapshot, b gen.EventName) Seen {
	s := Seen{Boundary: shortBoundary(b), Supplier: snap.Supplier}
	switch {
	case snap.Event.ContextCompactBefore != nil:
		s.Text = mustText(snap.Event.ContextCompactBefore.Instructions)
		s.Supplied = snap.State != nil && snap.State.Candidate.Valid
	case snap.Event.ContextCompactAfter != nil:
		s.Text = mustText(snap.Event.ContextCompactAfter.Summary)
		s.Supplied = snap.Event.ContextCompactAfter.Execution.SkippedSuppliedResult != nil
	}
	return s
}

// mustText encodes text parts; nil encodes as null.
func mustText(ps gen.TextParts) json.RawMessage {
	if ps == nil {
		return json.RawMessage("null")
	}
	b, err := ps.MarshalJSON()
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// encodeResult converts a CompactionResult.
func encodeResult(res *hooks.CompactionResult) *RunResult {
	out := &RunResult{
		Applied: res.Applied, Denied: res.Denied, DenyReason: res.DenyReason, FailedClosed: res.FailedClosed,
		Generated: res.Generated, Instructions: mustText(res.Instructions), Summary: mustText(res.Summary),
		Downstream: json.RawMessage("null"),
		Provenance: Provenance{Generated: res.Provenance.Generated, Supplier: res.Provenance.Supplier},
		Messages:   []Message{}, Trace: []Step{},
	}
	if res.FailedClosed {
		out.FailedAt = shortBoundary(res.FailedAt)
	}
	if res.Instructions == nil {
		out.Instructions = json.RawMessage("[]")
	}
	if d, ok := res.Downstream(); ok {
		out.Downstream = mustText(d)
	}
	for _, m := range res.Messages {
		out.Messages = append(out.Messages, Message{Boundary: shortBoundary(m.Boundary), Supplier: m.Supplier, Text: m.Text})
	}
	for _, s := range res.Trace {
		out.Trace = append(out.Trace, Step{Boundary: shortBoundary(s.Boundary), Supplier: s.Supplier, Outcome: string(s.Outcome), Reason: s.Reason, FailurePolicy: string(s.FailurePolicy)})
	}
	return out
}

// Handle answers one JSON-RPC message of cmd/compaction's receiver: the
// response bytes, or nil for a notification.
func Handle(ctx context.Context, msg []byte) []byte {
	env, err := jsonrpc.ClassifyContext(ctx, msg)
	if err != nil {
		e := jsonrpc.AsError(err)
		return jsonrpc.AppendErrorResponse(nil, env.ID, e)
	}
	if env.Kind == jsonrpc.KindNotification {
		return nil
	}
	if env.Kind != jsonrpc.KindRequest {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest))
	}
	if env.Method != MethodRun {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound))
	}
	res, err := Run(ctx, env.Params)
	if err != nil {
		code := jsonrpc.CodeInternalError
		if errors.Is(err, errParams) {
			code = jsonrpc.CodeInvalidParams
		}
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(code))
	}
	body, err := json.Marshal(res)
	if err != nil {
		return jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInternalError))
	}
	return jsonrpc.AppendResponse(nil, env.ID, body)
}
