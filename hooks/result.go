package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// SyntheticDenialReason is the generic reason the harness presents for a
// fail-closed denial; it reveals nothing about the failure.
const SyntheticDenialReason = "Required policy backend unavailable."

// Code classifies a delivery failure; the values are the transport.Code
// constants (deadline_exceeded, transport, remote_rpc, protocol_rejection,
// preparation, cancelled, capacity).
type Code = transport.Code

// Stage is the step at which a delivery failed; the values are the
// transport.Stage constants.
type Stage = transport.Stage

// Diagnostic records one failed delivery. It holds identifiers and fixed
// tokens only: never backend messages, error data, response bytes or
// credentials.
type Diagnostic struct {
	// Code classifies the failure.
	Code Code
	// BackendID is the backend's registration id.
	BackendID string
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
	// Mode is the delivery mode: intercept, or observe.
	Mode gen.Mode
	// Downgraded is set on an observation owed to an uncalled intercept
	// subscription after a short-circuit.
	Downgraded bool
	// Stage is where the delivery failed.
	Stage Stage
	// FailurePolicy is the intercept subscription's policy (empty for
	// observations, which never block).
	FailurePolicy FailurePolicy
	// SyntheticDenial is set when this failure denied the operation under
	// fail-closed.
	SyntheticDenial bool
	// Reason is a fixed token refining Code (for example http_status,
	// id_mismatch, missing_effects, or the admission rule that rejected the
	// response).
	Reason string
	// Status is the HTTP status, process exit code or JSON-RPC error code
	// when relevant, else zero.
	Status int
}

// Candidate is a supplied result: Present is false when there is none.
type Candidate struct {
	// Present reports whether a result was supplied.
	Present bool
	// Value is the result's exact JSON (possibly null).
	Value json.RawMessage
	// Provenance is the optional provenance object.
	Provenance json.RawMessage
}

// Accepted is one admitted interceptor response.
type Accepted struct {
	// BackendID is the responding backend.
	BackendID string
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
	// Effects are the response's effects, in order.
	Effects []gen.Effect
}

// Result is the settled outcome of one call. It is a decision for the host
// to act on, not an execution: the host still validates and runs its own
// operation. Permission none is not approval; ask needs the host's approval;
// deny (explicit or synthetic) and an interrupted call never authorize
// execution.
//
// A Result of a call given attachments (WithAttachment) owns them; see
// Attachments. Its attachment parts carry the harness's own reference,
// AttachmentRef(partID), in Event, Targets, Injections and Accepted, never
// a receiver's reference; AttachmentPartID maps it back and
// Attachments().Read returns the bytes. The caller must Close such a
// Result when done with its content; a Result returned with an error has
// already released its attachments.
type Result struct {
	// Permission is the settled permission (none, allow, ask, deny).
	Permission gen.Permission
	// Input is the effective tool input (detached JSON) after accepted
	// modifications, or nil when the event has none.
	Input json.RawMessage
	// Candidate is the supplied result, if any. It is dropped by a denial
	// (explicit or synthetic) and by a flow stop.
	Candidate Candidate
	// Flow is the settled flow state (none, stop, continue).
	Flow gen.FlowState
	// StopReason is the reason of an accepted flow stop.
	StopReason string
	// Instructions are accepted continuation instructions, in order.
	Instructions []string
	// Injections are accepted context injections, in order.
	Injections []gen.InjectEffect
	// Messages are accepted user-facing messages, in order.
	Messages []string
	// Targets holds the effective value (detached JSON) of every other
	// modification target of the boundary after accepted modifications:
	// prompt, request, response, output, content, instructions, summary or
	// workspace. Event returns the same values inside the effective event.
	Targets map[gen.ModifyTarget]json.RawMessage
	// ContinueInstruction is the accepted continuation instruction text
	// when Flow is continue.
	ContinueInstruction string
	// ContinuationCount and RemainingContinuations are the continuation
	// counters after settlement (turn.finish.before).
	ContinuationCount, RemainingContinuations int
	// Accepted lists the admitted responses in chain order.
	Accepted []Accepted
	// Diagnostics lists failed deliveries, interception first (in chain
	// order), then observations (in registration order).
	Diagnostics []Diagnostic
	// SyntheticDenial is set when a fail-closed failure denied the
	// operation.
	SyntheticDenial bool
	// Interrupted is set when the caller's context ended before the
	// decision was settled, or the caller cancelled it (or the Hooks closed)
	// before the call completed; Permission is then deny, and the call's
	// error says why. The caller's deadline passing during the observations
	// that follow settlement leaves the settled decision standing and is
	// reported only in Diagnostics.
	Interrupted bool

	event       *gen.Event
	attachments *Attachments // nil when the call was given none
	oneAccepted [1]Accepted  // backs Accepted when one response was accepted
}

// Event returns a detached copy of the effective canonical event: the event
// as delivered, with the accepted modifications applied.
func (r *Result) Event() *gen.Event {
	if r == nil || r.event == nil {
		return nil
	}
	data, err := gen.EncodeEvent(r.event)
	if err != nil {
		return nil
	}
	var out gen.Event
	if err := out.UnmarshalJSON(data); err != nil {
		return nil
	}
	return &out
}

// DecodeInput decodes the effective tool input into v, the host's own type,
// rejecting members v does not declare. It is the host's post-settlement
// check: a failure leaves the Result as settled (the accepted effects stand)
// and means the operation must not run with this input.
func (r *Result) DecodeInput(v any) error {
	if r == nil || r.Input == nil {
		return ErrNoInput
	}
	dec := json.NewDecoder(bytes.NewReader(r.Input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: tool input: %w", ErrDecode, err)
	}
	return nil
}

// DecodeTarget decodes the effective value of a modification target
// (Targets[target]) into v, the host's own type, rejecting object members v
// does not declare, as DecodeInput does for the tool input. For a message
// or text-part target, gen's types read it exactly:
//
//	var msgs []gen.CanonicalMessage
//	err := res.DecodeTarget(gen.ModifyTargetPrompt, &msgs)
//
// It fails with ErrNoTarget when the Result holds no value for target (the
// event's boundary has no such target, or its value was withheld), and with
// ErrDecode when the value does not fit v; either way the Result stays as
// settled. The tool input is not among Targets; DecodeTarget reads it for
// gen.ModifyTargetInput (Result.Input), as DecodeInput does.
func (r *Result) DecodeTarget(target gen.ModifyTarget, v any) error {
	if r == nil {
		return ErrNoTarget
	}
	data, ok := r.Targets[target]
	if target == gen.ModifyTargetInput {
		data, ok = r.Input, true
	}
	if !ok || data == nil {
		return ErrNoTarget
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: target %s: %w", ErrDecode, target, err)
	}
	return nil
}

// DenyReason returns the reason to present for a denial: the first accepted
// deny effect's reason, SyntheticDenialReason for a fail-closed denial, or
// the empty string when the result is not a denial.
func (r *Result) DenyReason() string {
	if r == nil || r.Permission != gen.PermissionDeny {
		return ""
	}
	for _, a := range r.Accepted {
		for _, e := range a.Effects {
			if e.Deny != nil {
				return e.Deny.Reason
			}
		}
	}
	if r.SyntheticDenial || r.Interrupted {
		return SyntheticDenialReason
	}
	return ""
}
