package hooks

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// Operation is a modification operation a grant allows on a target.
type Operation int

const (
	// Replace allows substituting the whole target value.
	Replace Operation = iota + 1
	// Merge allows appending to a list target or shallow-merging an object
	// target.
	Merge
)

// Grant declares what the host supports at one event: the delivery modes
// and, for interception, the effects and operations it can enforce. A Grant
// is an immutable value: every method returns a new Grant and never changes
// the receiver, so a base declaration can be reused without widening it.
// The zero Grant is invalid; start from Intercept or Observe. Mistakes (an
// empty operation list, an effect on an observation grant) are reported by
// New or by the call that uses the grant.
type Grant struct {
	valid     bool
	intercept bool
	effects   []gen.EffectFamily
	modify    []targetOps
	flow      []gen.FlowOperation
	maxCont   int // -1: no continue grant
	deliverAt []gen.DeliverAt
	form, url bool
	err       string
}

type targetOps struct {
	target         gen.ModifyTarget
	replace, merge bool
}

// Intercept starts a grant that advertises both interception and
// observation of the event and, until effects are added, no effects.
func Intercept() Grant { return Grant{valid: true, intercept: true, maxCont: -1} }

// Observe starts an observation-only grant. Adding any effect to it is an
// error.
func Observe() Grant { return Grant{valid: true, maxCont: -1} }

func (g Grant) clone() Grant {
	g.effects = slices.Clone(g.effects)
	g.modify = slices.Clone(g.modify)
	g.flow = slices.Clone(g.flow)
	g.deliverAt = slices.Clone(g.deliverAt)
	return g
}

func (g Grant) withEffect(f gen.EffectFamily) Grant {
	g = g.clone()
	if !g.intercept && g.err == "" {
		g.err = "an observation grant cannot carry the " + string(f) + " effect"
	}
	if !slices.Contains(g.effects, f) {
		g.effects = append(g.effects, f)
	}
	return g
}

// Allow grants the allow effect.
func (g Grant) Allow() Grant { return g.withEffect(gen.EffectFamilyAllow) }

// Deny grants the deny effect.
func (g Grant) Deny() Grant { return g.withEffect(gen.EffectFamilyDeny) }

// Ask grants the ask effect.
func (g Grant) Ask() Grant { return g.withEffect(gen.EffectFamilyAsk) }

// Message grants the user-facing message effect.
func (g Grant) Message() Grant { return g.withEffect(gen.EffectFamilyMessage) }

// Return grants the return effect (a supplied result).
func (g Grant) Return() Grant { return g.withEffect(gen.EffectFamilyReturn) }

// Modify grants the modify effect on target with the given operations; at
// least one operation is required.
func (g Grant) Modify(target gen.ModifyTarget, ops ...Operation) Grant {
	g = g.withEffect(gen.EffectFamilyModify)
	t := targetOps{target: target}
	for _, op := range ops {
		switch op {
		case Replace:
			t.replace = true
		case Merge:
			t.merge = true
		default:
			if g.err == "" {
				g.err = "unknown modify operation " + strconv.Itoa(int(op))
			}
		}
	}
	if !t.replace && !t.merge && g.err == "" {
		g.err = "modify(" + string(target) + ") needs at least one operation"
	}
	i := slices.IndexFunc(g.modify, func(x targetOps) bool { return x.target == target })
	if i < 0 {
		g.modify = append(g.modify, t)
	} else {
		g.modify[i].replace = g.modify[i].replace || t.replace
		g.modify[i].merge = g.modify[i].merge || t.merge
	}
	return g
}

// ModifyInput grants modify(input) (tool arguments) with ops.
func (g Grant) ModifyInput(ops ...Operation) Grant { return g.Modify(gen.ModifyTargetInput, ops...) }

// ModifyOutput grants modify(output) (tool.after items) with ops.
func (g Grant) ModifyOutput(ops ...Operation) Grant { return g.Modify(gen.ModifyTargetOutput, ops...) }

// ModifyPrompt grants modify(prompt) with ops.
func (g Grant) ModifyPrompt(ops ...Operation) Grant { return g.Modify(gen.ModifyTargetPrompt, ops...) }

// ModifyRequest grants modify(request) (model request items) with ops.
func (g Grant) ModifyRequest(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetRequest, ops...)
}

// ModifyResponse grants modify(response) with ops.
func (g Grant) ModifyResponse(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetResponse, ops...)
}

// ModifyContent grants modify(content) with ops.
func (g Grant) ModifyContent(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetContent, ops...)
}

// ModifyInstructions grants modify(instructions) (compaction instructions)
// with ops.
func (g Grant) ModifyInstructions(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetInstructions, ops...)
}

// ModifySummary grants modify(summary) (compaction summary) with ops.
func (g Grant) ModifySummary(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetSummary, ops...)
}

// ModifyWorkspace grants modify(workspace) with ops.
func (g Grant) ModifyWorkspace(ops ...Operation) Grant {
	return g.Modify(gen.ModifyTargetWorkspace, ops...)
}

// Stop grants the flow effect with the stop operation.
func (g Grant) Stop() Grant {
	g = g.withEffect(gen.EffectFamilyFlow)
	if !slices.Contains(g.flow, gen.FlowOperationStop) {
		g.flow = append(g.flow, gen.FlowOperationStop)
	}
	return g
}

// Continue grants the flow effect with the continue operation, at most max
// continuations per turn (an enforceable commitment). Each call advertises
// the remaining allowance; see WithContinuations.
func (g Grant) Continue(max int) Grant {
	g = g.withEffect(gen.EffectFamilyFlow)
	if max < 1 && g.err == "" {
		g.err = "continue needs a positive maximum"
	}
	if !slices.Contains(g.flow, gen.FlowOperationContinue) {
		g.flow = append(g.flow, gen.FlowOperationContinue)
	}
	g.maxCont = max
	return g
}

// Inject grants context injection delivered at the given points; at least
// one is required.
func (g Grant) Inject(at ...gen.DeliverAt) Grant {
	g = g.withEffect(gen.EffectFamilyInject)
	if len(at) == 0 && g.err == "" {
		g.err = "inject needs at least one delivery point"
	}
	for _, a := range at {
		if !slices.Contains(g.deliverAt, a) {
			g.deliverAt = append(g.deliverAt, a)
		}
	}
	return g
}

// ElicitationForm grants form-mode elicitation support explicitly.
func (g Grant) ElicitationForm() Grant {
	g = g.clone()
	if !g.intercept && g.err == "" {
		g.err = "an observation grant cannot carry elicitation support"
	}
	g.form = true
	return g
}

// ElicitationURL grants URL-mode elicitation support explicitly.
func (g Grant) ElicitationURL() Grant {
	g = g.clone()
	if !g.intercept && g.err == "" {
		g.err = "an observation grant cannot carry elicitation support"
	}
	g.url = true
	return g
}

// Intercepts reports whether the grant advertises interception.
func (g Grant) Intercepts() bool { return g.valid && g.intercept }

// Capabilities returns the grant as a canonical capabilities object, with
// no continuation used yet. It does not check boundary compatibility.
func (g Grant) Capabilities() gen.Capabilities { return g.capabilities(0) }

// capabilities renders the grant with continuation count used.
func (g Grant) capabilities(used int) gen.Capabilities {
	c := gen.Capabilities{Effects: []gen.EffectFamily{}}
	if !g.intercept {
		return c
	}
	c.Effects = slices.Clone(g.effects)
	if len(g.modify) > 0 {
		m := &gen.CapabilitiesModify{}
		for _, t := range g.modify {
			switch t.target {
			case gen.ModifyTargetInput:
				m.Input = &gen.CapabilitiesModifyInput{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetOutput:
				m.Output = &gen.CapabilitiesModifyOutput{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetPrompt:
				m.Prompt = &gen.CapabilitiesModifyPrompt{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetRequest:
				m.Request = &gen.CapabilitiesModifyRequest{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetResponse:
				m.Response = &gen.CapabilitiesModifyResponse{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetContent:
				m.Content = &gen.CapabilitiesModifyContent{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetInstructions:
				m.Instructions = &gen.CapabilitiesModifyInstructions{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetSummary:
				m.Summary = &gen.CapabilitiesModifySummary{Replace: t.replace, Merge: t.merge}
			case gen.ModifyTargetWorkspace:
				m.Workspace = &gen.CapabilitiesModifyWorkspace{Replace: t.replace, Merge: t.merge}
			}
		}
		c.Modify = m
	}
	if len(g.flow) > 0 {
		f := &gen.CapabilitiesFlow{}
		for _, op := range g.flow {
			if op == gen.FlowOperationContinue {
				remaining := g.maxCont - used
				if remaining <= 0 {
					continue // no allowance left: continue is not advertised
				}
				f.MaxContinuations = num(g.maxCont)
				f.RemainingContinuations = num(remaining)
				f.ContinuationCount = num(used)
			}
			f.Operations = append(f.Operations, op)
		}
		if len(f.Operations) > 0 {
			c.Flow = f
		} else {
			c.Effects = slices.DeleteFunc(c.Effects, func(e gen.EffectFamily) bool { return e == gen.EffectFamilyFlow })
		}
	}
	if len(g.deliverAt) > 0 {
		c.Inject = &gen.CapabilitiesInject{Context: gen.CapabilitiesInjectContext{Append: true, DeliverAt: slices.Clone(g.deliverAt)}}
	}
	if g.form || g.url {
		e := &gen.CapabilitiesElicitation{}
		if g.form {
			e.Form = json.RawMessage(`{}`)
		}
		if g.url {
			e.URL = json.RawMessage(`{}`)
		}
		c.Elicitation = e
	}
	return c
}

func num(n int) *json.Number {
	v := json.Number(strconv.Itoa(n))
	return &v
}

// check validates the grant against the event's catalogue entry: modes,
// effect families, modify targets, flow operations, then the canonical
// per-event capability definition. doc/ptr locate the grant for errors.
func (g Grant) check(ev gen.EventInfo, doc, ptr string, kind func(doc, ptr, kw, detail string) *ValidationError) error {
	if !g.valid {
		return kind(doc, ptr, "grant", "the zero Grant is invalid; start from Intercept() or Observe()")
	}
	if g.err != "" {
		return kind(doc, ptr, "grant", g.err)
	}
	if !g.intercept {
		return nil
	}
	if !ev.Interceptable() {
		return kind(doc, ptr, "mode", "the event is observe-only and cannot be intercepted")
	}
	for _, f := range g.effects {
		if !slices.Contains(ev.EffectFamilies, f) {
			return kind(doc, ptr+"/effects", "enum", fmt.Sprintf("the %s boundary cannot grant the %s effect", ev.Name, f))
		}
	}
	for _, t := range g.modify {
		if !slices.Contains(ev.ModifyTargets, t.target) {
			return kind(doc, ptr+"/modify", "propertyNames", fmt.Sprintf("the %s boundary has no %s modification target", ev.Name, t.target))
		}
	}
	for _, op := range g.flow {
		if !slices.Contains(ev.FlowOperations, string(op)) {
			return kind(doc, ptr+"/flow/operations", "enum", fmt.Sprintf("the %s boundary cannot grant flow %s", ev.Name, op))
		}
	}
	data, err := json.Marshal(g.capabilities(0))
	if err != nil {
		return kind(doc, ptr, "json", "grant cannot be encoded")
	}
	if err := validate.Default().Validate(ev.CapabilitySchema, data); err != nil {
		return kind(doc, ptr, "schema", "").withCause(ptr, err)
	}
	return nil
}

// narrows reports whether c (a per-call advertisement) grants nothing that
// base does not.
func narrows(c, base gen.Capabilities) bool {
	for _, e := range c.Effects {
		if !slices.Contains(base.Effects, e) {
			return false
		}
	}
	if c.Modify != nil {
		bm := base.Modify
		if bm == nil {
			return false
		}
		for _, p := range modifyPairs(c.Modify, bm) {
			if p[0] == nil {
				continue
			}
			if p[1] == nil || (p[0][0] && !p[1][0]) || (p[0][1] && !p[1][1]) {
				return false
			}
		}
	}
	if c.Flow != nil {
		if base.Flow == nil {
			return false
		}
		for _, op := range c.Flow.Operations {
			if !slices.Contains(base.Flow.Operations, op) {
				return false
			}
		}
		// The allowance is maxContinuations, or remainingContinuations
		// where a manifest states only that (the schema requires only the
		// latter), as advertise reads it.
		if a, ok := allowance(c.Flow); ok {
			if b, ok := allowance(base.Flow); ok && a > b {
				return false
			}
		}
	}
	if c.Inject != nil {
		if base.Inject == nil {
			return false
		}
		for _, d := range c.Inject.Context.DeliverAt {
			if !slices.Contains(base.Inject.Context.DeliverAt, d) {
				return false
			}
		}
	}
	if c.Elicitation != nil {
		b := base.Elicitation
		if (c.Elicitation.Form != nil && (b == nil || b.Form == nil)) || (c.Elicitation.URL != nil && (b == nil || b.URL == nil)) {
			return false
		}
	}
	return true
}

// ops extracts {replace, merge} from any of the per-target operation types.
func ops[T interface {
	*gen.CapabilitiesModifyInput | *gen.CapabilitiesModifyOutput | *gen.CapabilitiesModifyPrompt |
		*gen.CapabilitiesModifyRequest | *gen.CapabilitiesModifyResponse | *gen.CapabilitiesModifyContent |
		*gen.CapabilitiesModifyInstructions | *gen.CapabilitiesModifySummary | *gen.CapabilitiesModifyWorkspace
}](t T) *[2]bool {
	if t == nil {
		return nil
	}
	var r, m bool
	switch v := any(t).(type) {
	case *gen.CapabilitiesModifyInput:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyOutput:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyPrompt:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyRequest:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyResponse:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyContent:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyInstructions:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifySummary:
		r, m = v.Replace, v.Merge
	case *gen.CapabilitiesModifyWorkspace:
		r, m = v.Replace, v.Merge
	}
	return &[2]bool{r, m}
}

func modifyPairs(c, b *gen.CapabilitiesModify) [][2]*[2]bool {
	return [][2]*[2]bool{
		{ops(c.Input), ops(b.Input)},
		{ops(c.Output), ops(b.Output)},
		{ops(c.Prompt), ops(b.Prompt)},
		{ops(c.Request), ops(b.Request)},
		{ops(c.Response), ops(b.Response)},
		{ops(c.Content), ops(b.Content)},
		{ops(c.Instructions), ops(b.Instructions)},
		{ops(c.Summary), ops(b.Summary)},
		{ops(c.Workspace), ops(b.Workspace)},
	}
}

// advertise returns the per-request form of base with used continuations
// consumed: the continue operation carries the remaining allowance and is
// dropped (with flow itself, if nothing is left) when none remains.
func advertise(base gen.Capabilities, used int) gen.Capabilities {
	if !countsContinuations(base) {
		return base // immutable once configured: shared, never modified
	}
	c := cloneCaps(base)
	max := -1
	if n, ok := allowance(c.Flow); ok && n <= math.MaxInt32 {
		max = int(n)
	}
	if max-used > 0 {
		c.Flow.RemainingContinuations = num(max - used)
		c.Flow.ContinuationCount = num(used)
		return c
	}
	c.Flow.Operations = slices.DeleteFunc(c.Flow.Operations, func(o gen.FlowOperation) bool { return o == gen.FlowOperationContinue })
	c.Flow.RemainingContinuations, c.Flow.ContinuationCount, c.Flow.MaxContinuations = nil, nil, nil
	if len(c.Flow.Operations) == 0 {
		c.Flow = nil
		c.Effects = slices.DeleteFunc(c.Effects, func(e gen.EffectFamily) bool { return e == gen.EffectFamilyFlow })
	}
	return c
}

// countsContinuations reports whether advertise adjusts c per call.
func countsContinuations(c gen.Capabilities) bool {
	return c.Flow != nil && slices.Contains(c.Flow.Operations, gen.FlowOperationContinue)
}

// cloneCaps deep-copies a capabilities object through its codec.
func cloneCaps(c gen.Capabilities) gen.Capabilities {
	data, err := gen.EncodeCapabilities(&c)
	var out gen.Capabilities
	if err != nil || out.UnmarshalJSON(data) != nil {
		return gen.Capabilities{Effects: []gen.EffectFamily{}}
	}
	if out.Effects == nil {
		out.Effects = []gen.EffectFamily{}
	}
	return out
}

// listOps returns the operation flags of the list target t in m, and a
// function that removes t from m; nil flags when m does not grant t.
func listOps(m *gen.CapabilitiesModify, t gen.ModifyTarget) (replace *bool, merge bool, remove func()) {
	switch {
	case m == nil:
	case t == gen.ModifyTargetPrompt && m.Prompt != nil:
		return &m.Prompt.Replace, m.Prompt.Merge, func() { m.Prompt = nil }
	case t == gen.ModifyTargetRequest && m.Request != nil:
		return &m.Request.Replace, m.Request.Merge, func() { m.Request = nil }
	case t == gen.ModifyTargetResponse && m.Response != nil:
		return &m.Response.Replace, m.Response.Merge, func() { m.Response = nil }
	case t == gen.ModifyTargetContent && m.Content != nil:
		return &m.Content.Replace, m.Content.Merge, func() { m.Content = nil }
	case t == gen.ModifyTargetInstructions && m.Instructions != nil:
		return &m.Instructions.Replace, m.Instructions.Merge, func() { m.Instructions = nil }
	case t == gen.ModifyTargetSummary && m.Summary != nil:
		return &m.Summary.Replace, m.Summary.Merge, func() { m.Summary = nil }
	}
	return nil, false, nil
}

// grantsReplace reports whether c grants replace on the list target t.
func grantsReplace(c gen.Capabilities, t gen.ModifyTarget) bool {
	replace, _, _ := listOps(c.Modify, t)
	return replace != nil && *replace
}

// withoutReplace returns c without the replace operation on target, and
// without target (and the modify family) when nothing is left of it. c is
// not modified; it is returned as it is when it does not grant replace.
func withoutReplace(c gen.Capabilities, target gen.ModifyTarget) gen.Capabilities {
	if !grantsReplace(c, target) {
		return c
	}
	out := cloneCaps(c)
	m := out.Modify
	replace, merge, remove := listOps(m, target)
	*replace = false
	if !merge {
		remove()
	}
	dropEmptyModify(&out)
	return out
}

// grantsTarget reports whether c grants any operation on the target t.
func grantsTarget(c gen.Capabilities, t gen.ModifyTarget) bool {
	_, _, remove := listOps(c.Modify, t)
	return remove != nil
}

// withoutTarget returns c without the modification target, and without
// the modify family when nothing is left of it. c is not modified; it is
// returned as it is when it does not grant target.
func withoutTarget(c gen.Capabilities, target gen.ModifyTarget) gen.Capabilities {
	if !grantsTarget(c, target) {
		return c
	}
	out := cloneCaps(c)
	_, _, remove := listOps(out.Modify, target)
	remove()
	dropEmptyModify(&out)
	return out
}

// withoutEffect returns c without the effect family f. c is not modified;
// it is returned as it is when it does not grant f.
func withoutEffect(c gen.Capabilities, f gen.EffectFamily) gen.Capabilities {
	if !slices.Contains(c.Effects, f) {
		return c
	}
	out := cloneCaps(c)
	out.Effects = slices.DeleteFunc(out.Effects, func(e gen.EffectFamily) bool { return e == f })
	return out
}

// dropEmptyModify removes the modify family from c when it grants no
// target any more.
func dropEmptyModify(c *gen.Capabilities) {
	m := c.Modify
	if m.Input == nil && m.Output == nil && m.Prompt == nil && m.Request == nil && m.Response == nil &&
		m.Content == nil && m.Instructions == nil && m.Summary == nil && m.Workspace == nil && len(m.Unknown) == 0 {
		c.Modify = nil
		c.Effects = slices.DeleteFunc(c.Effects, func(e gen.EffectFamily) bool { return e == gen.EffectFamilyModify })
	}
}

// allowance is the continuation allowance that f states: maxContinuations,
// or remainingContinuations without it.
func allowance(f *gen.CapabilitiesFlow) (int64, bool) {
	n := f.MaxContinuations
	if n == nil {
		n = f.RemainingContinuations
	}
	if n == nil {
		return 0, false
	}
	return settle.Integer(*n)
}
