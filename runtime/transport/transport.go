// Package transport moves AHP JSON-RPC messages between a harness and one
// backend. A Transport exchanges a request for its correlated response,
// sends a one-way notification, and releases what it owns on Close.
//
// Three implementations are provided: HTTP ([NewHTTP],
// base/transports/http.md, AHP-HTTP-001) over a borrowed *http.Client with
// redirects disabled and a bounded response; stdio ([NewStdio],
// base/transports/stdio.md, AHP-STDIO-001) over an owned child process,
// persistent or one per message, with stderr drained and children reaped; and
// an in-process transport ([NewInProcess]) that hands the same bytes to any
// http.Handler, such as a server.Handler, without a socket. Callers may
// implement Transport themselves; the harness treats every implementation
// alike.
//
// Hosts rarely construct a transport: hooks.New builds and owns one per
// backend of the registration. Construct one to hand it to
// hooks.Config.Transports (borrowed there, so the caller closes it), for
// instance an in-process backend in tests and examples.
//
// Failures are reported as *Error values carrying a Code and a Stage from the
// one vocabulary defined here (the harness reuses it for its diagnostics).
// Error text is fixed by the package: it never contains a backend's message,
// response bytes, URLs or credentials.
package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// Message is one JSON-RPC message to deliver.
type Message struct {
	// BackendID is the registration id of the receiving backend.
	BackendID string
	// Method is the JSON-RPC method (hooks/intercept, hooks/observe, ...).
	Method string
	// ID is the request id; it is zero for a notification.
	ID jsonrpc.ID
	// Body is one compact JSON-RPC object without a trailing newline. The
	// transport does not modify it.
	Body []byte
}

// Transport delivers messages to one backend. Implementations must be safe
// for concurrent use.
type Transport interface {
	// Exchange sends a request and returns the raw bytes of the backend's
	// correlated response. It honours ctx: when ctx ends it returns promptly
	// with an error matching ctx.Err() and ignores any later response.
	Exchange(ctx context.Context, msg Message) ([]byte, error)
	// Notify sends a notification. Any reply is discarded. It honours ctx
	// as Exchange does; an error caused by the end of ctx matches ctx.Err()
	// (context.Canceled or context.DeadlineExceeded), and any other error is
	// a failure of the delivery itself.
	Notify(ctx context.Context, msg Message) error
	// Close releases what the transport owns (connections it created,
	// child processes, goroutines). It is idempotent. Borrowed resources
	// stay open.
	Close() error
}

// Code classifies a failed delivery. The codes are the one vocabulary of
// delivery failures shared by transports and the harness's diagnostics.
type Code string

const (
	// CodeDeadlineExceeded is a delivery that did not complete before its
	// deadline (subscription timeout or call budget); a later response is
	// ignored.
	CodeDeadlineExceeded Code = "deadline_exceeded"
	// CodeTransport is a connection, HTTP status, credential or process
	// failure.
	CodeTransport Code = "transport"
	// CodeRemoteRPC is a well-formed, correlated JSON-RPC error response.
	CodeRemoteRPC Code = "remote_rpc"
	// CodeProtocolRejection is malformed or uncorrelated protocol output, or
	// a response that admission rejected (for example an ungranted effect).
	CodeProtocolRejection Code = "protocol_rejection"
	// CodePreparation is a failure of the content-preparation phase before
	// dispatch.
	CodePreparation Code = "preparation"
	// CodeCancelled is a delivery abandoned because its call was cancelled
	// or its harness closed.
	CodeCancelled Code = "cancelled"
	// CodeCapacity is a delivery refused by a local bound, such as the
	// response size limit.
	CodeCapacity Code = "capacity"
)

// Stage names the step of a delivery at which it failed.
type Stage string

const (
	// StagePrepare is content preparation before dispatch.
	StagePrepare Stage = "prepare"
	// StageAuth is credential resolution for the delivery.
	StageAuth Stage = "auth"
	// StageSend is connecting, launching a process or writing the message.
	StageSend Stage = "send"
	// StageReceive is waiting for, reading and decoding the response.
	StageReceive Stage = "receive"
	// StageAdmit is validating and admitting the response's effects.
	StageAdmit Stage = "admit"
)

// Error is a failed delivery. Its text is built only from Code, Stage and
// Reason, which come from fixed vocabularies; Err, when set, is a sentinel
// of this package or a context error and is exposed for errors.Is only.
type Error struct {
	// Code classifies the failure.
	Code Code
	// Stage is where the delivery failed.
	Stage Stage
	// Reason is a short fixed token such as "http_status" or
	// "content_type"; it never holds backend text.
	Reason string
	// Status is the HTTP status or process exit code when relevant.
	Status int
	// Err is the classifying cause (a sentinel of this package or a context
	// error), or nil.
	Err error
}

// Error returns a fixed description built from the code, stage and reason.
func (e *Error) Error() string {
	s := fmt.Sprintf("transport: %s at %s", e.Code, e.Stage)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" status %d", e.Status)
	}
	return s
}

// Unwrap returns the classifying cause.
func (e *Error) Unwrap() error { return e.Err }

// Sentinel causes carried by *Error.
var (
	// ErrClosed reports use of a closed transport.
	ErrClosed = errors.New("transport: closed")
	// ErrStatus reports an HTTP status the binding does not allow for the
	// message kind.
	ErrStatus = errors.New("transport: unexpected HTTP status")
	// ErrMalformed reports protocol output that is not a correct JSON-RPC
	// frame or body (wrong media type, bad JSON, extra or missing frames,
	// uncorrelated id).
	ErrMalformed = errors.New("transport: malformed protocol output")
	// ErrTooLarge reports a response larger than the configured limit.
	ErrTooLarge = errors.New("transport: response too large")
	// ErrExited reports a backend process that exited or crashed.
	ErrExited = errors.New("transport: backend process exited")
	// ErrUnreachable reports a connection or launch failure.
	ErrUnreachable = errors.New("transport: backend unreachable")
	// ErrCredential reports that a configured credential could not be
	// obtained; the message was not sent.
	ErrCredential = errors.New("transport: credential unavailable")
)

func fail(code Code, stage Stage, reason string, cause error) *Error {
	return &Error{Code: code, Stage: stage, Reason: reason, Err: cause}
}

// ctxFail converts a context error into a delivery failure.
func ctxFail(ctx context.Context, stage Stage) *Error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fail(CodeDeadlineExceeded, stage, "deadline", err)
	}
	return fail(CodeCancelled, stage, "cancelled", err)
}

// The credential types are runtime/auth's; these aliases keep the names
// under which the transport first offered them.
type (
	// Purpose is auth.Purpose.
	Purpose = auth.Purpose
	// CredentialRequest is auth.Request.
	CredentialRequest = auth.Request
	// Credential is auth.Credential.
	Credential = auth.Credential
	// CredentialProvider is auth.Provider.
	CredentialProvider = auth.Provider
	// EnvCredentials is auth.EnvironmentProvider.
	EnvCredentials = auth.EnvironmentProvider
)

// PurposeEvent is auth.PurposeEvent.
const PurposeEvent = auth.PurposeEvent
