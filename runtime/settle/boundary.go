package settle

import (
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
)

// targetKind is the shape of a boundary's modification target.
type targetKind uint8

const (
	tkNone      targetKind = iota
	tkInput                // JSON object (tool input): shallow object merge
	tkMessages             // canonical message list: append merge
	tkText                 // text-part list: append merge
	tkWorkspace            // WorkspaceChange object: shallow object merge
	tkForm                 // MCP form answers object: shallow object merge
)

// returnKind is the shape of a boundary's supplied result.
type returnKind uint8

const (
	rkNone     returnKind = iota
	rkAny                 // tool.before: the actual JSON tool result
	rkMessages            // model.request.before: canonical messages
	rkText                // context.compact.before: text parts (the summary)
	rkElicit              // user.elicitation.request: MCP ElicitResult
)

// family bits, one per core effect family.
type familySet uint16

const (
	famDeny familySet = 1 << iota
	famAllow
	famAsk
	famModify
	famMessage
	famReturn
	famFlow
	famInject
)

// familyBit maps a core family name to its bit (0 for anything else,
// including reverse-DNS extension names this engine does not implement).
func familyBit(f gen.EffectFamily) familySet {
	switch f {
	case gen.EffectFamilyDeny:
		return famDeny
	case gen.EffectFamilyAllow:
		return famAllow
	case gen.EffectFamilyAsk:
		return famAsk
	case gen.EffectFamilyModify:
		return famModify
	case gen.EffectFamilyMessage:
		return famMessage
	case gen.EffectFamilyReturn:
		return famReturn
	case gen.EffectFamilyFlow:
		return famFlow
	case gen.EffectFamilyInject:
		return famInject
	}
	return 0
}

// boundary is the settlement semantics of one interceptable event. The
// bounds (families, target names, flow operations) come from the generated
// catalogue; the field mapping is the spec's (base/composition.md §Atomic
// effect acceptance, execution-payloads.md, interaction-payloads.md,
// capability-auth.md §Event-semantic capability bounds).
type boundary struct {
	name     gen.EventName
	families familySet
	target   gen.ModifyTarget
	tkind    targetKind
	field    string                   // dotted event path of the target, for gap checks
	role     gen.CanonicalMessageRole // required role of every target message, if any
	ret      returnKind
	stop     bool
	cont     bool
}

// boundaries holds the semantics of every interceptable event, derived
// once from the catalogue and never modified afterwards.
var boundaries = sync.OnceValue(func() map[gen.EventName]*boundary {
	m := make(map[gen.EventName]*boundary)
	for _, info := range gen.Events() {
		if b, ok := deriveBoundary(info.Name); ok {
			m[info.Name] = &b
		}
	}
	return m
})

// boundaryFor returns the semantics of an interceptable event (shared,
// never modified), or false.
func boundaryFor(name gen.EventName) (*boundary, bool) {
	b, ok := boundaries()[name]
	return b, ok
}

// deriveBoundary computes the semantics of an interceptable event, or false.
func deriveBoundary(name gen.EventName) (boundary, bool) {
	info, ok := gen.LookupEvent(name)
	if !ok || !info.Interceptable() {
		return boundary{}, false
	}
	b := boundary{name: name}
	for _, f := range info.EffectFamilies {
		b.families |= familyBit(f)
	}
	for _, op := range info.FlowOperations {
		switch gen.FlowOperation(op) {
		case gen.FlowOperationStop:
			b.stop = true
		case gen.FlowOperationContinue:
			b.cont = true
		}
	}
	switch name {
	case gen.EventToolBefore:
		b.tkind, b.field, b.ret = tkInput, "tool.input", rkAny
	case gen.EventToolPermissionRequest:
		b.tkind, b.field = tkInput, "tool.input"
	case gen.EventTurnStart, gen.EventModelResponseAfter, gen.EventTurnFinishBefore, gen.EventToolAfter:
		b.tkind, b.field = tkMessages, "items"
	case gen.EventModelRequestBefore:
		b.tkind, b.field, b.ret = tkMessages, "items", rkMessages
	case gen.EventUserMessageInbound:
		b.tkind, b.field, b.role = tkMessages, "message.messages", gen.CanonicalMessageRoleUser
	case gen.EventUserMessageOutbound:
		b.tkind, b.field, b.role = tkMessages, "message.messages", gen.CanonicalMessageRoleAssistant
	case gen.EventContextCompactBefore:
		b.tkind, b.field, b.ret = tkText, "instructions", rkText
	case gen.EventContextCompactAfter:
		b.tkind, b.field = tkText, "summary"
	case gen.EventWorkspaceChangeBefore:
		b.tkind, b.field = tkWorkspace, "workspace.change"
	case gen.EventUserElicitationResult:
		b.tkind, b.field = tkForm, "elicitation.result"
	case gen.EventUserElicitationRequest:
		b.ret = rkElicit
	}
	if b.tkind != tkNone {
		// The target name is the catalogue's (one target per boundary).
		if len(info.ModifyTargets) != 1 {
			return boundary{}, false
		}
		b.target = info.ModifyTargets[0]
	}
	if b.ret != rkNone && b.families&famReturn == 0 {
		b.ret = rkNone
	}
	return b, true
}

// bound returns the occurrence's boundary, or for an Occurrence not set up
// by New (its zero value) a zero boundary, at which nothing is admissible.
func (o *Occurrence) bound() *boundary {
	if o.b == nil {
		return new(boundary)
	}
	return o.b
}
