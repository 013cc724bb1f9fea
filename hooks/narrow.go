package hooks

import (
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
)

// slotEntry is one element of an event's content slots in walk order: the
// start of a list (with its length), a message, or a part.
type slotEntry struct {
	list int // a list of this many entries starts; -1 otherwise
	msg  *gen.CanonicalMessage
	part parts
}

// flatten is the contentWalker that records an event's slots in order.
type flatten struct{ out []slotEntry }

func (f *flatten) item(p *gen.ContentItem) (gen.ContentItem, bool) {
	f.out = append(f.out, slotEntry{list: -1, part: itemParts(p)})
	return gen.ContentItem{}, false
}
func (f *flatten) textPart(p *gen.TextPart) (gen.TextPart, bool) {
	f.out = append(f.out, slotEntry{list: -1, part: textPartParts(p)})
	return gen.TextPart{}, false
}
func (f *flatten) items(ps []gen.ContentItem) ([]gen.ContentItem, bool) {
	f.out = append(f.out, slotEntry{list: len(ps)})
	for i := range ps {
		f.item(&ps[i])
	}
	return nil, false
}
func (f *flatten) textParts(ps []gen.TextPart) ([]gen.TextPart, bool) {
	f.out = append(f.out, slotEntry{list: len(ps)})
	for i := range ps {
		f.textPart(&ps[i])
	}
	return nil, false
}
func (f *flatten) message(m *gen.CanonicalMessage) (gen.CanonicalMessage, bool) {
	f.out = append(f.out, slotEntry{list: -1, msg: m})
	f.items(m.Parts)
	return gen.CanonicalMessage{}, false
}
func (f *flatten) messages(ms []gen.CanonicalMessage) ([]gen.CanonicalMessage, bool) {
	f.out = append(f.out, slotEntry{list: len(ms)})
	for i := range ms {
		f.message(&ms[i])
	}
	return nil, false
}

func slotsOf(ev *gen.Event) []slotEntry {
	var f flatten
	walkEvent(&f, ev)
	return f.out
}

// preparedNarrows reports whether prepared, a Preparer's result, discloses no
// more content than view, the receiver's view after the SDK's selection:
// the same event, the same messages and parts in the same order and with
// the same identities, and each part at most as disclosed as in view (a
// body only where view has the same body; size and digest only as view
// states them, or as they are of the text view carries). Everything
// outside the content slots is the preparer's to narrow (content-upload.md:
// "Producers must project those payloads explicitly").
func preparedNarrows(view, prepared *gen.Event) bool {
	if prepared.Type() != view.Type() || prepared.ID() != view.ID() || prepared.Source() != view.Source() {
		return false
	}
	a, b := slotsOf(view), slotsOf(prepared)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		v, p := &a[i], &b[i]
		switch {
		case v.list != p.list:
			return false
		case v.msg != nil || p.msg != nil:
			if v.msg == nil || p.msg == nil || v.msg.ID != p.msg.ID || v.msg.Role != p.msg.Role || !sameBool(v.msg.Synthesized, p.msg.Synthesized) {
				return false
			}
		case v.list < 0:
			if !partNarrows(v.part, p.part) {
				return false
			}
		}
	}
	return true
}

// facts are the identity and disclosure of one part.
type facts struct {
	id          string
	text        bool
	mediaType   string
	category    *string
	synthesized *bool
	disclosure  int // 3 body, 2 metadata or gap, 1 omitted
	size        *string
	sha256      *string
}

func partFacts(a parts) (facts, bool) {
	switch {
	case a.textBody != nil:
		s := a.textBody
		return facts{id: s.ID, text: true, mediaType: "text/plain", category: s.Category, synthesized: s.Synthesized, disclosure: 3}, true
	case a.textGap != nil:
		s := a.textGap
		return facts{id: s.ID, text: true, mediaType: "text/plain", category: s.Category, synthesized: s.Synthesized, disclosure: 2, size: numText(s.Size), sha256: s.SHA256}, true
	case a.textMetadata != nil:
		s := a.textMetadata
		return facts{id: s.ID, text: true, mediaType: "text/plain", category: s.Category, synthesized: s.Synthesized, disclosure: 2, size: numText(s.Size), sha256: s.SHA256}, true
	case a.textOmitted != nil:
		s := a.textOmitted
		return facts{id: s.ID, text: true, mediaType: "text/plain", category: s.Category, synthesized: s.Synthesized, disclosure: 1, size: numText(s.Size), sha256: s.SHA256}, true
	case a.attBody != nil:
		s := a.attBody
		return facts{id: s.ID, mediaType: s.MediaType, category: s.Category, synthesized: s.Synthesized, disclosure: 3}, true
	case a.attGap != nil:
		s := a.attGap
		return facts{id: s.ID, mediaType: s.MediaType, category: s.Category, synthesized: s.Synthesized, disclosure: 2, size: numText(s.Size), sha256: s.SHA256}, true
	case a.attMetadata != nil:
		s := a.attMetadata
		return facts{id: s.ID, mediaType: s.MediaType, category: s.Category, synthesized: s.Synthesized, disclosure: 2, size: numText(s.Size), sha256: s.SHA256}, true
	case a.attOmitted != nil:
		s := a.attOmitted
		return facts{id: s.ID, mediaType: s.MediaType, category: s.Category, synthesized: s.Synthesized, disclosure: 1, size: numText(s.Size), sha256: s.SHA256}, true
	}
	return facts{}, false
}

// partNarrows reports whether the prepared part p discloses no more than
// the view's part v.
func partNarrows(v, p parts) bool {
	fv, ok := partFacts(v)
	if !ok {
		return false
	}
	fp, ok := partFacts(p)
	if !ok || fp.id != fv.id || fp.text != fv.text || fp.mediaType != fv.mediaType || !sameStr(fp.category, fv.category) ||
		!sameBool(fp.synthesized, fv.synthesized) || fp.disclosure > fv.disclosure {
		return false
	}
	if fp.disclosure == 3 { // a body stays exactly the view's body
		if v.textBody != nil {
			return p.textBody.Text == v.textBody.Text
		}
		bv, err1 := v.attBody.Body.MarshalJSON()
		bp, err2 := p.attBody.Body.MarshalJSON()
		return err1 == nil && err2 == nil && string(bv) == string(bp)
	}
	if fv.disclosure == 3 {
		if v.textBody == nil { // an attachment's size and digest are not known here
			return fp.size == nil && fp.sha256 == nil
		}
		sha, size := textDigest(v.textBody.Text)
		return (fp.size == nil || *fp.size == size.String()) && (fp.sha256 == nil || *fp.sha256 == sha)
	}
	return (fp.size == nil || sameStr(fp.size, fv.size)) && (fp.sha256 == nil || sameStr(fp.sha256, fv.sha256))
}

// numText is the text of an optional number.
func numText(n *json.Number) *string {
	if n == nil {
		return nil
	}
	s := n.String()
	return &s
}

func sameStr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sameBool(a, b *bool) bool {
	return (a == nil || !*a) == (b == nil || !*b)
}
