package content

import (
	"errors"
	"fmt"
)

// Sentinel errors. Each failure returned by this package matches one of them
// with errors.Is (a *StatusError matches ErrStatus), possibly beside a
// context error; a 401 to the credential-free attempt that discovery could
// not answer (the provider did not consent to a replay, or had no
// credential after it) matches both ErrStatus and ErrCredential.
var (
	// ErrInvalid reports an invalid argument or option: a negative limit, a
	// malformed expected digest, a nil loader or stream, an invalid upload
	// configuration.
	ErrInvalid = errors.New("content: invalid argument")
	// ErrMediaType reports a media type that an attachment may not have:
	// text/*, application/json, a +json type, or no valid media type at all.
	ErrMediaType = errors.New("content: media type not allowed for an attachment")
	// ErrTooLarge reports bytes over a limit: the attachment's byte limit or
	// the upload's maxBytes. Bytes are never truncated to fit.
	ErrTooLarge = errors.New("content: attachment exceeds the byte limit")
	// ErrMismatch reports bytes that differ from the caller's expected size
	// or SHA-256.
	ErrMismatch = errors.New("content: attachment bytes differ from the expected size or digest")
	// ErrLoad reports a failure of the attachment's own source (the loader or
	// a read); the source's error is wrapped.
	ErrLoad = errors.New("content: attachment source failed")
	// ErrLoadTimeout reports a materialization that did not finish within
	// the attachment's load timeout.
	ErrLoadTimeout = errors.New("content: attachment load timed out")
	// ErrAbandoned reports a materialization cancelled because every reader
	// left before it finished. The source is not read again.
	ErrAbandoned = errors.New("content: attachment materialization abandoned by its readers")
	// ErrClosed reports use of a closed attachment.
	ErrClosed = errors.New("content: attachment closed")
	// ErrCleanup reports a failure of the source's cleanup (or stream Close);
	// the source's error is wrapped.
	ErrCleanup = errors.New("content: attachment cleanup failed")

	// ErrEndpoint reports an upload endpoint that may not be used: not an
	// absolute http(s) URL, plain http the uploader is not configured for
	// (AllowLoopbackHTTP, AllowInsecureHTTP), credentials
	// in the URL, or control characters.
	ErrEndpoint = errors.New("content: upload endpoint not allowed")
	// ErrCredential reports that the upload credential could not be obtained
	// or is unusable; nothing was sent with it.
	ErrCredential = errors.New("content: upload credential unavailable")
	// ErrUnreachable reports a connection or transfer failure.
	ErrUnreachable = errors.New("content: upload endpoint unreachable")
	// ErrTimeout reports an upload that did not complete within the upload's
	// timeoutMs budget.
	ErrTimeout = errors.New("content: upload timed out")
	// ErrStatus reports an HTTP status other than 201 Created; the concrete
	// error is a *StatusError.
	ErrStatus = errors.New("content: upload not confirmed")
	// ErrReceipt reports a 201 answer that does not confirm the bytes sent:
	// wrong media type, oversized or malformed body, a receipt that is not
	// canonical, or a size or sha256 that differs from the bytes sent.
	ErrReceipt = errors.New("content: upload receipt rejected")
)

// StatusError is an upload answered with an HTTP status other than 201
// Created (202 and 204 included: they are not confirmations). It carries the
// status only, never the response body.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
}

// Error returns a fixed description with the status code.
func (e *StatusError) Error() string {
	return fmt.Sprintf("content: upload answered HTTP status %d, not 201", e.Code)
}

// Is reports whether target is ErrStatus.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

func invalid(what string) error { return fmt.Errorf("%w: %s", ErrInvalid, what) }
