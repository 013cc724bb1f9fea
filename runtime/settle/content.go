package settle

import (
	"encoding/json"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// Canonical schema locations used for values the typed model cannot fully
// constrain by itself.
const (
	refMessages        = "content-item.schema.json#/$defs/messages"
	refTextParts       = "content-item.schema.json#/$defs/textParts"
	refInject          = "effect.schema.json#/$defs/InjectEffect"
	refElicitResult    = "mcp-elicitation.schema.json#/$defs/ElicitResult"
	refElicitRequest   = "mcp-elicitation.schema.json#/$defs/ElicitRequestParams"
	refWorkspaceChange = "task-workspace-event.schema.json#/$defs/WorkspaceChange"
)

// canonical validates JSON text against a canonical schema location.
func canonical(ref string, data []byte) error {
	return validate.Default().Validate(ref, data)
}

// parseCanonical validates data against ref, then decodes it through the
// generated codec, without encoding/json's second syntax pass.
func parseCanonical(ref string, data []byte, into interface{ UnmarshalJSON([]byte) error }) error {
	if err := canonical(ref, data); err != nil {
		return err
	}
	return into.UnmarshalJSON(data)
}

// partSet is a set of encoded content parts whose identity is established
// by the host event: attachments and withheld text. Supplied values may
// repeat these parts unchanged but never invent or edit them
// (base/composition.md: "Message values MAY contain unchanged immutable
// attachment references only after runtime validation of their existing
// identity"; "Changing IDs does not grant authority to replace hidden text").
//
// The set is made on the first part it records: most events establish
// none, and their occurrences allocate nothing for it.
type partSet struct{ m map[string]struct{} }

// add records the encoded part b.
func (p *partSet) add(b []byte) {
	if p.m == nil {
		p.m = make(map[string]struct{})
	}
	p.m[string(b)] = struct{}{}
}

// has reports whether the encoded part b was recorded.
func (p *partSet) has(b []byte) bool {
	_, ok := p.m[string(b)]
	return ok
}

// listInfo describes a message or text-part list.
type listInfo struct {
	hidden bool // contains text withheld by metadata/omit selection or a content gap
}

// contentPart classifies one ContentItem: whether it is ordinary inline
// text (free to supply), and whether it withholds content.
func contentPart(p *gen.ContentItem) (bodyText, withheld bool, ok bool) {
	switch {
	case p.TextBodyPart != nil:
		return true, false, true
	case p.TextMetadataPart != nil, p.TextOmittedPart != nil, p.TextGapPart != nil, p.AttachmentGapPart != nil:
		return false, true, true
	case p.AttachmentBodyPart != nil, p.AttachmentMetadataPart != nil, p.AttachmentOmittedPart != nil:
		return false, false, true
	}
	return false, false, false
}

// textPart classifies one TextPart like contentPart.
func textPart(p *gen.TextPart) (bodyText, withheld bool, ok bool) {
	switch {
	case p.Body != nil:
		return true, false, true
	case p.Metadata != nil, p.Omitted != nil, p.Gap != nil:
		return false, true, true
	}
	return false, false, false
}

// encodeMessages encodes each message; it records non-text parts in known
// (when non-nil) and reports whether any part withholds content.
func encodeMessages(ms []gen.CanonicalMessage, known *partSet) ([]json.RawMessage, listInfo, error) {
	out := make([]json.RawMessage, len(ms))
	var info listInfo
	for i := range ms {
		b, err := ms[i].MarshalJSON()
		if err != nil {
			return nil, info, err
		}
		out[i] = b
		for j := range ms[i].Parts {
			body, withheld, ok := contentPart(&ms[i].Parts[j])
			if !ok {
				return nil, info, errMalformed
			}
			info.hidden = info.hidden || withheld
			if !body && known != nil {
				pb, err := ms[i].Parts[j].MarshalJSON()
				if err != nil {
					return nil, info, err
				}
				known.add(pb)
			}
		}
	}
	return out, info, nil
}

// classifyMessages is encodeMessages without the encoding of each
// message: it records the non-text parts in known and reports whether any
// part withholds content. It fails where encodeMessages fails but for an
// encoding failure of a whole message, which a message decoded from a
// canonically validated document cannot have.
func classifyMessages(ms []gen.CanonicalMessage, known *partSet) (listInfo, error) {
	var info listInfo
	for i := range ms {
		for j := range ms[i].Parts {
			body, withheld, ok := contentPart(&ms[i].Parts[j])
			if !ok {
				return info, errMalformed
			}
			info.hidden = info.hidden || withheld
			if !body {
				pb, err := ms[i].Parts[j].MarshalJSON()
				if err != nil {
					return info, err
				}
				known.add(pb)
			}
		}
	}
	return info, nil
}

// classifyTextParts is classifyMessages of a text-part list: only the parts
// that are not inline text are encoded (and recorded).
func classifyTextParts(ps gen.TextParts, known *partSet) (listInfo, error) {
	var info listInfo
	for i := range ps {
		body, withheld, ok := textPart(&ps[i])
		if !body && ok {
			b, err := ps[i].MarshalJSON()
			if err != nil {
				return info, err
			}
			known.add(b)
		}
		if !ok {
			return info, errMalformed
		}
		info.hidden = info.hidden || withheld
	}
	return info, nil
}

// encodeTextParts encodes each text part like encodeMessages.
func encodeTextParts(ps gen.TextParts, known *partSet) ([]json.RawMessage, listInfo, error) {
	out := make([]json.RawMessage, len(ps))
	var info listInfo
	for i := range ps {
		b, err := ps[i].MarshalJSON()
		if err != nil {
			return nil, info, err
		}
		out[i] = b
		body, withheld, ok := textPart(&ps[i])
		if !ok {
			return nil, info, errMalformed
		}
		info.hidden = info.hidden || withheld
		if !body && known != nil {
			known.add(b)
		}
	}
	return out, info, nil
}

// knownContentParts adds the non-text parts of a ContentItem list to known.
func knownContentParts(items []gen.ContentItem, known *partSet) error {
	for i := range items {
		body, _, ok := contentPart(&items[i])
		if !ok {
			return errMalformed
		}
		if !body {
			b, err := items[i].MarshalJSON()
			if err != nil {
				return err
			}
			known.add(b)
		}
	}
	return nil
}

// joinList writes list entries as one JSON array.
func joinList(entries []json.RawMessage) json.RawMessage {
	n := 2
	for _, e := range entries {
		n += len(e) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, e := range entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return append(out, ']')
}

// listsEqual compares two encoded lists entry by entry.
func listsEqual(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) && !jsonEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// checkSuppliedMessages validates a supplied message list: canonical shape,
// the boundary's role (if any), and that every part other than inline text
// repeats a part the host established. It returns the encoded messages,
// and whether they contain withheld text (an established metadata, omitted
// or gap part).
func checkSuppliedMessages(ms gen.CanonicalMessages, role gen.CanonicalMessageRole, known *partSet) (entries []json.RawMessage, withheld, ok bool) {
	entries, info, err := encodeMessages(ms, nil)
	if err != nil {
		return nil, false, false
	}
	if canonical(refMessages, joinList(entries)) != nil {
		return nil, false, false
	}
	for i := range ms {
		if role != "" && ms[i].Role != role {
			return nil, false, false
		}
		for j := range ms[i].Parts {
			body, _, _ := contentPart(&ms[i].Parts[j])
			if body {
				continue
			}
			pb, err := ms[i].Parts[j].MarshalJSON()
			if err != nil {
				return nil, false, false
			}
			if !known.has(pb) {
				return nil, false, false
			}
		}
	}
	return entries, info.hidden, true
}

// checkSuppliedText validates a supplied text-part list like
// checkSuppliedMessages.
func checkSuppliedText(ps gen.TextParts, known *partSet) (entries []json.RawMessage, withheld, ok bool) {
	entries, info, err := encodeTextParts(ps, nil)
	if err != nil {
		return nil, false, false
	}
	if canonical(refTextParts, joinList(entries)) != nil {
		return nil, false, false
	}
	for i := range ps {
		body, _, _ := textPart(&ps[i])
		if body {
			continue
		}
		if !known.has(entries[i]) {
			return nil, false, false
		}
	}
	return entries, info.hidden, true
}

// gapCovers reports whether an event-level gap path names the target field
// or something inside it (dotted or JSON-pointer spelling).
func gapCovers(path, field string) bool {
	p := strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", ".")
	return p == field || strings.HasPrefix(p, field+".") || strings.HasPrefix(p, field+"[")
}
