// Package content owns attachment bytes on the harness side and uploads them
// under the protocol's binary upload binding (spec/draft/content-upload.md).
//
// # Who owns what
//
// An *Attachment is the sole owner of one attachment's bytes and of the
// source they come from. It is built from a byte slice (FromBytes copies the
// slice: later changes by the caller are not seen), from a lazy loader (Lazy:
// a Loader opened at most once, plus an optional cleanup function), or from a
// stream (FromStream: an io.ReadCloser read at most once). Constructing an
// attachment performs no I/O and does not hash anything. Its media type must
// be a non-text, non-JSON type (CheckMediaType).
//
// The first Snapshot call materializes the bytes: the source is read once,
// within the attachment's byte limit and load timeout, and its size and
// SHA-256 are computed once. Every later or overlapping Snapshot call joins
// that one materialization and gets the same immutable *Snapshot or the same
// terminal error. A reader whose context ends returns at once while the
// materialization goes on for the others; when the last reader leaves, or the
// owner calls Close, the materialization is cancelled and joined. A source is
// never read twice: after a failure, a timeout or an abandoned
// materialization every later Snapshot returns the same error.
//
// Close releases the source exactly once, whether it was read or not: a lazy
// attachment's cleanup function runs (with a context bounded by the cleanup
// timeout, 1 s by default), a stream is closed. Close is bounded by the
// cleanup timeout: the release (joining a cancelled materialization, then
// the cleanup or the stream's Close) runs on a goroutine the attachment
// owns, and a source that outlasts the bound makes Close return an error
// matching ErrCleanup and context.DeadlineExceeded while the release goes on;
// Wait joins it and reports its real outcome. The last reader leaving a
// pending materialization likewise waits for it at most the cleanup
// timeout, and readers waiting when Close is called return ErrClosed at
// once. The caller that built an attachment owns it and must Close it; a
// Snapshot stays valid after Close (its bytes are immutable memory), but
// Snapshot calls on a closed attachment fail with ErrClosed.
//
// The caller's code never takes the process down: a panic of a Loader, of a
// source's Read or Close, or of a cleanup function is recovered and
// reported as ErrLoad (while reading) or ErrCleanup (from Close), wrapping a
// *PanicError whose text is fixed.
//
// A *Snapshot is a read-only view. It never hands out the owner's slice:
// NewReader reads it in place and Bytes returns a copy.
//
// An *Uploader borrows its *http.Client and its transport.CredentialProvider;
// it owns only a client copy with redirects disabled and without the
// borrowed client's cookie jar (and, when it was given no client, the
// connections of its own transport, released by CloseIdleConnections). The
// borrowed client's Transport, TLS client certificates included, serves
// every upload: it should be a client meant for upload endpoints, not the
// event client. Upload reads the attachment through Snapshot and
// sends the snapshot's bytes without copying them.
//
// A *Cache holds only confirmed uploads, per (attachment, backend id,
// subscription index, exact endpoint, exact auth binding): a reference is
// reused only for the same owner and the same receiver authorization
// context, never for another endpoint or another binding, and a cache
// belongs to the one uploader (hence credential provider) that filled it.
// It is filled by UploadAll and is safe for concurrent use. A *Limiter bounds concurrent uploads (MaxConcurrentUploads, 8 by
// default); one limiter may be shared by several uploaders.
//
// # Uploads
//
// Upload posts the exact bytes to the exact configured endpoint (no route is
// appended; path and query are preserved; redirects are never followed),
// over HTTPS, with the receiver's certificate verified by the client's TLS
// configuration; plain HTTP only when the uploader is explicitly configured
// for it: AllowLoopbackHTTP for a loopback host (transport.IsLoopbackHost,
// the protocol's loopback tests), AllowInsecureHTTP for any host. The
// request carries
// Content-Type: application/octet-stream, an exact Content-Length (also for
// an empty body, never chunked) and AHP-Content-SHA256 with the lowercase hex
// digest. Bytes over the upload's maxBytes fail before anything is sent.
//
// Credentials are asked for at every upload with auth.PurposeUpload and the
// upload's own auth binding, never the event endpoint's (the provider also
// gets the backend id, its registration entry when the caller gives it in
// Destination.Backend, and the endpoint). With a binding the provider must
// produce a token or the upload fails unsent (ErrCredential). Without one
// it may supply a credential it holds for exactly this endpoint, or none:
// the endpoint is then tried without a credential, as the protocol
// requires. Every 401 is reported to the provider's Challenge with the
// status, the headers, the WWW-Authenticate challenges parsed by
// auth.ParseWWWAuthenticate (all of them, whatever the schemes around a
// Bearer challenge; none when the header is absent or refused) and the
// identity of the credential sent. Only the credential-free attempt is
// eligible for a replay (Challenge.Replay): that is the protected-resource
// discovery case, which the provider owns (resource_metadata when the
// challenge names it, the RFC 9728 well-known locations otherwise); if its
// Challenge returns nil, a new Credential call supplies the token and the
// upload is sent once more. A provider that does not consent, or has
// nothing after it, fails the upload with the 401 (a *StatusError that
// also matches ErrCredential). A rejected credential is never replayed:
// the provider is told (Replay false) and the upload fails with the 401.
// Credential resolution, challenges, discovery and transfer share one
// budget: the caller's context shortened by the upload's timeoutMs.
//
// Every upload with a body carries Expect: 100-continue, so a receiver that
// rejects from the headers (401, 403, 413, bad framing) answers before any
// body byte is sent and its answer is not lost to a connection it closes
// unread. The uploader's own transport, and its clone of a borrowed
// *http.Transport that sets no ExpectContinueTimeout, wait
// DefaultExpectContinueTimeout for that verdict before sending the body
// anyway (a receiver that ignores the header costs that wait).
//
// Only a 201 answer with Content-Type application/json and a canonical
// content-upload-receipt whose size and sha256 equal the bytes actually sent
// confirms an upload. The event then carries Confirmation.Reference ({ref}
// only); Confirmation.Receipt is for the caller's records and never goes into
// an event.
//
// # Errors
//
// Errors are checkable with errors.Is against the sentinels of this package
// (ErrTooLarge, ErrMismatch, ErrStatus, ErrReceipt, ErrCredential, ...) and
// errors.As with *StatusError; context errors are wrapped with %w. Error
// text is fixed by this package: it never contains a token, response bytes,
// a receiver's message or the endpoint URL. Errors returned by the caller's
// own loader or cleanup are wrapped.
package content
