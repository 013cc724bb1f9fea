package hooks

import "github.com/agenthooks/agenthooks-go/gen"

// canonicalGaps maps the body gaps that a receiver's view showed for parts
// the host gave without their body (bodyGap), where its response repeats
// them in a message list, a text-part list or a returned value, back to the
// host's parts: settlement knows the parts of the canonical event, not the
// receiver's view of them. A gap that is not exactly the view of a
// canonical part stays, and settlement judges it.
func (c *call) canonicalGaps(r *gen.InterceptResponseResult) {
	if len(r.Effects) == 0 {
		return
	}
	var byID map[string][]parts // the canonical parts without a body, on first use
	back := &partRewriter{fn: func(a parts) (parts, bool) {
		var id string
		switch {
		case a.textGap != nil && a.textGap.Gap.Reason == gapUnavailable:
			id = a.textGap.ID
		case a.attGap != nil && a.attGap.Gap.Reason == gapUnavailable:
			id = a.attGap.ID
		default:
			return a, false
		}
		if byID == nil {
			byID = map[string][]parts{}
			for _, e := range slotsOf(c.base) {
				if p := e.part; p.textMetadata != nil || p.textOmitted != nil || p.attMetadata != nil || p.attOmitted != nil {
					fp, _ := partFacts(p)
					byID[fp.id] = append(byID[fp.id], p)
				}
			}
		}
		cands := byID[id]
		if len(cands) == 0 {
			return a, false
		}
		got, err := a.item().MarshalJSON()
		if err != nil {
			return a, false
		}
		for _, o := range cands {
			if want, err := bodyGap(o).item().MarshalJSON(); err == nil && string(want) == string(got) {
				return o, true
			}
		}
		return a, false
	}}
	for i := range r.Effects {
		e := &r.Effects[i]
		switch {
		case e.ModifyMessages != nil:
			if v, ok := back.messages(e.ModifyMessages.Value); ok {
				e.ModifyMessages.Value = v
			}
		case e.ModifyText != nil:
			if v, ok := back.textParts(e.ModifyText.Value); ok {
				e.ModifyText.Value = v
			}
		case e.Inject != nil:
			if v, ok := back.messages(e.Inject.Value); ok {
				e.Inject.Value = v
			}
		case e.ReturnTool != nil:
			if v, ok, err := walkCandidate(back, c.entry.info.Name, e.ReturnTool.Value); err == nil && ok {
				if b, err := v.MarshalJSON(); err == nil {
					e.ReturnTool.Value = b
				}
			}
		}
	}
}
