// Package auth is the harness's side of endpoint authentication
// (spec/draft/capability-auth.md, "Authentication bindings" and "Client
// authentication integration"): the credential Provider the harness
// borrows, the default EnvironmentProvider, and a bounded parser of
// WWW-Authenticate challenges.
//
// # Who owns what
//
// The SDK owns endpoint isolation, applying a credential in exactly one
// Authorization header, and the single replay after a challenge. The
// Provider owns everything else: OAuth protected-resource discovery, trust
// policy, consent and interaction, token exchange, refresh, rotation,
// caching and its own lifetime. There is no token manager and no browser in
// the SDK.
//
// # The flow of one delivery
//
// At delivery time the transport asks Provider.Credential with a Request
// naming the backend (its complete registration entry), the selected
// binding, the destination URL and the purpose (PurposeEvent, or
// PurposeUpload for a subscription's upload endpoint, whose binding is
// independent of the event endpoint's), under the delivery's context: the
// call's context shortened by the subscription's timeout. Cancelling the
// call cancels the provider's wait, and nothing is sent after it.
//
// With a binding (bearer or oauth) the provider must produce a token, or the
// delivery fails without being sent: no anonymous fallback, no switch to
// another binding. Without one it may return the zero Credential, and the
// endpoint is tried without a credential, as the protocol requires.
//
// If the endpoint answers 401, Provider.Challenge is told: the status and
// headers (the parsed WWW-Authenticate challenges included) and the
// Identity of the credential that was sent, never a token and never the
// response body. For an interception (a JSON-RPC request) whose 401
// carries a Bearer challenge, and only once per delivery, Challenge
// returning nil makes the transport call Credential again and replay the
// same serialized request (same JSON-RPC id, same bytes) with the new
// token, within the same budget. A second 401, a challenge of another
// scheme, a provider error or a credential equal to the rejected one ends
// the delivery with the 401. Observations are never replayed; their
// Challenge call (Replay false) only informs the provider. An upload
// (runtime/content) is replayed only in the discovery case: its endpoint
// has no upload binding, the attempt carried no credential, and whatever
// its challenges (a resource_metadata parameter, or none and the RFC 9728
// well-known locations) the provider's Challenge returned nil; an upload
// whose credential was rejected is not replayed.
//
// # Errors and secrets
//
// Provider errors are classified (ErrMissingSecret, ErrUnsupported, a
// context error) and reported as fixed diagnostic tokens; their text, the
// token, the challenge headers and the response body never reach an error,
// a diagnostic or a log line. Credential's String, Format, LogValue and
// MarshalJSON omit the token.
package auth
