package hooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// fill supplies the members of an event that the SDK owns.
type fill struct {
	source string
	opts   *callOptions // the call's options (WithEventID), nil for none
	// h is the Hooks whose manifest and clock (which formats the current
	// time) the event uses; nil means formatUTC and no manifest.
	h *Hooks
	// sdk records the values of the event that the SDK wrote itself, for
	// the entry check.
	sdk sdkValues
}

// sdkValues are values of a built event that the SDK wrote itself and that
// hold by construction what the entry check would check of them: a time
// formatUTC wrote with a four-digit year (an RFC 3339 date-time) and raw
// JSON that appendPlainJSON wrote from Go values (valid JSON, with no
// repeated member name at any depth: the names of each object are the
// keys of one Go map). Each is recognised by the address and length of its
// bytes, which no one else holds while the event is checked.
type sdkValues struct {
	time  string
	plain []byte
}

// isTime reports whether s is the time the SDK wrote.
func (v *sdkValues) isTime(s string) bool {
	return v != nil && len(s) > 0 && len(s) == len(v.time) && unsafe.StringData(s) == unsafe.StringData(v.time)
}

// isPlain reports whether raw is raw JSON the SDK wrote with appendPlainJSON.
func (v *sdkValues) isPlain(raw []byte) bool {
	return v != nil && len(raw) > 0 && len(raw) == len(v.plain) && unsafe.SliceData(raw) == unsafe.SliceData(v.plain)
}

// built holds a built event and its payload (of type T, the payload of
// the event's arm) in one allocation.
type built[T any] struct {
	ev      gen.Event
	payload T
}

// eventID returns the explicit id (WithEventID, then the input's) or a new one.
func (f *fill) eventID(given string) string {
	if f.opts != nil && f.opts.eventID != "" {
		return f.opts.eventID
	}
	if given != "" {
		return given
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}

// eventTime formats t, or now when t is zero, as RFC 3339.
func (f *fill) eventTime(t time.Time) string {
	var s string
	var own bool
	if t.IsZero() && f.h != nil {
		s, own = f.h.clock.format(time.Now())
	} else {
		if t.IsZero() {
			t = time.Now()
		}
		s, own = formatUTC(t)
	}
	if own {
		f.sdk.time = s
	}
	return s
}

// clock formats the current times of the events of one Hooks as formatUTC
// does, computing the date and time of day once per second: the last
// second it formatted is kept (immutable, replaced as a whole).
type clock struct{ last atomic.Pointer[clockSecond] }

// clockSecond is one second formatted: "YYYY-MM-DDTHH:MM:SS".
type clockSecond struct {
	unix int64
	text [19]byte
}

// format is formatUTC(t) for t near the current time (TestClockAgrees).
func (c *clock) format(t time.Time) (_ string, own bool) {
	var b [30]byte
	if n, ok := c.formatCached(&b, t); ok {
		return string(b[:n]), true
	}
	s, own := formatUTC(t)
	if own {
		cs := &clockSecond{unix: t.Unix()}
		copy(cs.text[:], s)
		c.last.Store(cs)
	}
	return s, own
}

// formatCached writes what format returns into b and returns its length
// when t is in the last second formatted, and reports false otherwise.
func (c *clock) formatCached(b *[30]byte, t time.Time) (int, bool) {
	cs := c.last.Load()
	if cs == nil || cs.unix != t.Unix() {
		return 0, false
	}
	copy(b[:], cs.text[:])
	n := 19
	if ns := t.Nanosecond(); ns != 0 {
		b[19] = '.'
		for j := 28; j >= 20; j-- {
			b[j] = byte('0' + ns%10)
			ns /= 10
		}
		n = 29
		for b[n-1] == '0' {
			n--
		}
	}
	b[n] = 'Z'
	return n + 1, true
}

// appJSON is appJSON for a member of the event f fills: raw JSON that
// appendPlainJSON wrote is recorded in f.sdk (the first such member: an
// event has one application-owned member at most).
func (f *fill) appJSON(v any, pointer string) (json.RawMessage, error) {
	b, plain, err := encodeAppJSON(v, pointer)
	if plain && f.sdk.plain == nil {
		f.sdk.plain = b
	}
	return b, err
}

// formatUTC is t.UTC().Format(time.RFC3339Nano), written directly for
// years 0 to 9999 (TestFormatUTCAgrees), when sdk reports a four-digit
// year: then it is an RFC 3339 date-time (TestSDKTimeIsDateTime).
func formatUTC(t time.Time) (_ string, sdk bool) {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(time.RFC3339Nano), false
	}
	hour, minute, sec := t.Clock()
	var b [30]byte
	put := func(i, w, v int) {
		for j := i + w - 1; j >= i; j-- {
			b[j] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, 4, year)
	b[4] = '-'
	put(5, 2, int(month))
	b[7] = '-'
	put(8, 2, day)
	b[10] = 'T'
	put(11, 2, hour)
	b[13] = ':'
	put(14, 2, minute)
	b[16] = ':'
	put(17, 2, sec)
	n := 19
	if ns := t.Nanosecond(); ns != 0 {
		b[19] = '.'
		put(20, 9, ns)
		n = 29
		for b[n-1] == '0' {
			n--
		}
	}
	b[n] = 'Z'
	return string(b[:n+1]), true
}

// sessionManifest returns a detached copy of the configured manifest.
func (f *fill) sessionManifest() gen.StaticCapabilityManifest { return cloneManifest(f.h.manifest) }

// call is one in-flight hook call. What only some calls need is kept
// apart, so that the common call fits a small size class: the options,
// the request an Invocation was begun from and the call's own
// advertisement in rare, the failures in diags.
//
// A call is not reused: the delivery contexts it hands to transports
// (oneDeliveryCtx among them) may be kept by a transport's goroutines
// after the exchange returns, and its events reach the Result.
type call struct {
	h *Hooks
	// ctx is the caller's context. The contexts the call hands out (to the
	// preparer and the transports) are delivery contexts of h.timeouts,
	// which Close cancels; ended reports either end.
	ctx   context.Context
	entry *eventEntry
	// caps is the call's advertisement: the entry's configured grant
	// (immutable once configured, shared) when it is advertised as it is,
	// otherwise the call's own (ownCaps); nil for an occurrence that is
	// observation only.
	caps *gen.Capabilities
	occ  *settle.Occurrence
	base *gen.Event
	cur  *gen.Event
	// curJSON is cur encoded, nil once unknown. capsJSON holds caps
	// encoded: the entry's encoding of the configured grant (shared, never
	// nil, so never written), or the call's own, encoded on first use.
	curJSON  []byte
	capsJSON *[]byte
	// room is the buffer the base event was encoded into, through the end
	// of curJSON, with room around it for the first body built from it
	// (bodyRoom: an intercept request or, for an event only observed, a
	// notification), until that body takes it; nil without any.
	room []byte

	fill fill

	att   *attachments // the call's attachment parts and their uploads, nil without any
	rare  *callRare    // nil for a call given no options and begun from no request
	diags *diagnostics // nil until the first failure

	offered   []*subscription // subscriptions whose responses went to Apply, in order
	observers []*subscription // the matching observers
	// oneChain and oneOffered hold the chain and offered while the
	// occurrence goes to one interceptor (the common case), without an
	// allocation.
	oneChain, oneOffered [1]*subscription
	// oneDelivery is the call's first delivery and oneDeliveryCtx its
	// context (delivered: they are taken); each later one is allocated,
	// so none is ever overwritten or used twice.
	oneDelivery    delivery
	oneDeliveryCtx deliveryContext
	delivered      bool
	// stateContent reports that the request state may carry content (a
	// candidate or injections), which requestState projects per receiver.
	stateContent bool
	// content reports that the built event has content slots holding
	// something (hasContent); without any, the base event needs no ids,
	// attachment binding or projection.
	content   bool
	synthetic bool
	// applied reports that a response was published (the state is no
	// longer the request's).
	applied bool
}

// callRare is the part of a call that only a call given options or begun
// from a request needs: such a call is allocated with it (callWithRare).
type callRare struct {
	opts callOptions
	own  ownCaps // the call's own advertisement, when it is not the configured one
	// given is the canonical request an Invocation was begun from
	// (BeginRequest), nil otherwise; reqID is its id, the id of every
	// interception request of the call ("" means the event id).
	given []byte
	reqID string
}

// ownCaps is a call's own advertisement and its encoding, made on first
// use.
type ownCaps struct {
	caps gen.Capabilities
	json []byte
}

// callWithRare is a call and its rare part in one allocation.
type callWithRare struct {
	call
	rare callRare
}

// options returns the call's options (nil for a call given none).
func (c *call) options() *callOptions {
	if c.rare == nil {
		return nil
	}
	return &c.rare.opts
}

// given returns the canonical request the call was begun from and its id
// (BeginRequest): nil and "" otherwise.
func (c *call) given() ([]byte, string) {
	if c.rare == nil {
		return nil, ""
	}
	return c.rare.given, c.rare.reqID
}

// diagnostics are the failures a call recorded, in order; the first is
// held in place.
type diagnostics struct {
	list  []Diagnostic
	first [1]Diagnostic
}

// diagnostics returns the failures recorded so far.
func (c *call) diagnostics() []Diagnostic {
	if c.diags == nil {
		return nil
	}
	return c.diags.list
}

// beginRequest is what BeginRequest takes from a canonical intercept
// request: its compact encoding, id and capabilities.
type beginRequest struct {
	body []byte
	id   string
	caps gen.Capabilities
}

// dispatch runs one occurrence: build and validate the canonical event,
// serial interception, settlement, observation.
//
// The call owns the attachments of its options from the start: a Result
// returned without error takes them over, and any other return closes them
// first (before the call counts as finished, so Close waits for it).
func (h *Hooks) dispatch(ctx context.Context, name gen.EventName, opts []CallOption, build func(*fill) (*gen.Event, error)) (*Result, error) {
	c, intercept, err := h.start(ctx, name, opts, build, nil)
	if err != nil {
		return nil, err
	}
	defer h.calls.Done()
	res, err := c.run(intercept)
	if err != nil {
		c.release(res)
	}
	return res, err
}

// start admits a call and prepares its occurrence: build and validate the
// canonical event, compute the advertisement, start the settlement. On
// success the call counts in h.calls until its owner calls h.calls.Done;
// on error nothing is left counted and the attachments are closed. req,
// when set, is the canonical request an Invocation begins from: its
// capabilities (a narrowing of the configured grant) and id replace the
// computed ones, its state is the initial state.
func (h *Hooks) start(ctx context.Context, name gen.EventName, opts []CallOption, build func(*fill) (*gen.Event, error), req *beginRequest) (_ *call, intercept bool, err error) {
	// One allocation holds the call and the fill the input conversion
	// reads, and with options or a request, the call's rare part too.
	// Without options, o is a zero value on the stack.
	var c *call
	var none callOptions
	o := &none
	if len(opts) > 0 || req != nil {
		w := &callWithRare{}
		c, o = &w.call, &w.rare.opts
		c.rare = &w.rare
		for _, opt := range opts {
			if opt != nil {
				opt.apply(&w.rare.opts)
			}
		}
	} else {
		c = new(call)
	}
	c.h, c.ctx = h, ctx
	if !h.enter() {
		c.release(nil)
		return nil, false, ErrClosed
	}
	defer func() {
		if err != nil {
			c.release(nil)
			h.calls.Done()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("hooks: %s: %w", name, err)
	}
	e := h.events[name]
	if e == nil || !e.declared {
		return nil, false, inputError("event", "/type", "declared", "the manifest does not declare this event")
	}
	c.entry = e
	c.fill = fill{source: h.source, opts: c.options(), h: h}
	ev, err := build(&c.fill)
	if err != nil {
		return nil, false, err
	}
	if c.content = hasContent(ev); c.content {
		ev = synthesizeIDs(ev)
	}
	if len(o.attachments) > 0 || c.content {
		if ev, err = c.bindAttachments(ev); err != nil {
			return nil, false, err
		}
	}
	head, tail := bodyRoom(e, o, ev, req)
	framed, err := checkEventFramed(e, ev, &c.fill.sdk, head, tail)
	if err != nil {
		return nil, false, err
	}
	// The encoding is read only from here on (by the settlement and the
	// request bodies): capped, so that nothing appends into the room.
	encoded := framed[head:len(framed):len(framed)]
	if head > 0 {
		c.room = framed
	}
	if o.origSet {
		if err := o.originalRequest(name); err != nil {
			return nil, false, err
		}
	}
	var caps gen.Capabilities
	if req != nil {
		if !e.intercept || !e.info.Interceptable() || !narrows(req.caps, e.caps) {
			return nil, false, ErrWidening
		}
		caps, intercept = req.caps, true
		c.rare.given, c.rare.reqID = req.body, req.id
	} else if caps, intercept, err = e.advertisement(o, usedContinuations(o, ev)); err != nil {
		return nil, false, err
	}
	var occ *settle.Occurrence // observe-only events have nothing to settle
	if e.info.Interceptable() {
		occ, err = settle.NewValidated(ev, encoded, o.initialState())
		if err != nil {
			return nil, false, settleError(err)
		}
	}
	narrowed := false
	if occ != nil {
		if target, ok := occ.ReplaceWithheld(); ok && grantsReplace(caps, target) {
			caps, narrowed = withoutReplace(caps, target), true
		}
	}
	c.occ, c.base, c.cur, c.curJSON = occ, ev, ev, encoded
	c.stateContent = o.initial != nil && (o.initial.Candidate.Present || len(o.initial.Injections) > 0)
	switch {
	case !intercept: // nothing is advertised
	case req == nil && o.grant == nil && !narrowed && !countsContinuations(e.caps) && e.capsJSON != nil:
		// The configured grant, advertised as it is (advertise returned
		// it), and its encoding.
		c.caps, c.capsJSON = &e.caps, &e.capsJSON
	default:
		var own *ownCaps
		if c.rare != nil {
			own = &c.rare.own
		} else {
			own = new(ownCaps)
		}
		own.caps = caps
		c.caps, c.capsJSON = &own.caps, &own.json
	}
	return c, intercept, nil
}

// originalRequest checks WithOriginalElicitationRequest's event and puts a
// detached copy of it into the initial state; settle.New correlates it with
// the result.
func (o *callOptions) originalRequest(name gen.EventName) error {
	if name != gen.EventUserElicitationResult {
		return inputError("options", "", "elicitation", "an original elicitation request is only for user.elicitation.result")
	}
	if o.origRequest == nil || o.origRequest.UserElicitationRequest == nil {
		return inputError("options", "/type", "elicitation", "the original request is not a user.elicitation.request event")
	}
	info, _ := gen.LookupEvent(gen.EventUserElicitationRequest)
	data, err := validateEvent(info, o.origRequest)
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			ve.Doc = "original elicitation request"
		}
		return err
	}
	var cp gen.Event
	if err := cp.UnmarshalJSON(data); err != nil || cp.UserElicitationRequest == nil {
		return inputError("original elicitation request", "", "schema", "the original request cannot be decoded")
	}
	initial := o.initialState() // a copy: the option's own is shared
	initial.ElicitationRequest = cp.UserElicitationRequest
	o.initial = &initial
	return nil
}

// usedContinuations is how many continuations the turn has used: the
// event's own continuationCount (turn.finish.before), or WithContinuations
// when that says more.
func usedContinuations(o *callOptions, ev *gen.Event) int {
	used := o.continuations
	if ev.TurnFinishBefore != nil {
		if n, ok := settle.Integer(ev.TurnFinishBefore.ContinuationCount); ok && n > int64(used) && n <= math.MaxInt32 {
			used = int(n)
		}
	}
	return used
}

// advertisement computes this call's per-request capabilities: the
// configured ones, narrowed by WithCapabilities and by the continuation
// allowance left after used continuations. intercept is false when the
// occurrence is observation only.
func (e *eventEntry) advertisement(o *callOptions, used int) (gen.Capabilities, bool, error) {
	if o.grant == nil {
		if !e.intercept {
			return gen.Capabilities{}, false, nil
		}
		return advertise(e.caps, used), true, nil
	}
	g := *o.grant
	if err := g.check(e.info, "capabilities", "", inputError); err != nil {
		return gen.Capabilities{}, false, err
	}
	if !g.intercept {
		return gen.Capabilities{}, false, nil
	}
	c := g.capabilities(0)
	if !e.intercept || !narrows(c, e.caps) {
		return gen.Capabilities{}, false, ErrWidening
	}
	return advertise(c, used), true, nil
}

// validateEvent checks the built event against its canonical payload schema
// and returns its encoding.
func validateEvent(info gen.EventInfo, ev *gen.Event) ([]byte, error) {
	data, err := gen.EncodeEvent(ev)
	if err == nil {
		err = validate.Default().Validate(info.PayloadSchema, data)
	}
	if err != nil {
		return nil, inputError("event", "", "schema", "the event does not satisfy its canonical schema").withCause("", err)
	}
	return data, nil
}

func (c *call) run(intercept bool) (*Result, error) {
	defer c.joinUploads()
	chain, owed := c.chain(intercept)
	for i, s := range chain {
		if c.ended() {
			return c.interrupted(nil)
		}
		stop, interrupted := c.intercept(s)
		if interrupted {
			return c.interrupted(s)
		}
		if stop {
			owed = chain[i+1:]
			break
		}
	}
	return c.finish(owed)
}

// chain returns the interceptors the occurrence is delivered to, in
// order, and those owed an observation from the start, and records the
// matching observers; the uploads all of them select start first.
func (c *call) chain(intercept bool) (chain, owed []*subscription) {
	kind, path := eventFacts(c.base)
	chain = c.oneChain[:0]
	for _, s := range c.entry.interceptors {
		if s.accepts(kind, path) {
			chain = append(chain, s)
		}
	}
	if len(chain) == 0 {
		chain = nil
	}
	for _, s := range c.entry.observers {
		if s.accepts(kind, path) {
			c.observers = append(c.observers, s)
		}
	}
	// Every matching interceptor is delivered to (or owed an observation),
	// and every matching observer is notified: the uploads each of them
	// selects start now, one group per subscription, and each delivery
	// waits for its own group only (content-upload.md, Upload before
	// publication). The call joins them all before it returns
	// (joinUploads).
	c.startUploads(chain, c.observers)
	if given, _ := c.given(); !intercept || (c.occ != nil && c.occ.Done() && given == nil) {
		// Observation only, or decision-making ended before it began: the
		// host's initial state is a denial or a flow stop (AHP-COMP-001).
		// A request the host made itself (BeginRequest) is delivered all
		// the same: its state carries what earlier receivers decided, and
		// its response settles on it.
		return nil, chain
	}
	return chain, nil
}

// finish ends a call whose decision-making is over: the settled Result,
// then the observations (explicit observers and the owed uncalled
// interceptors).
func (c *call) finish(owed []*subscription) (*Result, error) {
	if c.ended() {
		return c.interrupted(nil)
	}
	res := c.result()
	// The decision is settled: from here on only observations remain, and
	// they cannot reopen it (base/composition.md, Observers). The end of
	// the call cuts them short, each recorded as an observe diagnostic.
	// When that end is the caller's deadline, the settled result stands:
	// an unreachable observer must not turn it into a denial. An explicit
	// cancellation or Close still interrupts the call, which then returns
	// as any interrupted call does: interruption overrides accepted
	// approval (base/failure.md, AHP-FAIL-002), and after Close the
	// caller's context is live, so the error is the host's only signal.
	c.observe(c.observers, owed)
	if c.cancelled() {
		return c.interrupted(nil)
	}
	res.Diagnostics = c.diagnostics()
	return res, nil
}

// intercept delivers the occurrence to one interceptor and admits its
// response. stop reports that decision-making ends (accepted deny, flow
// stop, fail-closed failure); interrupted that the call's context ended.
func (c *call) intercept(s *subscription) (stop, interrupted bool) {
	d, stop, interrupted := c.prepareDelivery(s)
	if d == nil {
		return stop, interrupted
	}
	defer c.h.timeouts.release(d.dctx)
	raw, err := c.exchange(d.dctx, d)
	if c.ended() {
		return false, true // interruption overrides everything, including a response
	}
	result, te := c.admit(d, raw, err)
	if c.ended() {
		return false, true
	}
	if te != nil {
		return c.failure(s, te), false
	}
	return c.publish(d, result)
}

// delivery is one interception delivery prepared for a subscription: the
// request, the capabilities it advertises and its budget (the
// subscription's timeoutMs within the call), which the caller releases.
type delivery struct {
	s    *subscription
	id   string
	body []byte
	caps *gen.Capabilities // the call's, or a narrowing of its own; never modified
	dctx *deliveryContext
}

// prepareDelivery builds the delivery of the occurrence to s. A nil
// delivery means there is none: either the call ended (interrupted) or the
// delivery failed before it was sent (its failure is recorded, stop
// reports the policy's verdict).
func (c *call) prepareDelivery(s *subscription) (d *delivery, stop, interrupted bool) {
	// The uploads of s's selection, bounded by the call and by their own
	// upload.timeoutMs; s's timeoutMs starts after them.
	c.awaitUploads(c.ctx, s)
	if c.ended() {
		return nil, false, true
	}
	if c.uploadFailed(s) { // a body it selected cannot be published
		return nil, c.failure(s, uploadError()), false
	}
	ev := c.view(s)
	if p := c.h.cfg.Preparer; p != nil {
		pctx := c.h.timeouts.start(c.ctx, 0)
		pe, reason := prepare(pctx, p, s, gen.ModeIntercept, ev)
		c.h.timeouts.release(pctx)
		if c.ended() {
			return nil, false, true
		}
		if reason != "" {
			return nil, c.failure(s, &transport.Error{Code: transport.CodePreparation, Stage: transport.StagePrepare, Reason: reason}), false
		}
		ev = pe
	}
	// This delivery's advertisement: the call's, unless the target now
	// holds withheld text (an accepted merge brought it in, or this
	// receiver's content selection withheld it).
	// A narrowed one is allocated (the call's own is never modified).
	caps, capsJSON := c.caps, c.capsJSON
	target, withheld := c.occ.ReplaceWithheld()
	if !withheld && ev != c.cur {
		target, withheld = settle.ReplaceWithheldIn(ev)
	}
	if withheld && grantsReplace(*c.caps, target) {
		var own []byte
		narrowed := withoutReplace(*c.caps, target)
		caps, capsJSON = &narrowed, &own
	}
	if answerWithheld(c.cur, ev) && grantsTarget(*caps, gen.ModifyTargetContent) {
		// An answer object the receiver does not see in full is not its
		// to modify (interaction-payloads: modify(content) "requires an
		// accepted form result and body selection").
		var own []byte
		narrowed := withoutTarget(*caps, gen.ModifyTargetContent)
		caps, capsJSON = &narrowed, &own
	}
	if requestWithheld(c.cur, ev) && slices.Contains(caps.Effects, gen.EffectFamilyReturn) {
		// An answer depends on the form the request body carries (message,
		// requestedSchema): a receiver that does not see it is not offered
		// return (metadata and omit selections authorize no body-dependent
		// effect).
		var own []byte
		narrowed := withoutEffect(*caps, gen.EffectFamilyReturn)
		caps, capsJSON = &narrowed, &own
	}
	id := ev.ID()
	given, reqID := c.given()
	if reqID != "" {
		id = reqID
	}
	var body []byte
	if c.givenFits(s, ev, capsJSON) {
		body = given // the canonical request as the host gave it
	} else {
		var evJSON []byte
		if ev == c.cur {
			evJSON = c.curJSON
		}
		var err error
		if body, evJSON, err = c.interceptBody(id, ev, evJSON, caps, capsJSON, s); err != nil {
			return nil, c.failure(s, &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageSend, Reason: "encode"}), false
		}
		if ev == c.cur && c.curJSON == nil {
			c.curJSON = evJSON // encoded within body, read only: later bodies copy it
		}
	}
	var dctx *deliveryContext
	if c.delivered {
		d, dctx = new(delivery), new(deliveryContext)
	} else {
		// The first delivery, without an allocation.
		d, dctx, c.delivered = &c.oneDelivery, &c.oneDeliveryCtx, true
	}
	c.h.timeouts.startIn(dctx, c.ctx, s.timeout)
	*d = delivery{s: s, id: id, body: body, caps: caps, dctx: dctx}
	return d, false, false
}

// givenFits reports whether the canonical request the call was begun from
// is exactly what s is to receive: nothing was published yet, s's view is
// the event itself (no projection, native dropping, attachment reference
// or preparation changed it), the call's capabilities are advertised
// unchanged, and the state needs no projection for s.
func (c *call) givenFits(s *subscription, ev *gen.Event, capsJSON *[]byte) bool {
	if given, _ := c.given(); given == nil || c.applied || ev != c.cur || c.cur != c.base || capsJSON != c.capsJSON {
		return false
	}
	if !c.stateContent {
		return true
	}
	own, err := c.requestState(s, ev)
	if err != nil {
		return false
	}
	plain, err := c.occ.RequestStateJSON()
	return err == nil && string(own) == string(plain)
}

// exchange sends d's request over its subscription's transport and waits
// for the response, within ctx.
func (c *call) exchange(ctx context.Context, d *delivery) ([]byte, error) {
	return d.s.b.tr.Exchange(ctx, transport.Message{BackendID: d.s.b.id, Method: jsonrpc.MethodIntercept, ID: jsonrpc.StringID(d.id), Body: d.body})
}

// admit checks the outcome of an exchange of d: the transport's error, the
// delivery's deadline, the envelope, correlation and canonical shape, and
// the references. It returns the admitted response, or the failure to
// charge to d's subscription. It publishes nothing.
func (c *call) admit(d *delivery, raw []byte, err error) (*gen.InterceptResponseResult, *transport.Error) {
	dctx := d.dctx
	if err != nil {
		return nil, classify(err, dctx)
	}
	if dctx.Err() != nil { // a response after the deadline is ignored, unread
		return nil, &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: transport.StageAdmit, Reason: "late_response"}
	}
	var result *gen.InterceptResponseResult
	var ferr *transport.Error
	if isNoEffectAnswer(raw, d.id) { // decodeIntercept's shortcut, without an allocation
		result = &noEffectResult
	} else {
		result, ferr = decodeInterceptFull(dctx, raw, d.id)
	}
	if ferr != nil {
		return nil, ferr
	}
	if !c.canonicalRefs(d.s, result) { // a reference it was never given
		return nil, &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageAdmit, Reason: "reserved_reference"}
	}
	c.canonicalGaps(result)
	if dctx.Err() != nil { // the deadline passed while the response was read
		return nil, &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: transport.StageAdmit, Reason: "late_response"}
	}
	return result, nil
}

// publish applies an admitted response of d atomically and commits it:
// the settlement engine of every call. stop and interrupted are as for
// intercept.
func (c *call) publish(d *delivery, result *gen.InterceptResponseResult) (stop, interrupted bool) {
	s, dctx := d.s, d.dctx
	if c.offered == nil {
		c.offered = c.oneOffered[:0]
	}
	c.offered = append(c.offered, s)
	var opts settle.ApplyOptions
	if returns(result) { // only a returned result is recorded with provenance
		// The supplier is the backend of the host's own registration (the
		// one this delivery authenticated to), never a field of the event.
		opts.Provenance, _ = json.Marshal(struct {
			RequestID string `json:"requestId"`
			Kind      string `json:"kind"`
			BackendID string `json:"backendId"`
		}{d.id, "hook", s.b.id})
	}
	if err := c.occ.ApplyContext(dctx, *d.caps, result, opts); err != nil {
		if c.ended() {
			return false, true
		}
		var rj *settle.Rejection
		if !errors.As(err, &rj) { // the deadline passed before publication
			return c.failure(s, &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: transport.StageAdmit, Reason: "late_response"}), false
		}
		return c.failure(s, &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageAdmit, Reason: rj.Reason}), false
	}
	c.applied = true
	if returns(result) || injects(result) {
		c.stateContent = true
	}
	if modifies(result) {
		cur, err := c.occ.Event()
		if err != nil {
			return c.failure(s, &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageAdmit, Reason: "effective_event"}), false
		}
		c.cur, c.curJSON = cur, nil
	}
	return c.occ.Done(), false
}

// interceptBody encodes the hooks/intercept request for ev with caps, as
// gen.EncodeInterceptRequest would, splicing in the encodings of the event
// (evJSON, when known) and of caps (*capsJSON, encoded and kept there when
// nil). The state's injections are projected for s like the event. It
// returns the body and the event's encoding: evJSON, or when that is nil
// the encoding it made, within the body (capped: read only).
func (c *call) interceptBody(id string, ev *gen.Event, evJSON []byte, caps *gen.Capabilities, capsJSON *[]byte, s *subscription) (body, encoded []byte, err error) {
	if *capsJSON == nil {
		if *capsJSON, err = caps.MarshalJSON(); err != nil {
			return nil, nil, err
		}
	}
	// The state projected for s when it may carry content; otherwise the
	// committed state, appended in place (stateRoom leaves room for the
	// common ones).
	var state []byte
	stateLen := stateRoom
	if c.stateContent {
		if state, err = c.requestState(s, ev); err != nil {
			return nil, nil, err
		}
		stateLen = len(state)
	}
	var reqID []byte // the id's JSON string when it needs escapes; otherwise it is quoted as it is
	idLen := len(id) + 2
	if !plainID(id) {
		reqID = gen.JSONRPCIDFromString(id)
		idLen = len(reqID)
	}
	headLen := len(bodyHead) + idLen + len(bodyParams) + len(bodyEvent)
	tailLen := len(bodyCaps) + len(*capsJSON) + len(bodyState) + stateLen + len(bodyTail)
	// The body is built around the event's encoding where it is encoded:
	// the head in front, the rest behind; the encoding itself is not
	// written. That is a new encoding framed for the body, or the call's
	// room when it holds evJSON and fits; otherwise evJSON is copied into a
	// new buffer.
	var b []byte
	inPlace := false
	switch {
	case evJSON == nil && headLen <= maxFramedRoom && tailLen <= maxFramedRoom:
		framed, err := gen.EncodeEventFramed(ev, headLen, tailLen)
		if err != nil {
			return nil, nil, err
		}
		evJSON = framed[headLen:len(framed):len(framed)]
		b, inPlace = framed[:0], true
	case evJSON == nil:
		if evJSON, err = gen.EncodeEvent(ev); err != nil {
			return nil, nil, err
		}
		b = make([]byte, 0, headLen+len(evJSON)+tailLen)
	case c.fitsRoom(evJSON, headLen, tailLen):
		front := len(c.room) - len(evJSON)
		b, c.room, inPlace = c.room[front-headLen:front-headLen], nil, true // taken: no later body writes into it
	default:
		b = make([]byte, 0, headLen+len(evJSON)+tailLen)
	}
	b = append(b, bodyHead...)
	if reqID == nil {
		b = append(b, '"')
		b = append(b, id...)
		b = append(b, '"')
	} else {
		b = append(b, reqID...)
	}
	b = append(b, bodyParams...)
	b = append(b, bodyEvent...)
	if inPlace {
		b = b[:len(b)+len(evJSON)] // the encoding, where it is
	} else {
		b = append(b, evJSON...)
	}
	b = append(b, bodyCaps...)
	b = append(b, *capsJSON...)
	b = append(b, bodyState...)
	if state != nil {
		b = append(b, state...)
	} else if b, err = c.occ.AppendRequestStateJSON(b); err != nil {
		return nil, nil, err
	}
	b = append(b, bodyTail...)
	return b[:len(b):len(b)], evJSON, nil // capped, as a notification's body
}

// bodyRoom is the room start leaves around the encoding of a call's event
// for the first request body built from it (interceptBody): in front, the
// envelope head for the event's id; behind, the configured capabilities
// and a state of stateRoom bytes. For an event that is observed and not
// intercepted, it is the room of a notification (observeBody). It is none
// (0, 0) when the call is not expected to build a body from the encoding:
// an event neither intercepted nor observed, a call begun from a canonical
// request (its request is the body), an id that needs escapes or is over
// maxRoomID bytes.
func bodyRoom(e *eventEntry, o *callOptions, ev *gen.Event, req *beginRequest) (head, tail int) {
	if req != nil {
		return 0, 0
	}
	if !e.intercept || !e.info.Interceptable() || (o.grant != nil && !o.grant.intercept) {
		if len(e.observers) > 0 || len(e.interceptors) > 0 { // observed only: the first notification's
			return len(observeHead), len(observeTail)
		}
		return 0, 0
	}
	id := ev.ID()
	if len(id) > maxRoomID || !plainID(id) {
		return 0, 0
	}
	return len(bodyHead) + len(id) + 2 + len(bodyParams) + len(bodyEvent),
		len(bodyCaps) + len(e.capsJSON) + len(bodyState) + stateRoom + len(bodyTail)
}

// maxRoomID bounds the id bodyRoom leaves room for (far below what
// gen.EncodeEventFramed admits).
const maxRoomID = 1 << 10

// maxFramedRoom bounds the head and the tail interceptBody frames a new
// encoding with (gen.EncodeEventFramed admits up to 1 MiB); beyond it, the
// encoding is copied.
const maxFramedRoom = 64 << 10

// fitsRoom reports whether a body of headLen bytes, evJSON and tailLen
// bytes can be built in the call's room: evJSON is the encoding the room
// ends with (curJSON, not re-encoded since), with at least headLen bytes
// in front of it and tailLen behind.
func (c *call) fitsRoom(evJSON []byte, headLen, tailLen int) bool {
	n := len(evJSON)
	if c.room == nil || n == 0 || n > len(c.room) || unsafe.SliceData(evJSON) != &c.room[len(c.room)-n] {
		return false
	}
	return len(c.room)-n >= headLen && cap(c.room)-len(c.room) >= tailLen
}

// stateRoom is the room interceptBody leaves for a state it appends in
// place: the encoding of a state without candidate, injections or
// instructions fits (TestInterceptBodyMatchesGeneratedEncoder).
const stateRoom = 64

// plainID reports whether id is written as a JSON string by quoting it
// alone, as gen.JSONRPCIDFromString writes it: printable ASCII without '"'
// or '\\'.
func plainID(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// requestState encodes the params.state of a request to s, whose view of
// the event is view: the committed state, with the context messages that
// earlier interceptors injected and the candidate (returned by an earlier
// interceptor or supplied by the host) projected for s's content selection
// (and its attachment references), so that content a receiver does not
// select cannot reach it as a copy in the state (AHP-CONTENT-002: no
// duplicate-content bypass). A candidate elicitation answer reaches a
// receiver that does not see the request body with its action only. A
// candidate that cannot be projected is an error: it is not sent as it is.
func (c *call) requestState(s *subscription, view *gen.Event) ([]byte, error) {
	if s != nil && c.stateContent {
		if st := c.occ.RequestState(); len(st.Injections) > 0 || st.Candidate.Valid {
			pr := &projector{pol: s.pol}
			w := pr.rewriter()
			for i := range st.Injections {
				if v, ok := w.messages(st.Injections[i].Value); ok {
					st.Injections[i].Value = v
				}
			}
			var cand json.Marshaler
			if st.Candidate.Valid && requestWithheld(c.cur, view) {
				var a gen.MCPElicitationElicitResult
				if err := a.UnmarshalJSON(st.Candidate.Value.Value); err != nil {
					return nil, err
				}
				cand = gen.MCPElicitationElicitResult{Action: a.Action}
			} else if st.Candidate.Valid {
				v, ok, err := walkCandidate(w, c.entry.info.Name, st.Candidate.Value.Value)
				if err != nil {
					return nil, err
				}
				if ok {
					cand = v
				}
			}
			pr.finish()
			if cand != nil {
				v, err := cand.MarshalJSON()
				if err != nil {
					return nil, err
				}
				st.Candidate.Value.Value = v
			}
			if c.att != nil {
				w := c.attachRewriter(s)
				for i := range st.Injections {
					if v, ok := w.messages(st.Injections[i].Value); ok {
						st.Injections[i].Value = v
					}
				}
				if st.Candidate.Valid {
					v, ok, err := walkCandidate(w, c.entry.info.Name, st.Candidate.Value.Value)
					if err != nil {
						return nil, err
					}
					if ok {
						b, err := v.MarshalJSON()
						if err != nil {
							return nil, err
						}
						st.Candidate.Value.Value = b
					}
				}
			}
			return st.MarshalJSON()
		}
	}
	return c.occ.RequestStateJSON()
}

// The fixed parts of a hooks/intercept request body, in the order
// gen.EncodeInterceptRequest writes them.
const (
	bodyHead   = `{"jsonrpc":"2.0","id":`
	bodyParams = `,"method":"hooks/intercept","params":{"protocolVersion":"` + gen.ProtocolVersion + `"`
	bodyEvent  = `,"event":`
	bodyCaps   = `,"capabilities":`
	bodyState  = `,"state":`
	bodyTail   = `}}`
)

// failure records an operational failure of s and applies its policy once:
// fail-open continues, fail-closed stops with a synthetic denial.
func (c *call) failure(s *subscription, te *transport.Error) (stop bool) {
	d := Diagnostic{Code: te.Code, BackendID: s.b.id, SubscriptionIndex: s.index, Mode: gen.ModeIntercept, Stage: te.Stage, FailurePolicy: s.policy, Reason: te.Reason, Status: te.Status}
	if s.policy == FailClosed {
		d.SyntheticDenial = true
		c.synthetic = true
	}
	c.record(d)
	return s.policy == FailClosed
}

func (c *call) record(d Diagnostic) {
	if c.diags == nil {
		c.diags = new(diagnostics)
		c.diags.list = c.diags.first[:0]
	}
	c.diags.list = append(c.diags.list, d)
	c.h.log.Warn("ahp: delivery failed", "event", string(c.entry.info.Name), "code", string(d.Code), "backend", d.BackendID,
		"subscription", d.SubscriptionIndex, "mode", string(d.Mode), "downgraded", d.Downgraded, "stage", string(d.Stage),
		"policy", string(d.FailurePolicy), "synthetic_denial", d.SyntheticDenial, "reason", d.Reason, "status", d.Status)
}

// classify maps an exchange error to a diagnostic. A context expiry of the
// delivery's own context (its subscription timeout) is deadline_exceeded;
// errors of custom transports that carry no *transport.Error are transport
// failures.
func classify(err error, dctx context.Context) *transport.Error {
	if errors.Is(dctx.Err(), context.DeadlineExceeded) {
		stage := transport.StageReceive
		var te *transport.Error
		if errors.As(err, &te) {
			stage = te.Stage
		}
		return &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: stage, Reason: "timeout"}
	}
	var te *transport.Error
	if errors.As(err, &te) {
		cp := *te
		cp.Err = nil
		return &cp
	}
	return &transport.Error{Code: transport.CodeTransport, Stage: transport.StageSend, Reason: "transport_error"}
}

// decodeIntercept validates a response envelope, its correlation and its
// canonical shape. A correlated, well-formed JSON-RPC error is remote_rpc
// (only its numeric code is kept); anything else malformed, including a
// member name repeated at any depth, is a protocol rejection. The work is
// linear in the size of raw and stops once ctx (the delivery's deadline)
// ends, which is a deadline failure.
func decodeIntercept(ctx context.Context, raw []byte, id string) (*gen.InterceptResponseResult, *transport.Error) {
	if isNoEffectAnswer(raw, id) {
		return &gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}, nil
	}
	return decodeInterceptFull(ctx, raw, id)
}

// decodeInterceptFull is decodeIntercept without the no-effect shortcut.
func decodeInterceptFull(ctx context.Context, raw []byte, id string) (*gen.InterceptResponseResult, *transport.Error) {
	reject := func(reason string) *transport.Error {
		return &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageReceive, Reason: reason}
	}
	late := &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: transport.StageReceive, Reason: "timeout"}
	env, err := jsonrpc.ClassifyContext(ctx, raw)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, jsonrpc.ErrInvalidRequest) && !errors.Is(err, jsonrpc.ErrParse) {
			return nil, late
		}
		if errors.Is(err, jsonrpc.ErrParse) {
			return nil, reject("malformed_json")
		}
		return nil, reject("invalid_envelope")
	}
	want := jsonrpc.StringID(id)
	switch env.Kind {
	case jsonrpc.KindErrorResponse:
		if !env.ID.Equal(want) {
			return nil, reject("id_mismatch")
		}
		e, err := env.DecodeError()
		if err != nil {
			return nil, reject("invalid_error")
		}
		return nil, &transport.Error{Code: transport.CodeRemoteRPC, Stage: transport.StageReceive, Reason: "jsonrpc_error", Status: e.Code}
	case jsonrpc.KindResponse:
		if !env.ID.Equal(want) {
			return nil, reject("id_mismatch")
		}
	default:
		return nil, reject("not_response")
	}
	if ctx.Err() != nil {
		return nil, late
	}
	// Canonical validation that bounds its work by size, then the typed
	// decode, without another pass for repeated names: both observe ctx.
	resp, err := gen.ParseInterceptResponseContext(ctx, raw)
	if err != nil {
		if ctx.Err() != nil {
			return nil, late
		}
		return nil, reject("schema")
	}
	if ctx.Err() != nil {
		return nil, late
	}
	if resp.Result.Effects == nil {
		return nil, reject("missing_effects")
	}
	return &resp.Result, nil
}

// The canonical encoding of a correlated answer without effects, around its
// id: what package server (and gen.EncodeInterceptResponse) writes for the
// most common answer.
const (
	noEffectPrefix = `{"jsonrpc":"2.0","id":`
	noEffectSuffix = `,"result":{"protocolVersion":"` + gen.ProtocolVersion + `","effects":[]}}`
)

// noEffectResult is the result of the canonical no-effect answer
// (isNoEffectAnswer), shared by every delivery that receives one. It is
// read, never written: admission (canonicalRefs, canonicalGaps), an
// Invocation's retained response (Response encodes it) and publication
// (settle copies the effects) only read a result
// (TestNoEffectResultShared).
var noEffectResult = gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}

// isNoEffectAnswer reports whether raw is exactly the canonical no-effect
// answer to the request whose event (and request) id is id. Such a
// response is valid whatever the id, as long as the id is a valid request
// id, which ours is: the envelope, the correlation and the schema checks of
// decodeIntercept would all pass, so they are skipped
// (TestNoEffectAnswerShortcut checks the equivalence).
func isNoEffectAnswer(raw []byte, id string) bool {
	if id == "" || len(raw) < len(noEffectPrefix)+len(id)+2+len(noEffectSuffix) || string(raw[:len(noEffectPrefix)]) != noEffectPrefix ||
		string(raw[len(raw)-len(noEffectSuffix):]) != noEffectSuffix {
		return false
	}
	quoted := raw[len(noEffectPrefix) : len(raw)-len(noEffectSuffix)]
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return false
	}
	body := quoted[1 : len(quoted)-1]
	// The common case: an id without bytes that JSON escapes, written as
	// it is. Anything else is left to the full path.
	if string(body) != id {
		return false
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// flowCaps is the flow member of the call's advertisement (nil without
// one).
func (c *call) flowCaps() *gen.CapabilitiesFlow {
	if c.caps == nil {
		return nil
	}
	return c.caps.Flow
}

// result assembles the settled Result.
func (c *call) result() *Result {
	var st settle.State
	if c.occ != nil {
		st = c.occ.State()
	}
	r := &Result{
		Permission:             st.Permission,
		Input:                  st.Input,
		Candidate:              Candidate{Present: st.Candidate.Present, Value: st.Candidate.Value, Provenance: st.Candidate.Provenance},
		Flow:                   st.Flow,
		StopReason:             st.StopReason,
		Instructions:           st.Instructions,
		Injections:             st.Injections,
		Messages:               st.Messages,
		Targets:                st.Targets,
		ContinueInstruction:    st.ContinueInstruction,
		ContinuationCount:      st.ContinuationCount,
		RemainingContinuations: st.RemainingContinuations,
		event:                  c.cur,
	}
	if f := c.flowCaps(); f != nil && f.RemainingContinuations != nil && f.ContinuationCount != nil {
		// The counters after settlement follow from the advertised ones,
		// also when no response was admitted (the occurrence learns them
		// only at an admission): unchanged, or one step consumed by a
		// continuation.
		remaining, ok1 := settle.Integer(*f.RemainingContinuations)
		count, ok2 := settle.Integer(*f.ContinuationCount)
		if ok1 && ok2 && remaining <= math.MaxInt32 && count <= math.MaxInt32 {
			r.RemainingContinuations, r.ContinuationCount = int(remaining), int(count)
			if r.Flow == gen.FlowStateContinue {
				r.ContinuationCount++
				if r.RemainingContinuations > 0 {
					r.RemainingContinuations--
				}
			}
		}
	}
	if c.att != nil {
		r.attachments = c.att.result(c.cur)
	}
	if r.Permission == "" {
		r.Permission = gen.PermissionNone
	}
	if r.Flow == "" {
		r.Flow = gen.FlowStateNone
	}
	for _, a := range st.Accepted {
		if a.Index < 0 || a.Index >= len(c.offered) {
			continue
		}
		s := c.offered[a.Index]
		if r.Accepted == nil {
			r.Accepted = r.oneAccepted[:0]
		}
		r.Accepted = append(r.Accepted, Accepted{BackendID: s.b.id, SubscriptionIndex: s.index, Effects: a.Effects})
	}
	if c.synthetic {
		r.Permission = gen.PermissionDeny
		r.SyntheticDenial = true
	}
	if r.Permission == gen.PermissionDeny || r.Flow == gen.FlowStateStop {
		// Deny, stop and fail-closed prevent a candidate from bypassing the
		// settled decision (base/composition.md).
		r.Candidate = Candidate{}
	}
	return r
}

// interrupted ends a call whose context ended: no further deliveries, no
// owed observations, and a Result that never authorizes execution, returned
// with an error wrapping the cause.
func (c *call) interrupted(inflight *subscription) (*Result, error) {
	cause := context.Cause(c.ctx)
	if c.h.closed.Load() {
		cause = ErrClosed
	}
	code := c.endCode()
	if inflight != nil {
		c.record(Diagnostic{Code: code, BackendID: inflight.b.id, SubscriptionIndex: inflight.index, Mode: gen.ModeIntercept, Stage: transport.StageReceive, FailurePolicy: inflight.policy, Reason: "interrupted"})
	}
	r := c.result()
	r.Interrupted = true
	r.Permission = gen.PermissionDeny
	r.Candidate = Candidate{}
	r.Diagnostics = c.diagnostics()
	name := c.entry.info.Name
	if errors.Is(cause, ErrClosed) {
		return r, fmt.Errorf("hooks: %s interrupted: %w", name, ErrClosed)
	}
	if err := c.ctx.Err(); err != nil {
		if cause != nil && cause != err {
			// A cause of its own (Invocation.Cancel's ErrCancelled): both match.
			return r, fmt.Errorf("hooks: %s interrupted: %w: %w", name, err, cause)
		}
		return r, fmt.Errorf("hooks: %s interrupted: %w", name, err)
	}
	return r, fmt.Errorf("hooks: %s interrupted: %w", name, cause)
}

// ended reports whether the call must stop: the caller's context ended or
// the Hooks is closing.
func (c *call) ended() bool { return c.ctx.Err() != nil || c.h.closed.Load() }

// cancelled reports whether the call was cancelled by its caller or ended
// by Close, as opposed to running out of time (or not ending at all).
func (c *call) cancelled() bool {
	if c.h.closed.Load() {
		return true
	}
	err := c.ctx.Err()
	return err != nil && !errors.Is(err, context.DeadlineExceeded)
}

// endCode is the diagnostic code of a delivery cut short because the call
// ended: deadline_exceeded when the caller's deadline passed, cancelled when
// the caller cancelled or the Hooks closed.
func (c *call) endCode() transport.Code {
	if !c.h.closed.Load() && errors.Is(c.ctx.Err(), context.DeadlineExceeded) {
		return transport.CodeDeadlineExceeded
	}
	return transport.CodeCancelled
}

// observe notifies observers (explicit observe subscriptions) and the owed
// uncalled interceptors, concurrently, with the settled effective event,
// and waits for all of them. Failures are recorded, never acted on.
//
// Each observation, its preparation included, is bounded by
// Config.ObserveTimeout; one owed to an uncalled interceptor is also bounded
// by that subscription's timeoutMs from its dispatch on (the preparation has
// its own budget, content-upload.md). With attachments, the preparation
// includes waiting for the subscription's own upload group, started before
// interception: an observation whose budget runs out while it waits is
// recorded (deadline_exceeded at the prepare stage) and not sent, and one
// whose upload failed is sent with a gap and recorded. All of them are bounded by the
// caller's context and Close: once the call has ended, no observation is
// sent and those in flight are cancelled (recorded with reason
// interrupted). observe joins every delivery, so it returns as soon as the
// transports (and the Preparer) have given them up.
func (c *call) observe(observers, owed []*subscription) {
	type target struct {
		s          *subscription
		downgraded bool
	}
	var targets []target
	for _, s := range observers {
		targets = append(targets, target{s, false})
	}
	for _, s := range owed {
		targets = append(targets, target{s, true})
	}
	if len(targets) == 0 {
		return
	}
	// One view and one body per distinct view: subscriptions with the same
	// native choice and the same content selection see the same bytes.
	// Made up front, serially: the goroutines only read them. A view that
	// cannot be encoded fails the observations of that view alone. With
	// attachments, each observation has a view of its own (its receiver's
	// references), made once its own uploads have ended.
	type view struct {
		ev   *gen.Event
		body []byte
	}
	// inRoom: the body may be built in the call's room (serially only).
	encode := func(ev *gen.Event, inRoom bool) *view {
		b, err := c.observeBody(ev, inRoom)
		if err != nil {
			return nil
		}
		return &view{ev: ev, body: b}
	}
	own := make([]*view, len(targets))
	diags := make([]*Diagnostic, len(targets))
	var gaps []*Diagnostic // per target, the failed upload it is delivered without
	fail := func(i int, te *transport.Error) {
		t := targets[i]
		diags[i] = &Diagnostic{Code: te.Code, BackendID: t.s.b.id, SubscriptionIndex: t.s.index, Mode: gen.ModeObserve, Downgraded: t.downgraded, Stage: te.Stage, Reason: te.Reason, Status: te.Status}
	}
	encodeError := &transport.Error{Code: transport.CodeProtocolRejection, Stage: transport.StageSend, Reason: "encode"}
	if c.att == nil {
		views := map[viewKey]*view{}
		for i, t := range targets {
			k := viewKey{native: t.s.native, content: t.s.pol.key}
			v, made := views[k]
			if !made {
				v = encode(c.view(t.s), true)
				views[k] = v // nil: this view cannot be encoded
			}
			if v == nil {
				fail(i, encodeError)
			}
			own[i] = v
		}
	} else {
		gaps = make([]*Diagnostic, len(targets))
	}
	p := c.h.cfg.Preparer
	deliver := func(i int, t target) {
		if c.att == nil && own[i] == nil {
			return // failed to encode
		}
		// cut records an observation the end of the call cut short.
		cut := func(stage transport.Stage) {
			fail(i, &transport.Error{Code: c.endCode(), Stage: stage, Reason: "interrupted"})
		}
		if c.ended() {
			cut(transport.StageSend)
			return
		}
		// An owed observation's timeoutMs starts at its dispatch, after any
		// preparation and upload (which ObserveTimeout alone bounds).
		timeout := c.h.cfg.ObserveTimeout
		owedTimeout := t.downgraded && t.s.timeout > 0 && t.s.timeout < timeout
		prepares := p != nil || c.att != nil
		if owedTimeout && !prepares {
			timeout = t.s.timeout
		}
		octx := c.h.timeouts.start(c.ctx, timeout)
		defer c.h.timeouts.release(octx)
		if c.att != nil {
			// Its own upload group only, within this observation's budget.
			c.awaitUploads(octx, t.s)
			if c.ended() {
				cut(transport.StagePrepare)
				return
			}
			if octx.Err() != nil { // the budget ran out waiting: none is left to send with
				fail(i, &transport.Error{Code: transport.CodeDeadlineExceeded, Stage: transport.StagePrepare, Reason: "upload"})
				return
			}
			if c.uploadFailed(t.s) { // delivered with a gap; recorded, never acted on
				te := uploadError()
				gaps[i] = &Diagnostic{Code: te.Code, BackendID: t.s.b.id, SubscriptionIndex: t.s.index, Mode: gen.ModeObserve, Downgraded: t.downgraded, Stage: te.Stage, Reason: te.Reason}
			}
			if own[i] = encode(c.view(t.s), false); own[i] == nil {
				fail(i, encodeError)
				return
			}
		}
		body := own[i].body
		if p != nil {
			pe, reason := prepare(octx, p, t.s, gen.ModeObserve, own[i].ev)
			if reason == "preparation" && !octx.timedOut() && c.ended() {
				cut(transport.StagePrepare) // the preparation gave up because the call ended
				return
			}
			if reason != "" {
				fail(i, &transport.Error{Code: transport.CodePreparation, Stage: transport.StagePrepare, Reason: reason})
				return
			}
			if c.ended() { // while preparing: nothing is sent after the call's end
				cut(transport.StagePrepare)
				return
			}
			b, err := gen.EncodeObserveNotification(&gen.ObserveNotification{Params: gen.ObserveNotificationParams{ProtocolVersion: gen.ProtocolVersion, Event: *pe}})
			if err != nil {
				fail(i, &transport.Error{Code: transport.CodePreparation, Stage: transport.StagePrepare, Reason: "encode"})
				return
			}
			body = b
		}
		dctx := octx
		if owedTimeout && prepares {
			dctx = c.h.timeouts.start(octx, t.s.timeout)
			defer c.h.timeouts.release(dctx)
		}
		err := t.s.b.tr.Notify(dctx, transport.Message{BackendID: t.s.b.id, Method: jsonrpc.MethodObserve, Body: body})
		switch {
		case err == nil:
		case isContextError(err) && !dctx.timedOut() && c.ended():
			// Given up because the call ended; a failure of its own (an
			// HTTP 500 just before the end) is recorded as that failure.
			stage := transport.StageReceive
			var te *transport.Error
			if errors.As(err, &te) && te.Stage != "" {
				stage = te.Stage
			}
			cut(stage)
		default:
			fail(i, classify(err, dctx))
		}
	}
	if len(targets) == 1 {
		deliver(0, targets[0])
	} else {
		var wg sync.WaitGroup
		for i, t := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				deliver(i, t)
			}()
		}
		wg.Wait()
	}
	for _, d := range gaps {
		if d != nil {
			c.record(*d)
		}
	}
	for _, d := range diags {
		if d != nil {
			c.record(*d)
		}
	}
}

// answerWithheld reports whether view, a receiver's view of the
// user.elicitation.result occurrence cur, withholds the result body that
// cur carries.
func answerWithheld(cur, view *gen.Event) bool {
	if view == cur || cur.UserElicitationResult == nil || view.UserElicitationResult == nil {
		return false
	}
	full, seen := cur.UserElicitationResult.Elicitation.Result, view.UserElicitationResult.Elicitation.Result
	return full != nil && full.Body != nil && (seen == nil || seen.Body == nil)
}

// requestWithheld reports whether view, a receiver's view of the
// user.elicitation.request occurrence cur, withholds the request body that
// cur carries.
func requestWithheld(cur, view *gen.Event) bool {
	if view == cur || cur.UserElicitationRequest == nil || view.UserElicitationRequest == nil {
		return false
	}
	full, seen := cur.UserElicitationRequest.Elicitation.Request, view.UserElicitationRequest.Elicitation.Request
	return full != nil && full.Body != nil && (seen == nil || seen.Body == nil)
}

// viewKey identifies the view a subscription gets of one effective event.
type viewKey struct {
	native  bool
	content string // contentPolicy.key
}

// view is the event as s may see it: without native unless s includes
// it, and with every content slot projected for s's content selection.
// It shares what it does not change with c.cur; neither is modified.
func (c *call) view(s *subscription) *gen.Event {
	ev := c.cur
	if !s.native {
		ev = withoutNative(ev)
	}
	if c.cur == c.base && !c.content {
		return c.withAttachments(ev, s) // no content slot to project
	}
	return c.withAttachments(project(ev, s.pol), s)
}

// prepare runs the host's Preparer on a private copy of view and checks
// that its result discloses no more content than view, and no native
// member (at any depth) when s does not include native. reason is empty on
// success, otherwise the diagnostic reason of the preparation failure.
func prepare(ctx context.Context, p Preparer, s *subscription, mode gen.Mode, view *gen.Event) (*gen.Event, string) {
	cp, err := copyEvent(view)
	if err != nil {
		return nil, "encode"
	}
	pe, err := p.Prepare(ctx, Delivery{BackendID: s.b.id, SubscriptionIndex: s.index, Mode: mode, Content: s.content, Upload: s.upload, Event: cp})
	if err != nil || pe == nil {
		return nil, "preparation"
	}
	if !preparedNarrows(view, pe) || (!s.native && withoutNative(pe) != pe) {
		return nil, "widening"
	}
	return pe, ""
}

// copyEvent returns a deep copy of ev, through its encoding.
func copyEvent(ev *gen.Event) (*gen.Event, error) {
	b, err := gen.EncodeEvent(ev)
	if err != nil {
		return nil, err
	}
	out := new(gen.Event)
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return out, nil
}

// observeBody encodes the hooks/observe notification of ev, as
// gen.EncodeObserveNotification would. The call's event is spliced in from
// its encoding (curJSON), in the call's room when inRoom allows it and the
// room fits (see interceptBody; only while no other goroutine of the call
// runs), otherwise copied into a new buffer; any other view is encoded.
func (c *call) observeBody(ev *gen.Event, inRoom bool) ([]byte, error) {
	evJSON := c.curJSON
	if ev != c.cur || evJSON == nil {
		return gen.EncodeObserveNotification(&gen.ObserveNotification{Params: gen.ObserveNotificationParams{ProtocolVersion: gen.ProtocolVersion, Event: *ev}})
	}
	var b []byte
	inPlace := inRoom && c.fitsRoom(evJSON, len(observeHead), len(observeTail))
	if inPlace {
		front := len(c.room) - len(evJSON)
		b, c.room = c.room[front-len(observeHead):front-len(observeHead)], nil // taken: no later body writes into it
	} else {
		b = make([]byte, 0, len(observeHead)+len(evJSON)+len(observeTail))
	}
	b = append(b, observeHead...)
	if inPlace {
		b = b[:len(b)+len(evJSON)] // the encoding, where it is
	} else {
		b = append(b, evJSON...)
	}
	// Capped: the body goes to every observer of its view at once, and a
	// transport appending to it (a frame's newline) must get a copy, not
	// write into the room's spare capacity that the other observers'
	// bodies share (TestSharedNotificationHasNoSpareCapacity).
	b = append(b, observeTail...)
	return b[:len(b):len(b)], nil
}

// The hooks/observe notification around its event, as
// gen.EncodeObserveNotification writes it (TestObserveBodyMatchesGeneratedEncoder).
const (
	observeHead = `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"` + gen.ProtocolVersion + `","event":`
	observeTail = `}}`
)

// isContextError reports whether err is (or wraps) the end of a context.
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// returns reports whether a response carries a return effect.
func returns(r *gen.InterceptResponseResult) bool {
	for _, e := range r.Effects {
		if e.ReturnTool != nil {
			return true
		}
	}
	return false
}

// injects reports whether a response carries an inject effect.
func injects(r *gen.InterceptResponseResult) bool {
	for _, e := range r.Effects {
		if e.Inject != nil {
			return true
		}
	}
	return false
}

// modifies reports whether a response carries a modification effect.
func modifies(r *gen.InterceptResponseResult) bool {
	for _, e := range r.Effects {
		if e.ModifyInput != nil || e.ModifyMessages != nil || e.ModifyText != nil || e.ModifyWorkspace != nil || e.ModifyForm != nil {
			return true
		}
	}
	return false
}

// appJSON encodes application-owned JSON (a json.RawMessage is copied and
// must be valid JSON; anything else is marshalled).
func appJSON(v any, pointer string) (json.RawMessage, error) {
	b, _, err := encodeAppJSON(v, pointer)
	return b, err
}

// encodeAppJSON is appJSON, reporting whether appendPlainJSON wrote the
// encoding.
func encodeAppJSON(v any, pointer string) (_ json.RawMessage, plain bool, _ error) {
	switch x := v.(type) {
	case json.RawMessage:
		if !json.Valid(x) {
			return nil, false, inputError("event", pointer, "json", "not valid JSON")
		}
		return clone(x), false, nil
	default:
		if b, ok := appendPlainJSON(make([]byte, 0, 64), v, 0); ok {
			return b, true, nil // what json.Marshal writes, without reflection
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false, inputError("event", pointer, "json", "not JSON-marshalable")
		}
		return b, false, nil
	}
}
