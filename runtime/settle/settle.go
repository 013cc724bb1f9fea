// Package settle is the AHP composition engine. For one event occurrence it
// admits each ordered interceptor response against the capabilities its
// request advertised and against the boundary's rules, applies it
// atomically, and tracks the settled permission, candidate, effective
// targets, messages, flow and injections (spec/draft/base/composition.md,
// base/capabilities.md, base/failure.md, capability-auth.md).
//
// The harness drives an [Occurrence]: [New] with the canonical event and
// the host's initial state, then for each interceptor in registration order
// send [Occurrence.Event] and [Occurrence.RequestState], and [Occurrence.Apply]
// the response; stop when [Occurrence.Done] reports a denial or flow stop.
// The backend checks its own effects before sending with [Admit], which runs
// the same admission code.
//
// A rejected response changes nothing: the next receiver sees exactly the
// previously committed state. Rejections carry a fixed reason vocabulary and
// never backend-provided text or values.
package settle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/agenthooks/agenthooks-go/gen"
)

// ErrRejected is matched by every *Rejection: errors.Is(err, ErrRejected).
var ErrRejected = errors.New("settle: response rejected")

// ErrInvalidEvent is wrapped by the errors of New, Admit and
// InitialFromState when the event or the host's initial state cannot be
// settled (invalid host input, not a backend failure).
var ErrInvalidEvent = errors.New("settle: invalid host input")

// Rejection reasons: a fixed vocabulary, never backend text.
const (
	// ReasonMissingResult reports that Apply was given no result.
	ReasonMissingResult = "missing_result"
	// ReasonUnsupportedVersion reports a result.protocolVersion other than this revision.
	ReasonUnsupportedVersion = "unsupported_version"
	// ReasonMissingEffects reports a result without an effects array (it MUST have one).
	ReasonMissingEffects = "missing_effects"
	// ReasonInvalidResult reports a result member that must not occur (manifest).
	ReasonInvalidResult = "invalid_result"
	// ReasonUnknownEffect reports an effect of no known family (no arm set).
	ReasonUnknownEffect = "unknown_effect"
	// ReasonInvalidEffect reports an effect whose own shape is invalid.
	ReasonInvalidEffect = "invalid_effect"
	// ReasonBoundaryForbidden reports a family, target or operation that never
	// exists at this boundary, whatever was advertised.
	ReasonBoundaryForbidden = "boundary_forbidden"
	// ReasonEffectNotGranted reports a family not advertised in capabilities.effects.
	ReasonEffectNotGranted = "effect_not_granted"
	// ReasonTargetNotGranted reports a modification target that was not advertised.
	ReasonTargetNotGranted = "target_not_granted"
	// ReasonOperationNotGranted reports a modify, flow or inject operation that
	// was not advertised.
	ReasonOperationNotGranted = "operation_not_granted"
	// ReasonModeNotGranted reports an elicitation mode that was not advertised.
	ReasonModeNotGranted = "mode_not_granted"
	// ReasonContinuationExhausted reports a continue without remaining allowance.
	ReasonContinuationExhausted = "continuation_exhausted"
	// ReasonTargetUnavailable reports a target that does not exist in this
	// occurrence (an elicitation result that is not an accepted,
	// body-selected form).
	ReasonTargetUnavailable = "target_unavailable"
	// ReasonHiddenContent reports a whole replacement of a target that holds
	// content withheld by metadata/omit selection or a gap.
	ReasonHiddenContent = "hidden_content"
	// ReasonContentUnavailable reports a body-dependent effect where the body
	// was not selected.
	ReasonContentUnavailable = "content_unavailable"
	// ReasonContextUnavailable reports that host context a check needs was not
	// supplied (the original elicitation request, Initial.ElicitationRequest).
	ReasonContextUnavailable = "context_unavailable"
	// ReasonInvalidValue reports a value that does not fit the boundary's
	// target or result type.
	ReasonInvalidValue = "invalid_value"
)

// Rejection reports why a response was rejected: the index of the first
// offending effect (-1 for the response as a whole) and a reason from the
// Reason* vocabulary. It never carries backend-provided text or values.
type Rejection struct {
	// EffectIndex is the position of the first inadmissible effect in the
	// response's effects array, or -1 when the result as a whole is invalid.
	EffectIndex int
	// Reason is one of the Reason* constants.
	Reason string
}

// Error describes the rejection without backend text.
func (r *Rejection) Error() string {
	if r.EffectIndex < 0 {
		return "settle: response rejected: " + r.Reason
	}
	return fmt.Sprintf("settle: response rejected: effect %d: %s", r.EffectIndex, r.Reason)
}

// Is reports whether target is ErrRejected.
func (r *Rejection) Is(target error) bool { return target == ErrRejected }

// reject builds a rejection.
func reject(i int, reason string) *Rejection { return &Rejection{EffectIndex: i, Reason: reason} }

// Candidate is a supplied result: Present=false means none supplied; Value
// is exact JSON (may be `null`, which is a supplied null result);
// Provenance is the optional provenance object (nil when absent). A
// candidate is "not an assertion that an operation executed".
type Candidate struct {
	// Present reports that a result was supplied.
	Present bool
	// Value is the exact JSON of the supplied result (may be null).
	Value json.RawMessage
	// Provenance is the optional provenance object, nil when absent.
	Provenance json.RawMessage
}

// clone returns a detached copy.
func (c Candidate) clone() Candidate {
	if !c.Present {
		return Candidate{}
	}
	return Candidate{Present: true, Value: bytes.Clone(c.Value), Provenance: bytes.Clone(c.Provenance)}
}

// State is the committed settled state of one occurrence; all fields are
// detached copies.
type State struct {
	// Permission is the composed permission: deny > ask > allow > none.
	// None is never approval: the host's ordinary policy decides. Ask
	// requires host approval.
	Permission gen.Permission
	// Candidate is the supplied result, if any. Denial discards it.
	Candidate Candidate
	// Flow is none, stop or continue. Stop wins over continue.
	Flow gen.FlowState
	// StopReason is the reason of the first accepted stop (host-local).
	StopReason string
	// ContinueInstruction is the combined instruction of the single
	// continuation step: the accepted instructions joined by a blank line;
	// empty unless Flow is continue.
	ContinueInstruction string
	// ContinuationCount is the granted continuationCount plus one when the
	// occurrence resolves to continue.
	ContinuationCount int
	// RemainingContinuations is the granted remainingContinuations minus one
	// when the occurrence resolves to continue (one step, one unit).
	RemainingContinuations int
	// Instructions are the accepted continuation instructions, in order;
	// retained even when stop wins.
	Instructions []string
	// Injections are the accepted inject effects, in order.
	Injections []gen.InjectEffect
	// Messages are the accepted user-facing message texts, in order.
	Messages []string
	// Input is the effective tool input (tool.before,
	// tool.permission.request); nil if the event has none.
	Input json.RawMessage
	// Targets holds the effective value of every other modification target
	// present at the boundary (prompt, request, response, output, content,
	// instructions, summary, workspace).
	Targets map[gen.ModifyTarget]json.RawMessage
	// Accepted lists the admitted responses, in order.
	Accepted []AcceptedResponse
}

// Denied reports an accepted denial: the operation must not execute,
// regardless of failure policy (AHP-DEC-002).
func (s State) Denied() bool { return s.Permission == gen.PermissionDeny }

// RequiresApproval reports a pending ask: the host must obtain approval
// before executing; no approval is fabricated.
func (s State) RequiresApproval() bool { return s.Permission == gen.PermissionAsk }

// Stopped reports an accepted flow stop: pending execution and further
// model work are prevented.
func (s State) Stopped() bool { return s.Flow == gen.FlowStateStop }

// SuppliedResult returns the candidate when it may replace original
// execution: present, not denied and not stopped. It is still subject to
// approval (RequiresApproval) and the host's own policy.
func (s State) SuppliedResult() (Candidate, bool) {
	if !s.Candidate.Present || s.Denied() || s.Stopped() {
		return Candidate{}, false
	}
	return s.Candidate.clone(), true
}

// AcceptedResponse is one admitted response: its position among the
// responses offered to the occurrence (0-based, counting rejected ones)
// and a detached copy of its effects.
type AcceptedResponse struct {
	// Index is the 0-based position of the response among those offered to
	// Apply on this occurrence, rejected ones included.
	Index int
	// Effects are the response's effects, in order.
	Effects []gen.Effect
}

// Initial is the host's prior state for an occurrence; the zero value means
// none (permission none, no candidate, the event's own targets).
type Initial struct {
	// Permission is the incoming permission; empty means none. An incoming
	// deny is sticky.
	Permission gen.Permission
	// Candidate is an incoming supplied result, bound to the incoming input.
	Candidate Candidate
	// Input, when non-nil, overrides the event's tool input (a JSON object).
	Input json.RawMessage
	// Flow is the incoming flow state; empty means none.
	Flow gen.FlowState
	// StopReason is the host-local reason of an incoming stop.
	StopReason string
	// Instructions are incoming accumulated continuation instructions.
	Instructions []string
	// Injections are incoming accepted injections.
	Injections []gen.InjectEffect
	// ElicitationRequest is the user.elicitation.request event a
	// user.elicitation.result answers. Modifying the answer object requires
	// it: the effective answers must satisfy its requested form schema.
	ElicitationRequest *gen.UserElicitationRequestEvent
}

// ApplyOptions are optional inputs of ApplyContext.
type ApplyOptions struct {
	// Provenance, when set, is recorded as the provenance object of a
	// candidate this response supplies (e.g. {"requestId": ...}); it must
	// be a JSON object. It is harness-local and not an authorization claim.
	Provenance json.RawMessage
}

// committed is the settled state after the accepted responses. Its slices
// and its more part are never written in place once published; staging
// copies on write (mutMore).
type committed struct {
	messages    []string
	input       []member
	list        []json.RawMessage
	accepted    []AcceptedResponse
	perm        permission
	flow        flowState
	listPresent bool
	listHidden  bool // accepted modifications brought withheld text into list
	// contCount and contRemaining are the granted continuationCount and
	// remainingContinuations (at most 1<<31, see nonNegative).
	contCount     uint32
	contRemaining uint32
	// more is the rest of the state, nil while all of it is zero: the
	// common occurrence (a tool event answered with nothing, an approval or
	// a denial) has no candidate, no continuation, and no workspace or form
	// target, and so needs no allocation for them.
	more *committedMore
}

// committedMore is the part of committed that most occurrences never set.
type committedMore struct {
	cand         Candidate
	stopReason   string
	instructions []string
	injections   []gen.InjectEffect
	workspace    gen.WorkspaceChange
	answers      gen.OrderedMap[gen.FormAnswerValue]
}

// zeroMore is what get returns for no committedMore; it is never written.
var zeroMore committedMore

// get returns m, or the zero committedMore when m is nil, for reading.
func (m *committedMore) get() *committedMore {
	if m == nil {
		return &zeroMore
	}
	return m
}

// own returns c.more for writing, allocating it when nil: only for the
// state of an occurrence being set up, which nothing has read yet.
func (c *committed) own() *committedMore {
	if c.more == nil {
		c.more = new(committedMore)
	}
	return c.more
}

// mutMore returns c.more for writing, where c is being staged from base
// (a published state): the first call replaces c.more, shared with base,
// by a copy of it, or by a zero part when c has none (nothing set yet, or
// dropped by discardCandidate); later calls return that part.
func (c *committed) mutMore(base *committed) *committedMore {
	switch {
	case c.more == nil:
		// Nothing set, or a part discardCandidate dropped: a zero part,
		// never a copy of the base's (which would bring a discarded
		// candidate back; TestDiscardedCandidateStaysDiscarded).
		c.more = new(committedMore)
	case c.more == base.more:
		m := *base.more
		c.more = &m
	}
	return c.more
}

// discardCandidate sets c's candidate to none, where c is being staged from
// base, as mutMore writes. A candidate not present is the zero Candidate:
// there is nothing to discard then; and a more part holding nothing but
// the candidate is dropped rather than copied.
func (c *committed) discardCandidate(base *committed) {
	m := c.more
	if m == nil || !m.cand.Present {
		return
	}
	if m.stopReason == "" && m.instructions == nil && m.injections == nil &&
		m.workspace.Cwd == nil && m.workspace.WorkspaceRoots == nil && m.answers == nil {
		c.more = nil
		return
	}
	c.mutMore(base).cand = Candidate{}
}

// Occurrence settles one event occurrence across ordered backend responses.
// It is not safe for concurrent use; State and RequestState return
// detached values.
type Occurrence struct {
	b           *boundary // shared by the occurrences of the event, never modified
	snapshot    []byte    // the event given to New, encoded; nil for Admit
	hostContext bool      // New (true) or Admit (false)
	checkOnly   bool      // CheckEvent: the event is checked, no state is kept
	// validated: the event passed canonical validation (CheckValidated,
	// AdmitValidated); what that established of its opaque members is not
	// checked again.
	validated bool
	hidden    bool // the list target withholds content: no whole replacement
	// lazyInput, when not nil, is the event's tool input, not yet split into
	// cur.input: an admission-only occurrence of a validated event splits it
	// only when an effect modifies the input (see loadInput).
	lazyInput json.RawMessage
	// lazyList, when not nil, is the event of a list target not yet
	// encoded into cur.list, for the same reason (see loadList): only an
	// admission-only occurrence, which does not outlive its event, keeps it.
	lazyList *gen.Event
	known    partSet
	elicit   *elicitCtx
	cur      committed
	offered  int
	// firstAccepted holds the first accepted response (cur.accepted's
	// only element until a second one is accepted).
	firstAccepted [1]AcceptedResponse
	// stop is set, while ApplyContext stages a response, once its context
	// ends: the long scans of staging look at it and give up, and
	// ApplyContext then reports the context's error. ApplyContext gives
	// a flag only to a response with such scans (scansLong): a scan added
	// for another effect must be added there too.
	stop *atomic.Bool
}

// stopped reports whether the context of the response being staged has
// ended.
func (o *Occurrence) stopped() bool { return o.stop != nil && o.stop.Load() }

// New starts settling an occurrence of event with the host's initial state.
// It returns an error wrapping ErrInvalidEvent only when the event or the
// initial state cannot be settled.
func New(event *gen.Event, initial Initial) (*Occurrence, error) {
	return newOccurrence(event, nil, initial, true)
}

// NewEncoded is New for a caller that has already encoded event with
// gen.EncodeEvent (or MarshalJSON): encoded must be exactly that encoding.
// The occurrence keeps encoded as its snapshot of the event instead of
// encoding it again; the caller must not modify it afterwards.
func NewEncoded(event *gen.Event, encoded []byte, initial Initial) (*Occurrence, error) {
	if len(encoded) == 0 {
		return nil, invalid("empty event encoding", nil)
	}
	return newOccurrence(event, encoded, initial, true)
}

// NewValidated is [NewEncoded] for an event that passed canonical
// validation where it entered the host: its encoding validated against the
// event's canonical payload schema (rejecting a member name repeated at any
// depth), or its typed values checked to satisfy that schema, and the event
// not changed since. It gives NewEncoded's result without checking again
// what that validation established of the tool input (tool.before,
// tool.permission.request): that it is one JSON object of valid JSON
// without a repeated member name at any depth. The input is split into its
// members only when an effect modifies it (or State cannot return it as it
// is, see State). An initial.Input override is checked as NewEncoded
// checks it. For any other event, use NewEncoded.
func NewValidated(event *gen.Event, encoded []byte, initial Initial) (*Occurrence, error) {
	if len(encoded) == 0 {
		return nil, invalid("empty event encoding", nil)
	}
	o := &Occurrence{validated: true}
	if err := o.init(event, encoded, initial, true); err != nil {
		return nil, err
	}
	return o, nil
}

// CheckEvent reports whether event can be settled at all: the checks that
// New and Admit apply to the event itself (an interceptable event whose
// targets and context are well formed), without the admission of any
// effect. An error wraps ErrInvalidEvent.
func CheckEvent(event *gen.Event) error {
	o := Occurrence{checkOnly: true}
	return o.init(event, nil, Initial{}, false)
}

// CheckValidated is [CheckEvent] for an event that passed canonical
// validation: decoded by a generated Parse function (Parse<Root>,
// Parse<Root>Context, Parse<Root>Doc) of a message that validated against
// its canonical schema and repeats no member name at any depth, or by
// gen.DecodeAt from the tokens of such a message, and not changed since. It
// gives CheckEvent's result without checking again what that validation
// established: that the tool input (tool.before, tool.permission.request)
// is one JSON object (execution-event.schema.json: "type": "object") of
// valid JSON without a repeated member name at any depth, which CheckEvent
// verifies with a scan of the whole input. Everything the schemas do not
// establish (elicitation bodies carried as text, content-part identity,
// message roles, ...) is checked as CheckEvent checks it. For any other
// event, use CheckEvent.
func CheckValidated(event *gen.Event) error {
	// The tool events, the most common, are checked directly: what init
	// checks of them (see extractInput), without an occurrence.
	if event != nil {
		switch {
		case event.ToolBefore != nil && event.ToolBefore.Type == string(gen.EventToolBefore):
			return checkValidatedInput(event.ToolBefore.Tool.Input, event.ToolBefore.Items)
		case event.ToolBefore == nil && event.ToolPermissionRequest != nil && event.Type() == string(gen.EventToolPermissionRequest):
			return checkValidatedInput(event.ToolPermissionRequest.Tool.Input, event.ToolPermissionRequest.Items)
		}
	}
	o := Occurrence{checkOnly: true, validated: true}
	return o.init(event, nil, Initial{}, false)
}

// AdmitValidated is [Admit] for an event that passed canonical validation,
// as [CheckValidated] describes: it returns Admit's result without checking
// the tool input's JSON again, and splits the tool input into its members
// only when one of effects modifies it (a deny, say, never reads it). For
// any other event, use Admit.
func AdmitValidated(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) error {
	o := &Occurrence{validated: true}
	if err := o.init(event, nil, Initial{}, false); err != nil {
		return err
	}
	if _, rej := o.stage(&granted, effects, nil); rej != nil {
		return rej
	}
	return nil
}

// AdmitType is [AdmitValidated] for effects whose admission reads nothing
// of the event but its type: denials, approvals, asks, messages and flow
// operations (and effects without an arm or with several). It admits them
// at an occurrence of the event name and returns AdmitValidated's result
// for any canonically validated event of that type for which
// [CheckValidated] reports nil, with handled set. For effects that may
// read the event (a modification, a supplied result, an injection) it
// checks nothing and returns handled false: call AdmitValidated then.
func AdmitType(name gen.EventName, granted gen.Capabilities, effects []gen.Effect) (handled bool, err error) {
	for i := range effects {
		e := &effects[i]
		if e.ModifyInput != nil || e.ModifyMessages != nil || e.ModifyText != nil || e.ModifyWorkspace != nil ||
			e.ModifyForm != nil || e.ReturnTool != nil || e.Inject != nil {
			return false, nil
		}
	}
	b, known := boundaryFor(name)
	if !known {
		return true, invalid("event is not interceptable", nil)
	}
	o := Occurrence{b: b, validated: true}
	if _, rej := o.stage(&granted, effects, nil); rej != nil {
		return true, rej
	}
	return true, nil
}

// Admit checks, without applying, whether effects are admissible for event
// under granted, with the same code as Apply's admission and staging. It
// returns nil, a *Rejection, or an error wrapping ErrInvalidEvent. Checks
// that need host-only context (the requested form schema of an elicitation)
// are left to Apply.
func Admit(event *gen.Event, granted gen.Capabilities, effects []gen.Effect) error {
	o, err := newOccurrence(event, nil, Initial{}, false)
	if err != nil {
		return err
	}
	if _, rej := o.stage(&granted, effects, nil); rej != nil {
		return rej
	}
	return nil
}

// Apply admits result against granted and, if every effect is admissible,
// applies it atomically. On rejection it returns a *Rejection and the
// committed state is unchanged (only the offered-response counter used for
// AcceptedResponse.Index advances). Apply keeps folding after Done, with
// deny and stop sticky, but the harness sends no further requests then.
func (o *Occurrence) Apply(granted gen.Capabilities, result *gen.InterceptResponseResult) error {
	return o.ApplyContext(context.Background(), granted, result, ApplyOptions{})
}

// ApplyContext is Apply with a context and options. The context is checked
// immediately before publishing (base/failure.md §Deadlines): a cancelled
// or expired context publishes nothing and returns its error, wrapped.
// Staging observes it too: once it ends, the scans of large values (tool
// input, returned values, extensions) and the merging of many members stop
// within about a thousand values, and ApplyContext returns the context's
// error rather than a Rejection; a context that has ended already stages
// nothing.
func (o *Occurrence) ApplyContext(ctx context.Context, granted gen.Capabilities, result *gen.InterceptResponseResult, opts ApplyOptions) error {
	index := o.offered
	o.offered++
	if result == nil {
		return reject(-1, ReasonMissingResult)
	}
	if result.ProtocolVersion != gen.ProtocolVersion {
		return reject(-1, ReasonUnsupportedVersion)
	}
	if result.Effects == nil {
		return reject(-1, ReasonMissingEffects)
	}
	for _, m := range result.Unknown {
		if m.Name == "manifest" {
			return reject(-1, ReasonInvalidResult)
		}
	}
	var prov json.RawMessage
	if opts.Provenance != nil {
		p, err := normalizeProvenance(opts.Provenance)
		if err != nil {
			return fmt.Errorf("settle: provenance: %w", err)
		}
		prov = p
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("settle: not published: %w", err)
	}
	// Only effects that scan long values look at the stop flag: for the
	// others there is nothing to interrupt (nor a Done channel to make,
	// nor a callback to register on the context).
	if ctx.Done() != nil && scansLong(result.Effects) {
		var stop atomic.Bool
		release := context.AfterFunc(ctx, func() { stop.Store(true) })
		o.stop = &stop
		defer func() {
			release()
			o.stop = nil
		}()
	}
	next, rej := o.stage(&granted, result.Effects, prov)
	if rej != nil && o.stopped() {
		// The rejection may be the interruption itself.
		return fmt.Errorf("settle: not published: %w", ctx.Err())
	}
	if rej != nil {
		return rej
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("settle: not published: %w", err)
	}
	accepted := AcceptedResponse{Index: index, Effects: copyEffects(result.Effects)}
	if len(next.accepted) == 0 {
		// The first accepted response, in the occurrence's own array:
		// nothing published refers to it yet, and a later response copies
		// the list (its capacity is one).
		o.firstAccepted[0] = accepted
		next.accepted = o.firstAccepted[:1:1]
	} else {
		next.accepted = append(slices.Clip(next.accepted), accepted)
	}
	o.cur = next
	return nil
}

// scansLong reports whether staging effects may scan a value whose size
// the backend or the event decides, as the stop flag interrupts (see
// Occurrence.stop): the extensions of a denial, the value of an input
// modification and the tool input it merges into, a supplied result.
// Staging any other effect looks at no stop flag
// (TestOnlyLongScansLookAtStop).
func scansLong(effects []gen.Effect) bool {
	for i := range effects {
		e := &effects[i]
		if e.ModifyInput != nil || e.ReturnTool != nil || (e.Deny != nil && e.Deny.Extensions != nil) {
			return true
		}
	}
	return false
}

// Done reports whether decision-making has ended for this occurrence: an
// accepted denial or flow stop (AHP-COMP-001). The harness sends no
// further interception requests; remaining subscriptions observe.
func (o *Occurrence) Done() bool {
	return o.cur.perm == permDeny || o.cur.flow == flowStop
}

// ReplaceWithheld reports the boundary's list target when it contains text
// withheld by metadata/omit selection or a content gap: a whole-list
// replacement of it must be neither advertised nor accepted
// (base/composition.md); Apply rejects one with ReasonHiddenContent.
func (o *Occurrence) ReplaceWithheld() (gen.ModifyTarget, bool) {
	if o.withheld() && (o.bound().tkind == tkMessages || o.bound().tkind == tkText) {
		return o.bound().target, true
	}
	return "", false
}

// withheld reports whether the effective list target contains withheld
// text: the event's, or text that an accepted merge brought in.
func (o *Occurrence) withheld() bool { return o.hidden || o.cur.listHidden }

// ReplaceWithheldIn is ReplaceWithheld for event as one receiver gets it,
// after its content selection: the harness narrows that delivery's
// advertisement (and so what Apply admits from its response) when the
// selection withheld text of the target that the canonical event carries.
// It reports nothing for an event that cannot be settled.
func ReplaceWithheldIn(event *gen.Event) (gen.ModifyTarget, bool) {
	o := Occurrence{checkOnly: true}
	if o.init(event, nil, Initial{}, false) != nil {
		return "", false
	}
	return o.ReplaceWithheld()
}

// State returns a detached snapshot of the committed state.
func (o *Occurrence) State() State {
	c := &o.cur
	m := c.more.get()
	s := State{
		Permission:             c.perm.wire(),
		Candidate:              m.cand.clone(),
		Flow:                   c.flow.wire(),
		StopReason:             m.stopReason,
		ContinuationCount:      int(c.contCount),
		RemainingContinuations: int(c.contRemaining),
		Instructions:           slices.Clone(m.instructions),
		Injections:             copyInjections(m.injections),
		Messages:               slices.Clone(c.messages),
	}
	if c.flow == flowContinue {
		s.ContinuationCount++
		if s.RemainingContinuations > 0 {
			s.RemainingContinuations--
		}
		for i, in := range m.instructions {
			if i > 0 {
				s.ContinueInstruction += "\n\n"
			}
			s.ContinueInstruction += in
		}
	}
	if o.bound().tkind == tkInput {
		s.Input = o.inputJSON()
	}
	if v, ok := o.targetValue(); ok {
		s.Targets = map[gen.ModifyTarget]json.RawMessage{o.bound().target: v}
	}
	if len(c.accepted) > 0 {
		s.Accepted = make([]AcceptedResponse, len(c.accepted))
		for i, a := range c.accepted {
			s.Accepted[i] = AcceptedResponse{Index: a.Index, Effects: copyEffects(a.Effects)}
		}
	}
	return s
}

// targetValue encodes the effective value of a non-input target.
func (o *Occurrence) targetValue() (json.RawMessage, bool) {
	c := &o.cur
	switch o.bound().tkind {
	case tkMessages, tkText:
		if !c.listPresent {
			return nil, false
		}
		return joinList(c.list), true
	case tkWorkspace:
		b, err := c.more.get().workspace.MarshalJSON()
		return b, err == nil
	case tkForm:
		if !o.elicit.formAvailable() {
			return nil, false
		}
		a := c.more.get().answers
		if a == nil {
			a = gen.OrderedMap[gen.FormAnswerValue]{}
		}
		b, err := a.MarshalJSON()
		return b, err == nil
	}
	return nil, false
}

// pristineState is the encoding of RequestState for the default state (no
// permission, no candidate, no flow, no instructions or injections), which
// every occurrence without a host prior state starts in.
const pristineState = `{"permission":"none","candidate":null,"flow":"none"}`

// RequestStateJSON returns the encoding of RequestState. The default state,
// the common one for a first receiver, is encoded without building it.
func (o *Occurrence) RequestStateJSON() ([]byte, error) {
	if o.pristine() {
		return []byte(pristineState), nil
	}
	return o.RequestState().MarshalJSON()
}

// AppendRequestStateJSON appends what RequestStateJSON returns to dst
// (the default state without an allocation of its own).
func (o *Occurrence) AppendRequestStateJSON(dst []byte) ([]byte, error) {
	if o.pristine() {
		return append(dst, pristineState...), nil
	}
	b, err := o.RequestState().MarshalJSON()
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// pristine reports whether the committed state is the default one.
func (o *Occurrence) pristine() bool {
	c := &o.cur
	if c.perm != permNone || c.flow != flowNone {
		return false
	}
	m := c.more
	return m == nil || !m.cand.Present && len(m.instructions) == 0 && len(m.injections) == 0
}

// RequestState returns the params.state to send to the next receiver: the
// committed permission, candidate, flow, instructions and injections.
// Effective content travels in the event (Event), not in state; messages
// are not re-sent.
func (o *Occurrence) RequestState() *gen.InterceptState {
	c := &o.cur
	m := c.more.get()
	st := &gen.InterceptState{Permission: c.perm.wire()}
	if m.cand.Present {
		cand := gen.Candidate{Value: bytes.Clone(m.cand.Value)}
		if m.cand.Provenance != nil {
			if ms, err := splitObject(m.cand.Provenance, false); err == nil {
				p := &gen.CandidateProvenance{Unknown: make([]gen.Member, len(ms))}
				for i, m := range ms {
					p.Unknown[i] = gen.Member{Name: m.name, Value: bytes.Clone(m.value)}
				}
				cand.Provenance = p
			}
		}
		st.Candidate = gen.NullableOf(cand)
	}
	flow := c.flow.wire()
	st.Flow = &flow
	if len(m.instructions) > 0 {
		st.Instructions = slices.Clone(m.instructions)
	}
	if len(m.injections) > 0 {
		st.Injections = copyInjections(m.injections)
	}
	return st
}

// InitialFromState converts a received params.state into an Initial (the
// inverse of RequestState). Unknown control-state members are ignored
// (AHP-CORE-003). A nil state is the zero Initial.
func InitialFromState(st *gen.InterceptState) (Initial, error) {
	var in Initial
	if st == nil {
		return in, nil
	}
	if !st.Permission.Known() {
		return in, fmt.Errorf("%w: state permission", ErrInvalidEvent)
	}
	in.Permission = st.Permission
	if st.Candidate.Valid {
		c := st.Candidate.Value
		in.Candidate = Candidate{Present: true, Value: bytes.Clone(c.Value)}
		if c.Provenance != nil {
			b, err := c.Provenance.MarshalJSON()
			if err != nil {
				return Initial{}, fmt.Errorf("%w: state candidate provenance", ErrInvalidEvent)
			}
			in.Candidate.Provenance = b
		}
	}
	if st.Flow != nil {
		in.Flow = *st.Flow
	}
	in.Instructions = slices.Clone(st.Instructions)
	in.Injections = copyInjections(st.Injections)
	return in, nil
}

// normalizeProvenance checks that p is a JSON object and re-encodes it
// canonically, so that it round-trips through params.state unchanged.
func normalizeProvenance(p json.RawMessage) (json.RawMessage, error) {
	ms, err := splitObject(p, true)
	if err != nil {
		return nil, err
	}
	cp := gen.CandidateProvenance{Unknown: make([]gen.Member, len(ms))}
	for i, m := range ms {
		cp.Unknown[i] = gen.Member{Name: m.name, Value: bytes.Clone(m.value)}
	}
	return cp.MarshalJSON()
}

// permission is a known gen.Permission, numbered in the order permissions
// compose (max): deny > ask > allow > none, the zero value.
type permission uint8

const (
	permNone permission = iota
	permAllow
	permAsk
	permDeny
)

// permissionOf returns the permission p names (none for an unknown one:
// p is checked with Known first).
func permissionOf(p gen.Permission) permission {
	switch p {
	case gen.PermissionAllow:
		return permAllow
	case gen.PermissionAsk:
		return permAsk
	case gen.PermissionDeny:
		return permDeny
	}
	return permNone
}

// wire returns the gen.Permission p is.
func (p permission) wire() gen.Permission {
	switch p {
	case permAllow:
		return gen.PermissionAllow
	case permAsk:
		return gen.PermissionAsk
	case permDeny:
		return gen.PermissionDeny
	}
	return gen.PermissionNone
}

// flowState is a known gen.FlowState; none is the zero value.
type flowState uint8

const (
	flowNone flowState = iota
	flowStop
	flowContinue
)

// flowStateOf returns the flow state f names (none for an unknown one: f
// is checked with Known first).
func flowStateOf(f gen.FlowState) flowState {
	switch f {
	case gen.FlowStateStop:
		return flowStop
	case gen.FlowStateContinue:
		return flowContinue
	}
	return flowNone
}

// wire returns the gen.FlowState f is.
func (f flowState) wire() gen.FlowState {
	switch f {
	case flowStop:
		return gen.FlowStateStop
	case flowContinue:
		return gen.FlowStateContinue
	}
	return gen.FlowStateNone
}
