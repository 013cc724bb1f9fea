package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"mime"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Defaults of the attachment limits.
const (
	// DefaultMaxBytes is the default byte limit of an attachment (4 MiB).
	DefaultMaxBytes = 4 << 20
	// DefaultLoadTimeout is the default time one materialization may take.
	DefaultLoadTimeout = 30 * time.Second
	// DefaultCleanupTimeout bounds how long Close waits for the source to
	// be released (a pending materialization to stop, then the cleanup
	// function or the stream's Close).
	DefaultCleanupTimeout = time.Second
)

// Loader opens a lazy attachment's bytes. It is called at most once per
// attachment, by the first Snapshot, with a context that ends at the load
// timeout, when every reader has left, or when the owner closes the
// attachment. The returned reader is read to EOF (at most the byte limit
// plus one byte) and then closed; its Close may also be called concurrently
// with a blocked Read to interrupt it, as os.File, net.Conn and io.Pipe
// allow. A Loader must bound its own allocations. A panic of the Loader, of
// the reader's Read or of its Close is recovered: the materialization fails
// with ErrLoad (wrapping a *PanicError).
type Loader func(ctx context.Context) (io.ReadCloser, error)

// Option sets a limit or expectation of an attachment.
type Option func(*options) error

type options struct {
	maxBytes       int64
	loadTimeout    time.Duration
	cleanupTimeout time.Duration
	expectSize     int64 // -1: none
	expectSHA      string
}

// WithMaxBytes sets the attachment's byte limit (default DefaultMaxBytes).
// n must not be negative. Bytes over the limit are an error (ErrTooLarge),
// never truncated.
func WithMaxBytes(n int64) Option {
	return func(o *options) error {
		if n < 0 {
			return invalid("negative byte limit")
		}
		o.maxBytes = n
		return nil
	}
}

// WithLoadTimeout bounds one materialization (default DefaultLoadTimeout);
// d must be positive.
func WithLoadTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("load timeout must be positive")
		}
		o.loadTimeout = d
		return nil
	}
}

// WithCleanupTimeout bounds how long Close waits for the source's release
// (default DefaultCleanupTimeout), and is the deadline of the context given
// to a lazy attachment's cleanup function; d must be positive. It also
// bounds how long the last reader leaving a Snapshot waits for the
// cancelled materialization to stop.
func WithCleanupTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("cleanup timeout must be positive")
		}
		o.cleanupTimeout = d
		return nil
	}
}

// WithExpectedSize states the size the caller expects. It is checked against
// the bytes actually read (ErrMismatch), never trusted in their place.
func WithExpectedSize(n int64) Option {
	return func(o *options) error {
		if n < 0 {
			return invalid("negative expected size")
		}
		o.expectSize = n
		return nil
	}
}

// WithExpectedSHA256 states the SHA-256 the caller expects, as 64 hex digits
// (either case). It is checked against the bytes actually read
// (ErrMismatch), never trusted in their place.
func WithExpectedSHA256(digest string) Option {
	return func(o *options) error {
		d := strings.ToLower(digest)
		if !isSHA256Hex(d) {
			return invalid("expected sha256 is not 64 hex digits")
		}
		o.expectSHA = d
		return nil
	}
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// attachmentMediaType is the schema's rule (content-item.schema.json,
// attachment parts): the media type must not match it.
var attachmentMediaType = regexp.MustCompile(`^(?:[Tt][Ee][Xx][Tt]/|[^/]+/(?:[^;]+\+)?[Jj][Ss][Oo][Nn](?:;|$))`)

// CheckMediaType reports whether mediaType may be an attachment's: a valid
// media type (RFC 2045 syntax, parameters allowed) that is not text/*,
// application/json or any JSON-derived (+json) type, in any case. The error
// matches ErrMediaType.
func CheckMediaType(mediaType string) error {
	if mediaType == "" || attachmentMediaType.MatchString(mediaType) {
		return ErrMediaType
	}
	for i := 0; i < len(mediaType); i++ {
		if c := mediaType[i]; c < 0x20 || c >= 0x7f {
			return ErrMediaType
		}
	}
	base, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return ErrMediaType
	}
	typ, sub, ok := strings.Cut(base, "/") // ParseMediaType lowercases
	if !ok || typ == "" || sub == "" || typ == "text" || sub == "json" || strings.HasSuffix(sub, "+json") {
		return ErrMediaType
	}
	return nil
}

type kind uint8

const (
	kindBytes kind = iota
	kindLazy
	kindStream
)

// Attachment is the owner of one immutable attachment: its media type, its
// source and, once read, its bytes. It is safe for concurrent use. The
// caller that built it must Close it.
type Attachment struct {
	mediaType string
	kind      kind
	opts      options

	data        []byte                      // kindBytes: the owned copy
	open        Loader                      // kindLazy
	cleanup     func(context.Context) error // kindLazy, may be nil
	stream      io.ReadCloser               // kindStream
	closeStream func() error                // kindStream: stream.Close, at most once

	closeOnce sync.Once
	closeErr  error         // what Close returns (fixed by its first call)
	closing   chan struct{} // closed when Close starts: waiting readers leave
	released  chan struct{} // closed when the release has finished
	relErr    error         // the release's outcome, set before released closes

	mu      sync.Mutex
	closed  bool
	job     *job // the one materialization, once started
	done    bool // the materialization has a terminal result
	snap    *Snapshot
	err     error
	readers int // Snapshot calls waiting for job
}

// job is the attachment's single materialization.
type job struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func newAttachment(mediaType string, k kind, opts []Option) (*Attachment, error) {
	if err := CheckMediaType(mediaType); err != nil {
		return nil, err
	}
	a := &Attachment{mediaType: mediaType, kind: k, closing: make(chan struct{}), released: make(chan struct{}), opts: options{
		maxBytes: DefaultMaxBytes, loadTimeout: DefaultLoadTimeout, cleanupTimeout: DefaultCleanupTimeout, expectSize: -1,
	}}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&a.opts); err != nil {
			return nil, err
		}
	}
	if a.opts.expectSize > a.opts.maxBytes {
		return nil, ErrTooLarge
	}
	return a, nil
}

// FromBytes returns an attachment holding a copy of data; the caller may
// reuse data afterwards. Bytes over the byte limit, or a size other than an
// expected size, fail here. The digest is computed on the first Snapshot.
func FromBytes(mediaType string, data []byte, opts ...Option) (*Attachment, error) {
	return fromBytes(mediaType, data, true, opts)
}

// Adopt returns an attachment that takes ownership of data without copying
// it, for a buffer the caller has just produced (a file read, a decoded
// image) and will never touch again: the caller must not modify or reuse
// data after the call, or the bytes sent could differ from the bytes
// hashed. Limits and expectations are checked as by FromBytes. Use
// FromBytes for a slice the caller keeps.
func Adopt(mediaType string, data []byte, opts ...Option) (*Attachment, error) {
	return fromBytes(mediaType, data, false, opts)
}

func fromBytes(mediaType string, data []byte, clone bool, opts []Option) (*Attachment, error) {
	a, err := newAttachment(mediaType, kindBytes, opts)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > a.opts.maxBytes {
		return nil, ErrTooLarge
	}
	if a.opts.expectSize >= 0 && int64(len(data)) != a.opts.expectSize {
		return nil, ErrMismatch
	}
	switch {
	case clone:
		a.data = bytes.Clone(data)
	default:
		a.data = data[:len(data):len(data)] // ownership transferred: no copy
	}
	if a.data == nil {
		a.data = []byte{}
	}
	return a, nil
}

// Lazy returns an attachment whose bytes open opens on the first Snapshot.
// cleanup, if not nil, runs exactly once when the attachment is closed,
// whether open was ever called or not, with a context bounded by the
// cleanup timeout; it should honour that context (Close does not wait for
// it beyond the bound). A panic of cleanup is recovered and reported by
// Close as ErrCleanup (wrapping a *PanicError).
func Lazy(mediaType string, open Loader, cleanup func(ctx context.Context) error, opts ...Option) (*Attachment, error) {
	if open == nil {
		return nil, invalid("nil loader")
	}
	a, err := newAttachment(mediaType, kindLazy, opts)
	if err != nil {
		return nil, err
	}
	a.open, a.cleanup = open, cleanup
	return a, nil
}

// FromStream returns an attachment read from r on the first Snapshot. r is
// read at most once, to EOF or to one byte past the byte limit. r.Close is
// called exactly once: after the read, when a pending read is cancelled
// (concurrently with a blocked Read, to interrupt it), or by Close if r was
// never read. Attachment.Close waits for r.Close at most the cleanup
// timeout. A panic of r.Read or r.Close is recovered (ErrLoad while
// reading, ErrCleanup from Attachment.Close, each wrapping a *PanicError).
func FromStream(mediaType string, r io.ReadCloser, opts ...Option) (*Attachment, error) {
	if r == nil {
		return nil, invalid("nil stream")
	}
	a, err := newAttachment(mediaType, kindStream, opts)
	if err != nil {
		return nil, err
	}
	a.stream = r
	a.closeStream = sync.OnceValue(func() error { return callClose(r) })
	return a, nil
}

// MediaType returns the attachment's media type.
func (a *Attachment) MediaType() string { return a.mediaType }

// MaxBytes returns the attachment's byte limit.
func (a *Attachment) MaxBytes() int64 { return a.opts.maxBytes }

// ExpectedSize returns the caller's expected size, if one was given. It is
// a claim, not a verified fact; verified values come from Snapshot.
func (a *Attachment) ExpectedSize() (int64, bool) {
	return a.opts.expectSize, a.opts.expectSize >= 0
}

// ExpectedSHA256 returns the caller's expected digest (lowercase hex), if
// one was given. It is a claim, not a verified fact.
func (a *Attachment) ExpectedSHA256() (string, bool) {
	return a.opts.expectSHA, a.opts.expectSHA != ""
}

// Materialized returns the snapshot if the bytes have already been read and
// verified, without reading anything.
func (a *Attachment) Materialized() (*Snapshot, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snap, a.snap != nil && !a.closed
}

// Snapshot returns the attachment's bytes, reading its source the first
// time (see the package documentation for how concurrent readers share one
// materialization). When ctx ends first, Snapshot returns an error wrapping
// ctx.Err(); the materialization continues for other readers, and is
// cancelled if none is left: the last reader then waits for it to stop, at
// most the cleanup timeout (a source that ignores its cancellation is left
// to Close and Wait).
func (a *Attachment) Snapshot(ctx context.Context) (*Snapshot, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, ErrClosed
	}
	if a.done {
		s, err := a.snap, a.err
		a.mu.Unlock()
		return s, err
	}
	if a.kind == kindBytes {
		// Nothing to wait for: hash the owned copy once, here.
		a.snap, a.err = a.seal(a.data)
		a.done = true
		s, err := a.snap, a.err
		a.mu.Unlock()
		return s, err
	}
	if err := ctx.Err(); err != nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("content: read attachment: %w", err)
	}
	j := a.job
	if j == nil {
		// The materialization belongs to the attachment, not to this
		// reader: it keeps the reader's values but not its cancellation.
		base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		jctx, stop := context.WithTimeoutCause(base, a.opts.loadTimeout, ErrLoadTimeout)
		j = &job{cancel: cancel, done: make(chan struct{})}
		a.job = j
		go a.run(jctx, stop, j)
	}
	a.readers++
	a.mu.Unlock()

	select {
	case <-j.done:
		a.mu.Lock()
		a.readers--
		s, err := a.snap, a.err
		a.mu.Unlock()
		return s, err
	case <-a.closing:
		// Close cancelled the materialization and joins it (within its
		// bound); a reader does not wait for a source deaf to that.
		a.mu.Lock()
		a.readers--
		a.mu.Unlock()
		return nil, ErrClosed
	case <-ctx.Done():
		a.mu.Lock()
		a.readers--
		last := a.readers == 0 && !a.done
		if last {
			j.cancel(ErrAbandoned)
		}
		a.mu.Unlock()
		if last {
			// The last reader joins the cancelled materialization, within
			// the cleanup bound: a source deaf to cancellation cannot hold
			// it (the attachment still tracks the goroutine; Wait joins it).
			t := time.NewTimer(a.opts.cleanupTimeout)
			select {
			case <-j.done:
			case <-t.C:
			}
			t.Stop()
		}
		return nil, fmt.Errorf("content: read attachment: %w", ctx.Err())
	}
}

// run is the materialization goroutine. The caller's code it runs (the
// loader, Read, Close) cannot take the process down: load recovers its
// panics.
func (a *Attachment) run(ctx context.Context, stop context.CancelFunc, j *job) {
	data, err := a.load(ctx)
	var s *Snapshot
	if err == nil {
		s, err = a.seal(data)
	}
	stop()
	a.mu.Lock()
	a.snap, a.err, a.done = s, err, true
	a.mu.Unlock()
	j.cancel(nil)
	close(j.done)
}

// load reads the source once, within the byte limit.
func (a *Attachment) load(ctx context.Context) ([]byte, error) {
	var r io.Reader
	var closeR func() error
	switch a.kind {
	case kindLazy:
		rc, err := callOpen(ctx, a.open)
		if err != nil || rc == nil {
			if rc != nil {
				_ = callClose(rc)
			}
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			if err == nil {
				return nil, ErrLoad
			}
			return nil, fmt.Errorf("%w: %w", ErrLoad, err)
		}
		r, closeR = rc, sync.OnceValue(func() error { return callClose(rc) })
	case kindStream:
		r, closeR = a.stream, a.closeStream
	}
	// Closing the source interrupts a Read blocked on it when the
	// materialization is cancelled; closeR waits for that Close to finish.
	interrupt := context.AfterFunc(ctx, func() { _ = closeR() })
	data, err := a.readAll(ctx, r)
	interrupt()
	cerr := closeR()
	if err != nil {
		return nil, err
	}
	if cerr != nil && a.kind == kindLazy {
		return nil, fmt.Errorf("%w: %w", ErrLoad, cerr)
	}
	// A stream's Close error is reported by Attachment.Close.
	return data, nil
}

// readAll reads r to EOF, failing as soon as more than the byte limit (or
// than an expected size) has been read.
func (a *Attachment) readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	limit, over := a.opts.maxBytes, ErrTooLarge
	if a.opts.expectSize >= 0 {
		limit, over = a.opts.expectSize, ErrMismatch // more than expected is a mismatch
	}
	// One byte past the limit shows whether the source is longer.
	end := limit
	if end < math.MaxInt64 {
		end++
	}
	hint := int64(32 << 10)
	if a.opts.expectSize >= 0 {
		hint = a.opts.expectSize + 1
	} else if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			hint = fi.Size() + 1
		}
	}
	buf := make([]byte, 0, min(hint, end, maxInitialBuffer))
	empty := 0
	for {
		if len(buf) == cap(buf) {
			next := min(max(2*int64(cap(buf)), 512), end)
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := callRead(r, buf[len(buf):cap(buf)])
		if n < 0 || n > cap(buf)-len(buf) {
			return nil, fmt.Errorf("%w: %w", ErrLoad, errBadRead)
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, over
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrLoad, err)
		case n == 0:
			if empty++; empty >= 100 {
				return nil, fmt.Errorf("%w: %w", ErrLoad, io.ErrNoProgress)
			}
		}
	}
}

// maxInitialBuffer caps the first buffer sized from a size hint; larger
// sources grow it by doubling, still within the byte limit.
const maxInitialBuffer = 64 << 20

// seal checks the expectations and computes the digest.
func (a *Attachment) seal(data []byte) (*Snapshot, error) {
	if a.opts.expectSize >= 0 && int64(len(data)) != a.opts.expectSize {
		return nil, ErrMismatch
	}
	sum := sha256.Sum256(data)
	s := &Snapshot{data: data, sha: hex.EncodeToString(sum[:])}
	if a.opts.expectSHA != "" && a.opts.expectSHA != s.sha {
		return nil, ErrMismatch
	}
	return s, nil
}

// Close releases the attachment: a pending materialization is cancelled and
// joined, then the source is released exactly once (a lazy attachment's
// cleanup runs, a stream is closed), whether it was read or not. Close is
// idempotent and safe for concurrent use; every call returns the first
// call's result, an error matching ErrCleanup if the cleanup failed or
// panicked.
//
// Close returns within the cleanup timeout (WithCleanupTimeout, 1 s by
// default) even when the source does not: the release runs on a goroutine
// the attachment owns, and if it has not finished by then Close returns an
// error matching ErrCleanup and context.DeadlineExceeded while the release
// goes on. Wait joins it and reports its actual outcome.
func (a *Attachment) Close() error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		close(a.closing)
		j := a.job
		if j != nil && !a.done {
			j.cancel(ErrClosed)
		}
		a.mu.Unlock()
		if j == nil && (a.kind == kindBytes || a.kind == kindLazy && a.cleanup == nil) {
			close(a.released) // nothing to release: no goroutine
			return
		}
		deadline := time.Now().Add(a.opts.cleanupTimeout)
		go a.release(j, deadline)
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-a.released:
			a.closeErr = a.relErr
		case <-t.C:
			a.closeErr = fmt.Errorf("%w: not released within the cleanup timeout: %w", ErrCleanup, context.DeadlineExceeded)
		}
	})
	return a.closeErr
}

// release is the goroutine of Close: it joins the materialization, then
// releases the source, and records the outcome.
func (a *Attachment) release(j *job, deadline time.Time) {
	defer close(a.released)
	if j != nil {
		<-j.done
	}
	var err error
	switch a.kind {
	case kindLazy:
		if a.cleanup != nil {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			err = callCleanup(ctx, a.cleanup)
			cancel()
		}
	case kindStream:
		err = a.closeStream()
	}
	if err != nil {
		a.relErr = fmt.Errorf("%w: %w", ErrCleanup, err)
	}
}

// Wait waits until the attachment has been closed and its source released
// (see Close), or until ctx ends, and returns the release's outcome: nil,
// or an error matching ErrCleanup. Unlike Close it is not bounded by the
// cleanup timeout; it joins a release Close gave up waiting for. When ctx
// ends first, the error wraps ctx.Err().
func (a *Attachment) Wait(ctx context.Context) error {
	select {
	case <-a.released:
		return a.relErr
	case <-ctx.Done():
		return fmt.Errorf("content: wait for attachment release: %w", ctx.Err())
	}
}

// PanicError is a panic of the caller's code (a Loader, a reader's Read or
// Close, a cleanup function) recovered by the attachment. Its Error text is
// fixed; Value is the recovered value, for the caller's own diagnosis (it is
// the caller's value: this package never prints it).
type PanicError struct {
	// Value is the value passed to panic.
	Value any
}

// Error returns a fixed description, never the panic value.
func (e *PanicError) Error() string { return "content: attachment source panicked" }

// errBadRead reports a Read that claimed more bytes than it was given room
// for, or a negative count.
var errBadRead = errors.New("content: attachment source returned an invalid read count")

func recovered(err *error) {
	if p := recover(); p != nil {
		*err = &PanicError{Value: p}
	}
}

func callOpen(ctx context.Context, open Loader) (rc io.ReadCloser, err error) {
	defer recovered(&err)
	return open(ctx)
}

func callRead(r io.Reader, p []byte) (n int, err error) {
	defer recovered(&err)
	return r.Read(p)
}

func callClose(c io.Closer) (err error) {
	defer recovered(&err)
	return c.Close()
}

func callCleanup(ctx context.Context, cleanup func(context.Context) error) (err error) {
	defer recovered(&err)
	return cleanup(ctx)
}

// Snapshot is the immutable, verified content of an attachment. It is a
// read-only view of the owner's bytes: NewReader reads them in place, Bytes
// returns a copy. It is safe for concurrent use.
type Snapshot struct {
	data []byte
	sha  string
}

// Size returns the number of bytes.
func (s *Snapshot) Size() int64 { return int64(len(s.data)) }

// SHA256 returns the lowercase hex SHA-256 of the bytes.
func (s *Snapshot) SHA256() string { return s.sha }

// NewReader returns a reader of the bytes (no copy).
func (s *Snapshot) NewReader() *bytes.Reader { return bytes.NewReader(s.data) }

// Bytes returns a copy of the bytes.
func (s *Snapshot) Bytes() []byte { return bytes.Clone(s.data) }
