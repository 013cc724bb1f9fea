package content_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestCheckMediaType(t *testing.T) {
	for _, mt := range []string{"image/png", "application/octet-stream", "audio/ogg; codecs=opus", "application/pdf", "image/svg+xml", "application/jsonl-archive"} {
		require.NoError(t, content.CheckMediaType(mt), mt)
	}
	for _, mt := range []string{
		"", "text/plain", "TEXT/html", "text/csv; charset=utf-8", "application/json", "Application/JSON",
		"application/json; charset=utf-8", "application/ld+json", "application/vnd.api+JSON", "image/json",
		"application/json ", "png", "image/", "/png", "image/png\r\nX: y", "image/png\n", "imäge/png",
	} {
		require.ErrorIs(t, content.CheckMediaType(mt), content.ErrMediaType, "%q", mt)
	}
}

func TestConstructorsReject(t *testing.T) {
	open := func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
	_, err := content.FromBytes("application/json", []byte("{}"))
	require.ErrorIs(t, err, content.ErrMediaType)
	_, err = content.Lazy("text/plain", open, nil)
	require.ErrorIs(t, err, content.ErrMediaType)
	_, err = content.FromStream("application/x+json", io.NopCloser(strings.NewReader("x")))
	require.ErrorIs(t, err, content.ErrMediaType)
	_, err = content.Lazy("image/png", nil, nil)
	require.ErrorIs(t, err, content.ErrInvalid)
	_, err = content.FromStream("image/png", nil)
	require.ErrorIs(t, err, content.ErrInvalid)
	for _, o := range []content.Option{
		content.WithMaxBytes(-1), content.WithLoadTimeout(0), content.WithCleanupTimeout(-time.Second),
		content.WithExpectedSize(-1), content.WithExpectedSHA256("abc"), content.WithExpectedSHA256(strings.Repeat("g", 64)),
	} {
		_, err = content.FromBytes("image/png", nil, o)
		require.ErrorIs(t, err, content.ErrInvalid)
	}
	_, err = content.FromBytes("image/png", make([]byte, 11), content.WithMaxBytes(10))
	require.ErrorIs(t, err, content.ErrTooLarge)
	_, err = content.FromBytes("image/png", make([]byte, 4), content.WithExpectedSize(5))
	require.ErrorIs(t, err, content.ErrMismatch)
	_, err = content.Lazy("image/png", open, nil, content.WithMaxBytes(10), content.WithExpectedSize(11))
	require.ErrorIs(t, err, content.ErrTooLarge)
}

func TestFromBytesOwnsACopy(t *testing.T) {
	data := []byte("\x89PNG original")
	a, err := content.FromBytes("image/png", data, content.WithExpectedSHA256(strings.ToUpper(digest(data))))
	require.NoError(t, err)
	defer a.Close()
	want := bytes.Clone(data)
	data[0] = 'X' // the caller's slice is not the owner's
	s, err := a.Snapshot(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, s.Bytes())
	require.Equal(t, digest(want), s.SHA256())
	require.Equal(t, int64(len(want)), s.Size())
	b := s.Bytes()
	b[0] = 'Y' // nor is a copy handed out
	s2, err := a.Snapshot(context.Background())
	require.NoError(t, err)
	require.Same(t, s, s2)
	got, err := io.ReadAll(s2.NewReader())
	require.NoError(t, err)
	require.Equal(t, want, got)
	m, ok := a.Materialized()
	require.True(t, ok)
	require.Same(t, s, m)

	empty, err := content.FromBytes("image/png", nil)
	require.NoError(t, err)
	s, err = empty.Snapshot(context.Background())
	require.NoError(t, err)
	require.Zero(t, s.Size())
	require.Equal(t, digest(nil), s.SHA256())
	require.NoError(t, empty.Close())
	_, err = empty.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrClosed)
}

func TestAdoptTakesOwnershipWithoutCopy(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 1<<20)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	a, err := content.Adopt("image/png", data)
	require.NoError(t, err)
	runtime.ReadMemStats(&ms1)
	require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(256<<10), "the adopted 1 MiB slice is not copied")
	s, err := a.Snapshot(context.Background())
	require.NoError(t, err)
	require.Equal(t, digest(data), s.SHA256())
	require.NoError(t, a.Close())
	_, err = content.Adopt("image/png", make([]byte, 11), content.WithMaxBytes(10))
	require.ErrorIs(t, err, content.ErrTooLarge)
	_, err = content.Adopt("text/plain", nil)
	require.ErrorIs(t, err, content.ErrMediaType)
}

func TestExpectationsCheckedAgainstBytes(t *testing.T) {
	data := []byte("0123456789")
	cases := []struct {
		name string
		opts []content.Option
		err  error
	}{
		{"none", nil, nil},
		{"right", []content.Option{content.WithExpectedSize(10), content.WithExpectedSHA256(digest(data))}, nil},
		{"shorter than expected", []content.Option{content.WithExpectedSize(11)}, content.ErrMismatch},
		{"longer than expected", []content.Option{content.WithExpectedSize(9)}, content.ErrMismatch},
		{"wrong digest", []content.Option{content.WithExpectedSHA256(digest([]byte("other")))}, content.ErrMismatch},
		{"over the limit", []content.Option{content.WithMaxBytes(9)}, content.ErrTooLarge},
		{"at the limit", []content.Option{content.WithMaxBytes(10)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, src := range []string{"lazy", "stream"} {
				var a *content.Attachment
				var err error
				if src == "lazy" {
					a, err = content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
						return io.NopCloser(iotestOneByte(data)), nil
					}, nil, c.opts...)
				} else {
					a, err = content.FromStream("image/png", io.NopCloser(iotestOneByte(data)), c.opts...)
				}
				require.NoError(t, err)
				s, err := a.Snapshot(context.Background())
				if c.err != nil {
					require.ErrorIs(t, err, c.err, src)
					require.Nil(t, s)
					// Terminal: the same error again, no second read.
					_, err2 := a.Snapshot(context.Background())
					require.ErrorIs(t, err2, c.err)
				} else {
					require.NoError(t, err, src)
					require.Equal(t, data, s.Bytes())
				}
				require.NoError(t, a.Close())
			}
		})
	}
}

// iotestOneByte reads b one byte at a time (exercises buffer growth).
func iotestOneByte(b []byte) io.Reader { return &oneByte{b: b} }

type oneByte struct{ b []byte }

func (r *oneByte) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestLazyLargeAcrossGrowth(t *testing.T) {
	data := bytes.Repeat([]byte("abcdefg"), 300_000) // 2.1 MB, no size hint
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, nil)
	require.NoError(t, err)
	defer a.Close()
	s, err := a.Snapshot(context.Background())
	require.NoError(t, err)
	require.Equal(t, digest(data), s.SHA256())

	big := make([]byte, content.DefaultMaxBytes+1)
	b, err := content.FromStream("image/png", io.NopCloser(bytes.NewReader(big)))
	require.NoError(t, err)
	_, err = b.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrTooLarge)
	require.NoError(t, b.Close())
}

// gatedLoader counts opens and blocks each read until released or ctx ends.
type gatedLoader struct {
	data    []byte
	opens   atomic.Int32
	closes  atomic.Int32
	cleans  atomic.Int32
	opened  chan struct{} // closed on the first open
	release chan struct{}
	once    sync.Once
	ctx     atomic.Pointer[context.Context] // the loader's context
}

func newGated(data []byte) *gatedLoader {
	return &gatedLoader{data: data, opened: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedLoader) open(ctx context.Context) (io.ReadCloser, error) {
	g.opens.Add(1)
	g.once.Do(func() {
		g.ctx.Store(&ctx)
		close(g.opened)
	})
	pr, pw := io.Pipe()
	go func() {
		select {
		case <-g.release:
			_, _ = pw.Write(g.data)
			_ = pw.Close()
		case <-ctx.Done():
			_ = pw.CloseWithError(ctx.Err())
		}
	}()
	return &countingCloser{Reader: pr, close: func() error { g.closes.Add(1); return pr.Close() }}, nil
}

// loadEnded reports whether the loader's context has ended.
func (g *gatedLoader) loadEnded() bool { return (*g.ctx.Load()).Err() != nil }

func (g *gatedLoader) cleanup(context.Context) error { g.cleans.Add(1); return nil }

type countingCloser struct {
	io.Reader
	close func() error
}

func (c *countingCloser) Close() error { return c.close() }

func TestConcurrentReadersShareOneMaterialization(t *testing.T) {
	g := newGated([]byte("shared bytes"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	const n = 16
	snaps := make([]*content.Snapshot, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := a.Snapshot(context.Background())
			require.NoError(t, err)
			snaps[i] = s
		})
	}
	<-g.opened
	close(g.release)
	wg.Wait()
	for _, s := range snaps {
		require.Same(t, snaps[0], s)
	}
	require.Equal(t, int32(1), g.opens.Load())
	require.Equal(t, int32(1), g.closes.Load(), "the loader's reader is closed after reading")
	require.Zero(t, g.cleans.Load(), "cleanup belongs to Close")
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	require.Equal(t, int32(1), g.cleans.Load())
}

func TestCancelledReaderLeavesMaterializationToOthers(t *testing.T) {
	g := newGated([]byte("bytes"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	defer a.Close()
	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error)
	go func() { _, err := a.Snapshot(ctxA); errA <- err }()
	<-g.opened
	resB := make(chan *content.Snapshot)
	go func() {
		s, err := a.Snapshot(context.Background())
		require.NoError(t, err)
		resB <- s
	}()
	waitReaders(t, a, 2)
	cancelA()
	require.ErrorIs(t, <-errA, context.Canceled)
	require.False(t, g.loadEnded(), "the materialization was cancelled while readers remained")
	close(g.release)
	s := <-resB
	require.Equal(t, []byte("bytes"), s.Bytes())
	s2, err := a.Snapshot(context.Background())
	require.NoError(t, err)
	require.Same(t, s, s2)
	require.Equal(t, int32(1), g.opens.Load())
}

// waitReaders waits until a has n registered readers (observed through a
// test hook that counts them).
func waitReaders(t *testing.T, a *content.Attachment, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return content.Readers(a) == n }, 5*time.Second, time.Millisecond)
}

func TestLastReaderCancelsAndJoins(t *testing.T) {
	g := newGated([]byte("bytes"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { _, err := a.Snapshot(ctx); errc <- err }()
	<-g.opened
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	// Joined: the loader's context has ended and its reader is closed by
	// the time the last reader returned.
	require.True(t, g.loadEnded(), "the last reader returned before cancelling the materialization")
	require.Equal(t, int32(1), g.closes.Load())
	// Never retried.
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrAbandoned)
	require.Equal(t, int32(1), g.opens.Load())
	require.NoError(t, a.Close())
	require.Equal(t, int32(1), g.cleans.Load())
}

func TestCloseCancelsPendingMaterialization(t *testing.T) {
	g := newGated([]byte("bytes"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	errc := make(chan error)
	go func() { _, err := a.Snapshot(context.Background()); errc <- err }()
	<-g.opened
	require.NoError(t, a.Close())
	require.ErrorIs(t, <-errc, content.ErrClosed)
	require.Equal(t, int32(1), g.closes.Load())
	require.Equal(t, int32(1), g.cleans.Load())
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrClosed)
}

func TestLoadTimeout(t *testing.T) {
	g := newGated([]byte("bytes")) // never released
	a, err := content.Lazy("image/png", g.open, g.cleanup, content.WithLoadTimeout(20*time.Millisecond))
	require.NoError(t, err)
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrLoadTimeout)
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrLoadTimeout)
	require.Equal(t, int32(1), g.opens.Load())
	require.Equal(t, int32(1), g.closes.Load())
	require.NoError(t, a.Close())
	require.Equal(t, int32(1), g.cleans.Load())
}

func TestCleanupRunsForUnopenedSources(t *testing.T) {
	var cleans atomic.Int32
	var deadline bool
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		t.Fatal("opened")
		return nil, nil
	}, func(ctx context.Context) error {
		_, deadline = ctx.Deadline()
		cleans.Add(1)
		return errors.New("cleanup says no")
	}, content.WithCleanupTimeout(time.Second))
	require.NoError(t, err)
	err = a.Close()
	require.ErrorIs(t, err, content.ErrCleanup)
	require.ErrorIs(t, a.Close(), content.ErrCleanup)
	require.Equal(t, int32(1), cleans.Load())
	require.True(t, deadline, "cleanup is bounded in time")

	pr, pw := io.Pipe()
	var closes atomic.Int32
	s, err := content.FromStream("image/png", &countingCloser{Reader: pr, close: func() error { closes.Add(1); return pr.Close() }})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	require.Equal(t, int32(1), closes.Load())
	_, err = pw.Write([]byte("x"))
	require.ErrorIs(t, err, io.ErrClosedPipe)
}

func TestStreamClosedOnceAfterRead(t *testing.T) {
	var closes atomic.Int32
	s, err := content.FromStream("image/png", &countingCloser{Reader: strings.NewReader("abc"), close: func() error { closes.Add(1); return nil }})
	require.NoError(t, err)
	snap, err := s.Snapshot(context.Background())
	require.NoError(t, err)
	require.Equal(t, "abc", string(snap.Bytes()))
	require.Equal(t, int32(1), closes.Load())
	require.NoError(t, s.Close())
	require.Equal(t, int32(1), closes.Load())
}

func TestLoaderErrorIsTerminal(t *testing.T) {
	var opens atomic.Int32
	boom := errors.New("disk on fire")
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		opens.Add(1)
		return nil, boom
	}, nil)
	require.NoError(t, err)
	defer a.Close()
	for range 3 {
		_, err = a.Snapshot(context.Background())
		require.ErrorIs(t, err, content.ErrLoad)
		require.ErrorIs(t, err, boom)
	}
	require.Equal(t, int32(1), opens.Load())
}

// fileLoader opens a real temporary file and records the handle.
type fileLoader struct {
	path   string
	mu     sync.Mutex
	files  []*os.File
	cleans atomic.Int32
	tail   io.Reader // read after the file, if set (never ends: blocks)
}

func newFileLoader(t *testing.T, data []byte) *fileLoader {
	p := filepath.Join(t.TempDir(), "attachment.bin")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return &fileLoader{path: p}
}

func (l *fileLoader) open(context.Context) (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.files = append(l.files, f)
	l.mu.Unlock()
	if l.tail == nil {
		return f, nil
	}
	tail := l.tail
	return &countingCloser{Reader: io.MultiReader(f, tail), close: func() error {
		if c, ok := tail.(io.Closer); ok {
			_ = c.Close()
		}
		return f.Close()
	}}, nil
}

func (l *fileLoader) cleanup(context.Context) error {
	l.cleans.Add(1)
	return os.Remove(l.path)
}

// requireReleased checks every opened handle is closed, the file removed and
// cleanup run exactly once.
func (l *fileLoader) requireReleased(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotEmpty(t, l.files)
	for _, f := range l.files {
		_, err := f.Read(make([]byte, 1))
		require.ErrorIs(t, err, os.ErrClosed)
	}
	require.Equal(t, int32(1), l.cleans.Load())
	_, err := os.Stat(l.path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestFileLoaderReleased(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		data := bytes.Repeat([]byte{1, 2, 3}, 1000)
		l := newFileLoader(t, data)
		a, err := content.Lazy("application/octet-stream", l.open, l.cleanup)
		require.NoError(t, err)
		s, err := a.Snapshot(context.Background())
		require.NoError(t, err)
		require.Equal(t, digest(data), s.SHA256())
		require.NoError(t, a.Close())
		l.requireReleased(t)
	})
	t.Run("max bytes", func(t *testing.T) {
		l := newFileLoader(t, make([]byte, 2000))
		a, err := content.Lazy("application/octet-stream", l.open, l.cleanup, content.WithMaxBytes(1999))
		require.NoError(t, err)
		_, err = a.Snapshot(context.Background())
		require.ErrorIs(t, err, content.ErrTooLarge)
		require.NoError(t, a.Close())
		l.requireReleased(t)
	})
	t.Run("lazy timeout", func(t *testing.T) {
		l := newFileLoader(t, make([]byte, 100))
		pr, _ := io.Pipe() // the source never ends
		l.tail = pr
		a, err := content.Lazy("application/octet-stream", l.open, l.cleanup, content.WithLoadTimeout(20*time.Millisecond))
		require.NoError(t, err)
		_, err = a.Snapshot(context.Background())
		require.ErrorIs(t, err, content.ErrLoadTimeout)
		require.NoError(t, a.Close())
		l.requireReleased(t)
	})
	t.Run("unopened", func(t *testing.T) {
		l := newFileLoader(t, make([]byte, 100))
		a, err := content.Lazy("application/octet-stream", l.open, l.cleanup)
		require.NoError(t, err)
		require.NoError(t, a.Close())
		require.Equal(t, int32(1), l.cleans.Load())
		_, err = os.Stat(l.path)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

// blocker is a source call that ignores its context and cancellation: it
// returns only when released (by the test, at the end).
type blocker struct {
	entered chan struct{} // closed when the call is blocked
	release chan struct{}
	once    sync.Once
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocker) block() {
	b.once.Do(func() { close(b.entered) })
	<-b.release
}

// deafReader is a loader's reader whose Read blocks and whose Close does
// not interrupt it.
type deafReader struct{ b *blocker }

func (r deafReader) Read([]byte) (int, error) { r.b.block(); return 0, io.EOF }
func (r deafReader) Close() error             { return nil }

// returnsWithin fails the test if f has not returned within a generous
// bound (a hang detector, not a timing assertion) and returns f's error.
func returnsWithin(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return: the cleanup bound was not applied", what)
		return nil
	}
}

func TestCloseIsBoundedByTheCleanupTimeout(t *testing.T) {
	bound := content.WithCleanupTimeout(20 * time.Millisecond)
	cases := []struct {
		name string
		// build returns the attachment and whether to start a Snapshot
		// that blocks in the source first.
		build    func(b *blocker) (*content.Attachment, bool)
		finalErr error // Wait's outcome once the source gives up
	}{
		{"lazy cleanup ignores its context", func(b *blocker) (*content.Attachment, bool) {
			a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader("x")), nil
			}, func(context.Context) error { b.block(); return nil }, bound)
			require.NoError(t, err)
			return a, false
		}, nil},
		{"unread stream Close blocks", func(b *blocker) (*content.Attachment, bool) {
			a, err := content.FromStream("image/png", &countingCloser{Reader: strings.NewReader("x"), close: func() error {
				b.block()
				return errors.New("late close error")
			}}, bound)
			require.NoError(t, err)
			return a, false
		}, content.ErrCleanup},
		{"pending materialization deaf to cancellation", func(b *blocker) (*content.Attachment, bool) {
			a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
				return deafReader{b}, nil
			}, nil, bound)
			require.NoError(t, err)
			return a, true
		}, nil},
		{"loader deaf to cancellation", func(b *blocker) (*content.Attachment, bool) {
			a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
				b.block()
				return nil, errors.New("too late")
			}, func(context.Context) error { return nil }, bound)
			require.NoError(t, err)
			return a, true
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBlocker()
			a, read := c.build(b)
			snapDone := make(chan error, 1)
			if read {
				go func() { _, err := a.Snapshot(context.Background()); snapDone <- err }()
				<-b.entered
			}
			err := returnsWithin(t, "Close", a.Close)
			require.ErrorIs(t, err, content.ErrCleanup)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Equal(t, err, a.Close(), "every call returns the first call's result")
			if read {
				err := returnsWithin(t, "Snapshot", func() error { return <-snapDone })
				require.ErrorIs(t, err, content.ErrClosed, "the reader is released by Close")
			}
			// The release is still owned: Wait sees it running, then joins it.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.ErrorIs(t, a.Wait(ctx), context.Canceled)
			close(b.release)
			werr := a.Wait(context.Background())
			if c.finalErr == nil {
				require.NoError(t, werr)
			} else {
				require.ErrorIs(t, werr, c.finalErr)
			}
		})
	}
}

func TestCloseWithinTheBoundReportsTheRelease(t *testing.T) {
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("x")), nil
	}, func(ctx context.Context) error { return errors.New("cleanup failed") })
	require.NoError(t, err)
	_, err = a.Snapshot(context.Background())
	require.NoError(t, err)
	err = a.Close()
	require.ErrorIs(t, err, content.ErrCleanup)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, err, a.Wait(context.Background()))
	b, err := content.FromBytes("image/png", []byte("x"))
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, b.Wait(context.Background()))
}

func TestLastReaderWaitIsBounded(t *testing.T) {
	b := newBlocker()
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		return deafReader{b}, nil
	}, nil, content.WithCleanupTimeout(20*time.Millisecond))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := a.Snapshot(ctx); errc <- err }()
	<-b.entered
	cancel()
	err = returnsWithin(t, "Snapshot", func() error { return <-errc })
	require.ErrorIs(t, err, context.Canceled)
	err = returnsWithin(t, "Close", a.Close)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(b.release)
	require.NoError(t, a.Wait(context.Background()))
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrClosed)
}

// panicky is a reader whose Read or Close panics.
type panicky struct {
	readPanics, closePanics bool
	data                    *strings.Reader
}

func (p *panicky) Read(b []byte) (int, error) {
	if p.readPanics {
		panic("read " + "secret-in-panic")
	}
	return p.data.Read(b)
}

func (p *panicky) Close() error {
	if p.closePanics {
		panic("close secret-in-panic")
	}
	return nil
}

// overRead claims to have read more than it was given room for.
type overRead struct{}

func (overRead) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestCallerPanicsAreRecovered(t *testing.T) {
	lazy := func(open content.Loader, cleanup func(context.Context) error) *content.Attachment {
		a, err := content.Lazy("image/png", open, cleanup)
		require.NoError(t, err)
		return a
	}
	reader := func(rc io.ReadCloser) content.Loader {
		return func(context.Context) (io.ReadCloser, error) { return rc, nil }
	}
	stream := func(rc io.ReadCloser) *content.Attachment {
		a, err := content.FromStream("image/png", rc)
		require.NoError(t, err)
		return a
	}
	cases := []struct {
		name               string
		a                  *content.Attachment
		snapErr, closeErr  error
		panicked, noSnapOK bool
	}{
		{name: "loader", a: lazy(func(context.Context) (io.ReadCloser, error) { panic("loader secret-in-panic") }, nil), snapErr: content.ErrLoad, panicked: true},
		{name: "loader nil error", a: lazy(func(context.Context) (io.ReadCloser, error) { panic(nil) }, nil), snapErr: content.ErrLoad, panicked: true},
		{name: "lazy Read", a: lazy(reader(&panicky{readPanics: true}), nil), snapErr: content.ErrLoad, panicked: true},
		{name: "lazy Close", a: lazy(reader(&panicky{closePanics: true, data: strings.NewReader("x")}), nil), snapErr: content.ErrLoad, panicked: true},
		{name: "lazy Read count", a: lazy(reader(io.NopCloser(overRead{})), nil), snapErr: content.ErrLoad},
		{name: "cleanup", a: lazy(reader(io.NopCloser(strings.NewReader("x"))), func(context.Context) error { panic("cleanup secret-in-panic") }), closeErr: content.ErrCleanup, panicked: true},
		{name: "stream Read", a: stream(&panicky{readPanics: true}), snapErr: content.ErrLoad, panicked: true},
		{name: "stream Close", a: stream(&panicky{closePanics: true, data: strings.NewReader("x")}), closeErr: content.ErrCleanup, panicked: true},
		{name: "stream Read count", a: stream(io.NopCloser(overRead{})), snapErr: content.ErrLoad},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.a.Snapshot(context.Background())
			check := func(err, want error) {
				if want == nil {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, want)
				require.NotContains(t, err.Error(), "secret-in-panic")
				var pe *content.PanicError
				require.Equal(t, c.panicked, errors.As(err, &pe))
			}
			check(err, c.snapErr)
			check(c.a.Close(), c.closeErr)
		})
	}
}

func TestPanickingCloseDuringCancellationIsRecovered(t *testing.T) {
	// Cancelling a pending read closes the loader's reader from another
	// goroutine: its panic must not take the process down either.
	unblock := make(chan struct{})
	entered := make(chan struct{})
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		return &countingCloser{Reader: readerFunc(func([]byte) (int, error) {
			close(entered)
			<-unblock
			return 0, io.EOF
		}), close: func() error {
			select {
			case <-unblock:
			default:
				close(unblock)
			}
			panic("close secret-in-panic")
		}}, nil
	}, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := a.Snapshot(ctx); errc <- err }()
	<-entered
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.NoError(t, a.Close())
	_, err = a.Snapshot(context.Background())
	require.ErrorIs(t, err, content.ErrClosed)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
