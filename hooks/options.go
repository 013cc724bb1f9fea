package hooks

import (
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// CallOption adjusts one call.
type CallOption interface{ apply(*callOptions) }

type callOptions struct {
	initial       settle.Initial
	grant         *Grant
	eventID       string
	continuations int
	attachments   []attachmentOption
}

type optionFunc func(*callOptions)

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
func WithInitialState(s Initial) CallOption {
	return optionFunc(func(o *callOptions) { o.initial = s.s })
}

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

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}
