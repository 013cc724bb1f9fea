package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// Sentinel errors. Every error the package returns matches exactly one of
// the package's Err* sentinels (these, ErrCompactorClosed and the
// Invocation errors) with errors.Is, or wraps the caller's context error
// (ctx.Err(), or the cause the call was cancelled with), except the errors
// of a Result's attachments (Attachments.Read and Close), which wrap the
// errors of runtime/content.
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
	// ErrNoTarget is returned by Result.DecodeTarget for a modification
	// target the Result holds no value for.
	ErrNoTarget = errors.New("hooks: the result has no value for this target")
	// ErrDecode is returned by Result.DecodeInput and Result.DecodeTarget
	// when the effective value does not decode into the host's type (a
	// member the type does not declare, a JSON type the field cannot hold).
	// It wraps the encoding/json error, which names the Go field and JSON
	// types but no value.
	ErrDecode = errors.New("hooks: the effective value does not decode into the host's type")
	// ErrGenerator is returned by Compactor.Run when the summary generator
	// fails or generates a summary that is not valid; it wraps the
	// generator's error.
	ErrGenerator = errors.New("hooks: compaction summary generator failed")
	// ErrInternal reports a failure that correct use cannot cause: a value
	// the package built itself does not encode or decode. It is a bug in
	// this package; report it.
	ErrInternal = errors.New("hooks: internal error")
	// ErrNoAttachment is returned by Attachments.Read for a part id the
	// Result holds no attachment for.
	ErrNoAttachment = errors.New("hooks: no attachment for this part id")
)

// withCause records err, a canonical validation failure (a *validate.Error
// or a *gen.ParseError), as ve's cause: ve's pointer becomes prefix followed
// by the failing location, its keyword the failing keyword, and what the
// failure names (missing or unexpected members, allowed values; never an
// instance value) is appended to its detail.
func (ve *ValidationError) withCause(prefix string, err error) *ValidationError {
	ve.cause = err
	var v *validate.Error
	var pe *gen.ParseError
	switch {
	case errors.As(err, &v):
		if v.Keyword == validate.KeywordJSON && v.SchemaLocation == "" {
			ve.Pointer, ve.Keyword = prefix, v.Keyword
			ve.addDetail(fmt.Sprintf("malformed JSON at byte offset %d", v.Offset))
			break
		}
		ve.Pointer, ve.Keyword = prefix+v.Pointer, v.Keyword
		ve.addDetail(validate.Cause{Missing: v.Missing, Unexpected: v.Unexpected, Allowed: v.Allowed}.Detail())
	case errors.As(err, &pe):
		ve.Pointer, ve.Keyword = prefix+pe.Pointer, pe.Keyword
	}
	return ve
}

func (ve *ValidationError) addDetail(d string) {
	switch {
	case d == "":
	case ve.Detail == "":
		ve.Detail = d
	default:
		ve.Detail += ": " + d
	}
}

// causeErrors is withCause for every failure err reports: one
// *ValidationError per cause of a *validate.Error (built by mk with the
// detail given), joined with errors.Join when there are several, in the
// validator's order (by location).
func causeErrors(mk func() *ValidationError, prefix string, err error) error {
	var v *validate.Error
	if !errors.As(err, &v) || len(v.Causes) < 2 {
		return mk().withCause(prefix, err)
	}
	errs := make([]error, 0, len(v.Causes))
	for _, c := range v.Causes {
		ve := mk()
		ve.cause = err
		ve.Pointer, ve.Keyword = prefix+c.Pointer, c.Keyword
		ve.addDetail(c.Detail())
		errs = append(errs, ve)
	}
	return errors.Join(errs...)
}

// settleError reports an event or initial state that settle cannot settle
// (err wraps settle.ErrInvalidEvent) as invalid host input naming the part
// at fault: Doc is "event" (with the member's pointer) or "state", and for
// a member whose JSON payload fails its schema (an MCP elicitation body,
// say) Keyword is the failed keyword and Detail says where in the payload
// and what the schema names.
func settleError(err error) *ValidationError {
	ve := &ValidationError{Doc: "state", Keyword: "settle", Detail: "the event or initial state cannot be settled", kind: ErrInvalidInput, cause: err}
	var ie *settle.InputError
	if !errors.As(err, &ie) {
		return ve
	}
	if !ie.Initial {
		ve.Doc, ve.Pointer = "event", ie.Pointer
	}
	ve.Detail = "the " + ie.Part + " cannot be settled"
	if ie.Initial && !strings.HasPrefix(ie.Part, "initial ") {
		ve.Detail = "the initial " + ie.Part + " cannot be settled"
	}
	var v *validate.Error
	if errors.As(ie.Err, &v) {
		// The text of a *validate.Error holds no instance values.
		ve.Keyword = v.Keyword
		ve.Detail += ": " + strings.TrimPrefix(v.Error(), "ahp: ")
	}
	return ve
}

// ValidationError locates a rejected document member. Pointer is an RFC 6901
// JSON pointer into the document named by Doc ("registration", "manifest",
// "capabilities", "event", "state"); Keyword names the failed rule (a JSON
// Schema keyword or a load-time check such as "unique" or "advertised");
// Detail says what is wrong (for a schema failure, the missing or unexpected
// members or the allowed values). The error never contains document values.
//
// A document with several problems is reported, where the package can find
// them all (New does for a registration), as the errors.Join of one
// *ValidationError per problem in document order: errors.As finds the first,
// and the joined error's Unwrap() []error lists them all.
type ValidationError struct {
	// Doc names the document the pointer refers to.
	Doc string
	// Pointer is the JSON pointer of the offending member.
	Pointer string
	// Keyword is the failed rule.
	Keyword string
	// Detail is an explanation without document values: a fixed text from
	// this package and, for a schema failure, what the schema names (such
	// as `missing "timeoutMs"` or `allowed "fail-open", "fail-closed"`), or
	// empty.
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
