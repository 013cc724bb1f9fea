package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// ErrCompactorClosed is returned by Compactor.Run after Compactor.Close.
var ErrCompactorClosed = errors.New("hooks: compactor closed")

// CompactionHook is one host-owned interception callback of a compaction
// run, at the before or the after boundary. The host configures every
// member: Supplier and FailurePolicy are host facts about the subscription
// behind the callback and are never taken from a hook response.
type CompactionHook struct {
	// Supplier is the host's authenticated identity of the subscription
	// behind the callback. It is recorded in the trace and as the
	// provenance of a summary this hook supplies.
	Supplier string
	// Boundary is gen.EventContextCompactBefore or gen.EventContextCompactAfter.
	Boundary gen.EventName
	// FailurePolicy applies when the callback fails or its response is
	// rejected. Empty means FailOpen.
	FailurePolicy FailurePolicy
	// Callback receives a detached snapshot of the current state and
	// returns draft effects (an empty list is no effect) or an error. An
	// error wrapping a *settle.Rejection reports a response the callback
	// itself refused (a malformed response array, a transport's own
	// admission) and is traced as rejected with its reason. It runs
	// serially with the other callbacks and must honour ctx.
	Callback func(ctx context.Context, snap CompactionSnapshot) ([]gen.Effect, error)
}

// CompactionObserver is a notification of the settled after boundary. It
// runs after Compactor.Run has settled its result, in a goroutine the
// Compactor owns (Close cancels its ctx and waits for it). It has no
// effect or failure-policy authority: its snapshot is its own copy, and a
// panic is contained.
type CompactionObserver func(ctx context.Context, snap CompactionSnapshot)

// CompactionSnapshot is what one callback sees. Every member is a detached
// copy: changing it changes nothing in the run.
type CompactionSnapshot struct {
	// Supplier is the hook's configured Supplier (empty for an observer).
	Supplier string
	// Event is the canonical event of the boundary: context.compact.before
	// with the effective instructions, or context.compact.after with the
	// current summary.
	Event *gen.Event
	// State is the request state of the boundary: the candidate (a summary
	// returned before compaction, with its provenance) and permission.
	State *gen.InterceptState
	// Capabilities is what the run admits from this callback, as
	// CompactionCapabilities returns it (zero for an observer).
	Capabilities gen.Capabilities
}

// CompactionGenerator generates a summary from the effective before event:
// its items and the accepted instructions. It must generate, not apply: the
// host applies a result only when CompactionResult.Applied is true. The
// returned parts must be inline text parts; no summary, any other part or a
// panic makes Compactor.Run fail with ErrGenerator.
type CompactionGenerator func(ctx context.Context, before *gen.ContextCompactBeforeEvent) (gen.TextParts, error)

// DefaultCompactionGenerator is the generator used when the config has
// none: one text part with id "summary" whose text is "summary:" followed
// by the text of each effective instruction part, each after one space. It
// is deterministic and calls no model; a real host supplies its own.
func DefaultCompactionGenerator(_ context.Context, before *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
	var b strings.Builder
	b.WriteString("summary:")
	for _, p := range before.Instructions {
		if p.Body != nil {
			b.WriteByte(' ')
			b.WriteString(p.Body.Text)
		}
	}
	return gen.TextParts{{Body: &gen.TextBodyPart{ID: "summary", Kind: "text", MediaType: "text/plain", Selection: "body", Text: b.String()}}}, nil
}

// CompactionCapabilities returns what the compaction runner advertises and
// enforces at boundary: before compaction deny (with a reason), return (a
// summary), message and modify(instructions) replace; after compaction
// message and modify(summary) replace. Text replacement only: no merge, no
// injection. Any other boundary gets the zero value.
func CompactionCapabilities(boundary gen.EventName) gen.Capabilities {
	switch boundary {
	case gen.EventContextCompactBefore:
		return gen.Capabilities{
			Effects: []gen.EffectFamily{gen.EffectFamilyDeny, gen.EffectFamilyReturn, gen.EffectFamilyMessage, gen.EffectFamilyModify},
			Modify:  &gen.CapabilitiesModify{Instructions: &gen.CapabilitiesModifyInstructions{Replace: true}},
		}
	case gen.EventContextCompactAfter:
		return gen.Capabilities{
			Effects: []gen.EffectFamily{gen.EffectFamilyMessage, gen.EffectFamilyModify},
			Modify:  &gen.CapabilitiesModify{Summary: &gen.CapabilitiesModifySummary{Replace: true}},
		}
	}
	return gen.Capabilities{}
}

// CompactionConfig configures a Compactor.
type CompactionConfig struct {
	// Hooks are the interception callbacks in registration order; each
	// runs at its own boundary, serially.
	Hooks []CompactionHook
	// Generator generates the summary when no accepted return supplied
	// one; nil means DefaultCompactionGenerator.
	Generator CompactionGenerator
	// Observers are notified of the settled after boundary, concurrently,
	// without delaying or changing the result.
	Observers []CompactionObserver
}

// CompactionInput is one compaction occurrence as the host knows it.
type CompactionInput struct {
	// Source is the event source URI (required).
	Source string
	// BeforeID and AfterID are the event ids of the two boundaries; empty
	// means the runner generates one.
	BeforeID, AfterID string
	// Time is when the host created the events; zero means now.
	Time time.Time
	// Session and Turn are copied into both events when set.
	Session *gen.Session
	// Turn is the turn of both events (optional).
	Turn *gen.ExecutionEventTurn
	// Trigger is why compaction runs (required: auto, manual or hook).
	Trigger gen.ExecutionEventContextCompactBeforeTrigger
	// Items are the model-visible items to compact (required; may be
	// empty).
	Items []gen.ModelVisibleItem
	// Instructions are the initial compaction instructions (optional).
	Instructions gen.TextParts
	// Removed lists the item identities the result proposes to replace
	// (the after event's removed; nil is an empty list).
	Removed []gen.ExecutionEventContextCompactAfterRemovedItem
}

// CompactionOutcome is what became of one callback.
type CompactionOutcome string

const (
	// CompactionAccepted reports a response admitted and applied atomically.
	CompactionAccepted CompactionOutcome = "accepted"
	// CompactionRejected reports a response rejected whole (Reason names
	// the settle rejection); nothing of it was committed.
	CompactionRejected CompactionOutcome = "rejected"
	// CompactionFailed reports a callback that returned an error or
	// panicked; nothing of it was committed.
	CompactionFailed CompactionOutcome = "failed"
)

// Failure reasons of CompactionStep.Reason besides the settle rejection
// reasons (settle.Reason*).
const (
	// CompactionReasonCallbackError reports a callback that returned an error.
	CompactionReasonCallbackError = "callback_error"
	// CompactionReasonCallbackPanic reports a callback that panicked.
	CompactionReasonCallbackPanic = "callback_panic"
)

// CompactionStep is one callback of the run, in order.
type CompactionStep struct {
	// Boundary is the callback's boundary.
	Boundary gen.EventName
	// Supplier is the hook's configured Supplier.
	Supplier string
	// Outcome is accepted, rejected or failed.
	Outcome CompactionOutcome
	// Reason is empty when accepted, otherwise a settle rejection reason
	// or a CompactionReason* constant. It never carries callback or
	// backend text.
	Reason string
	// FailurePolicy is the policy applied to a rejection or failure.
	FailurePolicy FailurePolicy
	// Effects is a detached copy of the effects the callback returned.
	Effects []gen.Effect
}

// CompactionMessage is one accepted user-facing message.
type CompactionMessage struct {
	// Boundary is where it was accepted.
	Boundary gen.EventName
	// Supplier is the hook that sent it.
	Supplier string
	// Text is the message text.
	Text string
}

// CompactionProvenance identifies where the summary came from: the
// generator, or the hook whose return supplied it. After-boundary edits do
// not change it.
type CompactionProvenance struct {
	// Generated reports that the generator produced the summary.
	Generated bool
	// Supplier is the Supplier of the hook that returned the summary
	// (empty when generated).
	Supplier string
}

// CompactionResult is the settled outcome of one compaction run.
type CompactionResult struct {
	// Applied reports that the summary is eligible for downstream
	// application: generated or supplied, not denied, no fail-closed
	// failure at either boundary, not interrupted. Only then may the host
	// install it (see Downstream).
	Applied bool
	// Denied reports an accepted deny before compaction; DenyReason is its
	// reason (the backend's own text, for the host to show or log).
	Denied bool
	// DenyReason is the reason of the accepted deny.
	DenyReason string
	// FailedClosed reports a fail-closed failure or rejection; its boundary
	// is FailedAt. Before compaction it prevented generation; after it
	// prevented downstream application (generation that ran stays).
	FailedClosed bool
	// FailedAt is the boundary of the fail-closed failure.
	FailedAt gen.EventName
	// Interrupted reports that ctx ended before the run settled.
	Interrupted bool
	// Generated reports that the generator ran (a return skips it).
	Generated bool
	// Instructions are the effective instructions after the before hooks.
	Instructions gen.TextParts
	// Summary is the settled summary after the after hooks, nil when the
	// after boundary was not reached. It is set even when Applied is false;
	// use Downstream to apply it.
	Summary gen.TextParts
	// Provenance identifies the generator or the supplying hook.
	Provenance CompactionProvenance
	// Messages are the accepted messages of both boundaries, in order.
	Messages []CompactionMessage
	// Trace lists every callback that ran, in order.
	Trace []CompactionStep
	// Before is the effective context.compact.before event.
	Before *gen.Event
	// After is the settled context.compact.after event, nil when the after
	// boundary was not reached.
	After *gen.Event
}

// Downstream returns the summary for downstream application and true only
// when the result is Applied; otherwise nil and false.
func (r *CompactionResult) Downstream() (gen.TextParts, bool) {
	if r == nil || !r.Applied {
		return nil, false
	}
	return cloneTextParts(r.Summary), true
}

// Compactor runs host-side compaction: the before hooks, the generator
// (unless a return supplied the summary), the after hooks, then the
// observers. It is safe for concurrent use; each Run is independent.
type Compactor struct {
	hooks     []CompactionHook
	generate  CompactionGenerator
	observers []CompactionObserver

	obsCtx    context.Context
	obsCancel context.CancelFunc
	mu        sync.Mutex
	closed    bool
	wg        sync.WaitGroup
}

// NewCompactor checks cfg and returns a Compactor. Every hook needs a
// compaction boundary, a known failure policy and a callback; an error
// wraps ErrInvalidConfig.
func NewCompactor(cfg CompactionConfig) (*Compactor, error) {
	c := &Compactor{generate: cfg.Generator, hooks: make([]CompactionHook, len(cfg.Hooks))}
	if c.generate == nil {
		c.generate = DefaultCompactionGenerator
	}
	for i, h := range cfg.Hooks {
		if h.Boundary != gen.EventContextCompactBefore && h.Boundary != gen.EventContextCompactAfter {
			return nil, fmt.Errorf("%w: compaction hook %d: boundary %q is not a compaction boundary", ErrInvalidConfig, i, h.Boundary)
		}
		switch h.FailurePolicy {
		case "":
			h.FailurePolicy = FailOpen
		case FailOpen, FailClosed:
		default:
			return nil, fmt.Errorf("%w: compaction hook %d: unknown failure policy", ErrInvalidConfig, i)
		}
		if h.Callback == nil {
			return nil, fmt.Errorf("%w: compaction hook %d: no callback", ErrInvalidConfig, i)
		}
		c.hooks[i] = h
	}
	for i, o := range cfg.Observers {
		if o == nil {
			return nil, fmt.Errorf("%w: compaction observer %d is nil", ErrInvalidConfig, i)
		}
	}
	c.observers = append([]CompactionObserver(nil), cfg.Observers...)
	c.obsCtx, c.obsCancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops further runs, cancels the context of the observers still
// running and waits for them. It is idempotent.
func (c *Compactor) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.obsCancel()
	c.wg.Wait()
	return nil
}

// Wait blocks until every observer started so far has returned, without
// cancelling them.
func (c *Compactor) Wait() { c.wg.Wait() }

// Run runs one compaction. The result is the settled outcome; the error is
// non-nil only for invalid host input (wrapping ErrInvalidInput), a closed
// Compactor (ErrCompactorClosed), a failing or panicking generator or an
// invalid generated summary (ErrGenerator, wrapping the generator's error), or
// ctx's end before the run settled (wrapping ctx.Err(), with an Interrupted
// result that is never Applied).
// Callback failures and rejections are results, handled by each hook's
// failure policy.
func (c *Compactor) Run(ctx context.Context, in CompactionInput) (*CompactionResult, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrCompactorClosed
	}
	if in.Source == "" {
		return nil, fmt.Errorf("%w: compaction input has no source", ErrInvalidInput)
	}
	if in.Items == nil {
		in.Items = []gen.ModelVisibleItem{}
	}
	f := &fill{source: in.Source}
	tm := f.eventTime(in.Time)
	before := &gen.Event{ContextCompactBefore: &gen.ContextCompactBeforeEvent{
		ID: f.eventID(in.BeforeID), Source: in.Source, Time: tm, Session: in.Session, Turn: in.Turn,
		Type: string(gen.EventContextCompactBefore), Trigger: in.Trigger, Items: in.Items, Instructions: in.Instructions,
	}}
	if err := checkCompactionEvent(before); err != nil {
		return nil, fmt.Errorf("%w: context.compact.before: %w", ErrInvalidInput, err)
	}
	res := &CompactionResult{}
	run := &compactionRun{c: c, res: res}

	// Before compaction.
	occ, err := settle.New(before, settle.Initial{})
	if err != nil {
		return nil, fmt.Errorf("%w: context.compact.before: %w", ErrInvalidInput, err)
	}
	stopped, err := run.boundary(ctx, gen.EventContextCompactBefore, occ)
	if err != nil {
		return res, err
	}
	beforeEv, err := occ.Event()
	if err != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	res.Before = beforeEv
	res.Instructions = cloneTextParts(beforeEv.ContextCompactBefore.Instructions)
	st := occ.State()
	if st.Denied() {
		res.Denied, res.DenyReason = true, denyReason(st)
		return res, nil
	}
	if stopped {
		return res, nil
	}

	// The summary: supplied by an accepted return, or generated.
	var summary gen.TextParts
	execution := gen.ExecutionEventExecution{Executed: &gen.ExecutionEventExecutionExecuted{Status: "executed"}}
	if cand, ok := st.SuppliedResult(); ok {
		if err := summary.UnmarshalJSON(cand.Value); err != nil {
			return nil, fmt.Errorf("%w: compaction: the admitted supplied summary does not decode: %w", ErrInternal, err)
		}
		res.Provenance = CompactionProvenance{Supplier: candidateSupplier(cand.Provenance)}
		execution = gen.ExecutionEventExecution{SkippedSuppliedResult: &gen.ExecutionEventExecutionSkippedSuppliedResult{Status: "skipped", Reason: "supplied_result"}}
	} else {
		detached, err := detachEvent(beforeEv)
		if err != nil {
			return nil, err
		}
		summary, err = callGenerator(ctx, c.generate, detached.ContextCompactBefore)
		if cerr := ctx.Err(); cerr != nil {
			res.Interrupted = true
			return res, fmt.Errorf("hooks: compaction interrupted: %w", cerr)
		}
		if err != nil {
			return nil, err
		}
		res.Generated, res.Provenance = true, CompactionProvenance{Generated: true}
	}

	// After compaction.
	removed := in.Removed
	if removed == nil {
		removed = []gen.ExecutionEventContextCompactAfterRemovedItem{}
	}
	after := &gen.Event{ContextCompactAfter: &gen.ContextCompactAfterEvent{
		ID: f.eventID(in.AfterID), Source: in.Source, Time: tm, Session: in.Session, Turn: in.Turn,
		Type: string(gen.EventContextCompactAfter), Summary: cloneTextParts(summary), Removed: removed, Execution: execution,
	}}
	if err := checkCompactionEvent(after); err != nil {
		if res.Generated {
			return nil, fmt.Errorf("%w: the generated summary is not valid: %w", ErrGenerator, err)
		}
		return nil, fmt.Errorf("%w: context.compact.after: %w", ErrInvalidInput, err)
	}
	occ2, err := settle.New(after, settle.Initial{})
	if err != nil {
		return nil, fmt.Errorf("%w: context.compact.after: %w", ErrInvalidInput, err)
	}
	stopped, err = run.boundary(ctx, gen.EventContextCompactAfter, occ2)
	afterEv, evErr := occ2.Event()
	if evErr != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, evErr)
	}
	res.After = afterEv
	res.Summary = cloneTextParts(afterEv.ContextCompactAfter.Summary)
	if err != nil {
		return res, err
	}
	res.Applied = !stopped
	c.notify(afterEv, occ2.RequestState())
	return res, nil
}

// compactionRun is the state of one Run.
type compactionRun struct {
	c   *Compactor
	res *CompactionResult
}

// boundary runs the hooks of one boundary serially over occ. It reports
// whether the run stopped (a fail-closed failure or an accepted deny) and
// an error only when ctx ended.
func (r *compactionRun) boundary(ctx context.Context, b gen.EventName, occ *settle.Occurrence) (bool, error) {
	caps := CompactionCapabilities(b)
	for i := range r.c.hooks {
		h := &r.c.hooks[i]
		if h.Boundary != b {
			continue
		}
		if err := ctx.Err(); err != nil {
			r.res.Interrupted = true
			return true, fmt.Errorf("hooks: compaction interrupted: %w", err)
		}
		snap, err := snapshot(occ, h.Supplier, caps)
		if err != nil {
			return true, err
		}
		effects, reason, rejected := callHook(ctx, h, snap)
		if err := ctx.Err(); err != nil {
			r.res.Interrupted = true
			return true, fmt.Errorf("hooks: compaction interrupted: %w", err)
		}
		step := CompactionStep{Boundary: b, Supplier: h.Supplier, FailurePolicy: h.FailurePolicy, Effects: cloneEffects(effects)}
		if reason == "" {
			before := len(occ.State().Messages)
			prov, _ := json.Marshal(map[string]string{"supplier": h.Supplier})
			if effects == nil {
				effects = []gen.Effect{}
			}
			err := occ.ApplyContext(ctx, caps, &gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: effects}, settle.ApplyOptions{Provenance: prov})
			var rej *settle.Rejection
			switch {
			case err == nil:
				step.Outcome = CompactionAccepted
				for _, m := range occ.State().Messages[before:] {
					r.res.Messages = append(r.res.Messages, CompactionMessage{Boundary: b, Supplier: h.Supplier, Text: m})
				}
			case errors.As(err, &rej):
				step.Outcome, step.Reason = CompactionRejected, rej.Reason
			default:
				r.res.Interrupted = true
				r.res.Trace = append(r.res.Trace, step)
				return true, fmt.Errorf("hooks: compaction interrupted: %w", err)
			}
		} else if rejected {
			step.Outcome, step.Reason = CompactionRejected, reason
		} else {
			step.Outcome, step.Reason = CompactionFailed, reason
		}
		r.res.Trace = append(r.res.Trace, step)
		if step.Outcome != CompactionAccepted && h.FailurePolicy == FailClosed {
			r.res.FailedClosed, r.res.FailedAt = true, b
			return true, nil
		}
		if occ.Done() {
			return true, nil
		}
	}
	return false, nil
}

// callHook runs one callback, containing a panic. It returns the effects
// or a failure reason; rejected reports a callback error wrapping a
// *settle.Rejection (a response the callback's own admission refused).
func callHook(ctx context.Context, h *CompactionHook, snap CompactionSnapshot) (effects []gen.Effect, reason string, rejected bool) {
	defer func() {
		if recover() != nil {
			effects, reason, rejected = nil, CompactionReasonCallbackPanic, false
		}
	}()
	effects, err := h.Callback(ctx, snap)
	if err != nil {
		var rej *settle.Rejection
		if errors.As(err, &rej) {
			return nil, rej.Reason, true
		}
		return nil, CompactionReasonCallbackError, false
	}
	return effects, "", false
}

// callGenerator runs the generator, containing a panic, and checks its
// contract: a summary of inline text parts only (no metadata, omitted or
// gap part, which a host could not apply). Every failure wraps
// ErrGenerator.
func callGenerator(ctx context.Context, g CompactionGenerator, before *gen.ContextCompactBeforeEvent) (summary gen.TextParts, err error) {
	defer func() {
		if recover() != nil {
			summary, err = nil, fmt.Errorf("%w: the generator panicked", ErrGenerator)
		}
	}()
	summary, err = g(ctx, before)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGenerator, err)
	}
	if summary == nil {
		return nil, fmt.Errorf("%w: the generator returned no summary", ErrGenerator)
	}
	for i := range summary {
		if summary[i].Body == nil {
			return nil, fmt.Errorf("%w: generated summary part %d is not an inline text part", ErrGenerator, i)
		}
	}
	return summary, nil
}

// notify starts the observers on their own snapshots of the settled after
// boundary; it does not wait for them.
func (c *Compactor) notify(after *gen.Event, state *gen.InterceptState) {
	if len(c.observers) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	for _, o := range c.observers {
		ev, err := detachEvent(after)
		if err != nil {
			continue
		}
		st, err := detachState(state)
		if err != nil {
			continue
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer func() { _ = recover() }()
			o(c.obsCtx, CompactionSnapshot{Event: ev, State: st})
		}()
	}
}

// snapshot builds the detached snapshot of occ for one callback.
func snapshot(occ *settle.Occurrence, supplier string, caps gen.Capabilities) (CompactionSnapshot, error) {
	ev, err := occ.Event()
	if err != nil {
		return CompactionSnapshot{}, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	st, err := detachState(occ.RequestState())
	if err != nil {
		return CompactionSnapshot{}, err
	}
	return CompactionSnapshot{Supplier: supplier, Event: ev, State: st, Capabilities: cloneCapabilities(caps)}, nil
}

// checkCompactionEvent validates ev against the canonical event schema; the
// caller says whose fault a failure is.
func checkCompactionEvent(ev *gen.Event) error {
	b, err := gen.EncodeEvent(ev)
	if err != nil {
		return err
	}
	_, err = gen.ParseEvent(b)
	return err
}

// detachEvent returns a deep copy of ev.
func detachEvent(ev *gen.Event) (*gen.Event, error) {
	b, err := gen.EncodeEvent(ev)
	if err != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	var out gen.Event
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	return &out, nil
}

// detachState returns a deep copy of st.
func detachState(st *gen.InterceptState) (*gen.InterceptState, error) {
	b, err := st.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	var out gen.InterceptState
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("%w: compaction: %w", ErrInternal, err)
	}
	return &out, nil
}

// cloneCapabilities returns a deep copy of c.
func cloneCapabilities(c gen.Capabilities) gen.Capabilities {
	b, err := c.MarshalJSON()
	if err != nil {
		return gen.Capabilities{}
	}
	var out gen.Capabilities
	if out.UnmarshalJSON(b) != nil {
		return gen.Capabilities{}
	}
	return out
}

// cloneTextParts returns a deep copy of ps (nil stays nil).
func cloneTextParts(ps gen.TextParts) gen.TextParts {
	if ps == nil {
		return nil
	}
	b, err := ps.MarshalJSON()
	if err != nil {
		return nil
	}
	var out gen.TextParts
	if out.UnmarshalJSON(b) != nil {
		return nil
	}
	return out
}

// cloneEffects returns a deep copy of es (nil stays nil).
func cloneEffects(es []gen.Effect) []gen.Effect {
	if es == nil {
		return nil
	}
	out := make([]gen.Effect, 0, len(es))
	for _, e := range es {
		b, err := e.MarshalJSON()
		if err != nil {
			continue
		}
		var c gen.Effect
		if c.UnmarshalJSON(b) == nil {
			out = append(out, c)
		}
	}
	return out
}

// denyReason returns the reason of the first accepted deny.
func denyReason(st settle.State) string {
	for _, a := range st.Accepted {
		for _, e := range a.Effects {
			if e.Deny != nil {
				return e.Deny.Reason
			}
		}
	}
	return ""
}

// candidateSupplier reads the supplier recorded in a candidate's provenance.
func candidateSupplier(prov json.RawMessage) string {
	var p struct {
		Supplier string `json:"supplier"`
	}
	if json.Unmarshal(prov, &p) != nil {
		return ""
	}
	return p.Supplier
}
