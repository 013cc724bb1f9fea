package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
)

// InputError is the error New, NewEncoded, CheckEvent and Admit return for
// an event or an initial state that cannot be settled. It matches
// ErrInvalidEvent and says which part is at fault; it holds no instance
// values itself (Err may, unless it is a *validate.Error).
type InputError struct {
	// Initial reports that the host's initial state (Initial), not the
	// event, is at fault.
	Initial bool
	// Pointer is the RFC 6901 JSON pointer, into the event, of the member
	// at fault, or "" when Initial or not known.
	Pointer string
	// Part is a fixed description of what cannot be settled, such as
	// "tool input" or "elicitation request".
	Part string
	// Err is the underlying failure, or nil. A *validate.Error in it
	// locates the failure inside the member's own JSON payload (an MCP
	// elicitation body, say), relative to that payload.
	Err error
}

// Error returns "settle: invalid host input: PART[: cause]".
func (e *InputError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v: %s: %v", ErrInvalidEvent, e.Part, e.Err)
	}
	return fmt.Sprintf("%v: %s", ErrInvalidEvent, e.Part)
}

// Unwrap returns ErrInvalidEvent and the underlying failure.
func (e *InputError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidEvent}
	}
	return []error{ErrInvalidEvent, e.Err}
}

// invalid wraps a host-input problem; a part named "initial …" is one of
// the initial state.
func invalid(what string, err error) error {
	return &InputError{Initial: strings.HasPrefix(what, "initial "), Part: what, Err: err}
}

// fieldPointer is the JSON pointer of a dotted event path ("" for none).
func fieldPointer(field string) string {
	if field == "" {
		return ""
	}
	return "/" + strings.ReplaceAll(field, ".", "/")
}

// invalidAt wraps a problem of the event member at pointer.
func invalidAt(what, pointer string, err error) error {
	return &InputError{Pointer: pointer, Part: what, Err: err}
}

// newOccurrence builds an occurrence; host selects New (snapshot, host
// context) or Admit (admission only). encoded, when not nil, is event's
// encoding, kept as the snapshot.
func newOccurrence(event *gen.Event, encoded []byte, initial Initial, host bool) (*Occurrence, error) {
	o := new(Occurrence)
	if err := o.init(event, encoded, initial, host); err != nil {
		return nil, err
	}
	return o, nil
}

// init sets up o as newOccurrence describes. With o.checkOnly set
// (CheckEvent) it makes the same checks of the event without copying what
// only settlement needs.
func (o *Occurrence) init(event *gen.Event, encoded []byte, initial Initial, host bool) error {
	if event == nil || event.Value() == nil {
		return invalid("no event", nil)
	}
	b, ok := boundaryFor(gen.EventName(event.Type()))
	if !ok {
		return invalid("event is not interceptable", nil)
	}
	o.b, o.hostContext, o.known = b, host, partSet{}
	if err := o.initState(initial); err != nil {
		return err
	}
	if err := o.extract(event, initial); err != nil {
		return err
	}
	if err := o.checkInitialCandidate(); err != nil {
		return err
	}
	if host && encoded != nil {
		o.snapshot = encoded
	} else if host {
		snap, err := event.MarshalJSON()
		if err != nil {
			return invalid("event encoding", err)
		}
		o.snapshot = snap
	}
	return nil
}

// initState validates and copies the host's incoming control state.
func (o *Occurrence) initState(in Initial) error {
	if in.Permission != "" {
		if !in.Permission.Known() {
			return invalid("initial permission", nil)
		}
		o.cur.perm = permissionOf(in.Permission)
	}
	if in.Flow != "" {
		if !in.Flow.Known() {
			return invalid("initial flow", nil)
		}
		o.cur.flow = flowStateOf(in.Flow)
	}
	if in.StopReason != "" {
		o.cur.own().stopReason = in.StopReason
	}
	for _, s := range in.Instructions {
		if s == "" {
			return invalid("initial instructions", nil)
		}
	}
	if in.Instructions != nil {
		o.cur.own().instructions = slices.Clone(in.Instructions)
	}
	for i := range in.Injections {
		b, err := in.Injections[i].MarshalJSON()
		if err != nil || canonical(refInject, b) != nil {
			return invalid("initial injections", err)
		}
	}
	if in.Injections != nil {
		o.cur.own().injections = copyInjections(in.Injections)
	}
	if in.Candidate.Present {
		if len(in.Candidate.Value) == 0 || checkJSON(in.Candidate.Value) != nil {
			return invalid("initial candidate", nil)
		}
		m := o.cur.own()
		m.cand = Candidate{Present: true, Value: bytes.Clone(in.Candidate.Value)}
		if in.Candidate.Provenance != nil {
			p, err := normalizeProvenance(in.Candidate.Provenance)
			if err != nil {
				return invalid("initial candidate provenance", err)
			}
			m.cand.Provenance = p
		}
	}
	return nil
}

// checkInitialCandidate validates an incoming candidate against the
// boundary's candidate definition (intercept-request.schema.json $defs).
func (o *Occurrence) checkInitialCandidate() error {
	cand := &o.cur.more.get().cand
	if !cand.Present {
		return nil
	}
	v := cand.Value
	var err error
	switch o.bound().ret {
	case rkMessages:
		err = canonical(refMessages, v)
	case rkText:
		err = canonical(refTextParts, v)
	case rkElicit:
		err = canonical(refElicitResult, v)
	}
	if err != nil {
		return invalid("initial candidate", err)
	}
	return nil
}

// extract reads the boundary's target and context from the event.
func (o *Occurrence) extract(ev *gen.Event, in Initial) error {
	var (
		msgs   []gen.CanonicalMessage
		text   gen.TextParts
		isText bool
		items  []gen.ContentItem
		gaps   []gen.Gap
	)
	switch {
	case ev.ToolBefore != nil:
		items = ev.ToolBefore.Items
		return o.extractInput(ev.ToolBefore.Tool.Input, in.Input, items)
	case ev.ToolPermissionRequest != nil:
		items = ev.ToolPermissionRequest.Items
		return o.extractInput(ev.ToolPermissionRequest.Tool.Input, in.Input, items)
	case ev.TurnStart != nil:
		msgs, gaps = ev.TurnStart.Items, ev.TurnStart.Gaps
	case ev.TurnFinishBefore != nil:
		msgs, gaps = ev.TurnFinishBefore.Items, ev.TurnFinishBefore.Gaps
		if n, ok := Integer(ev.TurnFinishBefore.ContinuationCount); ok && n >= 0 && n < 1<<31 {
			o.cur.contCount = uint32(n)
		}
	case ev.ModelRequestBefore != nil:
		msgs, gaps = ev.ModelRequestBefore.Items, ev.ModelRequestBefore.Gaps
	case ev.ModelResponseAfter != nil:
		msgs, gaps = ev.ModelResponseAfter.Items, ev.ModelResponseAfter.Gaps
	case ev.ToolAfter != nil:
		msgs, gaps = ev.ToolAfter.Items, ev.ToolAfter.Gaps
	case ev.UserMessageInbound != nil:
		msgs, gaps, items = ev.UserMessageInbound.Message.Messages, ev.UserMessageInbound.Gaps, ev.UserMessageInbound.Items
	case ev.UserMessageOutbound != nil:
		msgs, gaps, items = ev.UserMessageOutbound.Message.Messages, ev.UserMessageOutbound.Gaps, ev.UserMessageOutbound.Items
	case ev.ContextCompactBefore != nil:
		isText, gaps = true, ev.ContextCompactBefore.Gaps
		text = ev.ContextCompactBefore.Instructions
		if err := o.knownMessages(ev.ContextCompactBefore.Items); err != nil {
			return err
		}
	case ev.ContextCompactAfter != nil:
		isText, gaps = true, ev.ContextCompactAfter.Gaps
		text = ev.ContextCompactAfter.Summary
		if text == nil {
			return invalidAt("context.compact.after summary", "/summary", nil)
		}
		if err := o.knownMessages(ev.ContextCompactAfter.Items); err != nil {
			return err
		}
	case ev.WorkspaceChangeBefore != nil:
		o.cur.own().workspace = cloneWorkspace(ev.WorkspaceChangeBefore.Workspace.Change)
		return nil
	case ev.UserElicitationResult != nil:
		return o.extractElicitResult(ev.UserElicitationResult, in.ElicitationRequest)
	case ev.UserElicitationRequest != nil:
		e := ev.UserElicitationRequest
		if !e.Elicitation.Mode.Known() {
			return invalidAt("elicitation mode", "/elicitation/mode", nil)
		}
		form, err := requestForm(e)
		if err != nil {
			return invalidAt("elicitation request", "/elicitation/request/text", err)
		}
		o.elicit = &elicitCtx{mode: e.Elicitation.Mode, form: form}
		return knownContentParts(e.Items, &o.known)
	case ev.SessionStart != nil:
		return o.knownMessages(ev.SessionStart.Items)
	case ev.ToolBatchAfter != nil:
		return knownContentParts(ev.ToolBatchAfter.Items, &o.known)
	default:
		return nil
	}
	if err := knownContentParts(items, &o.known); err != nil {
		return invalidAt("event items", "/items", err)
	}
	var (
		list []json.RawMessage
		info listInfo
		err  error
	)
	// An admission-only occurrence of a validated event encodes the list
	// only when an effect modifies it (loadList).
	lazy := o.validated && !o.hostContext
	if isText {
		if text != nil {
			if lazy {
				info, err = classifyTextParts(text, &o.known)
				o.lazyList = ev
			} else {
				list, info, err = encodeTextParts(text, &o.known)
			}
			o.cur.listPresent = true
		}
	} else {
		if msgs == nil {
			msgs = []gen.CanonicalMessage{}
		}
		if lazy {
			info, err = classifyMessages(msgs, &o.known)
			o.lazyList = ev
		} else {
			list, info, err = encodeMessages(msgs, &o.known)
		}
		o.cur.listPresent = true
		if err == nil && o.bound().role != "" {
			for i := range msgs {
				if msgs[i].Role != o.bound().role {
					return invalidAt("message role", fieldPointer(o.bound().field), nil)
				}
			}
		}
	}
	if err != nil {
		return invalidAt("target content", fieldPointer(o.bound().field), err)
	}
	o.cur.list = list
	o.hidden = info.hidden
	for _, g := range gaps {
		if gapCovers(g.Path, o.bound().field) {
			o.hidden = true
		}
	}
	return nil
}

// knownMessages records the non-text parts of a message list.
func (o *Occurrence) knownMessages(ms []gen.CanonicalMessage) error {
	var err error
	if o.validated {
		_, err = classifyMessages(ms, &o.known)
	} else {
		_, _, err = encodeMessages(ms, &o.known)
	}
	if err != nil {
		return invalidAt("event items", "/items", err)
	}
	return nil
}

// loadList encodes the list target that extract left to be encoded when
// needed (lazyList) into cur.list, as extract would have.
func (o *Occurrence) loadList() error {
	if o.lazyList == nil {
		return nil
	}
	var list []json.RawMessage
	var err error
	if msgs, text, isText := listTarget(o.lazyList); isText {
		list, _, err = encodeTextParts(text, nil)
	} else {
		if msgs == nil {
			msgs = []gen.CanonicalMessage{}
		}
		list, _, err = encodeMessages(msgs, nil)
	}
	if err != nil {
		return err
	}
	o.cur.list = list
	o.lazyList = nil
	return nil
}

// listTarget returns the list target of an event that extract reads one
// of: its messages, or (isText) its text parts. It selects the event's
// member as extract does.
func listTarget(ev *gen.Event) (msgs []gen.CanonicalMessage, text gen.TextParts, isText bool) {
	switch {
	case ev.TurnStart != nil:
		return ev.TurnStart.Items, nil, false
	case ev.TurnFinishBefore != nil:
		return ev.TurnFinishBefore.Items, nil, false
	case ev.ModelRequestBefore != nil:
		return ev.ModelRequestBefore.Items, nil, false
	case ev.ModelResponseAfter != nil:
		return ev.ModelResponseAfter.Items, nil, false
	case ev.ToolAfter != nil:
		return ev.ToolAfter.Items, nil, false
	case ev.UserMessageInbound != nil:
		return ev.UserMessageInbound.Message.Messages, nil, false
	case ev.UserMessageOutbound != nil:
		return ev.UserMessageOutbound.Message.Messages, nil, false
	case ev.ContextCompactBefore != nil:
		return nil, ev.ContextCompactBefore.Instructions, true
	case ev.ContextCompactAfter != nil:
		return nil, ev.ContextCompactAfter.Summary, true
	}
	return nil, nil, false
}

// extractInput reads the tool input (or the host's override).
func (o *Occurrence) extractInput(eventInput, override json.RawMessage, items []gen.ContentItem) error {
	src := eventInput
	bad := func(err error) error { return invalidAt("tool input", "/tool/input", err) }
	if override != nil {
		src = override
		bad = func(err error) error { return &InputError{Initial: true, Part: "initial input", Err: err} }
	}
	if o.validated && override == nil {
		// Canonical validation of the event established what the checks
		// below make of src (valid JSON, one object, no repeated member
		// name at any depth): only its first byte is looked at, and it is
		// split when an effect needs its members (loadInput). A host
		// occurrence (NewValidated) keeps it aliased: the host's event is
		// not changed during the call, and what leaves the occurrence
		// (State, Event) is a copy.
		if err := checkValidatedParts(src, items, &o.known); err != nil {
			return err
		}
		if !o.checkOnly {
			o.lazyInput = src
		}
		return nil
	}
	if o.checkOnly {
		// What splitObject(src, true) accepts: valid JSON (escapes
		// included) without repeated member names whose value is an
		// object.
		b := trimWS(src)
		if err := checkJSON(b); err != nil {
			return bad(err)
		}
		if b[0] != '{' {
			return bad(errNotObject)
		}
		if err := knownContentParts(items, &o.known); err != nil {
			return invalidAt("event items", "/items", err)
		}
		return nil
	}
	ms, err := splitObject(src, true)
	if err != nil {
		return bad(err)
	}
	if ms == nil {
		ms = []member{}
	}
	o.cur.input = cloneMembers(ms)
	if err := knownContentParts(items, &o.known); err != nil {
		return invalidAt("event items", "/items", err)
	}
	return nil
}

// checkValidatedParts is what extractInput checks of the tool input src
// and the items of a canonically validated tool event, recording the
// content parts the items establish in known.
func checkValidatedParts(src json.RawMessage, items []gen.ContentItem, known *partSet) error {
	if jsonKind(src) != '{' {
		return invalidAt("tool input", "/tool/input", errNotObject)
	}
	if err := knownContentParts(items, known); err != nil {
		return invalidAt("event items", "/items", err)
	}
	return nil
}

// checkValidatedInput is CheckValidated of a tool event with tool input
// src and items: an occurrence's init of it checks exactly this.
func checkValidatedInput(src json.RawMessage, items []gen.ContentItem) error {
	var known partSet
	return checkValidatedParts(src, items, &known)
}

// loadInput splits a tool input that extractInput left to be split when
// needed (lazyInput) into cur.input, as extractInput would have: the input
// passed canonical validation, so its JSON is not checked again. It fails
// only when the stop flag interrupts it.
func (o *Occurrence) loadInput() error {
	if o.lazyInput == nil {
		return nil
	}
	ms, err := splitObjectStop(o.lazyInput, false, o.stop)
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []member{}
	}
	o.cur.input = cloneMembers(ms)
	o.lazyInput = nil
	return nil
}

// inputJSON encodes the effective tool input, as encodeObject(o.cur.input)
// once the input is split: a tool input not split yet (lazyInput) is
// returned as a copy when it is written as encodeObject writes its members
// (no whitespace outside its member values), and encoded from its members
// otherwise, without keeping them.
func (o *Occurrence) inputJSON() json.RawMessage {
	if o.lazyInput == nil {
		return encodeObject(o.cur.input)
	}
	if compactTop(o.lazyInput) {
		return bytes.Clone(o.lazyInput)
	}
	ms, err := splitObject(o.lazyInput, false)
	if err != nil { // cannot happen for a validated input: an empty object rather than its text
		ms = nil
	}
	return encodeObject(ms)
}

// compactTop reports whether b, one valid JSON value, has no whitespace
// before or after it and none between the tokens of its top level (the
// members of an object, outside their values): then encodeObject of its
// members (splitObject) writes b itself. Its time is linear in len(b).
func compactTop(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// To the closing quote: the next one after an even run of
			// backslashes.
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return false // not valid JSON
				}
				i += 1 + j
				k := i - 1
				for b[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ' ', '\t', '\n', '\r':
			if depth <= 1 {
				return false
			}
		}
	}
	return true
}

// extractElicitResult reads an elicitation result: mode, action, and for a
// body-selected result the parsed MCP ElicitResult (interaction-payloads.md).
func (o *Occurrence) extractElicitResult(e *gen.UserElicitationResultEvent, req *gen.UserElicitationRequestEvent) error {
	el := e.Elicitation
	if !el.Mode.Known() || !el.Action.Known() {
		return invalidAt("elicitation mode or action", "/elicitation", nil)
	}
	c := &elicitCtx{mode: el.Mode, action: string(el.Action)}
	o.elicit = c
	// Correlation comes before any body is read (interaction-payloads.md,
	// accepted-boundary-apis.md: parent, source and session first).
	if req != nil {
		if err := correlateElicitation(e, req); err != nil {
			return invalid("elicitation request context", err)
		}
	}
	if el.Result != nil && el.Result.Body != nil {
		r, err := parseResult(el.Result.Body.Text)
		if err != nil {
			return invalidAt("elicitation result body", "/elicitation/result/body/text", err)
		}
		if string(r.Action) != c.action {
			return invalidAt("elicitation result action differs from its body", "/elicitation/action", nil)
		}
		if r.Content != nil && (c.mode != gen.ElicitationModeForm || c.action != string(gen.MCPElicitationElicitResultActionAccept)) {
			return invalidAt("elicitation result content outside an accepted form", "/elicitation/result/body/text", nil)
		}
		for _, a := range r.Content {
			if !validAnswerValue(a.Value) {
				return invalidAt("elicitation result content", "/elicitation/result/body/text", nil)
			}
		}
		c.result = r
		c.resultPart = el.Result.Body
		m := o.cur.own()
		m.answers = cloneAnswers(r.Content)
		if m.answers == nil && c.formAvailable() {
			m.answers = gen.OrderedMap[gen.FormAnswerValue]{}
		}
		c.origAnswers = cloneAnswers(m.answers)
	}
	if req != nil {
		form, err := requestForm(req)
		if err != nil {
			return &InputError{Initial: true, Part: "elicitation request context", Err: err}
		}
		c.form = form
	}
	return knownContentParts(e.Items, &o.known)
}

// cloneWorkspace deep-copies a WorkspaceChange.
func cloneWorkspace(w gen.WorkspaceChange) gen.WorkspaceChange {
	out := gen.WorkspaceChange{WorkspaceRoots: slices.Clone(w.WorkspaceRoots)}
	if w.Cwd != nil {
		s := *w.Cwd
		out.Cwd = &s
	}
	return out
}

// validWorkspace checks task-workspace-event.schema.json#/$defs/WorkspaceChange
// on the typed value: at least one member, non-empty cwd, unique non-empty roots.
func validWorkspace(w gen.WorkspaceChange) bool {
	if w.Cwd == nil && w.WorkspaceRoots == nil {
		return false
	}
	if w.Cwd != nil && *w.Cwd == "" {
		return false
	}
	seen := make(map[string]struct{}, len(w.WorkspaceRoots))
	for _, r := range w.WorkspaceRoots {
		if r == "" {
			return false
		}
		if _, dup := seen[r]; dup {
			return false
		}
		seen[r] = struct{}{}
	}
	return true
}

// Event returns a detached copy of the effective event: the event given to
// New with every accepted modification written back (tool input, message
// lists, text parts, workspace change, and for an elicitation result the
// complete MCP result re-serialized into its text part). It is what the next
// receiver and the observers get.
func (o *Occurrence) Event() (*gen.Event, error) {
	if o.snapshot == nil {
		return nil, errors.New("settle: occurrence has no event snapshot")
	}
	var ev gen.Event
	if err := ev.UnmarshalJSON(o.snapshot); err != nil {
		return nil, fmt.Errorf("settle: decode event snapshot: %w", err)
	}
	c := &o.cur
	// The committed lists were validated when admitted: decode them directly.
	var msgs gen.CanonicalMessages
	if o.bound().tkind == tkMessages {
		if err := msgs.UnmarshalJSON(joinList(c.list)); err != nil {
			return nil, fmt.Errorf("settle: decode effective messages: %w", err)
		}
	}
	var text gen.TextParts
	if o.bound().tkind == tkText && c.listPresent {
		if err := text.UnmarshalJSON(joinList(c.list)); err != nil {
			return nil, fmt.Errorf("settle: decode effective text: %w", err)
		}
	}
	switch {
	case ev.ToolBefore != nil:
		ev.ToolBefore.Tool.Input = o.inputJSON()
	case ev.ToolPermissionRequest != nil:
		ev.ToolPermissionRequest.Tool.Input = o.inputJSON()
	case ev.TurnStart != nil:
		ev.TurnStart.Items = msgs
	case ev.TurnFinishBefore != nil:
		ev.TurnFinishBefore.Items = msgs
	case ev.ModelRequestBefore != nil:
		ev.ModelRequestBefore.Items = msgs
	case ev.ModelResponseAfter != nil:
		ev.ModelResponseAfter.Items = msgs
	case ev.ToolAfter != nil:
		ev.ToolAfter.Items = msgs
	case ev.UserMessageInbound != nil:
		ev.UserMessageInbound.Message.Messages = msgs
	case ev.UserMessageOutbound != nil:
		ev.UserMessageOutbound.Message.Messages = msgs
	case ev.ContextCompactBefore != nil:
		ev.ContextCompactBefore.Instructions = text
	case ev.ContextCompactAfter != nil:
		ev.ContextCompactAfter.Summary = text
	case ev.WorkspaceChangeBefore != nil:
		ev.WorkspaceChangeBefore.Workspace.Change = cloneWorkspace(c.more.get().workspace)
	case ev.UserElicitationResult != nil:
		if o.elicit.formAvailable() && !answersEqual(o.elicit.origAnswers, c.more.get().answers) {
			res, err := o.effectiveResult()
			if err != nil {
				return nil, err
			}
			part := ev.UserElicitationResult.Elicitation.Result
			if part == nil || part.Body == nil {
				return nil, errors.New("settle: elicitation result part changed shape")
			}
			part.Body.Text = string(res)
		}
	}
	return &ev, nil
}

// effectiveResult serializes the complete effective MCP result: the parsed
// original with its answer object replaced (action, _meta and extension
// members unchanged).
func (o *Occurrence) effectiveResult() ([]byte, error) {
	orig, err := o.elicit.result.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("settle: encode elicitation result: %w", err)
	}
	var r gen.MCPElicitationElicitResult
	if err := r.UnmarshalJSON(orig); err != nil {
		return nil, fmt.Errorf("settle: copy elicitation result: %w", err)
	}
	r.Content = cloneAnswers(o.cur.more.get().answers)
	if r.Content == nil {
		r.Content = gen.OrderedMap[gen.FormAnswerValue]{}
	}
	return r.MarshalJSON()
}
