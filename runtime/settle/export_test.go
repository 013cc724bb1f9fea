package settle

import (
	"reflect"
	"sync/atomic"

	"github.com/agenthooks/agenthooks-go/gen"
)

// StageBoth stages effects for event under granted in two admission-only
// occurrences, one set up as Admit sets it up and one as AdmitValidated
// does, and returns the error and the state each would commit. The state
// of the validated occurrence holds the effective tool input and list
// target only when an effect needed them (a modification of the input, of
// the list): inputNeeded reports whether one modified the input; the
// inputs (lists) of both states are left out of them when no effect
// needed them.
func StageBoth(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) (eagerErr, validatedErr error, eager, validated any, inputNeeded bool) {
	var a, b Occurrence
	b.validated = true
	if err := a.init(event, nil, Initial{}, false); err != nil {
		eagerErr = err
	}
	if err := b.init(event, nil, Initial{}, false); err != nil {
		validatedErr = err
	}
	if eagerErr != nil || validatedErr != nil {
		return eagerErr, validatedErr, nil, nil, false
	}
	na, ra := a.stage(&granted, effects, nil)
	nb, rb := b.stage(&granted, effects, nil)
	if ra != nil {
		eagerErr = ra
	}
	if rb != nil {
		validatedErr = rb
	}
	listNeeded := false
	for i := range effects {
		inputNeeded = inputNeeded || effects[i].ModifyInput != nil
		listNeeded = listNeeded || effects[i].ModifyMessages != nil || effects[i].ModifyText != nil
	}
	if !inputNeeded {
		na.input, nb.input = nil, nil
	}
	if !listNeeded {
		na.list, nb.list = nil, nil
	}
	return eagerErr, validatedErr, na, nb, inputNeeded
}

// CheckValidatedByOccurrence is CheckValidated without its direct check of
// the tool events: an occurrence's init of event.
func CheckValidatedByOccurrence(event *gen.Event) error {
	o := Occurrence{checkOnly: true, validated: true}
	return o.init(event, nil, Initial{}, false)
}

// StageOnly stages effects at o under granted as Apply does, without
// publishing what it staged: it returns the rejection, or nil.
func (o *Occurrence) StageOnly(granted gen.Capabilities, effects []gen.Effect) error {
	if _, rej := o.stage(&granted, effects, nil); rej != nil {
		return rej
	}
	return nil
}

// ZeroMoreIntact reports whether the zero committedMore that reads of an
// absent one share is still zero.
func ZeroMoreIntact() bool { return reflect.DeepEqual(zeroMore, committedMore{}) }

// StageStopped is StageOnly with the stop flag of o set, as ApplyContext
// sets it once its context ends.
func (o *Occurrence) StageStopped(granted gen.Capabilities, effects []gen.Effect) error {
	var set atomic.Bool
	set.Store(true)
	o.stop = &set
	defer func() { o.stop = nil }()
	return o.StageOnly(granted, effects)
}

// ScansLong is scansLong.
func ScansLong(effects []gen.Effect) bool { return scansLong(effects) }
