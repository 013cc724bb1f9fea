package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/gen"
)

// level is one content selection value. Its order is the order of
// disclosure: omit < metadata < body.
type level uint8

const (
	levelUnset    level = iota // no key for the category: the default applies
	levelOmit                  // "omit": the part stays as a stub that names it
	levelMetadata              // "metadata": the part without its content; inline text with its size
	levelBody                  // "body": the content itself (inline text, or an attachment reference)
)

func parseLevel(s string) level {
	switch s {
	case "body":
		return levelBody
	case "metadata":
		return levelMetadata
	case "omit":
		return levelOmit
	}
	return levelUnset
}

// The media-derived content categories (content-selection.schema.json: "reasoning
// takes its own category, otherwise classify by media type").
const (
	categoryText   = "text"
	categoryImages = "images"
	categoryAudio  = "audio"
	categoryVideo  = "video"
	categoryFiles  = "files"
)

// contentPolicy is a subscription's content selection, resolved once at
// New: the required default and the level of every category it names.
type contentPolicy struct {
	def     level
	known   [6]level         // text, reasoning, images, audio, video, files
	other   map[string]level // further category names of the registration
	uniform bool             // every category the policy names selects def
	key     string           // equal exactly when two policies select alike
}

// knownCategory is the index of a schema-named category in contentPolicy.known.
func knownCategory(c string) int {
	switch c {
	case categoryText:
		return 0
	case "reasoning":
		return 1
	case categoryImages:
		return 2
	case categoryAudio:
		return 3
	case categoryVideo:
		return 4
	case categoryFiles:
		return 5
	}
	return -1
}

var knownNames = [6]string{categoryText, "reasoning", categoryImages, categoryAudio, categoryVideo, categoryFiles}

// newContentPolicy resolves a registration's content selection. The
// registration schema has already constrained every value to body,
// metadata or omit.
func newContentPolicy(s gen.ContentSelection) (*contentPolicy, error) {
	p := &contentPolicy{def: parseLevel(string(s.Default))}
	if p.def == levelUnset {
		return nil, errors.New("content.default is not body, metadata or omit")
	}
	set := func(i int, v *string) {
		if v != nil {
			p.known[i] = parseLevel(*v)
		}
	}
	set(0, (*string)(s.Text))
	set(1, (*string)(s.Reasoning))
	set(2, (*string)(s.Images))
	set(3, (*string)(s.Audio))
	set(4, (*string)(s.Video))
	set(5, (*string)(s.Files))
	for _, m := range s.Unknown {
		var v string
		if err := json.Unmarshal(m.Value, &v); err != nil || parseLevel(v) == levelUnset {
			return nil, errors.New("a content category is not body, metadata or omit")
		}
		if p.other == nil {
			p.other = map[string]level{}
		}
		p.other[m.Name] = parseLevel(v)
	}
	// The key lists the default and every category whose level differs
	// from it, in name order, each name prefixed by its length: a name is
	// any string (NUL and digits included), so only the length tells where
	// it ends.
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(p.def)))
	type entry struct {
		name string
		l    level
	}
	var diff []entry
	for i, l := range p.known {
		if l != levelUnset && l != p.def {
			diff = append(diff, entry{knownNames[i], l})
		}
	}
	for n, l := range p.other {
		if l != p.def {
			diff = append(diff, entry{n, l})
		}
	}
	sort.Slice(diff, func(i, j int) bool { return diff[i].name < diff[j].name })
	for _, d := range diff {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(len(d.name)))
		b.WriteByte(':')
		b.WriteString(d.name)
		b.WriteString(strconv.Itoa(int(d.l)))
	}
	p.key = b.String()
	p.uniform = len(diff) == 0
	return p, nil
}

// of returns the level the policy selects for a category.
func (p *contentPolicy) of(category string) level {
	if p.uniform {
		return p.def
	}
	if i := knownCategory(category); i >= 0 {
		if l := p.known[i]; l != levelUnset {
			return l
		}
		return p.def
	}
	if l, ok := p.other[category]; ok {
		return l
	}
	return p.def // unknown categories use the default
}

// mediaCategory is the category of a part without an explicit one: text
// for inline text, otherwise by the attachment's media type.
func mediaCategory(text bool, mediaType string) string {
	if text {
		return categoryText
	}
	major, _, _ := strings.Cut(mediaType, "/")
	switch strings.ToLower(strings.TrimSpace(major)) {
	case "image":
		return categoryImages
	case "audio":
		return categoryAudio
	case "video":
		return categoryVideo
	}
	return categoryFiles
}

// forPart is the level the policy selects for a part: an explicit category
// overrides the media-derived one.
func (p *contentPolicy) forPart(category *string, text bool, mediaType string) level {
	if p.uniform {
		return p.def
	}
	if category != nil && *category != "" {
		return p.of(*category)
	}
	return p.of(mediaCategory(text, mediaType))
}

// textDigest returns the SHA-256 (64 lowercase hex digits) and the size of
// text as the event carries it (sentText).
func textDigest(text string) (sha string, size json.Number) {
	text = sentText(text)
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), json.Number(strconv.Itoa(len(text)))
}

// sentText is text as the event carries it: a Go string may hold invalid
// UTF-8, which the encoder sends as U+FFFD, one for each invalid byte. The
// size and digest of a text part are those of the UTF-8 bytes a receiver
// decodes, not of the Go string.
func sentText(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	var b strings.Builder
	b.Grow(sentLen(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(text[i : i+n])
		}
		i += n
	}
	return b.String()
}

// sentLen is len(sentText(text)), without building it.
func sentLen(text string) int {
	if utf8.ValidString(text) {
		return len(text)
	}
	n := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			n += utf8.RuneLen(utf8.RuneError)
		} else {
			n += size
		}
		i += size
	}
	return n
}

// textMeta is the metadata view of one text body part with the storage of
// its size; a projection allocates them in slabs.
type textMeta struct {
	part gen.TextMetadataPart
	size json.Number
	n    int // the size, until finish spells it
}

// projector makes one receiver's view: every part as its subscription's
// selection allows (AHP-CONTENT-002).
type projector struct {
	pol     *contentPolicy
	w       *partRewriter // its walker, whose left sizes the next slab
	slab    []textMeta    // free metadata views
	pending []*textMeta   // metadata views whose size finish spells
}

// textMetadata returns the metadata view of s: its identity and the size
// of its text as sent (sentLen; spelled by finish), without the text. It
// carries no digest: a SHA-256 of short text is a way to confirm a guess of
// the text that the selection withholds, and the digest is optional
// (content-upload.md: "These views may disclose optional size/hash
// metadata").
func (pr *projector) textMetadata(s *gen.TextBodyPart) *gen.TextMetadataPart {
	left := 1
	if pr.w != nil {
		left = max(pr.w.left, 1)
	}
	if len(pr.slab) == 0 { // enough for the rest of the list, up to 256
		pr.slab = make([]textMeta, min(left, 256))
	}
	m := &pr.slab[0]
	pr.slab = pr.slab[1:]
	m.n = sentLen(s.Text)
	m.part = gen.TextMetadataPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized, Size: &m.size}
	if pr.pending == nil {
		pr.pending = make([]*textMeta, 0, left)
	}
	pr.pending = append(pr.pending, m)
	return &m.part
}

// finish spells the sizes of the metadata views of the projection, all in
// one string.
func (pr *projector) finish() {
	if len(pr.pending) == 0 {
		return
	}
	buf := make([]byte, 0, len(pr.pending)*4)
	for _, m := range pr.pending {
		buf = strconv.AppendInt(buf, int64(m.n), 10)
		m.n = len(buf)
	}
	all := string(buf)
	start := 0
	for _, m := range pr.pending {
		m.size = json.Number(all[start:m.n])
		start, m.n = m.n, 0
	}
	pr.pending = pr.pending[:0]
}

// part projects one part (an arm of gen.ContentItem or gen.TextPart) for
// the receiver: the selection is a ceiling on what the event carries. A
// part the selection allows stays as it is. A body above the selection
// becomes its metadata view (inline text with its size; an attachment
// without its reference) or its omitted stub. An omitted stub carries
// identity only. A part the host gave without its body (metadata or omit:
// not a body the SDK has) stays as it is for a metadata or omit receiver,
// capped by its selection; for a body receiver it is a missing requested
// body, which is a body gap (content-upload.md: "a missing requested body
// uses selection: body and gap instead"), keeping the size and digest the
// host stated. It returns the projected arms, exactly one of which is set,
// and whether the part changed.
func (pr *projector) part(a parts) (parts, bool) {
	switch {
	case a.textBody != nil:
		s := a.textBody
		switch pr.pol.forPart(s.Category, true, "text/plain") {
		case levelBody:
			return a, false
		case levelMetadata:
			return parts{textMetadata: pr.textMetadata(s)}, true
		default:
			return parts{textOmitted: &gen.TextOmittedPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized}}, true
		}
	case a.textGap != nil:
		s := a.textGap
		switch pr.pol.forPart(s.Category, true, "text/plain") {
		case levelBody:
			return a, false
		case levelMetadata:
			return parts{textMetadata: &gen.TextMetadataPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized, Size: s.Size, SHA256: s.SHA256}}, true
		default:
			return parts{textOmitted: &gen.TextOmittedPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized}}, true
		}
	case a.textMetadata != nil:
		s := a.textMetadata
		switch pr.pol.forPart(s.Category, true, "text/plain") {
		case levelBody:
			return bodyGap(a), true
		case levelMetadata:
			return a, false
		}
		return parts{textOmitted: &gen.TextOmittedPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized}}, true
	case a.textOmitted != nil:
		s := a.textOmitted
		l := pr.pol.forPart(s.Category, true, "text/plain")
		if l == levelBody {
			return bodyGap(a), true
		}
		if (s.Size == nil && s.SHA256 == nil) || l >= levelMetadata {
			return a, false
		}
		return parts{textOmitted: &gen.TextOmittedPart{ID: s.ID, Category: s.Category, Synthesized: s.Synthesized}}, true
	case a.attBody != nil:
		s := a.attBody
		switch pr.pol.forPart(s.Category, false, s.MediaType) {
		case levelBody:
			return a, false
		case levelMetadata:
			return parts{attMetadata: &gen.AttachmentMetadataPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized}}, true
		default:
			return parts{attOmitted: &gen.AttachmentOmittedPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized}}, true
		}
	case a.attGap != nil:
		s := a.attGap
		switch pr.pol.forPart(s.Category, false, s.MediaType) {
		case levelBody:
			return a, false
		case levelMetadata:
			return parts{attMetadata: &gen.AttachmentMetadataPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized, Size: s.Size, SHA256: s.SHA256}}, true
		default:
			return parts{attOmitted: &gen.AttachmentOmittedPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized}}, true
		}
	case a.attMetadata != nil:
		s := a.attMetadata
		switch pr.pol.forPart(s.Category, false, s.MediaType) {
		case levelBody:
			return bodyGap(a), true
		case levelMetadata:
			return a, false
		}
		return parts{attOmitted: &gen.AttachmentOmittedPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized}}, true
	case a.attOmitted != nil:
		s := a.attOmitted
		l := pr.pol.forPart(s.Category, false, s.MediaType)
		if l == levelBody {
			return bodyGap(a), true
		}
		if (s.Size == nil && s.SHA256 == nil) || l >= levelMetadata {
			return a, false
		}
		return parts{attOmitted: &gen.AttachmentOmittedPart{ID: s.ID, MediaType: s.MediaType, Category: s.Category, Synthesized: s.Synthesized}}, true
	}
	return a, false // no arm set: left for validation to report
}

// gapUnavailable is the gap reason of a body a body receiver selected but
// the host did not give (it gave the part as metadata or omitted).
const gapUnavailable = "body unavailable"

// bodyGap is the body gap that a body receiver gets for a, a part the host
// gave as metadata or omitted: its identity, size and digest, with reason
// gapUnavailable. It is a itself for any other part.
func bodyGap(a parts) parts {
	gap := gen.GapPartGap{Reason: gapUnavailable}
	switch {
	case a.textMetadata != nil:
		s := a.textMetadata
		return parts{textGap: &gen.TextGapPart{ID: s.ID, Gap: gap, Category: s.Category, Size: s.Size, SHA256: s.SHA256, Synthesized: s.Synthesized}}
	case a.textOmitted != nil:
		s := a.textOmitted
		return parts{textGap: &gen.TextGapPart{ID: s.ID, Gap: gap, Category: s.Category, Size: s.Size, SHA256: s.SHA256, Synthesized: s.Synthesized}}
	case a.attMetadata != nil:
		s := a.attMetadata
		return parts{attGap: &gen.AttachmentGapPart{ID: s.ID, MediaType: s.MediaType, Gap: gap, Category: s.Category, Size: s.Size, SHA256: s.SHA256, Synthesized: s.Synthesized}}
	case a.attOmitted != nil:
		s := a.attOmitted
		return parts{attGap: &gen.AttachmentGapPart{ID: s.ID, MediaType: s.MediaType, Gap: gap, Category: s.Category, Size: s.Size, SHA256: s.SHA256, Synthesized: s.Synthesized}}
	}
	return a
}

// parts holds the arms of one content part; at most one is set.
type parts struct {
	textBody     *gen.TextBodyPart
	textGap      *gen.TextGapPart
	textMetadata *gen.TextMetadataPart
	textOmitted  *gen.TextOmittedPart
	attBody      *gen.AttachmentBodyPart
	attGap       *gen.AttachmentGapPart
	attMetadata  *gen.AttachmentMetadataPart
	attOmitted   *gen.AttachmentOmittedPart
}

func itemParts(p *gen.ContentItem) parts {
	return parts{p.TextBodyPart, p.TextGapPart, p.TextMetadataPart, p.TextOmittedPart, p.AttachmentBodyPart, p.AttachmentGapPart, p.AttachmentMetadataPart, p.AttachmentOmittedPart}
}

func (a parts) item() gen.ContentItem {
	return gen.ContentItem{TextBodyPart: a.textBody, TextGapPart: a.textGap, TextMetadataPart: a.textMetadata, TextOmittedPart: a.textOmitted,
		AttachmentBodyPart: a.attBody, AttachmentGapPart: a.attGap, AttachmentMetadataPart: a.attMetadata, AttachmentOmittedPart: a.attOmitted}
}

func textPartParts(p *gen.TextPart) parts {
	return parts{textBody: p.Body, textGap: p.Gap, textMetadata: p.Metadata, textOmitted: p.Omitted}
}

func (a parts) textPart() gen.TextPart {
	return gen.TextPart{Body: a.textBody, Gap: a.textGap, Metadata: a.textMetadata, Omitted: a.textOmitted}
}

// project returns the view of ev that pol selects, sharing what it does
// not change with ev (neither is ever modified); ev itself when the
// selection changes nothing.
func project(ev *gen.Event, pol *contentPolicy) *gen.Event {
	pr := &projector{pol: pol}
	v, _ := walkEvent(pr.rewriter(), ev)
	pr.finish()
	return v
}

// rewriter is the contentWalker of the projection.
func (pr *projector) rewriter() *partRewriter {
	pr.w = &partRewriter{fn: pr.part}
	return pr.w
}

// partRewriter is a contentWalker that replaces parts with fn.
type partRewriter struct {
	fn   func(parts) (parts, bool)
	left int // parts left in the list being rewritten, the current one included
}

func (w *partRewriter) item(p *gen.ContentItem) (gen.ContentItem, bool) {
	a, ok := w.fn(itemParts(p))
	if !ok {
		return *p, false
	}
	return a.item(), true
}

func (w *partRewriter) textPart(p *gen.TextPart) (gen.TextPart, bool) {
	a, ok := w.fn(textPartParts(p))
	if !ok {
		return *p, false
	}
	return a.textPart(), true
}

func (w *partRewriter) items(ps []gen.ContentItem) ([]gen.ContentItem, bool) {
	var out []gen.ContentItem
	for i := range ps {
		w.left = len(ps) - i
		p, changed := w.item(&ps[i])
		if !changed {
			continue
		}
		if out == nil {
			out = make([]gen.ContentItem, len(ps))
			copy(out, ps)
		}
		out[i] = p
	}
	return out, out != nil
}

func (w *partRewriter) textParts(ps []gen.TextPart) ([]gen.TextPart, bool) {
	var out []gen.TextPart
	for i := range ps {
		w.left = len(ps) - i
		p, changed := w.textPart(&ps[i])
		if !changed {
			continue
		}
		if out == nil {
			out = make([]gen.TextPart, len(ps))
			copy(out, ps)
		}
		out[i] = p
	}
	return out, out != nil
}

func (w *partRewriter) message(m *gen.CanonicalMessage) (gen.CanonicalMessage, bool) {
	ps, changed := w.items(m.Parts)
	if !changed {
		return *m, false
	}
	c := *m
	c.Parts = ps
	return c, true
}

func (w *partRewriter) messages(ms []gen.CanonicalMessage) ([]gen.CanonicalMessage, bool) {
	var out []gen.CanonicalMessage
	for i := range ms {
		m, changed := w.message(&ms[i])
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
