package server

import (
	"github.com/agenthooks/agenthooks-go/gen"
)

// boundaryAdmit applies runtime/settle's admission rules (the boundary
// checks shared with the harness). TEMPORARY: runtime/settle does not
// compile yet; the local grant check in admit.go is the only check until it
// does.
func boundaryAdmit(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) error {
	_, _, _ = event, granted, effects
	return nil
}

// rejectedIndex returns the offending effect index of a settle rejection.
func rejectedIndex(err error) (int, bool) {
	_ = err
	return 0, false
}
