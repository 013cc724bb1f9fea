package server

import (
	"errors"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// boundaryAdmit applies runtime/settle's admission rules, the boundary
// checks shared with the harness (base/composition.md,
// base/capabilities.md). validated reports an event decoded from the
// request the dispatcher validated (settle.AdmitValidated), rather than one
// a caller of [Admit] holds.
func boundaryAdmit(event *gen.Event, granted gen.Capabilities, effects []gen.Effect, validated bool) error {
	if validated {
		return settle.AdmitValidated(event, granted, effects)
	}
	return settle.Admit(event, granted, effects)
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
