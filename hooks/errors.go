package hooks

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns matches exactly one of
// them with errors.Is, or wraps the caller's context error, except the
// errors of a Result's attachments (Attachments.Read and Close), which wrap
// the errors of runtime/content.
var (
	// ErrClosed is returned by calls made after Close and by calls that
	// Close interrupted.
	ErrClosed = errors.New("hooks: closed")
	// ErrInvalidRegistration reports a registration document that fails
	// canonical validation or a load-time check.
	ErrInvalidRegistration = errors.New("hooks: invalid registration")
	// ErrInvalidConfig reports an invalid Config (capabilities, manifest,
	// transports).
	ErrInvalidConfig = errors.New("hooks: invalid configuration")
	// ErrInvalidInput reports invalid host input to a call: an event that
	// fails canonical validation, an undeclared event, an invalid initial
	// state or per-call grant.
	ErrInvalidInput = errors.New("hooks: invalid host input")
	// ErrWidening reports a per-call grant (WithCapabilities) that is not a
	// narrowing of the configured one. It also matches ErrInvalidInput.
	ErrWidening = fmt.Errorf("%w: per-call capabilities widen the configured grant", ErrInvalidInput)
	// ErrNoInput is returned by Result.DecodeInput when the event has no
	// tool input.
	ErrNoInput = errors.New("hooks: the event has no input")
	// ErrNoAttachment is returned by Attachments.Read for a part id the
	// Result holds no attachment for.
	ErrNoAttachment = errors.New("hooks: no attachment for this part id")
)

// ValidationError locates a rejected document member. Pointer is an RFC 6901
// JSON pointer into the document named by Doc ("registration", "manifest",
// "capabilities", "event", "state"); Keyword names the failed rule (a JSON
// Schema keyword or a load-time check such as "unique" or "advertised").
// The error never contains document values.
type ValidationError struct {
	// Doc names the document the pointer refers to.
	Doc string
	// Pointer is the JSON pointer of the offending member.
	Pointer string
	// Keyword is the failed rule.
	Keyword string
	// Detail is a fixed explanation from this package, or empty.
	Detail string

	kind  error // one of the package sentinels
	cause error // *gen.ParseError, *validate.Error, or nil
}

// Error returns a description naming the document, pointer and rule.
func (e *ValidationError) Error() string {
	s := fmt.Sprintf("%v: %s %q: %s", e.kind, e.Doc, e.Pointer, e.Keyword)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the package sentinel and the underlying validation error.
func (e *ValidationError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

func regError(pointer, keyword, detail string) *ValidationError {
	return &ValidationError{Doc: "registration", Pointer: pointer, Keyword: keyword, Detail: detail, kind: ErrInvalidRegistration}
}

func configError(doc, pointer, keyword, detail string) *ValidationError {
	return &ValidationError{Doc: doc, Pointer: pointer, Keyword: keyword, Detail: detail, kind: ErrInvalidConfig}
}

func inputError(doc, pointer, keyword, detail string) *ValidationError {
	return &ValidationError{Doc: doc, Pointer: pointer, Keyword: keyword, Detail: detail, kind: ErrInvalidInput}
}
