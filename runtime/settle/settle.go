// Package settle is the AHP composition engine: for one event occurrence it
// admits each ordered interceptor response against the capabilities the
// request advertised and the boundary's rules, applies it atomically, and
// tracks the settled permission, candidate, effective targets, messages,
// flow and injections (spec/draft/base/composition.md, base/capabilities.md,
// base/failure.md). The same admission code serves the harness (Apply) and
// the backend (Admit).
package settle

import (
	"encoding/json"
	"errors"

	"github.com/agenthooks/agenthooks-go/gen"
)

// ErrRejected is matched by every *Rejection: errors.Is(err, ErrRejected).
var ErrRejected = errors.New("settle: response rejected")

// ErrInvalidEvent reports an event or initial state that cannot be settled
// (invalid host input); New wraps it.
var ErrInvalidEvent = errors.New("settle: invalid host input")

// Candidate is a supplied result: Present=false means none supplied; Value
// is exact JSON (may be `null`); Provenance is the optional provenance
// object (nil when absent).
type Candidate struct {
	Present    bool
	Value      json.RawMessage
	Provenance json.RawMessage
}

// State is the committed settled state of one occurrence; all fields are
// detached copies.
type State struct {
	// Permission is the composed permission (deny > ask > allow > none).
	Permission gen.Permission
	// Candidate is the supplied result, if any.
	Candidate Candidate
	// Flow is "none", "stop" or "continue".
	Flow gen.FlowState
	// StopReason is the reason of the accepted stop (first one), if Flow is stop.
	StopReason string
	// ContinueInstruction is the last accepted continuation instruction, if any.
	ContinueInstruction string
	// ContinuationCount is the continuation count after settlement.
	ContinuationCount int
	// RemainingContinuations is the remaining allowance after settlement.
	RemainingContinuations int
	// Instructions are the accepted continuation instructions, in order.
	Instructions []string
	// Injections are the accepted inject effects, in order.
	Injections []gen.InjectEffect
	// Messages are the accepted user-facing message texts, in order.
	Messages []string
	// Input is the effective tool input (tool.before,
	// tool.permission.request); nil if the event has none.
	Input json.RawMessage
	// Targets holds the effective value of every other modification target
	// the boundary has (prompt, request, response, output, content,
	// instructions, summary, workspace).
	Targets map[gen.ModifyTarget]json.RawMessage
	// Accepted lists the admitted responses, in order.
	Accepted []AcceptedResponse
}

// AcceptedResponse is one admitted response: its position among the
// responses offered to Apply (0-based) and a detached copy of its effects.
type AcceptedResponse struct {
	Index   int
	Effects []gen.Effect
}

// Initial is the host's prior state for an occurrence; the zero value means
// none (permission none, no candidate, the event's own input).
type Initial struct {
	// Permission is the incoming permission; empty means none.
	Permission gen.Permission
	// Candidate is an incoming supplied result.
	Candidate Candidate
	// Input, when non-nil, overrides the event's tool input (must be a JSON object).
	Input json.RawMessage
}

// Occurrence settles one event occurrence across ordered backend responses.
// It is not safe for concurrent use.
type Occurrence struct {
	st state
}

type state struct{}

// Rejection reports why a response was rejected: the index of the first
// offending effect (-1 for the response as a whole) and a reason from a
// fixed vocabulary. It never carries backend-provided text or values.
type Rejection struct {
	EffectIndex int
	Reason      string
}

// Error implements error.
func (r *Rejection) Error() string { return "settle: response rejected: " + r.Reason }

// Is reports whether target is ErrRejected.
func (r *Rejection) Is(target error) bool { return target == ErrRejected }

// New starts settling an occurrence of event with the host's initial state.
// It returns an error (wrapping ErrInvalidEvent) only when the event cannot
// be settled.
func New(event *gen.Event, initial Initial) (*Occurrence, error) {
	return &Occurrence{}, nil
}

// RequestState returns the params.state to send to the next receiver.
func (o *Occurrence) RequestState() *gen.InterceptState { return nil }

// Apply admits result against granted and, if admissible, applies it
// atomically. On rejection it returns a *Rejection and changes nothing.
func (o *Occurrence) Apply(granted gen.Capabilities, result *gen.InterceptResponseResult) error {
	return nil
}

// State returns a detached snapshot of the committed state.
func (o *Occurrence) State() State { return State{} }

// Admit checks, without applying, whether effects are admissible for event
// under granted.
func Admit(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) error {
	return nil
}
