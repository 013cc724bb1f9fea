package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
)

// DefaultMaxUploadBytes is the default limit of one upload body (4 MiB), the
// same as the harness's default attachment size.
const DefaultMaxUploadBytes = 4 << 20

// UploadSHA256Header is the request header that carries the lowercase
// SHA-256 hex digest of the exact upload body (content-upload.md).
const UploadSHA256Header = "AHP-Content-SHA256"

// Errors that an [UploadReceiver]'s Authorize hook and [Storage] return,
// wrapped, to choose the HTTP status. The receiver never sends or logs the
// text of the error it was given; these sentinels only select the status.
var (
	// ErrUnauthenticated: the request carries no credentials or invalid
	// ones (401, with the receiver's WWW-Authenticate challenge).
	ErrUnauthenticated = errors.New("server: missing or invalid upload credentials")
	// ErrForbidden: the credentials are valid but their principal may not
	// upload into any scope of this receiver (403).
	ErrForbidden = errors.New("server: principal is not authorized for the upload scope")
	// ErrTooLarge: [Storage.Create] refuses the declared size, for example
	// a per-scope quota (413).
	ErrTooLarge = errors.New("server: upload exceeds the receiver's size limit")
	// ErrNotFound: no committed upload has this reference in this scope.
	// [Storage.Open] returns it alike for an unknown reference and for one
	// committed in another scope, so that a scope learns nothing about
	// another.
	ErrNotFound = errors.New("server: no such upload in this scope")
	// ErrCorrupt: the bytes that [Storage.Open] returned do not have the
	// size or SHA-256 recorded when they were committed.
	ErrCorrupt = errors.New("server: stored upload does not match its receipt")
)

// UploadReceipt describes committed upload bytes: the receiver-allocated
// reference and the exact size and lowercase SHA-256 hex digest that the
// receiver verified before the commit. It is what the 201 response carries
// (content-upload-receipt.schema.json).
type UploadReceipt struct {
	// Ref is the opaque reference the receiver allocated. It is not a URL
	// and grants nothing: access is controlled by scope.
	Ref string
	// Size is the exact number of octets.
	Size int64
	// SHA256 is the lowercase hex SHA-256 digest of the octets.
	SHA256 string
}

// Storage is the caller's immutable store of uploaded bytes, partitioned by
// scope, the authorization scope that the receiver's Authorize hook derived
// from the uploader's verified credentials. Durability and retention are the
// application's: the SDK requires only what is written below. A Storage
// must be safe for concurrent use.
type Storage interface {
	// Create stages a new upload of size octets into scope. size is the
	// peer's declared Content-Length, already checked against the
	// receiver's limit but not yet verified: do not allocate by it. An
	// error wrapping ErrTooLarge answers 413, ErrUnavailable 503, any
	// other 500.
	Create(ctx context.Context, scope string, size int64) (Staged, error)

	// Open returns the committed bytes bound to ref in scope and the
	// receipt they were committed with. An unknown ref, or one committed
	// in another scope, is an error wrapping ErrNotFound, the same for
	// both. The caller closes the reader.
	Open(ctx context.Context, scope, ref string) (io.ReadCloser, UploadReceipt, error)
}

// Staged is one upload in progress. The receiver writes the body to it as
// the bytes arrive, unverified, and then ends it exactly once: with a Commit
// that returns nil, or with Abort (also after a Commit that failed). Nothing
// written to a Staged may be visible through [Storage.Open] before its
// Commit returns nil, and nothing of an aborted one ever.
type Staged interface {
	// Write appends body bytes. An error (a full disk, say) makes the
	// receiver abort the upload and answer 500.
	io.Writer

	// Commit binds the written bytes, whose size and SHA-256 the receiver
	// has verified through EOF, to the new reference receipt.Ref in the
	// scope given to Create, atomically and immutably: once Commit has
	// returned nil, Open(scope, receipt.Ref) returns exactly these bytes
	// and receipt, forever or until the application deletes them. Commit
	// must fail, not replace, if receipt.Ref is already bound in the scope.
	// An error answers 500 (ErrUnavailable: 503) and the receiver then
	// calls Abort.
	Commit(ctx context.Context, receipt UploadReceipt) error

	// Abort discards the staged bytes. It is called when the body is
	// short, long, fails its digest, cannot be read (the client went away)
	// or cannot be written, and after a failed Commit. Its error is
	// logged (without its text) and otherwise ignored.
	Abort() error
}

// UploadReceiver is an http.Handler for the content upload endpoint
// (content-upload.md): it checks the request framing, authorizes the
// uploader, streams the body into the caller's [Storage] while hashing it,
// verifies size and SHA-256 through EOF, commits, and only then answers 201
// with the canonical receipt {"ref","size","sha256"} of a newly allocated
// reference. The order of checks and their statuses:
//
//  1. Method: POST only; anything else is 405 with Allow: POST.
//  2. Framing, each header exactly once: Content-Type application/octet-stream
//     (type and subtype case-insensitive per RFC 9110, no parameters),
//     Content-Length present (zero included), no Transfer-Encoding (this
//     binding does not use chunked transfer), no Content-Encoding, and
//     AHP-Content-SHA256 exactly 64 lowercase hex characters. Anything else
//     is 400.
//  3. Authorization: the Authorize hook, which sees the headers but not the
//     body. 401 (ErrUnauthenticated), 403 (ErrForbidden), 503
//     (ErrUnavailable) or 500 (anything else, or an empty scope).
//  4. Limit: a Content-Length over MaxBytes is 413.
//
// No body byte is read, and no 100 Continue sent, before all four pass. The
// body is then streamed through a fixed 32 KiB buffer into a [Staged] from
// Storage.Create; a body shorter or longer than Content-Length, a digest
// mismatch, or a read error (the client went away) aborts it and answers
// 400. A verified body is committed under a fresh reference of 128 random
// bits (crypto/rand); a failed commit aborts and answers 500 without a
// reference. Error responses have no body.
//
// The receiver does not route: mount it at the configured endpoint and let
// the mux answer 404 for other paths. Timeouts are the http.Server's, and
// an upload body arrives at the peer's pace: serve the receiver through
// [NewHTTPServer] (or an http.Server with its timeouts set), and raise
// ReadTimeout and WriteTimeout with MaxBytes, as they bound the whole
// transfer.
//
// A retry of the same bytes gets a new reference (content-upload.md does
// not offer idempotence), and bytes bound to a reference never change.
// Backends read an event's {"ref"} with [UploadReceiver.Open], in the scope
// they authorized the event's sender for.
//
// Fill an UploadReceiver before serving and do not change it afterwards; it
// is safe for concurrent use when its hook and Storage are.
type UploadReceiver struct {
	// Authorize derives the authorization scope of an upload from the
	// request's verified credentials (content-upload.md: merely accepting
	// a valid token is insufficient; event and subscription IDs are not
	// credentials). It runs before any body byte is read and receives a
	// shallow copy of the request whose Body is http.NoBody. It returns a
	// non-empty scope, or an error wrapping ErrUnauthenticated (401) or
	// ErrForbidden (403). An anonymous upload needs an explicit scope
	// from Authorize. Required.
	Authorize func(r *http.Request) (scope string, err error)

	// Storage receives verified uploads and resolves references. Required.
	Storage Storage

	// MaxBytes limits the Content-Length of one upload (413 beyond it).
	// Zero means DefaultMaxUploadBytes.
	MaxBytes int64

	// Challenge is the WWW-Authenticate value of a 401, for example
	// `Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`
	// for OAuth protected-resource discovery (RFC 9728). Empty means
	// "Bearer". It must not contain CR, LF or other control characters.
	Challenge string

	// Logger, if set, receives diagnostics: rejected uploads at Debug
	// (status and the framing check that failed), failures of Authorize
	// and Storage at Error (which step failed, never the error's text,
	// which may carry secrets: log it in the hook or Storage itself if you
	// need it). Request contents and references are never logged.
	Logger *slog.Logger
}

// Validate checks the UploadReceiver's configuration. HTTP servers should
// call it before mounting the receiver; an invalid receiver answers every
// request 500. Every problem is reported (joined), each matching
// ErrInvalidConfig.
func (u *UploadReceiver) Validate() error {
	if u == nil {
		return configErr("nil UploadReceiver")
	}
	var errs []error
	if u.Authorize == nil {
		errs = append(errs, configErr("UploadReceiver has no Authorize hook"))
	}
	if u.Storage == nil {
		errs = append(errs, configErr("UploadReceiver has no Storage"))
	}
	if u.MaxBytes < 0 {
		errs = append(errs, configErr("UploadReceiver MaxBytes is negative"))
	}
	if strings.ContainsFunc(u.Challenge, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		errs = append(errs, configErr("UploadReceiver Challenge contains a control character"))
	}
	return errors.Join(errs...)
}

func (u *UploadReceiver) maxBytes() int64 {
	if u.MaxBytes > 0 {
		return u.MaxBytes
	}
	return DefaultMaxUploadBytes
}

// uploadBuffers holds the copy buffers of uploads in progress.
var uploadBuffers = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// ServeHTTP implements http.Handler for the upload endpoint. See
// [UploadReceiver] for the statuses.
func (u *UploadReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.Validate() != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		u.reject(ctx, w, http.StatusMethodNotAllowed, "method")
		return
	}
	size, want, bad := parseUploadFraming(r.Header, r.ContentLength, r.TransferEncoding)
	if bad != "" {
		u.reject(ctx, w, http.StatusBadRequest, bad)
		return
	}
	scope, status := u.authorize(r)
	if status != 0 {
		if status == http.StatusUnauthorized {
			ch := u.Challenge
			if ch == "" {
				ch = "Bearer"
			}
			w.Header().Set("WWW-Authenticate", ch)
		}
		u.reject(ctx, w, status, "authorization")
		return
	}
	if size > u.maxBytes() {
		u.reject(ctx, w, http.StatusRequestEntityTooLarge, "limit")
		return
	}

	receipt, status := u.receive(ctx, r.Body, scope, size, want)
	if status != http.StatusCreated {
		w.Header().Set("Connection", "close")
		w.WriteHeader(status)
		return
	}
	body, err := gen.EncodeContentUploadReceipt(&gen.ContentUploadReceipt{
		Ref:    receipt.Ref,
		Size:   json64(receipt.Size),
		SHA256: receipt.SHA256,
	})
	if err != nil { // unreachable: the receipt's members are plain strings and an integer
		u.logAttrs(ctx, slog.LevelError, "ahp upload: cannot encode the receipt of a committed upload")
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// reject answers an upload that was refused before its body was read. The
// connection is closed afterwards rather than drained for the next request.
func (u *UploadReceiver) reject(ctx context.Context, w http.ResponseWriter, status int, check string) {
	u.logAttrs(ctx, slog.LevelDebug, "ahp upload: rejected", slog.Int("status", status), slog.String("check", check))
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
}

// authorize runs the Authorize hook on a copy of r without its body. It
// returns the scope, or the status of the refusal.
func (u *UploadReceiver) authorize(r *http.Request) (scope string, status int) {
	ar := r.WithContext(r.Context())
	ar.Body = http.NoBody
	ar.GetBody = nil
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = errPanicked
			}
		}()
		scope, err = u.Authorize(ar)
	}()
	switch {
	case err == nil && scope != "":
		return scope, 0
	case err == nil:
		u.logAttrs(r.Context(), slog.LevelError, "ahp upload: Authorize returned an empty scope")
		return "", http.StatusInternalServerError
	case errors.Is(err, ErrUnauthenticated):
		return "", http.StatusUnauthorized
	case errors.Is(err, ErrForbidden):
		return "", http.StatusForbidden
	case errors.Is(err, ErrUnavailable):
		u.logAttrs(r.Context(), slog.LevelError, "ahp upload: Authorize is unavailable")
		return "", http.StatusServiceUnavailable
	default:
		u.logAttrs(r.Context(), slog.LevelError, "ahp upload: Authorize failed", slog.Bool("panic", err == errPanicked))
		return "", http.StatusInternalServerError
	}
}

// errPanicked stands for a panic in a hook or Storage method; the panic
// value is not kept (it may carry secrets).
var errPanicked = errors.New("server: upload hook panicked")

// receive streams body (of declared size and digest want) into a new Staged
// of scope, verifies it and commits it under a fresh reference. It returns
// the receipt and 201, or the status of the failure, after aborting what
// it staged.
func (u *UploadReceiver) receive(ctx context.Context, body io.Reader, scope string, size int64, want [sha256.Size]byte) (rc UploadReceipt, status int) {
	var staged Staged
	done := false
	defer func() {
		p := recover()
		if staged != nil && !done {
			if err := abort(staged); err != nil {
				u.logAttrs(ctx, slog.LevelError, "ahp upload: Storage could not abort a staged upload")
			}
		}
		if p != nil {
			u.logAttrs(ctx, slog.LevelError, "ahp upload: Storage panicked")
			rc, status = UploadReceipt{}, http.StatusInternalServerError
		}
	}()

	staged, err := u.Storage.Create(ctx, scope, size)
	switch {
	case err == nil && staged == nil:
		u.logAttrs(ctx, slog.LevelError, "ahp upload: Storage.Create returned no Staged")
		return rc, http.StatusInternalServerError
	case err == nil:
	case errors.Is(err, ErrTooLarge):
		u.logAttrs(ctx, slog.LevelDebug, "ahp upload: rejected", slog.Int("status", http.StatusRequestEntityTooLarge), slog.String("check", "storage limit"))
		return rc, http.StatusRequestEntityTooLarge
	default:
		return rc, u.storageFailed(ctx, "create", err)
	}

	h := sha256.New()
	n, check, err := copyVerified(staged, h, body, size)
	if err != nil {
		return rc, u.storageFailed(ctx, "write", err)
	}
	var got [sha256.Size]byte
	if check == "" && [sha256.Size]byte(h.Sum(got[:0])) != want {
		check = "digest"
	}
	if check != "" {
		u.logAttrs(ctx, slog.LevelDebug, "ahp upload: rejected", slog.Int("status", http.StatusBadRequest),
			slog.String("check", check), slog.Int64("declared", size), slog.Int64("received", n))
		return rc, http.StatusBadRequest
	}
	if ctx.Err() != nil { // the client went away after the last byte: nobody would learn the reference
		u.logAttrs(ctx, slog.LevelDebug, "ahp upload: request ended before the commit")
		return rc, http.StatusServiceUnavailable
	}

	rc = UploadReceipt{Ref: rand.Text(), Size: size, SHA256: hex.EncodeToString(want[:])}
	if err := staged.Commit(ctx, rc); err != nil {
		return UploadReceipt{}, u.storageFailed(ctx, "commit", err)
	}
	done = true
	return rc, http.StatusCreated
}

// abort calls s.Abort, turning a panic into an error.
func abort(s Staged) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errPanicked
		}
	}()
	return s.Abort()
}

// storageFailed logs a failed Storage step without the error's text and
// returns the status that answers it.
func (u *UploadReceiver) storageFailed(ctx context.Context, step string, err error) int {
	if errors.Is(err, ErrUnavailable) {
		u.logAttrs(ctx, slog.LevelError, "ahp upload: Storage is unavailable", slog.String("step", step))
		return http.StatusServiceUnavailable
	}
	u.logAttrs(ctx, slog.LevelError, "ahp upload: Storage failed", slog.String("step", step))
	return http.StatusInternalServerError
}

// copyVerified copies body to w and h until EOF, expecting exactly size
// octets. It returns the number of octets read, the failed check ("short",
// "long" or "read", the body's fault: 400) and an error of w (the
// storage's fault).
func copyVerified(w io.Writer, h hash.Hash, body io.Reader, size int64) (n int64, check string, err error) {
	buf := uploadBuffers.Get().(*[32 << 10]byte)
	defer uploadBuffers.Put(buf)
	for {
		k, rerr := body.Read(buf[:])
		if k > 0 {
			n += int64(k)
			if n > size {
				return n, "long", nil
			}
			h.Write(buf[:k])
			wn, werr := w.Write(buf[:k])
			if werr == nil && wn != k {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return n, "", werr
			}
		}
		switch {
		case rerr == io.EOF && n == size:
			return n, "", nil
		case rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF):
			return n, "short", nil
		case rerr != nil:
			return n, "read", nil
		}
	}
}

// parseUploadFraming checks the framing headers of an upload request. It
// returns the declared body size and digest, or the name of the check that
// failed.
func parseUploadFraming(h http.Header, contentLength int64, transferEncoding []string) (size int64, sum [sha256.Size]byte, bad string) {
	if len(transferEncoding) != 0 || len(h["Transfer-Encoding"]) != 0 {
		return 0, sum, "transfer-encoding"
	}
	if len(h["Content-Encoding"]) != 0 {
		return 0, sum, "content-encoding"
	}
	ct := h["Content-Type"]
	if len(ct) != 1 || !strings.EqualFold(strings.Trim(ct[0], " \t"), "application/octet-stream") {
		return 0, sum, "content-type"
	}
	cl := h["Content-Length"]
	if len(cl) != 1 || contentLength < 0 {
		return 0, sum, "content-length"
	}
	if n, ok := parseDecimal(strings.Trim(cl[0], " \t")); !ok || n != contentLength {
		return 0, sum, "content-length"
	}
	ds := h[http.CanonicalHeaderKey(UploadSHA256Header)]
	if len(ds) != 1 || !isLowerHex64(ds[0]) {
		return 0, sum, "sha256"
	}
	_, _ = hex.Decode(sum[:], []byte(ds[0]))
	return contentLength, sum, ""
}

// parseDecimal parses a non-negative decimal integer of digits only.
func parseDecimal(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// isLowerHex64 reports whether s is 64 lowercase hexadecimal characters.
func isLowerHex64(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// json64 renders n as the exact JSON number text of the receipt's size.
func json64(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// Open returns the committed upload bound to ref in scope, the way a
// backend resolves an event's {"ref"} within the scope it authorized the
// event's sender for. An unknown ref and a ref of another scope are both
// errors wrapping ErrNotFound. The reader checks the bytes against the
// receipt as they are read: reading past the recorded size, or reaching EOF
// with another size or digest, is an error wrapping ErrCorrupt (the bytes
// read before it are not to be trusted). A receiver without Storage is an
// error matching ErrInvalidConfig; another failure of Storage.Open is
// returned wrapped. The caller closes the reader.
func (u *UploadReceiver) Open(ctx context.Context, scope, ref string) (io.ReadCloser, UploadReceipt, error) {
	if u == nil || u.Storage == nil {
		return nil, UploadReceipt{}, configErr("UploadReceiver has no Storage")
	}
	if scope == "" || ref == "" {
		return nil, UploadReceipt{}, ErrNotFound
	}
	rc, receipt, err := u.Storage.Open(ctx, scope, ref)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, UploadReceipt{}, ErrNotFound
		}
		return nil, UploadReceipt{}, fmt.Errorf("server: open upload: %w", err)
	}
	var want [sha256.Size]byte
	if rc == nil || receipt.Ref != ref || receipt.Size < 0 || !isLowerHex64(receipt.SHA256) {
		if rc != nil {
			_ = rc.Close()
		}
		return nil, UploadReceipt{}, fmt.Errorf("%w: Storage.Open returned an invalid receipt", ErrCorrupt)
	}
	_, _ = hex.Decode(want[:], []byte(receipt.SHA256))
	return &verifyingReader{rc: rc, h: sha256.New(), left: receipt.Size, want: want}, receipt, nil
}

// verifyingReader checks the stored bytes of an upload against its receipt.
type verifyingReader struct {
	rc   io.ReadCloser
	h    hash.Hash
	left int64
	want [sha256.Size]byte
	err  error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	if int64(n) > v.left {
		v.err = fmt.Errorf("%w: longer than its recorded size", ErrCorrupt)
		return 0, v.err
	}
	v.left -= int64(n)
	v.h.Write(p[:n])
	switch {
	case err == io.EOF:
		var got [sha256.Size]byte
		if v.left != 0 {
			v.err = fmt.Errorf("%w: shorter than its recorded size", ErrCorrupt)
		} else if [sha256.Size]byte(v.h.Sum(got[:0])) != v.want {
			v.err = fmt.Errorf("%w: digest differs from the recorded one", ErrCorrupt)
		} else {
			v.err = io.EOF
		}
		return n, v.err
	case err != nil:
		v.err = err
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.rc.Close() }

func (u *UploadReceiver) logAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if u.Logger == nil {
		return
	}
	u.Logger.LogAttrs(ctx, level, msg, attrs...)
}
