package settle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
)

// ErrInvalidExchange is wrapped by every *ExchangeError: an MCP elicitation
// request/result exchange that failed a check of
// interaction-payloads.md §MCP elicitation binding.
var ErrInvalidExchange = errors.New("settle: invalid elicitation exchange")

// ErrNoSupplier reports ApplyElicitationEffects without the authenticated
// identity of the hook that supplied the effects.
var ErrNoSupplier = errors.New("settle: no authenticated supplier identity")

// Exchange check tokens: the Check of an *ExchangeError. Correlation
// checks (Check*Parent .. CheckMode) run before any body is read.
const (
	CheckParent        = "parent"         // result parentEventId is not the request id
	CheckSource        = "source"         // request and result sources differ
	CheckSession       = "session"        // request and result session scopes differ
	CheckServer        = "server"         // requesting server identity differs
	CheckMode          = "mode"           // normalized modes differ, or a body's mode differs from the metadata mode
	CheckMalformed     = "malformed"      // the event itself is malformed (unknown mode or action)
	CheckRequestGap    = "request_gap"    // the request body was selected but is missing (fails closed)
	CheckResultGap     = "result_gap"     // the result body was selected but is missing (fails closed)
	CheckRequestBody   = "request_body"   // the request text is not complete MCP 2025-11-25 ElicitRequestParams
	CheckRequestSchema = "request_schema" // the requested form schema cannot be compiled
	CheckResultBody    = "result_body"    // the result text is not a complete MCP 2025-11-25 ElicitResult
	CheckAction        = "action"         // envelope action differs from the body's action
	CheckContent       = "content"        // content outside an accepted form result, or not answer values
	CheckAnswers       = "answers"        // submitted form data fails the requested schema
	CheckFormContext   = "form_context"   // a body-selected form accept whose request body is not available
	CheckModeSupport   = "mode_support"   // the mode is not supported (ValidateElicitationMode)
)

// ExchangeError reports the first failed check of an elicitation exchange.
// It carries a fixed token, never body text.
type ExchangeError struct {
	// Check is one of the Check* constants.
	Check string
}

// Error describes the failed check.
func (e *ExchangeError) Error() string { return "settle: elicitation exchange: " + e.Check }

// Is reports whether target is ErrInvalidExchange.
func (e *ExchangeError) Is(target error) bool { return target == ErrInvalidExchange }

func exErr(check string) error { return &ExchangeError{Check: check} }

// Body validation states of an ElicitationExchange.
const (
	// BodyValidated: the body was selected, parsed and validated.
	BodyValidated = "body"
	// BodyNotSelected: the body was intentionally not selected (metadata or
	// omit); nothing about its bytes is claimed.
	BodyNotSelected = "not-selected"
	// BodyAbsent: there is no such body (no result, or no part at all).
	BodyAbsent = "absent"
)

// ElicitationModes is the elicitation mode support of one side. Form and
// URL are independent; the zero value supports neither.
type ElicitationModes struct {
	// Form reports form-mode support.
	Form bool
	// URL reports URL-mode support.
	URL bool
}

// ModesOf reads AHP capabilities.elicitation: each mode is supported only
// when its member is an object. An absent capability and AHP `{}` support
// neither mode.
func ModesOf(c *gen.CapabilitiesElicitation) ElicitationModes {
	if c == nil {
		return ElicitationModes{}
	}
	return ElicitationModes{Form: present(c.Form), URL: present(c.URL)}
}

// MCPClientModes reads an MCP-origin client capabilities.elicitation value
// (raw JSON; nil when absent). Only here is the legacy empty object `{}`
// form support; it never grants URL support. Otherwise form and url are
// independent object members, as in AHP.
func MCPClientModes(raw json.RawMessage) (ElicitationModes, error) {
	b := trimWS(raw)
	if len(b) == 0 || string(b) == "null" {
		return ElicitationModes{}, nil
	}
	ms, err := splitObject(b, true)
	if err != nil {
		return ElicitationModes{}, fmt.Errorf("settle: MCP elicitation capability: %w", err)
	}
	if len(ms) == 0 {
		return ElicitationModes{Form: true}, nil
	}
	var m ElicitationModes
	for _, e := range ms {
		switch e.name {
		case "form":
			m.Form = jsonKind(e.value) == '{'
		case "url":
			m.URL = jsonKind(e.value) == '{'
		}
	}
	return m, nil
}

// Capabilities renders the modes as an AHP capabilities.elicitation value,
// nil when neither is supported. An MCP-origin legacy `{}` thus becomes
// {"form":{}}, never an AHP `{}`.
func (m ElicitationModes) Capabilities() *gen.CapabilitiesElicitation {
	if !m.Form && !m.URL {
		return nil
	}
	c := &gen.CapabilitiesElicitation{}
	if m.Form {
		c.Form = json.RawMessage(`{}`)
	}
	if m.URL {
		c.URL = json.RawMessage(`{}`)
	}
	return c
}

// ValidateElicitationMode checks that mode is supported by m. It returns an
// *ExchangeError (CheckModeSupport) otherwise.
func ValidateElicitationMode(m ElicitationModes, mode gen.ElicitationMode) error {
	switch mode {
	case gen.ElicitationModeForm:
		if m.Form {
			return nil
		}
	case gen.ElicitationModeURL:
		if m.URL {
			return nil
		}
	}
	return exErr(CheckModeSupport)
}

// ElicitationExchange is a validated elicitation request, and its result
// when one was given. Parsed bodies are detached values; Text members are
// the exact inline text that was validated.
type ElicitationExchange struct {
	// Server is the requesting server identity (never the user's).
	Server string
	// Mode is the normalized mode.
	Mode gen.ElicitationMode
	// RequestBody is BodyValidated, BodyNotSelected or BodyAbsent.
	RequestBody string
	// Request is the parsed complete MCP params, nil unless RequestBody is
	// BodyValidated.
	Request *gen.MCPElicitationElicitRequestParams
	// RequestText is the request body text, empty unless validated.
	RequestText string
	// Action is the result's envelope action, empty without a result.
	Action string
	// ResultBody is BodyValidated, BodyNotSelected or BodyAbsent.
	ResultBody string
	// Result is the parsed complete MCP ElicitResult, nil unless
	// ResultBody is BodyValidated.
	Result *gen.MCPElicitationElicitResult
	// ResultText is the result body text, empty unless validated.
	ResultText string

	form *formSchema
}

// ValidateElicitationRequest validates a user.elicitation.request event's
// elicitation: a known mode and, for a body-selected request, complete MCP
// 2025-11-25 ElicitRequestParams whose mode (omission meaning form) equals
// the metadata mode and whose requested schema compiles. A selected body
// that is missing (a gap) fails closed; a metadata/omit view is not read.
func ValidateElicitationRequest(req *gen.UserElicitationRequestEvent) (*ElicitationExchange, error) {
	if req == nil || !req.Elicitation.Mode.Known() {
		return nil, exErr(CheckMalformed)
	}
	x := &ElicitationExchange{Server: req.Elicitation.Server, Mode: req.Elicitation.Mode, RequestBody: BodyAbsent, ResultBody: BodyAbsent}
	if err := x.request(req); err != nil {
		return nil, err
	}
	return x, nil
}

// ValidateElicitationExchange validates a result against the request it
// answers. Correlation comes first and reads no body: the result's
// parentEventId must be the request id, and source, session scope, server
// and mode must match. Then the request is validated as by
// ValidateElicitationRequest and the result: complete MCP ElicitResult for
// a selected body, its action equal to the envelope action, content only on
// an accepted form result, and accepted form content valid against the
// requested schema (defaults are annotations: nothing is injected). A
// body-selected form accept whose request body is unavailable fails closed
// (CheckFormContext).
func ValidateElicitationExchange(req *gen.UserElicitationRequestEvent, res *gen.UserElicitationResultEvent) (*ElicitationExchange, error) {
	if req == nil || res == nil {
		return nil, exErr(CheckMalformed)
	}
	if res.ParentEventID == nil || *res.ParentEventID != req.ID {
		return nil, exErr(CheckParent)
	}
	if res.Source != req.Source {
		return nil, exErr(CheckSource)
	}
	if (res.Session == nil) != (req.Session == nil) || (res.Session != nil && res.Session.ID != req.Session.ID) {
		return nil, exErr(CheckSession)
	}
	if res.Elicitation.Server != req.Elicitation.Server {
		return nil, exErr(CheckServer)
	}
	if !req.Elicitation.Mode.Known() || !res.Elicitation.Mode.Known() || !res.Elicitation.Action.Known() {
		return nil, exErr(CheckMalformed)
	}
	if res.Elicitation.Mode != req.Elicitation.Mode {
		return nil, exErr(CheckMode)
	}
	x, err := ValidateElicitationRequest(req)
	if err != nil {
		return nil, err
	}
	x.Action = string(res.Elicitation.Action)
	part := res.Elicitation.Result
	switch {
	case part == nil || part.Omitted != nil:
		x.ResultBody = BodyNotSelected
		if part == nil {
			x.ResultBody = BodyAbsent
		}
		return x, nil
	case part.Metadata != nil:
		x.ResultBody = BodyNotSelected
		return x, nil
	case part.Gap != nil:
		return nil, exErr(CheckResultGap)
	case part.Body == nil:
		return nil, exErr(CheckMalformed)
	}
	r, err := parseResult(part.Body.Text)
	if err != nil {
		return nil, exErr(CheckResultBody)
	}
	if string(r.Action) != x.Action {
		return nil, exErr(CheckAction)
	}
	accept := r.Action == gen.MCPElicitationElicitResultActionAccept
	if r.Content != nil {
		if x.Mode != gen.ElicitationModeForm || !accept {
			return nil, exErr(CheckContent)
		}
		for _, a := range r.Content {
			if !validAnswerValue(a.Value) {
				return nil, exErr(CheckContent)
			}
		}
	}
	if x.Mode == gen.ElicitationModeForm && accept {
		if x.form == nil {
			return nil, exErr(CheckFormContext)
		}
		if checkAnswers(x.form, r.Content) != nil {
			return nil, exErr(CheckAnswers)
		}
	}
	x.ResultBody, x.Result, x.ResultText = BodyValidated, r, part.Body.Text
	return x, nil
}

// request validates the request part into x.
func (x *ElicitationExchange) request(req *gen.UserElicitationRequestEvent) error {
	part := req.Elicitation.Request
	switch {
	case part == nil:
		return nil
	case part.Metadata != nil || part.Omitted != nil:
		x.RequestBody = BodyNotSelected
		return nil
	case part.Gap != nil:
		return exErr(CheckRequestGap)
	case part.Body == nil:
		return exErr(CheckMalformed)
	}
	p, err := parseRequestParams(part.Body.Text)
	if err != nil {
		return exErr(CheckRequestBody)
	}
	if paramsMode(p) != x.Mode {
		return exErr(CheckMode)
	}
	if p.Form != nil {
		s, err := compileForm(p.Form)
		if err != nil {
			return exErr(CheckRequestSchema)
		}
		x.form = s
	}
	x.RequestBody, x.Request, x.RequestText = BodyValidated, p, part.Body.Text
	return nil
}

// CheckFormAnswers validates submitted form data (an answer object, exact
// JSON) against the requested schema of a validated form request. Defaults
// are annotations: nothing is injected and nothing is coerced.
func (x *ElicitationExchange) CheckFormAnswers(answers json.RawMessage) error {
	if x == nil || x.form == nil {
		return exErr(CheckFormContext)
	}
	var m gen.OrderedMap[gen.FormAnswerValue]
	if err := m.UnmarshalJSON(answers); err != nil {
		return exErr(CheckContent)
	}
	for _, a := range m {
		if !validAnswerValue(a.Value) {
			return exErr(CheckContent)
		}
	}
	if checkAnswers(x.form, m) != nil {
		return exErr(CheckAnswers)
	}
	return nil
}

// ReasonConflictingEffects reports an effect list at an elicitation
// boundary with more than one terminal effect (deny, return): the list is
// rejected whole rather than resolved by precedence.
const ReasonConflictingEffects = "conflicting_effects"

// ElicitationEffects is the input of ApplyElicitationEffects.
type ElicitationEffects struct {
	// Request is the canonical user.elicitation.request event (required).
	Request *gen.UserElicitationRequestEvent
	// Result is the user.elicitation.result event the effects edit; nil
	// when they answer the request boundary (return or deny).
	Result *gen.UserElicitationResultEvent
	// Granted are the request-local capabilities advertised to the hook.
	Granted gen.Capabilities
	// Effects is the hook's complete effect list.
	Effects []gen.Effect
	// Supplier is the authenticated identity of the hook, from the host's
	// own configuration (for example the bearer token it verified). It is
	// never read from event, source or server fields.
	Supplier string
}

// Origins of an ElicitationOutcome's result.
const (
	// OriginHook: a hook supplied (return) or edited (modify) the result.
	OriginHook = "hook"
	// OriginMCP: the result is the unmodified MCP result. It is not a
	// claim of verified human input.
	OriginMCP = "mcp"
)

// ElicitationOutcome is the staged outcome of one effect list.
type ElicitationOutcome struct {
	// Denied reports an accepted deny at the request boundary; Reason is
	// its reason.
	Denied bool
	Reason string
	// Returned reports a supplied result at the request boundary.
	Returned bool
	// Modified reports an edited answer object at the result boundary.
	Modified bool
	// Result is the complete MCP ElicitResult JSON to publish: the returned
	// one, or the effective result (edited or not) of a body-selected
	// result event; nil otherwise. Publish it as new inline text.
	Result json.RawMessage
	// Origin is OriginHook or OriginMCP when Result is set.
	Origin string
	// Provenance is the candidate provenance of a hook-supplied or edited
	// result: {"kind":"hook","supplier":Supplier}.
	Provenance json.RawMessage
	// Messages are accepted user-facing messages, in order.
	Messages []string
}

// ApplyElicitationEffects validates the exchange (as
// ValidateElicitationRequest, or ValidateElicitationExchange with a
// Result), then the complete effect list against the request-local grants
// and the boundary (request: deny, return, message; result:
// modify(content) replace/merge over an accepted form answer object, and
// message), staging it on detached snapshots. Nothing is published unless
// every effect is admissible and the final result validates against the
// MCP result definition and the requested form schema: a failed list
// returns a *Rejection (or an *ExchangeError) and no outcome, and the
// inputs are never modified.
func ApplyElicitationEffects(ctx context.Context, in ElicitationEffects) (*ElicitationOutcome, error) {
	if in.Supplier == "" {
		return nil, ErrNoSupplier
	}
	var (
		ev  gen.Event
		ini Initial
	)
	if in.Result != nil {
		if _, err := ValidateElicitationExchange(in.Request, in.Result); err != nil {
			return nil, err
		}
		ev.UserElicitationResult = in.Result
		ini.ElicitationRequest = in.Request
	} else {
		if _, err := ValidateElicitationRequest(in.Request); err != nil {
			return nil, err
		}
		ev.UserElicitationRequest = in.Request
	}
	terminal := -1
	for i := range in.Effects {
		if in.Effects[i].Deny != nil || in.Effects[i].ReturnTool != nil {
			if terminal >= 0 {
				return nil, reject(i, ReasonConflictingEffects)
			}
			terminal = i
		}
	}
	occ, err := New(&ev, ini)
	if err != nil {
		return nil, err
	}
	prov, err := json.Marshal(struct {
		Kind     string `json:"kind"`
		Supplier string `json:"supplier"`
	}{OriginHook, in.Supplier})
	if err != nil {
		return nil, err
	}
	result := &gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: in.Effects}
	if result.Effects == nil {
		result.Effects = []gen.Effect{}
	}
	if err := occ.ApplyContext(ctx, in.Granted, result, ApplyOptions{Provenance: prov}); err != nil {
		return nil, err
	}
	st := occ.State()
	out := &ElicitationOutcome{Messages: st.Messages}
	switch {
	case st.Denied():
		out.Denied = true
		for _, e := range in.Effects {
			if e.Deny != nil {
				out.Reason = e.Deny.Reason
			}
		}
		return out, nil
	case st.Candidate.Present:
		out.Returned, out.Result, out.Origin, out.Provenance = true, st.Candidate.Value, OriginHook, prov
		return out, nil
	case in.Result == nil:
		return out, nil
	}
	eff, err := occ.Event()
	if err != nil {
		return nil, err
	}
	part := eff.UserElicitationResult.Elicitation.Result
	if part == nil || part.Body == nil {
		return out, nil
	}
	out.Result, out.Origin = json.RawMessage(part.Body.Text), OriginMCP
	if orig := in.Result.Elicitation.Result.Body; orig == nil || !bytes.Equal([]byte(orig.Text), []byte(part.Body.Text)) {
		out.Modified, out.Origin, out.Provenance = true, OriginHook, prov
	}
	// The published value is validated once more as a whole.
	if _, err := ValidateElicitationExchange(in.Request, eff.UserElicitationResult); err != nil {
		return nil, reject(-1, ReasonInvalidValue)
	}
	return out, nil
}
