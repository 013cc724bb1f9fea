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
// over HTTPS unless the host is loopback (transport.IsLoopbackHost) or the
// uploader explicitly allows insecure HTTP. The request carries
// Content-Type: application/octet-stream, an exact Content-Length (also for
// an empty body, never chunked) and AHP-Content-SHA256 with the lowercase hex
// digest. Bytes over the upload's maxBytes fail before anything is sent.
//
// Credentials are asked for with transport.PurposeUpload and the upload's
// own auth binding, never the event endpoint's. Without an upload auth
// binding the endpoint is first tried without a credential, as the
// protocol requires; if it answers 401 with a Bearer challenge, the provider
// is asked once more with an empty binding (neither Bearer nor Oauth set: the
// OAuth protected-resource discovery case, which the SDK leaves to the
// provider) and the request is repeated once with its token. A provider
// that has nothing for that case returns an error, and the upload fails with
// the 401 (fail closed; the SDK never falls back to another credential).
// Credential resolution and transfer share one budget: the caller's context
// shortened by the upload's timeoutMs.
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
