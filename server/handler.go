package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// DefaultMaxBodyBytes is the default limit of one message: an HTTP request
// body or a stdio line (4 MiB).
const DefaultMaxBodyBytes = 4 << 20

// DefaultMaxConcurrency is the default number of stdio messages that
// [ServeStdio] dispatches at the same time.
const DefaultMaxConcurrency = 16

// ErrUnavailable is returned (wrapped) by a callback that is temporarily
// unable to evaluate a request, for example because a dependency is down or
// the backend is overloaded. The harness then receives -32003
// backend_unavailable instead of -32004 backend_internal_error.
var ErrUnavailable = errors.New("server: backend unavailable")

// ErrInvalidConfig is matched (via errors.Is) by every error that reports an
// unusable configuration: Handler.Validate, UploadReceiver.Validate, and the
// functions that call them (ServeStdio), or a nil argument they need.
var ErrInvalidConfig = errors.New("server: invalid configuration")

// ErrNotAdmitted is matched (via errors.Is) by every *AdmissionError: an
// intercept answer that would not be sent.
var ErrNotAdmitted = errors.New("server: intercept response not admitted")

// configErr reports one configuration problem, matching ErrInvalidConfig.
func configErr(msg string) error { return fmt.Errorf("%w: %s", ErrInvalidConfig, msg) }

// InterceptResult is the answer of an Intercept callback: the ordered
// effects of the interception result (AHP-DEC-001). A nil or empty Effects
// is the no-effect answer, which means only that this backend has no
// objection (AHP-DEC-003); it is sent as "effects": [].
type InterceptResult struct {
	// Effects are the ordered effects, built with the constructors of this
	// package ([Deny], [ReplaceInput], ...) or by hand.
	Effects []gen.Effect
	// Extensions is the optional result.extensions object (reverse-DNS
	// keys, extensions.schema.json); nil leaves it absent.
	Extensions json.RawMessage
}

// Handler is an AHP backend: the callbacks and options that the dispatcher
// behind [Handler.ServeHTTP] and [ServeStdio] uses. Fill it before serving
// and do not change it afterwards; it holds no other state and is safe for
// concurrent use when its callbacks are.
type Handler struct {
	// Intercept answers hooks/intercept requests. The request has been
	// validated canonically; its event is one of the interceptable events
	// (or of InterceptEvents). The returned effects are admitted against
	// the request's capabilities and the canonical schemas before they are
	// sent. A nil Intercept makes hooks/intercept -32601 Method not found.
	// The callback must not keep req after it returns; changes it makes to
	// req do not change what the response is admitted against.
	Intercept func(ctx context.Context, req *gen.InterceptRequest) (InterceptResult, error)

	// Observe receives hooks/observe notifications after canonical
	// validation. The event can be any of the catalogue's events, including
	// interceptable ones whose interception was skipped. Observation is
	// one-way: the returned error is logged (and turns the HTTP status into
	// 500) but never answered on the wire. A nil Observe drops every
	// notification.
	Observe func(ctx context.Context, n *gen.ObserveNotification) error

	// Manifest is the optional static capability manifest served by
	// hooks/capabilities. It describes the harness side and grants
	// nothing; a nil Manifest makes hooks/capabilities -32601 Method not
	// found.
	Manifest *gen.StaticCapabilityManifest

	// InterceptEvents, when non-empty, lists the events Intercept handles;
	// an intercept request for any other event gets -32002
	// unsupported_event. Every entry must be an interceptable event.
	InterceptEvents []gen.EventName

	// ObserveEvents, when non-empty, lists the events Observe receives;
	// other notifications are dropped.
	ObserveEvents []gen.EventName

	// MaxBodyBytes limits one message: an HTTP request body (413 beyond
	// it) or a stdio line (a parse error beyond it). Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// MaxConcurrency limits how many stdio messages are dispatched at the
	// same time; 1 dispatches them one after the other in arrival order.
	// Zero means DefaultMaxConcurrency. HTTP concurrency is the
	// http.Server's.
	MaxConcurrency int

	// Logger, if set, receives diagnostics: rejected messages at Debug,
	// dropped notifications at Warn, callback errors and panics (with the
	// callback's own error text, panic value and stack) and responses that
	// failed admission ([*AdmissionError]) at Error. Request contents are
	// never logged. With ServeStdio it must not write to the protocol
	// output.
	Logger *slog.Logger
}

// Validate checks the Handler's configuration: the limits, the event lists
// and the Manifest, which must be a valid capabilities-response manifest.
// Every problem is reported (joined), each matching ErrInvalidConfig.
// [ServeStdio] calls it before serving; HTTP servers should call it before
// mounting the Handler.
func (h *Handler) Validate() error {
	if h == nil {
		return configErr("nil Handler")
	}
	var errs []error
	if h.Intercept == nil && h.Observe == nil && h.Manifest == nil {
		errs = append(errs, configErr("Handler has no Intercept, Observe or Manifest"))
	}
	if h.MaxBodyBytes < 0 {
		errs = append(errs, configErr("MaxBodyBytes is negative"))
	}
	if h.MaxConcurrency < 0 {
		errs = append(errs, configErr("MaxConcurrency is negative"))
	}
	for _, name := range h.InterceptEvents {
		info, ok := lookupEvent(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%w: InterceptEvents: unknown event %q", ErrInvalidConfig, name))
		case !info.Interceptable():
			errs = append(errs, fmt.Errorf("%w: InterceptEvents: %s cannot be intercepted", ErrInvalidConfig, name))
		}
	}
	for _, name := range h.ObserveEvents {
		if _, ok := lookupEvent(name); !ok {
			errs = append(errs, fmt.Errorf("%w: ObserveEvents: unknown event %q", ErrInvalidConfig, name))
		}
	}
	if h.Manifest != nil {
		if _, err := h.manifestResponse(jsonrpc.StringID("manifest-check")); err != nil {
			errs = append(errs, fmt.Errorf("%w: Manifest: %w", ErrInvalidConfig, err))
		}
	}
	return errors.Join(errs...)
}

func (h *Handler) maxBody() int64 {
	if h.MaxBodyBytes > 0 {
		return h.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

func (h *Handler) maxFrame() int {
	if n := h.maxBody(); n < math.MaxInt {
		return int(n)
	}
	return math.MaxInt
}

func (h *Handler) maxConcurrency() int {
	if h.MaxConcurrency > 0 {
		return h.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

// outcome is what the dispatcher decided for one message.
type outcome uint8

const (
	// outReply: body holds the JSON-RPC response to send.
	outReply outcome = iota
	// outAccepted: a notification was validated and delivered.
	outAccepted
	// outDropped: a notification was not processed.
	outDropped
	// outFailed: a notification was delivered but the callback failed.
	outFailed
)

// result is the dispatcher's answer to one message.
type result struct {
	out  outcome
	body []byte
}

// supportedVersions is the data of -32001 (base/errors.md example).
var supportedVersions = json.RawMessage(`{"supported":["` + gen.ProtocolVersion + `"]}`)

// errorReply builds a JSON-RPC error response with the generic message of
// code. A zero id is sent as null.
func errorReply(id jsonrpc.ID, code int) result {
	tail, ok := errorTails()[code]
	if !ok {
		return result{out: outReply, body: jsonrpc.AppendErrorResponse(nil, id, replyError(code))}
	}
	raw := "null"
	if !id.IsZero() {
		raw = id.String() // the id's JSON text
	}
	body := make([]byte, 0, len(errorHead)+len(raw)+len(tail))
	body = append(body, errorHead...)
	body = append(body, raw...)
	return result{out: outReply, body: append(body, tail...)}
}

// replyError is the error object errorReply sends for code.
func replyError(code int) *jsonrpc.Error {
	e := jsonrpc.NewError(code)
	if code == jsonrpc.CodeUnsupportedProtocolVersion {
		e.Data = supportedVersions
	}
	return e
}

// errorHead is what jsonrpc.AppendErrorResponse writes before the id.
const errorHead = `{"jsonrpc":"` + jsonrpc.Version + `","id":`

// errorTails holds, for each code the dispatcher answers with, what
// jsonrpc.AppendErrorResponse writes after the id of errorReply's
// response: errorReply assembles the constant parts instead of encoding
// them for every reply.
var errorTails = sync.OnceValue(func() map[int]string {
	m := make(map[int]string)
	for _, code := range []int{
		jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound,
		jsonrpc.CodeInvalidParams, jsonrpc.CodeInternalError, jsonrpc.CodeUnsupportedProtocolVersion,
		jsonrpc.CodeUnsupportedEvent, jsonrpc.CodeBackendUnavailable, jsonrpc.CodeBackendInternalError,
	} {
		body := string(jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), replyError(code)))
		if tail, ok := strings.CutPrefix(body, errorHead+"null"); ok {
			m[code] = tail
		}
	}
	return m
})

// request carries what the dispatcher knows about one message.
type request struct {
	msg    []byte
	env    jsonrpc.Envelope
	notify bool
	// doc is msg tokenized once: the envelope is classified, the params
	// validated and decoded, and the grants snapshot from its tokens. It is
	// nil on the byte path of the tests (see dispatchDoc).
	doc *validate.Doc
	// params is the token of params in doc, when doc has tokens and
	// paramsFound; see paramsAt.
	params      int
	paramsFound bool
	paramsDone  bool
	// verdictOnly: doc is validated for its verdict alone, since the
	// Logger did not show the record of an invalid message when the
	// dispatcher looked (see verdictUnlessLogged); a Logger whose level
	// goes down later gets no record of this message's violation, which
	// would name no location.
	verdictOnly bool
}

// verdictUnlessLogged has doc validated for its verdict alone unless the
// Handler's Logger shows records at level, which name where an invalid
// message is invalid. The decision is made once per message, so that a
// record of its violation is either exact or absent.
func (h *Handler) verdictUnlessLogged(ctx context.Context, rq *request, level slog.Level) {
	if rq.doc != nil && !h.logs(ctx, level) {
		rq.doc.VerdictOnly()
		rq.verdictOnly = true
	}
}

// paramsAt returns the token of params in doc, or -1 when the message has
// no tokens or no params. Only the paths that read params members from the
// tokens (not the callback's decoded request) look it up.
func (rq *request) paramsAt() int {
	if !rq.paramsDone {
		rq.paramsDone = true
		if rq.doc != nil && rq.doc.Tokens() {
			rq.params, rq.paramsFound = rq.doc.Member(0, "params")
		}
	}
	if !rq.paramsFound {
		return -1
	}
	return rq.params
}

// dispatch handles one complete message and returns the reply or, for a
// notification, how it was handled. It never panics.
func (h *Handler) dispatch(ctx context.Context, msg []byte) result {
	return h.dispatchDoc(ctx, msg, validate.Scan)
}

// dispatchDoc is dispatch of msg, which scan tokenizes once. A nil scan
// selects the byte path the package tests compare the one-scan path with:
// every step reads msg itself (classification, validation, decoding, the
// grant snapshot), and settlement checks the event as it checks any event
// (settle.CheckEvent, settle.Admit).
func (h *Handler) dispatchDoc(ctx context.Context, msg []byte, scan func(context.Context, []byte) *validate.Doc) (res result) {
	notify := false
	defer func() {
		// Callbacks are guarded separately; this only catches a bug in the
		// dispatcher itself, the scan and the release of its document
		// included.
		if p := recover(); p != nil {
			h.logAttrs(ctx, slog.LevelError, "ahp server: internal error while dispatching a message",
				slog.String("panic_type", fmt.Sprintf("%T", p)), slog.String("stack", string(debug.Stack())))
			if notify {
				res = result{out: outFailed}
			} else {
				res = errorReply(jsonrpc.NullID(), jsonrpc.CodeInternalError)
			}
		}
	}()

	// One scan of the message serves every later step. A message the scan
	// does not model (not JSON, invalid UTF-8, escaped lone surrogates,
	// deep nesting) or that the context interrupted is classified from its
	// bytes instead, with the same result.
	var doc *validate.Doc
	if scan != nil {
		doc = scan(ctx, msg)
		defer doc.Release()
	}
	var env jsonrpc.Envelope
	var err error
	if doc != nil && doc.Tokens() {
		env, err = classifyDoc(doc)
	} else {
		env, err = jsonrpc.Classify(msg)
	}
	if err != nil {
		if errors.Is(err, jsonrpc.ErrParse) {
			h.logAttrs(ctx, slog.LevelDebug, "ahp server: message is not valid UTF-8 JSON", slog.Int("code", jsonrpc.CodeParseError))
			return errorReply(jsonrpc.NullID(), jsonrpc.CodeParseError)
		}
		h.logAttrs(ctx, slog.LevelDebug, "ahp server: message is not a valid JSON-RPC envelope",
			slog.Int("code", jsonrpc.CodeInvalidRequest), slog.String("reason", err.Error()))
		return errorReply(env.ID, jsonrpc.CodeInvalidRequest)
	}
	switch env.Kind {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
	default:
		// A response sent to a backend answers nothing the backend asked.
		h.logAttrs(ctx, slog.LevelDebug, "ahp server: unsolicited JSON-RPC response", slog.Int("code", jsonrpc.CodeInvalidRequest))
		return errorReply(jsonrpc.NullID(), jsonrpc.CodeInvalidRequest)
	}
	notify = env.Kind == jsonrpc.KindNotification
	rq := &request{msg: msg, env: env, notify: notify, doc: doc}

	switch env.Method {
	case jsonrpc.MethodIntercept:
		if notify {
			return h.drop(ctx, rq, "hooks/intercept must be a request")
		}
		if h.Intercept == nil {
			return h.reject(ctx, rq, jsonrpc.CodeMethodNotFound, "no Intercept callback")
		}
		return h.intercept(ctx, rq)
	case jsonrpc.MethodObserve:
		if !notify {
			return h.reject(ctx, rq, jsonrpc.CodeInvalidRequest, "hooks/observe must be a notification")
		}
		if h.Observe == nil {
			return h.drop(ctx, rq, "no Observe callback")
		}
		return h.observe(ctx, rq)
	case jsonrpc.MethodCapabilities:
		if notify {
			return h.drop(ctx, rq, "hooks/capabilities must be a request")
		}
		if h.Manifest == nil {
			return h.reject(ctx, rq, jsonrpc.CodeMethodNotFound, "no Manifest")
		}
		return h.capabilities(ctx, rq)
	default:
		if notify {
			return h.drop(ctx, rq, "unknown method")
		}
		return h.reject(ctx, rq, jsonrpc.CodeMethodNotFound, "unknown method")
	}
}

// reject answers a request with an error code and logs why at Debug.
func (h *Handler) reject(ctx context.Context, rq *request, code int, why string) result {
	if h.logs(ctx, slog.LevelDebug) {
		h.Logger.LogAttrs(ctx, slog.LevelDebug, "ahp server: request rejected",
			slog.String("method", rq.env.Method), slog.String("id", rq.env.ID.String()),
			slog.Int("code", code), slog.String("reason", why))
	}
	return errorReply(rq.env.ID, code)
}

// drop discards a notification and logs why at Warn.
func (h *Handler) drop(ctx context.Context, rq *request, why string) result {
	if h.logs(ctx, slog.LevelWarn) {
		h.Logger.LogAttrs(ctx, slog.LevelWarn, "ahp server: notification dropped",
			slog.String("method", rq.env.Method), slog.String("reason", why))
	}
	return result{out: outDropped}
}

// checkVersion reports whether params carries a protocolVersion other than
// the supported one. An absent member is left to schema validation.
func checkVersion(params []byte) (unsupported bool) {
	return versionUnsupported(jsonrpc.Member(params, "protocolVersion"))
}

func (h *Handler) intercept(ctx context.Context, rq *request) result {
	// Canonical validation comes first, since it passes on almost every
	// request: a valid request carries the supported protocolVersion (the
	// schema makes it a constant) and a catalogue event. Only a request that
	// fails it is read for its version and event type, which get their own
	// error codes ahead of invalid params; the answer to every request is
	// the one the opposite order would give. Validation is linear in the
	// size of the request, whether it passes or not (see invalidParams).
	// Nothing may show where the request is invalid (invalidParams logs
	// it at Debug): validation then gives only its verdict.
	h.verdictUnlessLogged(ctx, rq, slog.LevelDebug)
	req, err := rq.parseIntercept(ctx)
	if err != nil {
		if stopped(ctx, err) {
			return h.reject(ctx, rq, jsonrpc.CodeBackendUnavailable, "request context ended during validation")
		}
		head := rq.head()
		if head.unsupportedVersion() {
			return h.reject(ctx, rq, jsonrpc.CodeUnsupportedProtocolVersion, "unsupported protocolVersion")
		}
		if name, ok := head.eventName(); ok {
			if _, why := h.supported(name); why != "" {
				return h.reject(ctx, rq, jsonrpc.CodeUnsupportedEvent, why)
			}
		}
		return h.invalidParams(ctx, rq, err)
	}
	info, why := h.supported(gen.EventName(req.Params.Event.Type()))
	if why != "" {
		return h.reject(ctx, rq, jsonrpc.CodeUnsupportedEvent, why)
	}
	// The callback has not seen req yet: its event is still the request's.
	if err := checkEvent(&req.Params.Event, rq.doc != nil); err != nil {
		return h.invalidParams(ctx, rq, err)
	}

	out, err := h.callIntercept(ctx, req)
	if err != nil {
		return h.callbackFailed(ctx, rq, info.Name, err)
	}
	// The answer without effects or extensions is constant but for the id
	// and admissible for every interceptable event (see noEffectResponse).
	if len(out.Effects) == 0 && out.Extensions == nil {
		if body, ok := noEffectResponse(rq.env.ID); ok {
			return result{out: outReply, body: body}
		}
	}
	// Admission runs against what the request said, not against req, which
	// the callback may have changed: decode a fresh snapshot from the
	// request bytes (which req does not alias). An answer without effects
	// needs no event or grants to be admitted; the event is decoded only
	// for effects that read more of it than its type (see admission), but
	// on the byte path.
	var a admission
	if len(out.Effects) > 0 {
		if rq.doc != nil {
			a.rq = rq
			a.granted, err = rq.grants()
		} else {
			a.granted, a.event, err = rq.snapshot()
		}
		if err != nil {
			h.logAttrs(ctx, slog.LevelError, "ahp server: cannot snapshot the request capabilities",
				slog.String("id", rq.env.ID.String()), slog.Any("err", err))
			return errorReply(rq.env.ID, jsonrpc.CodeBackendInternalError)
		}
	}
	body, err := admit(rq.env.ID, *info, a, out)
	if err != nil {
		h.logAttrs(ctx, slog.LevelError, "ahp server: Intercept response not admitted; sent backend_internal_error instead",
			slog.String("event", string(info.Name)), slog.String("id", rq.env.ID.String()), slog.Any("err", err))
		return errorReply(rq.env.ID, jsonrpc.CodeBackendInternalError)
	}
	return result{out: outReply, body: body}
}

// parseIntercept validates and decodes the request: from the one scan of
// the message, or from its bytes on the byte path (nil doc).
func (rq *request) parseIntercept(ctx context.Context) (*gen.InterceptRequest, error) {
	if rq.doc == nil {
		return gen.ParseInterceptRequestContext(ctx, rq.msg)
	}
	return gen.ParseInterceptRequestDoc(ctx, rq.doc)
}

// parseObserve is parseIntercept of a hooks/observe notification.
func (rq *request) parseObserve(ctx context.Context) (*gen.ObserveNotification, error) {
	if rq.doc == nil {
		return gen.ParseObserveNotificationContext(ctx, rq.msg)
	}
	return gen.ParseObserveNotificationDoc(ctx, rq.doc)
}

// parseCapabilities is parseIntercept of a hooks/capabilities request.
func (rq *request) parseCapabilities(ctx context.Context) (*gen.CapabilitiesRequest, error) {
	if rq.doc == nil {
		return gen.ParseCapabilitiesRequestContext(ctx, rq.msg)
	}
	return gen.ParseCapabilitiesRequestDoc(ctx, rq.doc)
}

// supported returns the shared, read-only catalogue entry of an event this
// handler intercepts, or says why it does not intercept it.
func (h *Handler) supported(name gen.EventName) (info *gen.EventInfo, why string) {
	e, known := eventInfos()[name]
	switch {
	case !known:
		return nil, "unknown event type"
	case !e.interceptable:
		return &e.info, "event cannot be intercepted"
	case len(h.InterceptEvents) > 0 && !slices.Contains(h.InterceptEvents, name):
		return &e.info, "event not in InterceptEvents"
	}
	return &e.info, ""
}

// grants decodes a detached copy of the request's capabilities: from the
// tokens of the message when it has them.
func (rq *request) grants() (*gen.Capabilities, error) {
	params := rq.paramsAt()
	if params < 0 {
		rawCaps, ok := jsonrpc.Member(rq.env.Params, "capabilities")
		if !ok {
			return nil, errors.New("server: params.capabilities missing after validation")
		}
		var granted gen.Capabilities
		if err := granted.UnmarshalJSON(rawCaps); err != nil {
			return nil, fmt.Errorf("server: decode capabilities: %w", err)
		}
		return &granted, nil
	}
	at, ok := rq.doc.Member(params, "capabilities")
	if !ok {
		return nil, errors.New("server: params.capabilities missing after validation")
	}
	var granted gen.Capabilities
	if err := gen.DecodeAt(rq.doc, at, &granted); err != nil {
		return nil, fmt.Errorf("server: decode capabilities: %w", err)
	}
	return &granted, nil
}

// event decodes a detached copy of the request's event: from the tokens of
// the message when it has them.
func (rq *request) event() (*gen.Event, error) {
	params := rq.paramsAt()
	if params < 0 {
		rawEvent, ok := jsonrpc.Member(rq.env.Params, "event")
		if !ok {
			return nil, errors.New("server: params.event missing after validation")
		}
		var event gen.Event
		if err := event.UnmarshalJSON(rawEvent); err != nil {
			return nil, fmt.Errorf("server: decode event: %w", err)
		}
		return &event, nil
	}
	at, ok := rq.doc.Member(params, "event")
	if !ok {
		return nil, errors.New("server: params.event missing after validation")
	}
	var event gen.Event
	if err := gen.DecodeAt(rq.doc, at, &event); err != nil {
		return nil, fmt.Errorf("server: decode event: %w", err)
	}
	return &event, nil
}

// snapshot decodes detached copies of the request's capabilities and
// event: from the tokens of the message when it has them.
func (rq *request) snapshot() (*gen.Capabilities, *gen.Event, error) {
	params := rq.paramsAt()
	if params < 0 {
		rawEvent, _ := jsonrpc.Member(rq.env.Params, "event")
		return snapshot(rq.env.Params, rawEvent)
	}
	d := rq.doc
	capsAt, ok := d.Member(params, "capabilities")
	if !ok {
		return nil, nil, errors.New("server: params.capabilities missing after validation")
	}
	eventAt, ok := d.Member(params, "event")
	if !ok {
		return nil, nil, errors.New("server: params.event missing after validation")
	}
	var granted gen.Capabilities
	if err := gen.DecodeAt(d, capsAt, &granted); err != nil {
		return nil, nil, fmt.Errorf("server: decode capabilities: %w", err)
	}
	var event gen.Event
	if err := gen.DecodeAt(d, eventAt, &event); err != nil {
		return nil, nil, fmt.Errorf("server: decode event: %w", err)
	}
	return &granted, &event, nil
}

// snapshot decodes detached copies of the request's capabilities and event.
func snapshot(params, rawEvent []byte) (*gen.Capabilities, *gen.Event, error) {
	rawCaps, ok := jsonrpc.Member(params, "capabilities")
	if !ok {
		return nil, nil, errors.New("server: params.capabilities missing after validation")
	}
	// The bytes passed canonical validation already: decode them directly,
	// without encoding/json's second syntax scan.
	var granted gen.Capabilities
	if err := granted.UnmarshalJSON(rawCaps); err != nil {
		return nil, nil, fmt.Errorf("server: decode capabilities: %w", err)
	}
	var event gen.Event
	if err := event.UnmarshalJSON(rawEvent); err != nil {
		return nil, nil, fmt.Errorf("server: decode event: %w", err)
	}
	return &granted, &event, nil
}

// stopped reports an error of a Parse...Context call within ctx that ctx
// ended. Such a call returns a context error only once ctx has ended, so
// the error is not inspected before then.
func stopped(ctx context.Context, err error) bool {
	if ctx.Err() == nil {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// invalidParams answers -32602 for a request that failed canonical
// validation; the pointer and keyword go to the log, never the wire.
// Validation is validate.Validator.Check's (through the generated
// Parse...Context functions): the verdict and the details of a request up
// to 16 KiB are the exact validator's, with pointer and keyword; a larger
// request is decided in linear time by the fast validator alone, so a
// violation is logged with keyword "schema" and no pointer, and a valid
// request that it cannot decide (nesting deeper than 512 levels, escaped
// lone surrogates, numbers beyond its exact range) is rejected with keyword
// "unverified". Malformed JSON and repeated member names get their pointer
// at any size. Unless the Logger showed Debug records when the dispatcher
// looked, before validating, it asked validation for its verdict only
// (validate.Doc.VerdictOnly), and nothing is logged, even if the Logger's
// level has gone down to Debug since.
func (h *Handler) invalidParams(ctx context.Context, rq *request, err error) result {
	if rq.verdictOnly || !h.logs(ctx, slog.LevelDebug) {
		return errorReply(rq.env.ID, jsonrpc.CodeInvalidParams)
	}
	attrs := []slog.Attr{
		slog.String("method", rq.env.Method), slog.String("id", rq.env.ID.String()),
		slog.Int("code", jsonrpc.CodeInvalidParams),
	}
	if pe, ok := errors.AsType[*gen.ParseError](err); ok {
		attrs = append(attrs, slog.String("pointer", pe.Pointer), slog.String("keyword", pe.Keyword))
	} else {
		attrs = append(attrs, slog.Any("err", err))
	}
	h.logAttrs(ctx, slog.LevelDebug, "ahp server: request failed validation", attrs...)
	return errorReply(rq.env.ID, jsonrpc.CodeInvalidParams)
}

// callbackFailed maps a callback error to -32003 or -32004 and logs it.
func (h *Handler) callbackFailed(ctx context.Context, rq *request, event gen.EventName, err error) result {
	code := jsonrpc.CodeBackendInternalError
	if errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		code = jsonrpc.CodeBackendUnavailable
	}
	if !h.logs(ctx, slog.LevelError) {
		return errorReply(rq.env.ID, code)
	}
	attrs := []slog.Attr{
		slog.String("method", rq.env.Method), slog.String("event", string(event)),
		slog.String("id", rq.env.ID.String()), slog.Int("code", code),
	}
	if p, ok := errors.AsType[*panicError](err); ok {
		attrs = append(attrs, slog.String("panic", fmt.Sprint(p.value)), slog.String("stack", string(p.stack)))
		h.logAttrs(ctx, slog.LevelError, "ahp server: Intercept callback panicked", attrs...)
	} else {
		attrs = append(attrs, slog.Any("err", err))
		h.logAttrs(ctx, slog.LevelError, "ahp server: Intercept callback failed", attrs...)
	}
	return errorReply(rq.env.ID, code)
}

// panicError is a recovered callback panic.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return "server: callback panicked" }

func (h *Handler) callIntercept(ctx context.Context, req *gen.InterceptRequest) (out InterceptResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = InterceptResult{}, &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return h.Intercept(ctx, req)
}

func (h *Handler) callObserve(ctx context.Context, n *gen.ObserveNotification) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return h.Observe(ctx, n)
}

func (h *Handler) observe(ctx context.Context, rq *request) result {
	head := rq.head()
	if head.unsupportedVersion() {
		return h.drop(ctx, rq, "unsupported protocolVersion")
	}
	if name, ok := head.eventName(); ok {
		if _, known := lookupEvent(name); !known {
			return h.drop(ctx, rq, "unknown event type")
		}
		if len(h.ObserveEvents) > 0 && !slices.Contains(h.ObserveEvents, name) {
			return h.drop(ctx, rq, "event not in ObserveEvents")
		}
	}
	// Nothing may show where the notification is invalid (it is logged
	// at Warn): validation then gives only its verdict.
	h.verdictUnlessLogged(ctx, rq, slog.LevelWarn)
	n, err := rq.parseObserve(ctx)
	if err != nil {
		if rq.verdictOnly || !h.logs(ctx, slog.LevelWarn) {
			return result{out: outDropped}
		}
		reason := "canonical validation failed"
		if stopped(ctx, err) {
			reason = "context ended during validation"
		}
		attrs := []slog.Attr{slog.String("method", rq.env.Method), slog.String("reason", reason)}
		if pe, ok := errors.AsType[*gen.ParseError](err); ok {
			attrs = append(attrs, slog.String("pointer", pe.Pointer), slog.String("keyword", pe.Keyword))
		}
		h.logAttrs(ctx, slog.LevelWarn, "ahp server: notification dropped", attrs...)
		return result{out: outDropped}
	}
	if err := h.callObserve(ctx, n); err != nil {
		attrs := []slog.Attr{slog.String("method", rq.env.Method), slog.String("event", n.Params.Event.Type())}
		if p, ok := errors.AsType[*panicError](err); ok {
			attrs = append(attrs, slog.String("panic", fmt.Sprint(p.value)), slog.String("stack", string(p.stack)))
			h.logAttrs(ctx, slog.LevelError, "ahp server: Observe callback panicked", attrs...)
		} else {
			attrs = append(attrs, slog.Any("err", err))
			h.logAttrs(ctx, slog.LevelError, "ahp server: Observe callback failed", attrs...)
		}
		return result{out: outFailed}
	}
	return result{out: outAccepted}
}

func (h *Handler) capabilities(ctx context.Context, rq *request) result {
	if rq.unsupportedVersion() {
		return h.reject(ctx, rq, jsonrpc.CodeUnsupportedProtocolVersion, "unsupported protocolVersion")
	}
	h.verdictUnlessLogged(ctx, rq, slog.LevelDebug) // as in intercept
	if _, err := rq.parseCapabilities(ctx); err != nil {
		if stopped(ctx, err) {
			return h.reject(ctx, rq, jsonrpc.CodeBackendUnavailable, "request context ended during validation")
		}
		return h.invalidParams(ctx, rq, err)
	}
	body, err := h.manifestResponse(rq.env.ID)
	if err != nil {
		h.logAttrs(ctx, slog.LevelError, "ahp server: Manifest is not a valid capabilities-response manifest; sent backend_internal_error instead",
			slog.String("id", rq.env.ID.String()), slog.Any("err", err))
		return errorReply(rq.env.ID, jsonrpc.CodeBackendInternalError)
	}
	return result{out: outReply, body: body}
}

// manifestResponse encodes and validates the hooks/capabilities response.
func (h *Handler) manifestResponse(id jsonrpc.ID) ([]byte, error) {
	idText, err := id.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("server: response id: %w", err)
	}
	resp := gen.CapabilitiesResponse{
		JSONRPC: jsonrpc.Version,
		ID:      gen.JSONRPCResponseID(idText),
		Result: gen.CapabilitiesResponseResult{
			ProtocolVersion: gen.ProtocolVersion,
			Manifest:        *h.Manifest,
		},
	}
	body, err := gen.EncodeCapabilitiesResponse(&resp)
	if err != nil {
		return nil, fmt.Errorf("server: encode capabilities response: %w", err)
	}
	if err := validate.Default().Validate("capabilities-response.schema.json", body); err != nil {
		return nil, fmt.Errorf("server: capabilities response: %w", err)
	}
	return body, nil
}

// logAttrs logs to the Handler's Logger, if any.
func (h *Handler) logAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if h.Logger == nil {
		return
	}
	h.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// logs reports whether the Handler's Logger records messages at level:
// what only such a record would show is not worked out otherwise.
func (h *Handler) logs(ctx context.Context, level slog.Level) bool {
	return h.Logger != nil && h.Logger.Enabled(ctx, level)
}

// eventEntry is an entry of the event catalogue and whether its event is
// interceptable.
type eventEntry struct {
	info          gen.EventInfo
	interceptable bool
}

// eventInfos indexes the event catalogue once; the entries are shared and
// read only, which spares each request LookupEvent's defensive copies and
// copies of the entries themselves.
var eventInfos = sync.OnceValue(func() map[gen.EventName]*eventEntry {
	m := make(map[gen.EventName]*eventEntry)
	for _, info := range gen.Events() {
		m[info.Name] = &eventEntry{info: info, interceptable: info.Interceptable()}
	}
	return m
})

// lookupEvent returns the shared, read-only catalogue entry of name.
func lookupEvent(name gen.EventName) (gen.EventInfo, bool) {
	if e, ok := eventInfos()[name]; ok {
		return e.info, true
	}
	return gen.EventInfo{}, false
}
