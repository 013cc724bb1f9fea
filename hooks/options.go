package hooks

import (
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// CallOption adjusts one call.
type CallOption interface{ apply(*callOptions) }

type callOptions struct {
	// initial is WithInitialState's state (nil without it): the option's
	// own copy, shared by every call given the option, so never written
	// (originalRequest replaces it with a copy of its own).
	initial       *settle.Initial
	grant         *Grant
	eventID       string
	continuations int
	attachments   []attachmentOption
	// origRequest is WithOriginalElicitationRequest's event (nil without it).
	origRequest *gen.Event
	origSet     bool
}

type optionFunc func(*callOptions)

// initialState returns the host's initial state of the occurrence: none
// without WithInitialState.
func (o *callOptions) initialState() settle.Initial {
	if o.initial == nil {
		return settle.Initial{}
	}
	return *o.initial
}

func (f optionFunc) apply(o *callOptions) { f(o) }

// Initial is the host's native prior state of one occurrence: a decision it
// already made (for example from its own permission rules) and, optionally,
// a result it already has. It is a value; methods return modified copies.
type Initial struct {
	s settle.Initial
}

// InitialState returns the initial state with permission p (none, allow,
// ask or deny) and no candidate. It records a decision already made for
// this exact occurrence; it is not an authorization shortcut.
func InitialState(p gen.Permission) Initial { return Initial{s: settle.Initial{Permission: p}} }

// WithCandidate returns a copy carrying a supplied result: value is its
// exact JSON (JSON null is a supplied null result, distinct from no
// candidate) and provenance an optional JSON object (nil for none).
func (i Initial) WithCandidate(value, provenance json.RawMessage) Initial {
	i.s.Candidate = settle.Candidate{Present: true, Value: clone(value), Provenance: clone(provenance)}
	return i
}

// WithInitialState sets the host's prior state of the occurrence. Without
// it the permission is none and there is no candidate.
func WithInitialState(s Initial) CallOption { return &initialOption{s: s.s} }

// initialOption is WithInitialState's option: calls given it refer to its
// state, which nothing writes.
type initialOption struct{ s settle.Initial }

func (i *initialOption) apply(o *callOptions) { o.initial = &i.s }

// WithCapabilities narrows, for this call only, what is advertised to
// interceptors. g must grant nothing beyond the configured grant of the
// event (otherwise the call fails with ErrWidening). An Observe() grant on
// an interceptable event turns this occurrence into observation only: its
// intercept subscriptions receive it through hooks/observe.
func WithCapabilities(g Grant) CallOption {
	return optionFunc(func(o *callOptions) { o.grant = &g })
}

// WithEventID sets the event id; it takes precedence over an id in the
// input. Reuse the same id when retrying the same occurrence.
func WithEventID(id string) CallOption {
	return optionFunc(func(o *callOptions) { o.eventID = id })
}

// WithContinuations states how many continuations the current turn has
// already used, so that only the remaining allowance of a Continue grant is
// advertised. The default is the event's own continuationCount
// (turn.finish.before); WithContinuations can raise it, never lower it.
func WithContinuations(used int) CallOption {
	return optionFunc(func(o *callOptions) { o.continuations = used })
}

// WithOriginalElicitationRequest supplies, for a user.elicitation.result
// call, the canonical user.elicitation.request event that the result
// answers: typically the Event of the request call's Result. Settlement
// needs it to check a backend's edit of the answer object
// (modify(content), replace or merge) against the requested form schema;
// without it such an edit is rejected (context_unavailable).
//
// The call checks the request canonically and correlates it with the
// result before any content is read: the result's parentEventId must be the
// request's id, and source, session, server and mode must match. A request
// that fails is invalid input (ErrInvalidInput). The option is refused on
// any other event. The request's body is read from the host's own copy,
// never from what a receiver was shown.
func WithOriginalElicitationRequest(request *gen.Event) CallOption {
	return optionFunc(func(o *callOptions) { o.origRequest, o.origSet = request, true })
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}
