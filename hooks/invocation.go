package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// Errors of the step-by-step invocation API (Begin, BeginRequest and the
// methods of Invocation). Each matches with errors.Is.
var (
	// ErrCancelled reports an invocation ended by Invocation.Cancel: its
	// steps fail with it, a response handed in afterwards is discarded,
	// and Accept returns the interrupted Result with an error matching it
	// (and context.Canceled).
	ErrCancelled = errors.New("hooks: invocation cancelled")
	// ErrUncorrelated reports a response handed to Invocation.Receive
	// whose id is not the pending request's: it is discarded, and the
	// request stays pending.
	ErrUncorrelated = errors.New("hooks: response is not correlated with the pending request")
	// ErrDuplicate reports a further response for a request whose first
	// valid response is already retained: it is discarded; the retained
	// one stands.
	ErrDuplicate = errors.New("hooks: a response is already retained for the pending request")
	// ErrRejected reports an attempt that produced no valid response: the
	// transport failed, or the response failed its envelope, correlation,
	// canonical or reference checks, or came after the delivery's
	// deadline. The error is an *AttemptError. Unless a valid response is
	// retained later, the failure is charged to the subscription under its
	// failure policy at acceptance.
	ErrRejected = errors.New("hooks: attempt produced no valid response")
	// ErrNoPending reports a step that needs a pending interception request
	// when there is none (decision-making is over, or the event is
	// observation only).
	ErrNoPending = errors.New("hooks: no interception request is pending")
	// ErrFinished reports a step on an invocation that Accept or Cancel
	// already finished.
	ErrFinished = errors.New("hooks: invocation finished")
)

// AttemptError is a failed attempt (ErrRejected): the diagnostic facts of
// the failure, never a backend value.
type AttemptError struct {
	// Code classifies the failure (transport.Code).
	Code Code
	// Stage is where it happened.
	Stage Stage
	// Reason is a fixed reason such as "schema", "id_mismatch" or
	// "late_response".
	Reason string
	// Status is the HTTP status or JSON-RPC error code, when there is one.
	Status int
}

// Error describes the failure by its code, stage, reason and status.
func (e *AttemptError) Error() string {
	s := fmt.Sprintf("%v: %s at %s: %s", ErrRejected, e.Code, e.Stage, e.Reason)
	if e.Status != 0 {
		s += fmt.Sprintf(" (status %d)", e.Status)
	}
	return s
}

// Unwrap returns ErrRejected.
func (e *AttemptError) Unwrap() error { return ErrRejected }

// Request is the pending interception request of an Invocation: what one
// interceptor is to receive.
type Request struct {
	// BackendID and SubscriptionIndex name the receiving subscription.
	BackendID         string
	SubscriptionIndex int
	// ID is the JSON-RPC id of the request; a response is correlated by it.
	ID string
	// Body is the complete canonical hooks/intercept request envelope, the
	// receiver's view of the occurrence. It is the Invocation's; do not
	// modify it.
	Body []byte
}

// Invocation is one event occurrence driven step by step, for hosts with
// their own transport or scheduling. Begin or BeginRequest starts it: the
// event is validated and the settlement begun exactly as by the named
// methods, and the first matching interceptor's request is prepared
// (Request). Then, for each pending request:
//
//   - Acquire sends it over the subscription's configured transport, or
//     Receive hands in a response the host obtained itself;
//   - the first valid response is retained privately: nothing of it is
//     published, and a further response (a duplicate attempt or reply) is
//     discarded with ErrDuplicate;
//   - Response shows the retained response; Reject refuses it;
//   - Accept (or AcceptContent) publishes the retained response
//     atomically with the settlement engine of the named methods, delivers
//     the remaining interceptors (through their transports) and the
//     observations, and returns the Result; Advance publishes it and
//     prepares the next interceptor's request instead, for a host that
//     delivers every request itself.
//
// Cancel ends the invocation at any point as an interruption: a retained
// response is discarded unpublished, an Acquire in flight returns, and a
// response handed in later is discarded (ErrCancelled). Every delivery has
// the budget it has in a named call: the subscription's timeoutMs from the
// moment its request is prepared, within the context given to Begin, which
// bounds the whole invocation. A response arriving after that budget is a
// deadline failure, and acceptance after it publishes nothing.
//
// An Invocation holds its Hooks open: finish every one with Accept or
// Cancel (Hooks.Close cancels those left, with ErrClosed). Its methods are
// safe for concurrent use; steps run one at a time, except Cancel, which
// interrupts a step in flight.
type Invocation struct {
	c         *call
	cancel    context.CancelCauseFunc
	intercept bool

	step chan struct{} // held by the step in progress

	// Guarded by step.
	chain    []*subscription
	next     int             // chain index of the next interceptor to prepare
	owed     []*subscription // uncalled interceptors owed an observation
	cur      *delivery       // the pending request, nil when none
	retained *gen.InterceptResponseResult
	failed   *transport.Error // first failed attempt of cur
	rejected bool             // the host rejected cur's first valid response
	finished bool
	res      *Result
	err      error

	once sync.Once // unregisters from the Hooks
}

// Dispatch runs one occurrence of a canonical typed event, with the call
// options and the settlement of the named per-event methods: the event is
// validated against its canonical schema, delivered to every matching
// subscription, and the responses are admitted and settled. The event is
// used as given (id, source and time are kept; only missing content ids
// are synthesized); ev must not be modified until the call returns. It
// serves every one of the event types, for hosts that hold canonical
// events rather than the named inputs.
func (h *Hooks) Dispatch(ctx context.Context, ev *gen.Event, opts ...CallOption) (*Result, error) {
	name, err := eventName(ev)
	if err != nil {
		closeAttachments(opts)
		return nil, err
	}
	return h.dispatch(ctx, name, opts, func(*fill) (*gen.Event, error) { return ev, nil })
}

// eventName returns the type of a typed event, or an input error.
func eventName(ev *gen.Event) (gen.EventName, error) {
	if ev == nil || ev.Type() == "" {
		return "", inputError("event", "/type", "type", "the event has no type")
	}
	return gen.EventName(ev.Type()), nil
}

// Begin starts an invocation of the canonical typed event ev, with the
// call options of the named methods. ev is validated as for Dispatch and
// borrowed for the whole invocation: it must not be modified until the
// invocation has ended (its Result is final, or Cancel has returned),
// since the invocation reads it, its tool input among it, up to its
// Result, whose event is ev or built from it. ctx bounds the
// whole invocation, as the context of a named call bounds the call; ending
// it interrupts the invocation like Cancel, with ctx's error. Nothing is
// sent yet: Request returns the first interceptor's request.
func (h *Hooks) Begin(ctx context.Context, ev *gen.Event, opts ...CallOption) (*Invocation, error) {
	name, err := eventName(ev)
	if err != nil {
		closeAttachments(opts)
		return nil, err
	}
	return h.begin(ctx, name, opts, ev, nil)
}

// BeginRequest starts an invocation from a complete canonical
// hooks/intercept request: its event, its capabilities (which must narrow
// the configured grant of the event: ErrWidening otherwise; they replace
// WithCapabilities), its state (the initial state, replacing
// WithInitialState) and its id, which every interception request of the
// invocation carries. An interceptor whose view is the event itself gets
// the request exactly as given; one whose content selection, native
// choice or attachment references change its view gets its own, as in a
// named call. The request id must be a string. The request is delivered
// even when its state already ends decision-making (a denial or flow stop
// decided before it, as in a chain): the host made it, and its response
// settles on that state, which it cannot reopen.
func (h *Hooks) BeginRequest(ctx context.Context, request []byte, opts ...CallOption) (*Invocation, error) {
	req, err := gen.ParseInterceptRequest(request)
	if err != nil {
		ve := inputError("request", "", "schema", "the request does not satisfy its canonical schema")
		var pe *gen.ParseError
		if errors.As(err, &pe) {
			ve.Pointer, ve.Keyword = pe.Pointer, pe.Keyword
		}
		ve.cause = err
		closeAttachments(opts)
		return nil, ve
	}
	id, ok := req.ID.AsString()
	if !ok || id == "" {
		closeAttachments(opts)
		return nil, inputError("request", "/id", "type", "the request id must be a non-empty string")
	}
	initial, err := settleInitial(req.Params.State)
	if err != nil {
		closeAttachments(opts)
		return nil, err
	}
	var body bytes.Buffer
	if err := json.Compact(&body, request); err != nil {
		closeAttachments(opts)
		return nil, inputError("request", "", "json", "not valid JSON")
	}
	ev := &req.Params.Event
	name, err := eventName(ev)
	if err != nil {
		closeAttachments(opts)
		return nil, err
	}
	opts = append(opts[:len(opts):len(opts)], WithInitialState(initial))
	return h.begin(ctx, name, opts, ev, &beginRequest{body: body.Bytes(), id: id, caps: req.Params.Capabilities})
}

// begin starts the call and prepares the first delivery.
func (h *Hooks) begin(ctx context.Context, name gen.EventName, opts []CallOption, ev *gen.Event, req *beginRequest) (*Invocation, error) {
	ictx, cancel := context.WithCancelCause(ctx)
	c, intercept, err := h.start(ictx, name, opts, func(*fill) (*gen.Event, error) { return ev, nil }, req)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	inv := &Invocation{c: c, cancel: cancel, intercept: intercept, step: make(chan struct{}, 1)}
	if !h.track(inv) { // Close began meanwhile
		inv.step <- struct{}{}
		inv.end(inv.c.interrupted(nil))
		return nil, ErrClosed
	}
	inv.step <- struct{}{}
	defer inv.unlock()
	inv.chain, inv.owed = c.chain(intercept)
	inv.advance()
	return inv, nil
}

// settleInitial converts a request's state into an Initial.
func settleInitial(st *gen.InterceptState) (Initial, error) {
	in, err := settle.InitialFromState(st)
	if err != nil {
		return Initial{}, &ValidationError{Doc: "request", Pointer: "/params/state", Keyword: "settle", Detail: "the state cannot be settled", kind: ErrInvalidInput, cause: err}
	}
	return Initial{s: in}, nil
}

// lock takes the step lock within ctx.
func (inv *Invocation) lock(ctx context.Context) error {
	select {
	case inv.step <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (inv *Invocation) unlock() { <-inv.step }

// advance prepares the next interceptor's delivery, skipping those whose
// delivery failed before sending (their failures are charged), until one
// is pending or decision-making is over. The step lock is held.
func (inv *Invocation) advance() {
	c := inv.c
	for inv.cur == nil && inv.next < len(inv.chain) {
		if c.ended() {
			return
		}
		s := inv.chain[inv.next]
		inv.next++
		d, stop, interrupted := c.prepareDelivery(s)
		if interrupted {
			return
		}
		if d != nil {
			inv.cur = d
			return
		}
		if stop {
			inv.owed = inv.chain[inv.next:]
			inv.next = len(inv.chain)
		}
	}
}

// Request returns the pending interception request; ok is false when none
// is pending (decision-making is over, the event is observation only, or
// the invocation finished).
func (inv *Invocation) Request() (req Request, ok bool) {
	if inv.lock(context.Background()) != nil {
		return Request{}, false
	}
	defer inv.unlock()
	if inv.finished || inv.cur == nil {
		return Request{}, false
	}
	d := inv.cur
	return Request{BackendID: d.s.b.id, SubscriptionIndex: d.s.index, ID: d.id, Body: d.body}, true
}

// usable reports why no step can act on the pending request: the
// invocation's end (ErrCancelled, ErrClosed or the context's error),
// ErrFinished after an ordinary end, or ErrNoPending. The step lock is
// held.
func (inv *Invocation) usable() error {
	if inv.finished {
		switch {
		case errors.Is(inv.err, ErrCancelled):
			return ErrCancelled
		case errors.Is(inv.err, ErrClosed):
			return ErrClosed
		}
		return ErrFinished
	}
	if inv.c.ended() {
		return inv.endError()
	}
	if inv.cur == nil {
		return ErrNoPending
	}
	return nil
}

// endError is the error of a step the end of the invocation cut short.
func (inv *Invocation) endError() error {
	c := inv.c
	if c.h.closed.Load() {
		return ErrClosed
	}
	cause := context.Cause(c.ctx)
	if errors.Is(cause, ErrCancelled) {
		return ErrCancelled
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	return cause
}

// Acquire sends the pending request over its subscription's configured
// transport and waits for the response, within ctx and the delivery's
// budget. The first valid response is retained, unpublished; a valid
// response when one is already retained is discarded (ErrDuplicate); a
// failed attempt returns an *AttemptError (ErrRejected). If ctx ends
// first, the attempt is abandoned and Acquire returns ctx's error, the
// request still pending. Cancel interrupts it (ErrCancelled).
func (inv *Invocation) Acquire(ctx context.Context) error {
	if err := inv.lock(ctx); err != nil {
		return err
	}
	defer inv.unlock()
	if err := inv.usable(); err != nil {
		return err
	}
	return inv.attempt(ctx)
}

// attempt is one exchange of the pending request. The step lock is held.
func (inv *Invocation) attempt(ctx context.Context) error {
	c, d := inv.c, inv.cur
	xctx, stop := mergeContext(d.dctx, ctx)
	raw, err := c.exchange(xctx, d)
	stop()
	if c.ended() {
		return inv.endError() // whatever arrived is discarded
	}
	if err != nil && ctx.Err() != nil && d.dctx.Err() == nil {
		return ctx.Err() // abandoned by the caller: nothing to charge
	}
	return inv.take(c.admit(d, raw, err))
}

// take records the outcome of one attempt. The step lock is held.
func (inv *Invocation) take(result *gen.InterceptResponseResult, te *transport.Error) error {
	if te != nil {
		if inv.retained == nil && inv.failed == nil {
			inv.failed = te
		}
		return &AttemptError{Code: te.Code, Stage: te.Stage, Reason: te.Reason, Status: te.Status}
	}
	if inv.retained != nil || inv.rejected {
		return ErrDuplicate
	}
	inv.retained, inv.failed = result, nil
	return nil
}

// mergeContext returns a context that ends when either a or b ends,
// carrying a's values; stop releases it.
func mergeContext(a, b context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(a)
	unhook := context.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() {
		unhook()
		cancel(nil)
	}
}

// Receive hands in a response to the pending request that the host
// obtained itself (raw is one complete JSON-RPC response envelope). A
// response whose id is not the request's is discarded with
// ErrUncorrelated and the request stays pending. A correlated response is
// checked as Acquire checks one (envelope, canonical schema, references,
// the delivery's deadline): the first valid one is retained, unpublished;
// a further one is discarded (ErrDuplicate); an invalid one returns an
// *AttemptError. After Cancel every response is discarded (ErrCancelled).
// Receive does not keep raw.
func (inv *Invocation) Receive(raw []byte) error {
	if err := inv.lock(context.Background()); err != nil {
		return err
	}
	defer inv.unlock()
	if err := inv.usable(); err != nil {
		return err
	}
	d := inv.cur
	if env, err := jsonrpc.Classify(raw); err == nil && (env.Kind == jsonrpc.KindResponse || env.Kind == jsonrpc.KindErrorResponse) &&
		!env.ID.Equal(jsonrpc.StringID(d.id)) {
		return ErrUncorrelated
	}
	return inv.take(inv.c.admit(d, raw, nil))
}

// Response returns a copy of the retained response of the pending request,
// for a host that inspects it before acceptance; ok is false when none is
// retained.
func (inv *Invocation) Response() (res *gen.InterceptResponseResult, ok bool) {
	if inv.lock(context.Background()) != nil {
		return nil, false
	}
	defer inv.unlock()
	if inv.finished || inv.retained == nil {
		return nil, false
	}
	b, err := inv.retained.MarshalJSON()
	if err != nil {
		return nil, false
	}
	out := new(gen.InterceptResponseResult)
	if out.UnmarshalJSON(b) != nil {
		return nil, false
	}
	return out, true
}

// Reject refuses the retained response of the pending request (a host
// check the SDK cannot make, such as the tool's own input contract): it is
// discarded unpublished, and the delivery counts as failed (protocol
// rejection at admission, reason "host_rejected") under the
// subscription's failure policy at acceptance; a further response to the
// request is discarded (ErrDuplicate), never retained over the rejection.
// It returns ErrNoPending when nothing is retained.
func (inv *Invocation) Reject() error {
	if err := inv.lock(context.Background()); err != nil {
		return err
	}
	defer inv.unlock()
	if err := inv.usable(); err != nil {
		return err
	}
	if inv.retained == nil {
		return ErrNoPending
	}
	inv.retained, inv.rejected = nil, true
	inv.failed = &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageAdmit, Reason: "host_rejected"}
	return nil
}

// Cancel ends the invocation as an interruption (base/composition.md): no
// further delivery, no observation, a retained response discarded
// unpublished, an Acquire in flight cut short. A later Accept returns the
// interrupted Result (Interrupted, permission deny) with an error matching
// ErrCancelled and context.Canceled. A response an Accept in progress
// published before Cancel took effect stays listed in that Result's
// Accepted. Cancel after the invocation finished does nothing.
func (inv *Invocation) Cancel() {
	inv.cancel(ErrCancelled)
	inv.step <- struct{}{}
	defer inv.unlock()
	if inv.finished {
		return
	}
	inv.end(inv.c.interrupted(inv.pendingSub()))
}

// pendingSub is the subscription of the pending request, nil when none.
func (inv *Invocation) pendingSub() *subscription {
	if inv.cur == nil {
		return nil
	}
	return inv.cur.s
}

// Advance publishes the retained response of the pending request (or
// charges its failure, recorded by a failed attempt or Reject, under the
// subscription's failure policy) and prepares the next matching
// interceptor's request; more reports that one is pending. It is for hosts
// that deliver every request themselves; Accept finishes the invocation.
// It returns ErrNoPending when no request is pending, and an error
// matching ErrRejected when nothing was attempted yet.
func (inv *Invocation) Advance(ctx context.Context) (more bool, err error) {
	if err := inv.lock(ctx); err != nil {
		return false, err
	}
	defer inv.unlock()
	if err := inv.usable(); err != nil {
		return false, err
	}
	if inv.retained == nil && inv.failed == nil {
		return false, fmt.Errorf("%w: nothing was acquired for the pending request", ErrRejected)
	}
	if inv.settleCurrent() {
		inv.end(inv.c.interrupted(nil))
		return false, inv.endError()
	}
	inv.advance()
	if inv.c.ended() {
		inv.end(inv.c.interrupted(inv.pendingSub()))
		return false, inv.endError()
	}
	return inv.cur != nil, nil
}

// settleCurrent publishes the retained response of the pending request, or
// charges its failure, and clears it; it reports an interruption. The step
// lock is held.
func (inv *Invocation) settleCurrent() (interrupted bool) {
	c, d := inv.c, inv.cur
	var stop bool
	if inv.retained != nil {
		stop, interrupted = c.publish(d, inv.retained)
	} else {
		stop = c.failure(d.s, inv.failed)
	}
	c.h.timeouts.release(d.dctx)
	inv.cur, inv.retained, inv.failed, inv.rejected = nil, nil, nil, false
	if stop {
		inv.owed = inv.chain[inv.next:]
		inv.next = len(inv.chain)
	}
	return interrupted
}

// Accept finishes the invocation as a named call finishes: it publishes
// the retained response of the pending request atomically (or charges its
// failure under the subscription's failure policy; a request nothing was
// attempted for is first acquired through its transport), delivers the
// remaining matching interceptors through their transports, runs the
// observations and returns the settled Result. ctx bounds the acquisitions
// Accept makes; if it ends during one, Accept returns its error and the
// invocation stays as it was. A second Accept returns the same outcome;
// after Cancel, Accept returns the interrupted Result and an error
// matching ErrCancelled.
func (inv *Invocation) Accept(ctx context.Context) (*Result, error) {
	if err := inv.lock(ctx); err != nil {
		return nil, err
	}
	defer inv.unlock()
	if inv.finished {
		return inv.res, inv.err
	}
	c := inv.c
	for {
		if c.ended() {
			return inv.end(c.interrupted(inv.pendingSub()))
		}
		if inv.cur == nil {
			break
		}
		if inv.retained == nil && inv.failed == nil {
			err := inv.attempt(ctx)
			if c.ended() {
				return inv.end(c.interrupted(inv.pendingSub()))
			}
			if err != nil && inv.retained == nil && inv.failed == nil {
				return nil, err // abandoned by ctx
			}
		}
		if inv.settleCurrent() {
			return inv.end(c.interrupted(nil))
		}
		inv.advance()
	}
	return inv.end(c.finish(inv.owed))
}

// AcceptContent is Accept for a boundary whose settled content the host
// forwards: it also returns the effective value of the boundary's content
// target (Result.Targets[gen.ModifyTargetContent]), such as the answer
// object of an accepted user.elicitation.result, whose edits settle
// against the original request given to Begin with
// WithOriginalElicitationRequest. content is nil when the boundary has no
// content target, and whenever err is not nil.
func (inv *Invocation) AcceptContent(ctx context.Context) (res *Result, content json.RawMessage, err error) {
	res, err = inv.Accept(ctx)
	if err != nil || res == nil {
		return res, nil, err
	}
	if v, ok := res.Targets[gen.ModifyTargetContent]; ok {
		content = clone(v)
	}
	return res, content, nil
}

// end records the invocation's outcome and releases it: the pending
// delivery's budget, the uploads still running (cancelled and joined), the
// attachments of an outcome with an error, its count in the Hooks. The
// step lock is held.
func (inv *Invocation) end(res *Result, err error) (*Result, error) {
	c := inv.c
	if inv.cur != nil {
		c.h.timeouts.release(inv.cur.dctx)
		inv.cur, inv.retained, inv.failed, inv.rejected = nil, nil, nil, false
	}
	c.joinUploads()
	if err != nil {
		c.release(res)
	}
	inv.finished, inv.res, inv.err = true, res, err
	inv.once.Do(func() {
		c.h.untrack(inv)
		inv.cancel(nil)
		c.h.calls.Done()
	})
	return res, err
}

// track registers a begun invocation so that Close can end it; it fails
// once Close has begun.
func (h *Hooks) track(inv *Invocation) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		return false
	}
	if h.invocations == nil {
		h.invocations = map[*Invocation]struct{}{}
	}
	h.invocations[inv] = struct{}{}
	return true
}

// untrack forgets a finished invocation.
func (h *Hooks) untrack(inv *Invocation) {
	h.mu.Lock()
	delete(h.invocations, inv)
	h.mu.Unlock()
}

// endInvocations interrupts every unfinished invocation with ErrClosed and
// waits until each has ended. Close calls it after closed is set, so no
// invocation is tracked meanwhile.
func (h *Hooks) endInvocations() {
	h.mu.Lock()
	invs := make([]*Invocation, 0, len(h.invocations))
	for inv := range h.invocations {
		invs = append(invs, inv)
	}
	h.mu.Unlock()
	for _, inv := range invs {
		inv.cancel(ErrClosed)
		inv.step <- struct{}{}
		if !inv.finished {
			inv.end(inv.c.interrupted(inv.pendingSub()))
		}
		inv.unlock()
	}
}
