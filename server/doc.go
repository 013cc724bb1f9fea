// Package server is the backend side of the Agent Hooks Protocol (AHP): a
// [Handler] that a policy engine, auditor or guard fills with typed
// callbacks, served over the HTTP binding ([Handler.ServeHTTP], AHP-HTTP-001)
// or the stdio binding ([ServeStdio], AHP-STDIO-001). Both bindings share one
// dispatcher; stdio does not go through fake HTTP requests.
//
// Start by filling a [Handler]: [Handler.Intercept] answers an interceptable
// event with an [InterceptResult] whose effects come from the generated
// constructors ([Deny], [Allow], [MergeInput], ...), and [Handler.Observe]
// receives notifications. Serve it with [NewHTTPServer] (an http.Server with
// its timeouts set) or with [ServeStdio] on the process's stdin and stdout.
// Requests are validated before a callback sees them and answers are admitted
// against the request's capabilities before they are sent, so a callback
// error, a panic or an ungranted effect reaches the harness only as a generic
// JSON-RPC error.
//
// # Requests
//
// Every message is classified as a JSON-RPC 2.0 envelope (runtime/jsonrpc),
// then checked in a fixed order, the first failing step deciding the answer:
//
//  1. UTF-8 and JSON syntax: -32700 Parse error, id null.
//  2. Envelope (object, not a batch; "jsonrpc":"2.0"; id a non-empty string or
//     an integer; method a non-empty string; params structured): -32600
//     Invalid Request, echoing the id when it could be read.
//  3. Method: hooks/intercept, hooks/observe and hooks/capabilities are known;
//     any other method, or a known one this Handler does not serve (no
//     Intercept callback, no Manifest), is -32601 Method not found. A
//     hooks/observe message that carries an id is -32600 (observation is a
//     notification, AHP-RPC-002).
//  4. params.protocolVersion: present and not exactly "draft" is -32001
//     unsupported_protocol_version with data {"supported":["draft"]}
//     (AHP-VER-001).
//  5. params.event.type (intercept): an unknown event type, an observe-only
//     event, or one outside [Handler.InterceptEvents] is -32002
//     unsupported_event (AHP-CORE-003: unknown event types are unsupported
//     semantics, not ordinary unknown fields).
//  6. Canonical validation of the whole message against its schema
//     (intercept-request, observe-notification, capabilities-request),
//     including id == params.event.id, and for intercept the consistency
//     checks of runtime/settle (an event it cannot settle is invalid host
//     input): -32602 Invalid params. Validation takes time linear in the
//     size of the message whatever it holds, and stops once the request's
//     context ends (then -32003). A message above 16 KiB is decided by the
//     linear validator alone: its violations are logged without a pointer,
//     and one it cannot decide (nesting deeper than 512 levels, escaped lone
//     surrogates, numbers beyond its exact range) is rejected as unverified.
//     The pointer and keyword of a violation are worked out only when
//     [Handler.Logger] shows the record that names them (Debug for
//     requests, Warn for notifications); otherwise validation gives only
//     its verdict, without the second pass over the message that locates
//     the violation.
//  7. The callback. An error wrapping [ErrUnavailable], or any error once the
//     request's context has ended, is -32003 backend_unavailable; any other
//     error or a panic is -32004 backend_internal_error. The callback's text,
//     panic value and stack never reach the wire: the error response carries
//     only the generic message of its code. They go to [Handler.Logger].
//  8. Admission of the answer: the response is encoded from the typed
//     effects and checked before it is sent, against the capabilities the
//     request advertised (effect family, modification target and operation,
//     flow operation and remaining continuations, inject delivery) and
//     runtime/settle's boundary rules, and against the canonical schemas
//     intercept-response.schema.json and the event's own response
//     definition. A response that fails is never sent: the harness gets
//     -32004 and the log hook gets an [*AdmissionError] (AHP-CAP-001,
//     AHP-DEC-001, AHP-CORE-003: effects are strict and a response is
//     rejected as a whole). The answer without effects or extensions, the
//     same for every event but for the echoed id and valid against both
//     schemas for every interceptable event, needs none of these checks and
//     is sent directly.
//
// Notifications (hooks/observe, or any message without an id) never get a
// JSON-RPC reply, success or error (base/errors.md). A notification that
// fails a check is dropped without calling Observe.
//
// # HTTP statuses
//
// POST only (405 with Allow: POST otherwise); the request Content-Type must
// be application/json, optionally with charset=utf-8 (415 otherwise); a body
// longer than [Handler.MaxBodyBytes] is 413. A request that gets a JSON-RPC
// response, success or error, is answered 200 with Content-Type
// application/json. An accepted notification is 204 No Content; a dropped
// one is 400 and a notification whose Observe callback failed is 500, both
// without a body.
//
// # Serving over HTTP
//
// Serve a Handler through an http.Server whose timeouts are set:
// [NewHTTPServer] returns one with ReadHeaderTimeout, ReadTimeout,
// WriteTimeout and IdleTimeout at documented defaults, and MaxHeaderBytes
// at [DefaultMaxHeaderBytes] (64 KiB instead of net/http's 1 MiB). http.ListenAndServe
// and a bare http.Server have no timeouts at all, so a client that sends
// its headers, or part of a body, and then nothing holds its connection,
// its goroutine and its buffers for as long as it likes; enough such
// clients exhaust the backend.
//
// Memory follows the bytes a client sends, not the Content-Length it
// declares: a request body is read into a buffer that starts at no more
// than 16 KiB (a smaller body declared with its length gets one buffer of
// that size) and doubles as bytes arrive, up to [Handler.MaxBodyBytes]. A
// connection that declares 4 MiB and sends only its headers holds about
// 16 KiB. A request holds one body buffer of at most MaxBodyBytes+1 bytes
// (for the instant of a doubling, also the half-size buffer it replaces),
// so the body buffers of a server are bounded by its concurrent requests
// times MaxBodyBytes, plus what decoding and the callbacks keep. Headers
// come on top: net/http reads at most MaxHeaderBytes plus 4 KiB of them per
// request (about 68 KiB with NewHTTPServer, over 1 MiB with a bare
// http.Server; the parsed header map holds about as much again) and
// answers 431 beyond. http.Server does
// not bound concurrent connections; to bound that product, limit them with
// the listener (for example golang.org/x/net/netutil.LimitListener) or in
// front of the server, and let the timeouts reclaim stalled ones.
//
// # Content uploads
//
// [UploadReceiver] is the http.Handler of the binary upload endpoint
// (content-upload.md), separate from the event endpoint and its
// credentials. It checks the framing (POST, Content-Type
// application/octet-stream, an exact Content-Length, no chunked transfer or
// content coding, AHP-Content-SHA256), derives the upload's scope from the
// request's credentials through its Authorize hook and checks its size
// limit, all before reading a body byte; then it streams the body into the
// caller's [Storage], verifies size and SHA-256 through EOF, commits, and
// answers 201 with a receipt for a new random reference. A failed check
// aborts the staged bytes: nothing is committed and no reference is
// published. Backends resolve an event's {"ref"} with [UploadReceiver.Open]
// in their own scope. [MemoryStorage] is a Storage for tests and examples.
//
// # Effects
//
// The effect constructors in effects_gen.go ([Deny], [Allow], [Ask],
// [Message], [StopFlow], [ContinueFlow], [Inject], [ReplaceInput],
// [MergeInput], [ReplaceMessages], [Return], ...) are generated from
// effect.schema.json by cmd/ahp-codegen. Every one of them fills the
// discriminators and returns only a [gen.Effect], so effects compose as
// values:
//
//	Effects: []gen.Effect{server.MergeInput(map[string]string{"cwd": "/sandbox"}), server.Allow()}
//
// Their content is checked at admission ([Admit], and the dispatcher before
// it sends a response): an effect the request does not grant, one that the
// schema rejects, and one whose value a constructor could not encode as JSON
// (or, for [MergeInput] and [ReplaceInput], that is not an object) are all
// reported as an [*AdmissionError] naming the effect, and the response is
// not sent.
package server
