// Package hooks is the harness (host) side of the Agent Hooks Protocol (AHP):
// it delivers each event occurrence to the hook backends of one registration
// and settles what they answer into a decision for the host to act on.
//
// Start with [New]: give it the registration JSON and a [Config] holding the
// harness's Source and what it can enforce at each event ([Config.Capabilities]
// built from [Intercept] or [Observe] grants, or a complete
// [Config.Manifest]). New validates everything and performs no I/O. Then call
// one method per event, such as [Hooks.ToolBefore] with a [ToolBeforeInput]
// that holds only the occurrence's facts (the SDK fills the type and source,
// and the id and time when they are empty). Intercept subscriptions are called serially in registration
// order, observers are notified once the decision is settled. Release the
// Hooks with [Hooks.Close], which waits for the calls in flight and reaps the
// processes it started.
//
// A call returns a [*Result]: the settled permission (none is not approval,
// ask needs the user, deny and an interrupted call never authorize), the
// effective input ([Result.DecodeInput] into the host's own type), supplied
// result, flow, messages, injections and the [Diagnostic] of every failed
// delivery. A denial, a backend failure (handled by the subscription's
// failure policy, a fail-closed one becoming a synthetic denial) and an
// unreachable observer are results, not errors. The error is non-nil only
// for [ErrClosed], the caller's own cancellation or a deadline that passed
// before the decision was settled (wrapping ctx.Err()), or invalid host
// input ([ErrInvalidInput], [ErrWidening]); [New] fails with
// [ErrInvalidRegistration] or [ErrInvalidConfig] and a [*ValidationError]
// naming the JSON pointer.
//
// The caller's ctx deadline is the one budget of a call: a subscription's
// timeoutMs only shortens its own delivery, and the observations after
// settlement are capped by [Config.ObserveTimeout] inside that budget and
// cannot change the settled decision. Per-call options narrow, never widen:
// [WithCapabilities] (per-call grant), [WithInitialState] (the host's prior
// decision and candidate), [WithContinuations], [WithEventID].
//
// Content selection is the SDK's job: before every delivery each content slot
// of the event is projected for the receiving subscription's content
// selection (body, metadata or omit per category), and an optional
// [Config.Preparer] can only narrow that view further (for opaque
// application JSON). Attachment bytes are given per call as a
// *content.Attachment (package runtime/content) with [WithAttachment]; the
// SDK reads it at most once, only for subscriptions that select the body,
// uploads it to their upload endpoints (through [Config.UploadHTTPClient],
// never the event client [Config.HTTPClient]) and gives each receiver its
// own reference. The attachment then belongs to the call, and then to the
// Result (see Who owns what).
//
// Backends are reached over the registration's HTTP or stdio transport, or
// over caller-owned transports set in [Config.Transports] (for example
// transport.NewInProcess around a server.Handler, as in the examples).
// Credentials of HTTP backends come from [Config.AuthProvider] (package
// runtime/auth) at delivery time.
//
// # Who owns what
//
// The Hooks owns the transports it builds from the registration (the
// connections of its own HTTP client, stdio child processes) and releases
// them in Close. Everything given through Config is borrowed and stays the
// caller's: Transports, HTTPClient, UploadHTTPClient, AuthProvider,
// Preparer, Logger, StdioStderr. A call owns its work: its deliveries, observations and
// uploads end before it returns. The Result's Event, Input and Targets are
// detached copies.
//
// Ownership of the attachments given with [WithAttachment] passes to the
// call when the method is called, and then, once, to the Result:
//
//   - a Result returned without error owns the call's attachments, read or
//     not (a lazy loader that no receiver needed is still unopened), and
//     keeps them readable after [Hooks.Close]: [Result.Attachments] lists
//     them by part id and reads their bytes. The caller must call
//     [Result.Close], which releases each source exactly once (a lazy
//     cleanup runs, a stream is closed). An attachment that accepted edits
//     removed from the effective event is still the Result's to close;
//   - a call that returns an error (invalid input, [ErrClosed], the end of
//     ctx) has closed its attachments before returning; an interrupted
//     Result returned with the error holds them closed.
//
// The caller never closes an attachment it passed to a call, and gives each
// call its own. In a Result, attachment parts carry the harness's own
// reference [AttachmentRef](partID), which no backend ever sees; each
// receiver gets the reference its own upload endpoint allocated (or the
// part without a reference for metadata and omit selections, or a content
// gap). The bytes an upload receiver holds are the receiver application's:
// this package never deletes them.
package hooks
