package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/content"
)

// AttachmentRef returns the reference that the attachment part partID,
// whose bytes were given with WithAttachment, carries in a Result: in
// Result.Event, Result.Targets, Result.Injections and the effects of
// Result.Accepted. It is "ahp:attachment:" followed by partID. It is the
// harness's own name for the attachment: no backend ever receives it (each
// receiver gets the reference its own upload endpoint allocated, or no
// reference), and a backend cannot resolve it.
func AttachmentRef(partID string) string { return attachmentRefPrefix + partID }

// AttachmentPartID maps a reference found in a Result back to the part id
// given to WithAttachment: ok is false for any other reference. A part may
// carry the reference under another part id (a backend that repeats an
// attachment in a message-list effect may give the part a new id): the
// reference, not the part's id, names the attachment.
func AttachmentPartID(ref string) (partID string, ok bool) {
	id, ok := strings.CutPrefix(ref, attachmentRefPrefix)
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

// AttachedPart is one attachment a Result holds.
type AttachedPart struct {
	// PartID is the part id the attachment was given for (WithAttachment):
	// its name in the Result.
	PartID string
	// Ref is the reference its parts carry in the Result:
	// AttachmentRef(PartID).
	Ref string
	// InEvent reports whether an attachment body part of the effective
	// event (Result.Event) refers to it. It is false when accepted edits
	// removed every such part: the attachment is then no longer published,
	// but the Result still holds it (an accepted injection may refer to
	// it) and closes it with the rest.
	InEvent bool
	// Attachment is the owner of the bytes. It belongs to the Result:
	// read it through Attachments.Read or Snapshot, and release it with
	// Result.Close (closing it directly is harmless, Close is idempotent).
	Attachment *content.Attachment
}

// Attachments are the attachment owners of one Result: every attachment the
// call took over with WithAttachment, including one never read because no
// receiver selected its body (a lazy loader that was never opened stays
// unopened until Read). They do not depend on the Hooks: they stay readable
// after Hooks.Close, until Close. Attachments is safe for concurrent use.
type Attachments struct {
	parts []AttachedPart // in WithAttachment order
	once  sync.Once
	err   error
}

// All returns the attachments, in the order they were given to the call.
func (a *Attachments) All() []AttachedPart {
	if a == nil {
		return nil
	}
	return append([]AttachedPart(nil), a.parts...)
}

// Lookup returns the attachment given for partID.
func (a *Attachments) Lookup(partID string) (AttachedPart, bool) {
	if a != nil {
		for _, p := range a.parts {
			if p.PartID == partID {
				return p, true
			}
		}
	}
	return AttachedPart{}, false
}

// Read returns the bytes of the attachment given for partID, reading its
// source the first time (at most once in the attachment's life: a source
// that failed, timed out or was abandoned during the call is not read
// again, and Read returns that error). It fails with an error matching
// ErrNoAttachment for an unknown part id, and with one matching
// content.ErrClosed after Close; other failures wrap the runtime/content
// error (content.ErrLoad, content.ErrTooLarge, content.ErrMismatch, ...).
func (a *Attachments) Read(ctx context.Context, partID string) (*content.Snapshot, error) {
	p, ok := a.Lookup(partID)
	if !ok {
		return nil, ErrNoAttachment
	}
	s, err := p.Attachment.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("hooks: read attachment: %w", err)
	}
	return s, nil
}

// Close releases every attachment exactly once (a lazy attachment's cleanup
// runs, a stream is closed, whether it was read or not) and returns their
// cleanup errors (each matching content.ErrCleanup), joined. It is
// idempotent; later calls return the first result. After Close, All and
// Lookup still describe the attachments, and Read fails.
func (a *Attachments) Close() error {
	if a == nil {
		return nil
	}
	a.once.Do(func() {
		var errs []error
		for _, p := range a.parts {
			if err := p.Attachment.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		a.err = errors.Join(errs...)
	})
	return a.err
}

// Attachments returns the attachments the Result holds, or nil when the
// call was given none (the methods of a nil *Attachments report none).
func (r *Result) Attachments() *Attachments {
	if r == nil {
		return nil
	}
	return r.attachments
}

// Close releases the content the Result owns: its attachments (see
// Attachments.Close). A Result without attachments has nothing to release.
// Close is idempotent.
func (r *Result) Close() error { return r.Attachments().Close() }

// result makes the Attachments of a Result whose effective event is ev.
func (att *attachments) result(ev *gen.Event) *Attachments {
	in := map[*attached]bool{}
	walkEvent(partVisitor{part: func(a parts) {
		if a.attBody != nil {
			if at := att.byRef[a.attBody.Body.Ref]; at != nil {
				in[at] = true
			}
		}
	}, onMessage: func(*gen.CanonicalMessage) {}}, ev)
	out := &Attachments{parts: make([]AttachedPart, len(att.list))}
	for i, at := range att.list {
		out.parts[i] = AttachedPart{PartID: at.partID, Ref: at.ref, InEvent: in[at], Attachment: at.a}
	}
	return out
}
