// Package jsonrpc is the JSON-RPC 2.0 plumbing shared by the AHP backend
// server and the harness client.
//
// It has four parts:
//
//   - [ID], a request identifier that keeps its exact JSON type and text, so
//     that a response echoes the id of its request byte for byte.
//   - [Classify], a single-pass decoder of the top-level envelope members
//     (jsonrpc, id, method, params, result, error) that keeps params, result
//     and error as raw JSON and reports the message [Kind]; and the Append
//     encoders ([AppendRequest], [AppendNotification], [AppendResponse],
//     [AppendErrorResponse]) that produce compact, single-line JSON.
//   - The error model: JSON-RPC and AHP error codes (base/errors.md), the
//     [Error] type and generic code texts ([CodeText]).
//   - Line framing for the stdio binding (base/transports/stdio.md,
//     AHP-STDIO-001): [FrameReader] and [FrameWriter].
//
// The HTTP binding (base/transports/http.md, AHP-HTTP-001) carries one
// envelope per body and needs only [Classify] and the encoders.
//
// # Encoding
//
// The Append encoders never fail and never emit a raw CR or LF byte. Raw
// params, result and error data must be valid JSON: they are copied as is
// when they contain no line break and compacted otherwise; an invalid raw
// value yields invalid output that still stays on one line. Responses echo
// the request [ID] text exactly.
//
// # Strictness
//
// Classify follows JSON-RPC 2.0 and the AHP common schema
// (common.schema.json): input must be UTF-8 (AHP-RPC-001) and a single JSON
// object; batches are rejected (base/versioning.md forbids them); an id is a
// non-empty string or an integer, and responses may carry a null id; duplicate
// top-level member names are rejected as ambiguous; unknown members are
// ignored (AHP-CORE-003). Classify reports syntax problems as [ErrParse]
// before any envelope problem ([ErrInvalidRequest]), matching the JSON-RPC
// order of -32700 over -32600.
//
// The frame reader is strict about AHP-STDIO-001: each message is terminated
// by a single LF. A CRLF terminator, an empty line, and a final line without a
// terminator are reported as errors; over-long lines are skipped without
// being buffered. All frame errors except I/O errors leave the reader at the
// start of the next line, so a persistent peer can be kept in service.
//
// The package has no global mutable state. Readers are not safe for
// concurrent use; a [FrameWriter] is.
package jsonrpc
