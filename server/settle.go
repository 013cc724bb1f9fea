package server

import (
	"errors"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// admission is what admit checks an answer's effects against: the
// request's capabilities and its event.
type admission struct {
	granted *gen.Capabilities
	// event is the event of a request a caller of [Admit] holds, or the
	// byte path's snapshot (see dispatchDoc); settle.Admit checks it in
	// full.
	event *gen.Event
	// rq, when not nil, is the dispatcher's request, which passed
	// canonical validation: its event is decoded from the message only for
	// effects that read more of it than its type (settle.AdmitType), and
	// settled with settle.AdmitValidated.
	rq *request
}

// boundaryAdmit applies runtime/settle's admission rules, the boundary
// checks shared with the harness (base/composition.md,
// base/capabilities.md), to effects at the event name.
func boundaryAdmit(a admission, name gen.EventName, effects []gen.Effect) error {
	if a.rq == nil {
		return settle.Admit(a.event, *a.granted, effects)
	}
	if handled, err := settle.AdmitType(name, *a.granted, effects); handled {
		return err
	}
	event, err := a.rq.event()
	if err != nil {
		return err
	}
	return settle.AdmitValidated(event, *a.granted, effects)
}

// checkEvent reports an event that runtime/settle cannot settle (invalid
// host input, such as an elicitation action that differs from its result
// body); such a request is invalid params. The event is the one the
// dispatcher decoded from a request that passed canonical validation and
// the envelope's repeated-name check, before any callback saw it;
// validated is false only on the byte path of the tests (settle.CheckEvent).
func checkEvent(event *gen.Event, validated bool) error {
	if validated {
		return settle.CheckValidated(event)
	}
	return settle.CheckEvent(event)
}

// rejectedIndex returns the offending effect index of a settle rejection.
func rejectedIndex(err error) (int, bool) {
	if rej, ok := errors.AsType[*settle.Rejection](err); ok {
		return rej.EffectIndex, true
	}
	return 0, false
}
