package hooks

import (
	"context"
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
)

// Deliver runs one occurrence of a complete canonical event document, as
// the named per-event methods do with an input they build: the event is
// validated against its canonical schema, delivered to every matching
// subscription, and the responses are admitted and settled. The event is
// used as given (its id, source and time are kept); only missing content
// ids are synthesized, as for the named methods. It is meant for tools
// that replay recorded events; a harness should call the named methods.
func (h *Hooks) Deliver(ctx context.Context, event []byte, opts ...CallOption) (*Result, error) {
	ev, err := gen.ParseEvent(event)
	if err != nil {
		closeAttachments(opts)
		return nil, inputError("event", "", "schema", "the event does not satisfy its canonical schema").withCause("", err)
	}
	var head struct {
		Type gen.EventName `json:"type"`
	}
	if err := json.Unmarshal(event, &head); err != nil || head.Type == "" {
		closeAttachments(opts)
		return nil, inputError("event", "/type", "type", "the event has no type")
	}
	return h.dispatch(ctx, head.Type, opts, func(*fill) (*gen.Event, error) { return ev, nil })
}

// closeAttachments closes the attachments given by opts to a call that
// fails before it starts: a call that returns an error has closed them.
func closeAttachments(opts []CallOption) {
	var o callOptions
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	for _, a := range o.attachments {
		if a.a != nil {
			_ = a.a.Close()
		}
	}
}
