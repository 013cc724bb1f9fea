package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Version is the value of the "jsonrpc" member of every envelope.
const Version = "2.0"

// Method names defined by this protocol revision (base/versioning.md,
// AHP-RPC-002).
const (
	// MethodIntercept is the request that asks a backend for effects
	// before an operation continues.
	MethodIntercept = "hooks/intercept"
	// MethodObserve is the notification that delivers a one-way lifecycle
	// event.
	MethodObserve = "hooks/observe"
	// MethodCapabilities is the request that reads the capability manifest.
	MethodCapabilities = "hooks/capabilities"
)

// Error codes. The first five are defined by JSON-RPC 2.0; the others are the
// server-error codes that AHP reserves in base/errors.md.
const (
	// CodeParseError means the message was not valid JSON.
	CodeParseError = -32700
	// CodeInvalidRequest means the message was JSON but not a valid
	// JSON-RPC request object.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound means the method does not exist or is not
	// available.
	CodeMethodNotFound = -32601
	// CodeInvalidParams means the method parameters are invalid.
	CodeInvalidParams = -32602
	// CodeInternalError means an internal JSON-RPC error.
	CodeInternalError = -32603

	// CodeUnsupportedProtocolVersion (unsupported_protocol_version) means
	// the backend does not support params.protocolVersion.
	CodeUnsupportedProtocolVersion = -32001
	// CodeUnsupportedEvent (unsupported_event) means the backend does not
	// support the supplied event type in this method.
	CodeUnsupportedEvent = -32002
	// CodeBackendUnavailable (backend_unavailable) means the backend is
	// temporarily unable to evaluate the request.
	CodeBackendUnavailable = -32003
	// CodeBackendInternalError (backend_internal_error) means the backend
	// failed while evaluating the request.
	CodeBackendInternalError = -32004
)

// CodeText returns a generic, secret-free text for an error code: the
// JSON-RPC 2.0 message for the predefined codes, a text derived from the AHP
// name for the AHP codes, "Server error" for the rest of the JSON-RPC
// server-error range -32099..-32000, and the empty string for any other code.
func CodeText(code int) string {
	switch code {
	case CodeParseError:
		return "Parse error"
	case CodeInvalidRequest:
		return "Invalid Request"
	case CodeMethodNotFound:
		return "Method not found"
	case CodeInvalidParams:
		return "Invalid params"
	case CodeInternalError:
		return "Internal error"
	case CodeUnsupportedProtocolVersion:
		return "Unsupported protocol version"
	case CodeUnsupportedEvent:
		return "Unsupported event"
	case CodeBackendUnavailable:
		return "Backend unavailable"
	case CodeBackendInternalError:
		return "Backend internal error"
	}
	if code >= -32099 && code <= -32000 {
		return "Server error"
	}
	return ""
}

// Error is a JSON-RPC error object.
//
// Message and Data come from whoever built the error; when the error was
// received from a remote peer they may hold sensitive text, so [Error.Error]
// never includes them. Data is raw JSON; a nil Data is omitted when encoded.
type Error struct {
	// Code is the JSON-RPC error code.
	Code int
	// Message is the short description sent on the wire.
	Message string
	// Data is optional raw JSON with additional information. Per
	// base/errors.md it must not contain secrets.
	Data json.RawMessage
}

// NewError returns an Error with the given code and the generic message of
// [CodeText] (or "Error" for codes without a text).
func NewError(code int) *Error {
	msg := CodeText(code)
	if msg == "" {
		msg = "Error"
	}
	return &Error{Code: code, Message: msg}
}

// Error returns "jsonrpc: error CODE (TEXT)" using only the code and its
// generic [CodeText]; it never includes Message or Data, which may come from
// a remote peer.
func (e *Error) Error() string {
	if e == nil {
		return "jsonrpc: <nil error>"
	}
	s := "jsonrpc: error " + strconv.Itoa(e.Code)
	if t := CodeText(e.Code); t != "" {
		s += " (" + t + ")"
	}
	return s
}

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, NewError(CodeMethodNotFound)) matches by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code
}

// AsError maps err to the JSON-RPC error a server should send: an *Error
// found in err's chain is returned as is, [ErrParse] maps to
// CodeParseError, [ErrInvalidRequest] to CodeInvalidRequest, and anything
// else (including nil) to CodeInternalError. Messages are generic; err's text
// is never copied into the result.
func AsError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e) && e != nil:
		return e
	case errors.Is(err, ErrParse):
		return NewError(CodeParseError)
	case errors.Is(err, ErrInvalidRequest):
		return NewError(CodeInvalidRequest)
	default:
		return NewError(CodeInternalError)
	}
}

// Sentinel errors reported by [Classify] and [ID.UnmarshalJSON]. Every
// envelope-shape sentinel wraps [ErrInvalidRequest], so errors.Is(err,
// ErrInvalidRequest) matches all of them.
var (
	// ErrParse reports that a message is not a single valid UTF-8 JSON
	// text (JSON-RPC code -32700).
	ErrParse = errors.New("jsonrpc: parse error")
	// ErrInvalidRequest reports valid JSON that is not a valid JSON-RPC
	// 2.0 envelope (JSON-RPC code -32600). It applies to requests,
	// notifications and responses alike.
	ErrInvalidRequest = errors.New("jsonrpc: invalid request")

	// ErrBatch reports a top-level array; AHP forbids batches
	// (base/versioning.md, AHP-HTTP-001).
	ErrBatch = wrapInvalid("batch messages are not supported")
	// ErrNotObject reports a top-level value that is neither an object nor
	// an array.
	ErrNotObject = wrapInvalid("message is not a JSON object")
	// ErrDuplicateMember reports an object with two members of the same
	// name, which makes the envelope ambiguous.
	ErrDuplicateMember = wrapInvalid("duplicate member name")
	// ErrVersion reports a missing "jsonrpc" member or one that is not the
	// string "2.0".
	ErrVersion = wrapInvalid(`"jsonrpc" must be "2.0"`)
	// ErrInvalidID reports an id that is not a non-empty string or an
	// integer, or a null id where null is not allowed.
	ErrInvalidID = wrapInvalid("invalid id")
	// ErrInvalidMethod reports a "method" member that is not a non-empty
	// string.
	ErrInvalidMethod = wrapInvalid(`"method" must be a non-empty string`)
	// ErrInvalidParamsType reports a "params" member that is not an object
	// or an array.
	ErrInvalidParamsType = wrapInvalid(`"params" must be an object or an array`)
	// ErrResultAndError reports a response with both "result" and "error".
	ErrResultAndError = wrapInvalid(`response has both "result" and "error"`)
	// ErrMixedMembers reports a message that has both request members
	// ("method", "params") and response members ("result", "error").
	ErrMixedMembers = wrapInvalid("message mixes request and response members")
	// ErrMissingMember reports a message that lacks the members needed to
	// be a request, notification or response (for example a response
	// without "id", or an object without "method", "result" and "error").
	ErrMissingMember = wrapInvalid("missing required member")
	// ErrInvalidErrorObject reports an "error" member that is not an
	// object with an integer "code" and a string "message".
	ErrInvalidErrorObject = wrapInvalid(`"error" must be an object with integer "code" and string "message"`)
)

// invalidError is an envelope-shape error that wraps ErrInvalidRequest.
type invalidError struct{ msg string }

func wrapInvalid(msg string) error { return &invalidError{msg: msg} }

func (e *invalidError) Error() string { return "jsonrpc: invalid request: " + e.msg }

func (e *invalidError) Unwrap() error { return ErrInvalidRequest }
