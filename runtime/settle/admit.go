package settle

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/agenthooks/agenthooks-go/gen"
)

// reverseDNS is the pattern of deny codes and extension member names
// (deny-effect.schema.json, extensions.schema.json). Compiled once; a
// compiled Regexp is immutable and safe for concurrent use.
var reverseDNS = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`)

// grant is the request's advertisement, narrowed to the boundary's bounds.
type grant struct {
	fam              familySet
	replace, merge   bool
	stop, cont       bool
	remaining, count int
	hasRemaining     bool
	hasCount         bool
	now, nextTurn    bool
	form, url        bool
}

// makeGrant reads capabilities. Anything the boundary cannot grant, and
// unknown or malformed members, grant nothing (capability-auth.md: unknown
// fields "do not advertise or authorize new effects or operations").
func makeGrant(b *boundary, c *gen.Capabilities) grant {
	var g grant
	for _, f := range c.Effects {
		g.fam |= familyBit(f)
	}
	g.fam &= b.families
	if g.fam&famModify != 0 && c.Modify != nil {
		g.replace, g.merge = modifyOps(b.target, c.Modify)
	}
	if g.fam&famFlow != 0 && c.Flow != nil {
		for _, op := range c.Flow.Operations {
			switch op {
			case gen.FlowOperationStop:
				g.stop = b.stop
			case gen.FlowOperationContinue:
				g.cont = b.cont
			}
		}
		g.remaining, g.hasRemaining = nonNegative(c.Flow.RemainingContinuations)
		g.count, g.hasCount = nonNegative(c.Flow.ContinuationCount)
	}
	if g.fam&famInject != 0 && c.Inject != nil && c.Inject.Context.Append {
		for _, d := range c.Inject.Context.DeliverAt {
			switch d {
			case gen.DeliverAtNow:
				g.now = true
			case gen.DeliverAtNextTurn:
				g.nextTurn = true
			}
		}
	}
	if c.Elicitation != nil {
		g.form = present(c.Elicitation.Form)
		g.url = present(c.Elicitation.URL)
	}
	return g
}

// present reports a JSON object member that is set (not absent or null).
func present(raw json.RawMessage) bool { return jsonKind(raw) == '{' }

// nonNegative reads an integer allowance; anything else counts as absent.
func nonNegative(n *json.Number) (int, bool) {
	if n == nil {
		return 0, false
	}
	v, ok := Integer(*n)
	if !ok || v < 0 || v > 1<<31 {
		return 0, false
	}
	return int(v), true
}

// modifyOps returns the advertised operations of target.
func modifyOps(t gen.ModifyTarget, m *gen.CapabilitiesModify) (replace, merge bool) {
	switch t {
	case gen.ModifyTargetInput:
		if m.Input != nil {
			return m.Input.Replace, m.Input.Merge
		}
	case gen.ModifyTargetOutput:
		if m.Output != nil {
			return m.Output.Replace, m.Output.Merge
		}
	case gen.ModifyTargetPrompt:
		if m.Prompt != nil {
			return m.Prompt.Replace, m.Prompt.Merge
		}
	case gen.ModifyTargetRequest:
		if m.Request != nil {
			return m.Request.Replace, m.Request.Merge
		}
	case gen.ModifyTargetResponse:
		if m.Response != nil {
			return m.Response.Replace, m.Response.Merge
		}
	case gen.ModifyTargetContent:
		if m.Content != nil {
			return m.Content.Replace, m.Content.Merge
		}
	case gen.ModifyTargetInstructions:
		if m.Instructions != nil {
			return m.Instructions.Replace, m.Instructions.Merge
		}
	case gen.ModifyTargetSummary:
		if m.Summary != nil {
			return m.Summary.Replace, m.Summary.Merge
		}
	case gen.ModifyTargetWorkspace:
		if m.Workspace != nil {
			return m.Workspace.Replace, m.Workspace.Merge
		}
	}
	return false, false
}

// is reports a const-valued member that is either the constant or left
// empty (the codecs fill constants in on encoding).
func is(v, want string) bool { return v == "" || v == want }

// staged is the admitted, decoded form of one effect.
type staged struct {
	op      gen.EffectOperation
	members []member          // modify(input)
	entries []json.RawMessage // modify(message/text list)
	hidden  bool              // entries contain withheld text
	ws      gen.WorkspaceChange
	answers gen.OrderedMap[gen.FormAnswerValue]
}

// stage admits every effect and, if all are admissible, computes the next
// committed state from the current one without touching it.
func (o *Occurrence) stage(granted *gen.Capabilities, effects []gen.Effect, prov json.RawMessage) (committed, *Rejection) {
	g := makeGrant(o.bound(), granted)
	var small [4]staged // the common responses have few effects
	st := small[:0]
	if len(effects) <= len(small) {
		st = small[:len(effects)]
	} else {
		st = make([]staged, len(effects))
	}
	for i := range effects {
		if reason := o.admit(&effects[i], &g, &st[i]); reason != "" {
			return committed{}, reject(i, reason)
		}
	}
	// An interrupted stage's rejection is reported as the interruption
	// by ApplyContext: its reason does not matter.
	interrupted := func(i int) (committed, *Rejection) { return committed{}, reject(i, ReasonInvalidEffect) }
	// The effective input or list target of an occurrence of a validated
	// event is needed only to merge into it and to compare it with a
	// modified one. Neither can fail to load from such an event; loading
	// the input fails only when the stop flag interrupts it.
	for i := range effects {
		if effects[i].ModifyInput != nil && o.loadInput() != nil {
			return interrupted(i)
		}
		if (effects[i].ModifyMessages != nil || effects[i].ModifyText != nil) && o.loadList() != nil {
			return committed{}, reject(i, ReasonInvalidValue)
		}
	}

	c := &o.cur
	next := *c
	var (
		modified  = -1 // index of the last modification
		ret       = -1
		perm      = permNone
		anyStop   bool
		anyCont   bool
		stopWhy   string
		inputOwn  bool
		ownedList bool
	)
	for i := range effects {
		e, s := &effects[i], &st[i]
		switch {
		case e.ModifyInput != nil:
			modified = i
			if s.op == gen.EffectOperationReplace {
				next.input, inputOwn = s.members, true
				continue
			}
			if !inputOwn {
				next.input, inputOwn = slices.Clone(next.input), true
			}
			var idx map[string]int // by name, when a linear search could grow long
			if len(next.input)+len(s.members) > smallMembers {
				idx = make(map[string]int, len(next.input)+len(s.members))
				for k, m := range next.input {
					if k%stopEvery == stopEvery-1 && o.stopped() {
						return interrupted(i)
					}
					idx[m.name] = k
				}
			}
			for n, m := range s.members {
				if n%stopEvery == stopEvery-1 && o.stopped() {
					return interrupted(i)
				}
				if k := findMember(next.input, idx, m.name); k >= 0 {
					next.input[k].value = m.value
					continue
				}
				if idx != nil {
					idx[m.name] = len(next.input)
				}
				next.input = append(next.input, m)
			}
		case e.ModifyMessages != nil, e.ModifyText != nil:
			modified = i
			if s.op == gen.EffectOperationReplace {
				next.list, ownedList = s.entries, true
				next.listHidden = s.hidden
			} else {
				if !ownedList {
					next.list, ownedList = slices.Clip(next.list), true
				}
				next.list = append(next.list, s.entries...)
				next.listHidden = next.listHidden || s.hidden
			}
			next.listPresent = true
		case e.ModifyWorkspace != nil:
			modified = i
			if s.op == gen.EffectOperationReplace {
				next.mutMore(c).workspace = s.ws
			} else {
				w := cloneWorkspace(next.more.get().workspace)
				if s.ws.Cwd != nil {
					w.Cwd = s.ws.Cwd
				}
				if s.ws.WorkspaceRoots != nil {
					w.WorkspaceRoots = s.ws.WorkspaceRoots
				}
				next.mutMore(c).workspace = w
			}
		case e.ModifyForm != nil:
			modified = i
			if s.op == gen.EffectOperationReplace {
				next.mutMore(c).answers = s.answers
			} else {
				next.mutMore(c).answers = mergeAnswers(next.more.get().answers, s.answers)
			}
		case e.ReturnTool != nil:
			ret = i
		case e.Deny != nil:
			perm = max(perm, permDeny)
		case e.Ask != nil:
			perm = max(perm, permAsk)
		case e.Allow != nil:
			perm = max(perm, permAllow)
		case e.StopFlow != nil:
			if !anyStop {
				stopWhy = e.StopFlow.Reason
			}
			anyStop = true
		case e.ContinueFlow != nil:
			anyCont = true
		}
	}

	// Post-application checks of the effective target (every replacement and
	// merge MUST satisfy the target's schema, base/composition.md).
	changed := false
	if modified >= 0 {
		switch o.bound().tkind {
		case tkInput:
			changed = !membersEqual(c.input, next.input)
		case tkMessages, tkText:
			changed = !listsEqual(c.list, next.list) || c.listPresent != next.listPresent
		case tkWorkspace:
			if !validWorkspace(next.more.get().workspace) {
				return committed{}, reject(modified, ReasonInvalidValue)
			}
			a, _ := c.more.get().workspace.MarshalJSON()
			b, _ := next.more.get().workspace.MarshalJSON()
			changed = !bytes.Equal(a, b)
		case tkForm:
			changed = !answersEqual(c.more.get().answers, next.more.get().answers)
			if o.elicit.form != nil {
				if checkAnswers(o.elicit.form, next.more.get().answers) != nil {
					return committed{}, reject(modified, ReasonInvalidValue)
				}
			}
		}
	}
	// A changed effective operation invalidates an earlier candidate and an
	// earlier approval; a deeply equal result preserves both (interop §5).
	if changed {
		next.discardCandidate(c)
		if next.perm == permAllow {
			next.perm = permNone
		}
	}
	// Modifications are applied before this response's supplied result is
	// bound; a later return replaces the candidate.
	if ret >= 0 {
		next.mutMore(c).cand = Candidate{Present: true, Value: bytes.Clone(effects[ret].ReturnTool.Value), Provenance: bytes.Clone(prov)}
	}
	next.perm = max(next.perm, perm)
	if next.perm == permDeny {
		next.discardCandidate(c) // denial discards a candidate
	}
	if anyStop && next.flow != flowStop {
		next.flow = flowStop
		if stopWhy != next.more.get().stopReason {
			next.mutMore(c).stopReason = stopWhy
		}
	} else if anyCont && next.flow == flowNone {
		next.flow = flowContinue
	}
	if g.hasRemaining {
		next.contRemaining = uint32(g.remaining) // at most 1<<31 (nonNegative)
	}
	if g.hasCount {
		next.contCount = uint32(g.count)
	}
	for i := range effects {
		e := &effects[i]
		switch {
		case e.ContinueFlow != nil && e.ContinueFlow.Instruction != nil:
			m := next.mutMore(c)
			m.instructions = append(slices.Clip(m.instructions), *e.ContinueFlow.Instruction)
		case e.Inject != nil:
			m := next.mutMore(c)
			m.injections = append(slices.Clip(m.injections), copyInject(e.Inject))
		case e.Message != nil:
			next.messages = append(slices.Clip(next.messages), e.Message.Text)
		}
	}
	return next, nil
}

// admit checks one effect against the boundary and the grant, decoding its
// value into s. It returns "" or a reason.
func (o *Occurrence) admit(e *gen.Effect, g *grant, s *staged) string {
	arms := 0
	for _, set := range [...]bool{e.Deny != nil, e.Allow != nil, e.Ask != nil, e.ModifyMessages != nil,
		e.ModifyText != nil, e.ModifyWorkspace != nil, e.ModifyForm != nil, e.ModifyInput != nil,
		e.Message != nil, e.ReturnTool != nil, e.StopFlow != nil, e.ContinueFlow != nil, e.Inject != nil} {
		if set {
			arms++
		}
	}
	switch {
	case arms == 0:
		return ReasonUnknownEffect
	case arms > 1:
		return ReasonInvalidEffect
	}
	b := o.bound()
	family := func(f familySet) string {
		if b.families&f == 0 {
			return ReasonBoundaryForbidden
		}
		if g.fam&f == 0 {
			return ReasonEffectNotGranted
		}
		return ""
	}
	switch {
	case e.Deny != nil:
		d := e.Deny
		if !is(d.Type, "deny") || d.Reason == "" || (d.Code != nil && !reverseDNS.MatchString(*d.Code)) {
			return ReasonInvalidEffect
		}
		if d.Extensions != nil {
			ms, err := splitObjectStop(d.Extensions, true, o.stop)
			if err != nil {
				return ReasonInvalidEffect
			}
			for _, m := range ms {
				if !reverseDNS.MatchString(m.name) {
					return ReasonInvalidEffect
				}
			}
		}
		return family(famDeny)
	case e.Allow != nil:
		if !is(e.Allow.Type, "allow") {
			return ReasonInvalidEffect
		}
		return family(famAllow)
	case e.Ask != nil:
		if !is(e.Ask.Type, "ask") {
			return ReasonInvalidEffect
		}
		return family(famAsk)
	case e.Message != nil:
		if !is(e.Message.Type, "message") {
			return ReasonInvalidEffect
		}
		return family(famMessage)
	case e.StopFlow != nil:
		f := e.StopFlow
		if !is(f.Type, "flow") || !is(f.Operation, "stop") || f.Reason == "" {
			return ReasonInvalidEffect
		}
		if r := family(famFlow); r != "" {
			return r
		}
		if !b.stop {
			return ReasonBoundaryForbidden
		}
		if !g.stop {
			return ReasonOperationNotGranted
		}
		return ""
	case e.ContinueFlow != nil:
		f := e.ContinueFlow
		if !is(f.Type, "flow") || !is(f.Operation, "continue") || (f.Instruction != nil && *f.Instruction == "") {
			return ReasonInvalidEffect
		}
		if r := family(famFlow); r != "" {
			return r
		}
		if !b.cont {
			return ReasonBoundaryForbidden
		}
		if !g.cont {
			return ReasonOperationNotGranted
		}
		if g.remaining <= 0 {
			return ReasonContinuationExhausted
		}
		return ""
	case e.Inject != nil:
		in := e.Inject
		if !is(in.Type, "inject") || !is(in.Target, "context") || !is(in.Operation, "append") || !in.DeliverAt.Known() || in.Value == nil {
			return ReasonInvalidEffect
		}
		if r := family(famInject); r != "" {
			return r
		}
		if (in.DeliverAt == gen.DeliverAtNow && !g.now) || (in.DeliverAt == gen.DeliverAtNextTurn && !g.nextTurn) {
			return ReasonOperationNotGranted
		}
		if _, _, ok := checkSuppliedMessages(in.Value, "", &o.known); !ok {
			return ReasonInvalidValue
		}
		return ""
	case e.ReturnTool != nil:
		if !is(e.ReturnTool.Type, "return") {
			return ReasonInvalidEffect
		}
		if r := family(famReturn); r != "" {
			return r
		}
		return o.admitReturn(e.ReturnTool.Value, g)
	}
	// Modifications.
	if r := family(famModify); r != "" {
		return r
	}
	var (
		target gen.ModifyTarget
		op     gen.EffectOperation
	)
	switch {
	case e.ModifyInput != nil:
		if !is(e.ModifyInput.Target, "input") {
			return ReasonInvalidEffect
		}
		target, op = gen.ModifyTargetInput, e.ModifyInput.Operation
	case e.ModifyMessages != nil:
		if !is(e.ModifyMessages.Type, "modify") || !e.ModifyMessages.Target.Known() {
			return ReasonInvalidEffect
		}
		target, op = gen.ModifyTarget(e.ModifyMessages.Target), e.ModifyMessages.Operation
	case e.ModifyText != nil:
		if !is(e.ModifyText.Type, "modify") || !e.ModifyText.Target.Known() {
			return ReasonInvalidEffect
		}
		target, op = gen.ModifyTarget(e.ModifyText.Target), e.ModifyText.Operation
	case e.ModifyWorkspace != nil:
		if !is(e.ModifyWorkspace.Type, "modify") || !is(e.ModifyWorkspace.Target, "workspace") {
			return ReasonInvalidEffect
		}
		target, op = gen.ModifyTargetWorkspace, e.ModifyWorkspace.Operation
	case e.ModifyForm != nil:
		if !is(e.ModifyForm.Type, "modify") || !is(e.ModifyForm.Target, "content") {
			return ReasonInvalidEffect
		}
		target, op = gen.ModifyTargetContent, e.ModifyForm.Operation
	}
	if e.ModifyInput != nil && !is(e.ModifyInput.Type, "modify") {
		return ReasonInvalidEffect
	}
	if !op.Known() {
		return ReasonInvalidEffect
	}
	if target != b.target || b.tkind == tkNone {
		return ReasonBoundaryForbidden
	}
	if (op == gen.EffectOperationReplace && !g.replace) || (op == gen.EffectOperationMerge && !g.merge) {
		if !g.replace && !g.merge {
			return ReasonTargetNotGranted
		}
		return ReasonOperationNotGranted
	}
	s.op = op
	switch {
	case e.ModifyInput != nil:
		if b.tkind != tkInput {
			return ReasonInvalidValue
		}
		ms, err := splitObjectStop(e.ModifyInput.Value, true, o.stop)
		if err != nil {
			return ReasonInvalidValue
		}
		s.members = cloneMembers(ms)
		if s.members == nil {
			s.members = []member{}
		}
	case e.ModifyMessages != nil:
		// A list is invalid for the elicitation answer object; objects are
		// invalid for message-list targets (base/composition.md).
		if b.tkind != tkMessages {
			return ReasonInvalidValue
		}
		if op == gen.EffectOperationReplace && o.withheld() {
			return ReasonHiddenContent
		}
		entries, hidden, ok := checkSuppliedMessages(e.ModifyMessages.Value, b.role, &o.known)
		if !ok {
			return ReasonInvalidValue
		}
		s.entries, s.hidden = entries, hidden
	case e.ModifyText != nil:
		if b.tkind != tkText {
			return ReasonInvalidValue
		}
		if op == gen.EffectOperationReplace && o.withheld() {
			return ReasonHiddenContent
		}
		entries, hidden, ok := checkSuppliedText(e.ModifyText.Value, &o.known)
		if !ok {
			return ReasonInvalidValue
		}
		s.entries, s.hidden = entries, hidden
	case e.ModifyWorkspace != nil:
		if b.tkind != tkWorkspace || !validWorkspace(e.ModifyWorkspace.Value) {
			return ReasonInvalidValue
		}
		s.ws = cloneWorkspace(e.ModifyWorkspace.Value)
	case e.ModifyForm != nil:
		if b.tkind != tkForm {
			return ReasonInvalidValue
		}
		if !g.form {
			return ReasonModeNotGranted
		}
		if !o.elicit.formAvailable() {
			return ReasonTargetUnavailable
		}
		if o.hostContext && o.elicit.form == nil {
			return ReasonContextUnavailable
		}
		if e.ModifyForm.Value == nil {
			return ReasonInvalidValue
		}
		for _, a := range e.ModifyForm.Value {
			if !validAnswerValue(a.Value) {
				return ReasonInvalidValue
			}
		}
		s.answers = cloneAnswers(e.ModifyForm.Value)
	}
	return ""
}

// admitReturn checks a supplied result against the boundary's result type
// ("Validate supplied values against the active boundary, not merely the
// generic effect envelope", base/composition.md).
func (o *Occurrence) admitReturn(v json.RawMessage, g *grant) string {
	if len(trimWS(v)) == 0 || checkJSONStop(v, o.stop) != nil {
		return ReasonInvalidEffect
	}
	switch o.bound().ret {
	case rkAny:
		return ""
	case rkMessages:
		var ms gen.CanonicalMessages
		if parseCanonical(refMessages, v, &ms) != nil {
			return ReasonInvalidValue
		}
		if _, _, ok := checkSuppliedMessages(ms, "", &o.known); !ok {
			return ReasonInvalidValue
		}
		return ""
	case rkText:
		var ps gen.TextParts
		if parseCanonical(refTextParts, v, &ps) != nil {
			return ReasonInvalidValue
		}
		if _, _, ok := checkSuppliedText(ps, &o.known); !ok {
			return ReasonInvalidValue
		}
		return ""
	case rkElicit:
		return o.admitElicitReturn(v, g)
	}
	return ReasonBoundaryForbidden
}

// admitElicitReturn checks a supplied MCP ElicitResult at
// user.elicitation.request: the mode must be advertised, URL and
// non-accept results carry no content, and accepted form content must
// satisfy the requested form schema, which needs the request body.
func (o *Occurrence) admitElicitReturn(v json.RawMessage, g *grant) string {
	var r gen.MCPElicitationElicitResult
	if parseCanonical(refElicitResult, v, &r) != nil {
		return ReasonInvalidValue
	}
	mode := o.elicit.mode
	if (mode == gen.ElicitationModeForm && !g.form) || (mode == gen.ElicitationModeURL && !g.url) {
		return ReasonModeNotGranted
	}
	accept := r.Action == gen.MCPElicitationElicitResultActionAccept
	if !accept || mode == gen.ElicitationModeURL {
		if r.Content != nil {
			return ReasonInvalidValue
		}
		return ""
	}
	if o.elicit.form == nil {
		return ReasonContentUnavailable
	}
	if checkAnswers(o.elicit.form, r.Content) != nil {
		return ReasonInvalidValue
	}
	return ""
}

// copyEffects deep-copies a list of effects.
func copyEffects(es []gen.Effect) []gen.Effect {
	out := make([]gen.Effect, len(es))
	for i := range es {
		out[i] = copyEffect(&es[i])
	}
	return out
}

// copyEffect deep-copies one effect.
func copyEffect(e *gen.Effect) gen.Effect {
	var out gen.Effect
	switch {
	case e.Deny != nil:
		d := *e.Deny
		d.Code = clonePtr(d.Code)
		d.Extensions = bytes.Clone(d.Extensions)
		out.Deny = &d
	case e.Allow != nil:
		a := *e.Allow
		out.Allow = &a
	case e.Ask != nil:
		a := *e.Ask
		out.Ask = &a
	case e.Message != nil:
		m := *e.Message
		out.Message = &m
	case e.StopFlow != nil:
		f := *e.StopFlow
		out.StopFlow = &f
	case e.ContinueFlow != nil:
		f := *e.ContinueFlow
		f.Instruction = clonePtr(f.Instruction)
		out.ContinueFlow = &f
	case e.ModifyInput != nil:
		m := *e.ModifyInput
		m.Value = bytes.Clone(m.Value)
		out.ModifyInput = &m
	case e.ReturnTool != nil:
		r := *e.ReturnTool
		r.Value = bytes.Clone(r.Value)
		out.ReturnTool = &r
	case e.ModifyForm != nil:
		m := *e.ModifyForm
		m.Value = cloneAnswers(m.Value)
		out.ModifyForm = &m
	case e.ModifyWorkspace != nil:
		m := *e.ModifyWorkspace
		m.Value = cloneWorkspace(m.Value)
		out.ModifyWorkspace = &m
	case e.ModifyMessages != nil:
		m := *e.ModifyMessages
		m.Value = cloneMessages(m.Value)
		out.ModifyMessages = &m
	case e.ModifyText != nil:
		m := *e.ModifyText
		m.Value = cloneText(m.Value)
		out.ModifyText = &m
	case e.Inject != nil:
		in := copyInject(e.Inject)
		out.Inject = &in
	}
	return out
}

// copyInject deep-copies an inject effect.
func copyInject(in *gen.InjectEffect) gen.InjectEffect {
	out := *in
	out.Value = cloneMessages(in.Value)
	return out
}

// copyInjections deep-copies a list of inject effects (nil stays nil).
func copyInjections(in []gen.InjectEffect) []gen.InjectEffect {
	if in == nil {
		return nil
	}
	out := make([]gen.InjectEffect, len(in))
	for i := range in {
		out[i] = copyInject(&in[i])
	}
	return out
}

// cloneMessages deep-copies messages through their lossless codec.
func cloneMessages(ms gen.CanonicalMessages) gen.CanonicalMessages {
	if ms == nil {
		return nil
	}
	out := make(gen.CanonicalMessages, len(ms))
	for i := range ms {
		b, err := ms[i].MarshalJSON()
		if err != nil || out[i].UnmarshalJSON(b) != nil {
			out[i] = ms[i] // unreachable for codec-built values; keep a shallow copy
		}
	}
	return out
}

// cloneText deep-copies text parts through their lossless codec.
func cloneText(ps gen.TextParts) gen.TextParts {
	if ps == nil {
		return nil
	}
	out := make(gen.TextParts, len(ps))
	for i := range ps {
		b, err := ps[i].MarshalJSON()
		if err != nil || out[i].UnmarshalJSON(b) != nil {
			out[i] = ps[i]
		}
	}
	return out
}

// clonePtr copies a string pointer.
func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}
