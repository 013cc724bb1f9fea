package hooks

import (
	"strconv"

	"github.com/agenthooks/agenthooks-go/gen"
)

// synthesizeIDs supplies the id of every message and part of ev's content
// slots that has none, marking it synthesized: true (content-upload.md:
// "Synthesized message and part IDs MUST carry synthesized: true"). Given
// ids stay as they are; a supplied id is unique within the event, so it
// differs from every given id and every other supplied one. The host's
// values are never modified: what changes is copied. The ids are part of
// the canonical event, so every receiver's view, every observation and the
// Result carry the same ones.
func synthesizeIDs(ev *gen.Event) *gen.Event {
	missing, given := false, 0
	note := func(id string) {
		if id == "" {
			missing = true
		} else {
			given++
		}
	}
	walkEvent(partVisitor{
		part: func(a parts) {
			if a.set() {
				note(a.id())
			}
		},
		onMessage: func(m *gen.CanonicalMessage) { note(m.ID) },
	}, ev)
	if !missing {
		return ev
	}
	f := &idFill{taken: make(map[string]struct{}, given)}
	f.fn = func(a parts) (parts, bool) { return f.fillPart(a, f.nextPart) }
	take := func(id string) {
		if id != "" {
			f.taken[id] = struct{}{}
		}
	}
	walkEvent(partVisitor{
		part:      func(a parts) { take(a.id()) },
		onMessage: func(m *gen.CanonicalMessage) { take(m.ID) },
	}, ev)
	out, _ := walkEvent(f, ev)
	return out
}

// id returns the id of a part (its set arm), "" when it has none.
func (a parts) id() string {
	switch {
	case a.textBody != nil:
		return a.textBody.ID
	case a.textGap != nil:
		return a.textGap.ID
	case a.textMetadata != nil:
		return a.textMetadata.ID
	case a.textOmitted != nil:
		return a.textOmitted.ID
	case a.attBody != nil:
		return a.attBody.ID
	case a.attGap != nil:
		return a.attGap.ID
	case a.attMetadata != nil:
		return a.attMetadata.ID
	case a.attOmitted != nil:
		return a.attOmitted.ID
	}
	return ""
}

// set reports whether one arm is set.
func (a parts) set() bool {
	return a.textBody != nil || a.textGap != nil || a.textMetadata != nil || a.textOmitted != nil ||
		a.attBody != nil || a.attGap != nil || a.attMetadata != nil || a.attOmitted != nil
}

// withID returns a copy of the set arm with id and synthesized: true.
func (a parts) withID(id string) parts {
	yes := true
	switch {
	case a.textBody != nil:
		c := *a.textBody
		c.ID, c.Synthesized = id, &yes
		return parts{textBody: &c}
	case a.textGap != nil:
		c := *a.textGap
		c.ID, c.Synthesized = id, &yes
		return parts{textGap: &c}
	case a.textMetadata != nil:
		c := *a.textMetadata
		c.ID, c.Synthesized = id, &yes
		return parts{textMetadata: &c}
	case a.textOmitted != nil:
		c := *a.textOmitted
		c.ID, c.Synthesized = id, &yes
		return parts{textOmitted: &c}
	case a.attBody != nil:
		c := *a.attBody
		c.ID, c.Synthesized = id, &yes
		return parts{attBody: &c}
	case a.attGap != nil:
		c := *a.attGap
		c.ID, c.Synthesized = id, &yes
		return parts{attGap: &c}
	case a.attMetadata != nil:
		c := *a.attMetadata
		c.ID, c.Synthesized = id, &yes
		return parts{attMetadata: &c}
	case a.attOmitted != nil:
		c := *a.attOmitted
		c.ID, c.Synthesized = id, &yes
		return parts{attOmitted: &c}
	}
	return a
}

// contentProbe is a contentWalker that records whether the event has any
// content slot that holds something (a message, item or text part).
type contentProbe struct{ found *bool }

func (p contentProbe) item(*gen.ContentItem) (gen.ContentItem, bool) {
	*p.found = true
	return gen.ContentItem{}, false
}
func (p contentProbe) textPart(*gen.TextPart) (gen.TextPart, bool) {
	*p.found = true
	return gen.TextPart{}, false
}
func (p contentProbe) items(ps []gen.ContentItem) ([]gen.ContentItem, bool) {
	*p.found = *p.found || len(ps) > 0
	return nil, false
}
func (p contentProbe) textParts(ps []gen.TextPart) ([]gen.TextPart, bool) {
	*p.found = *p.found || len(ps) > 0
	return nil, false
}
func (p contentProbe) message(*gen.CanonicalMessage) (gen.CanonicalMessage, bool) {
	*p.found = true
	return gen.CanonicalMessage{}, false
}
func (p contentProbe) messages(ms []gen.CanonicalMessage) ([]gen.CanonicalMessage, bool) {
	*p.found = *p.found || len(ms) > 0
	return nil, false
}

// hasContent reports whether ev has a content slot that holds a message,
// an item or a text part: without one, synthesizing ids, binding
// attachments and projecting content leave ev as it is.
func hasContent(ev *gen.Event) bool {
	found := false
	walkEvent(contentProbe{&found}, ev)
	return found
}

// partVisitor adapts a per-part and per-message function to a
// contentWalker that replaces nothing.
type partVisitor struct {
	part      func(parts)
	onMessage func(*gen.CanonicalMessage)
}

func (v partVisitor) item(p *gen.ContentItem) (gen.ContentItem, bool) {
	v.part(itemParts(p))
	return gen.ContentItem{}, false
}
func (v partVisitor) textPart(p *gen.TextPart) (gen.TextPart, bool) {
	v.part(textPartParts(p))
	return gen.TextPart{}, false
}
func (v partVisitor) items(ps []gen.ContentItem) ([]gen.ContentItem, bool) {
	for i := range ps {
		v.part(itemParts(&ps[i]))
	}
	return nil, false
}
func (v partVisitor) textParts(ps []gen.TextPart) ([]gen.TextPart, bool) {
	for i := range ps {
		v.part(textPartParts(&ps[i]))
	}
	return nil, false
}
func (v partVisitor) message(m *gen.CanonicalMessage) (gen.CanonicalMessage, bool) {
	v.onMessage(m)
	v.items(m.Parts)
	return gen.CanonicalMessage{}, false
}
func (v partVisitor) messages(ms []gen.CanonicalMessage) ([]gen.CanonicalMessage, bool) {
	for i := range ms {
		v.message(&ms[i])
	}
	return nil, false
}

// idFill supplies the missing ids, in walk order: message "msg-N", a part
// of a message "<message id>.part-J" (J its index), any other part
// "part-N", each with a numeric suffix when that id is taken.
type idFill struct {
	partRewriter // parts outside messages
	taken        map[string]struct{}
	msgs         int
	parts        int
}

// fresh returns base, or base with the first free "-K" suffix, and takes it.
func (f *idFill) fresh(base string) string {
	id := base
	for k := 2; ; k++ {
		if _, ok := f.taken[id]; !ok {
			break
		}
		id = base + "-" + strconv.Itoa(k)
	}
	f.taken[id] = struct{}{}
	return id
}

func (f *idFill) nextPart() string {
	f.parts++
	return f.fresh("part-" + strconv.Itoa(f.parts))
}

// fillPart supplies the id of one part; base names it.
func (f *idFill) fillPart(a parts, base func() string) (parts, bool) {
	if !a.set() || a.id() != "" {
		return a, false
	}
	return a.withID(base()), true
}

func (f *idFill) message(m *gen.CanonicalMessage) (gen.CanonicalMessage, bool) {
	c := *m
	changed := false
	if c.ID == "" {
		yes := true
		f.msgs++
		c.ID, c.Synthesized, changed = f.fresh("msg-"+strconv.Itoa(f.msgs)), &yes, true
	}
	var out []gen.ContentItem
	for j := range m.Parts {
		a, ok := f.fillPart(itemParts(&m.Parts[j]), func() string { return f.fresh(c.ID + ".part-" + strconv.Itoa(j)) })
		if !ok {
			continue
		}
		if out == nil {
			out = make([]gen.ContentItem, len(m.Parts))
			copy(out, m.Parts)
		}
		out[j] = a.item()
	}
	if out != nil {
		c.Parts, changed = out, true
	}
	return c, changed
}

func (f *idFill) messages(ms []gen.CanonicalMessage) ([]gen.CanonicalMessage, bool) {
	var out []gen.CanonicalMessage
	for i := range ms {
		m, changed := f.message(&ms[i])
		if !changed {
			continue
		}
		if out == nil {
			out = make([]gen.CanonicalMessage, len(ms))
			copy(out, ms)
		}
		out[i] = m
	}
	return out, out != nil
}
