package server

import (
	"errors"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// boundaryAdmit applies runtime/settle's admission rules, the boundary
// checks shared with the harness (base/composition.md,
// base/capabilities.md).
func boundaryAdmit(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) error {
	return settle.Admit(event, granted, effects)
}

// checkEvent reports an event that runtime/settle cannot settle (invalid
// host input, such as an elicitation action that differs from its result
// body); such a request is invalid params.
func checkEvent(event *gen.Event) error {
	return settle.CheckEvent(event)
}

// rejectedIndex returns the offending effect index of a settle rejection.
func rejectedIndex(err error) (int, bool) {
	if rej, ok := errors.AsType[*settle.Rejection](err); ok {
		return rej.EffectIndex, true
	}
	return 0, false
}
