package hooks_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// seenRequest is one HTTP request as a server received it.
type seenRequest struct {
	server string
	header http.Header
	body   []byte
}

// requestLog records every request of the servers it wraps, headers and
// body, before their handlers run.
type requestLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

func (l *requestLog) wrap(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, seenRequest{server: name, header: r.Header.Clone(), body: body})
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) of(name string) []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []seenRequest
	for _, r := range l.reqs {
		if r.server == name {
			out = append(out, r)
		}
	}
	return out
}

// TestUploadTokenNeverCrosses: over real loopback HTTP, event requests
// carry only the event token and uploads only the upload token (tokenEnv
// bindings resolved independently); the upload token never appears in an
// event request, a diagnostic, an error or a log line, also when upload
// receivers fail, echo the token back, or the call is cancelled
// mid-upload.
func TestUploadTokenNeverCrosses(t *testing.T) {
	const (
		eventToken  = "EVENT-TOKEN-CANARY-5d1e07"
		uploadToken = "UPLOAD-TOKEN-CANARY-9b2c41"
	)
	env := map[string]string{"AHP_T_EVENT": eventToken, "AHP_T_UPLOAD": uploadToken}
	provider := auth.EnvironmentProvider{LookupEnv: func(n string) (string, bool) { v, ok := env[n]; return v, ok }}
	logs := &capture{}
	var seen requestLog

	rec := &recorder{}
	backend := rec.handler()
	backend.Logger = logs.logger()
	events := httptest.NewServer(seen.wrap("event", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+eventToken {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})))
	defer events.Close()

	store := &server.MemoryStorage{}
	rcv := &server.UploadReceiver{Storage: store, Logger: logs.logger(), Authorize: func(r *http.Request) (string, error) {
		if r.Header.Get("Authorization") != "Bearer "+uploadToken {
			return "", server.ErrUnauthenticated
		}
		return "principal-uploader", nil
	}}
	require.NoError(t, rcv.Validate())
	stalled := make(chan struct{})
	var stallOnce sync.Once
	mux := http.NewServeMux()
	mux.Handle("/upload", rcv)
	mux.HandleFunc("/reject", func(w http.ResponseWriter, r *http.Request) { // echoes what it got
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+r.Header.Get("Authorization")+`"`)
		http.Error(w, "rejected "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	mux.HandleFunc("/badreceipt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"ref":"%s","size":1,"sha256":"%064d"}`, uploadToken, 0)
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		stallOnce.Do(func() { close(stalled) })
		<-r.Context().Done()
	})
	uploads := httptest.NewServer(seen.wrap("upload", mux))
	defer uploads.Close()

	upload := func(path string) string {
		return `"upload":{"endpoint":"` + uploads.URL + path + `","timeoutMs":10000,"maxBytes":1048576,"auth":{"type":"bearer","tokenEnv":"AHP_T_UPLOAD"}}`
	}
	event := `{"type":"bearer","tokenEnv":"AHP_T_EVENT"}`
	sub := func(mode, path string) string {
		s := `{"events":["turn.start"],"mode":"` + mode + `","content":{"default":"body"},` + upload(path)
		if mode == "intercept" {
			s += `,"timeoutMs":20000,"failurePolicy":"fail-open"`
		}
		return s + "}"
	}
	cfg := uploadConfig()
	cfg.AuthProvider = provider
	cfg.Logger = logs.logger()
	newHooks := func(subs ...string) *hooks.Hooks {
		var backends []string
		for i, s := range subs {
			backends = append(backends, authBackend("com.example.b"+strconv.Itoa(i), events.URL, event, s))
		}
		h, err := hooks.New(registration(backends...), cfg)
		require.NoError(t, err)
		return h
	}
	var texts []string // everything the SDK reported
	report := func(res *hooks.Result, err error) {
		if err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
		}
		if res != nil {
			texts = append(texts, fmt.Sprintf("%+v", res.Diagnostics), fmt.Sprintf("%+v", *res))
		}
	}

	// A receiver that accepts (interception and observation), one that
	// rejects and echoes the token, one whose receipt is wrong (its ref is
	// the token).
	h := newHooks(sub("intercept", "/upload"), sub("observe", "/upload"), sub("intercept", "/reject"), sub("intercept", "/badreceipt"))
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", newOwnedImage(t).a))
	require.NoError(t, err)
	report(res, err)
	require.NoError(t, res.Close())
	require.Len(t, res.Diagnostics, 2)
	for _, d := range res.Diagnostics {
		require.Equal(t, transport.CodePreparation, d.Code)
		require.Equal(t, "upload", d.Reason)
	}
	require.Equal(t, 2, store.Len(), "the interceptor's and the observer's uploads")
	require.NoError(t, h.Close())

	// A call cancelled while its upload waits for the receipt.
	h = newHooks(sub("intercept", "/stall"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stalled
		cancel()
	}()
	res, err = h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", newOwnedImage(t).a))
	require.ErrorIs(t, err, context.Canceled)
	report(res, err)
	require.NoError(t, h.Close())

	// What crossed the wire.
	evReqs, upReqs := seen.of("event"), seen.of("upload")
	require.NotEmpty(t, evReqs)
	require.Len(t, upReqs, 5) // upload ×2, reject, badreceipt, stall
	for _, r := range evReqs {
		require.Equal(t, "Bearer "+eventToken, r.header.Get("Authorization"))
		require.NotContains(t, fmt.Sprint(r.header), uploadToken)
		require.NotContains(t, string(r.body), uploadToken)
	}
	for _, r := range upReqs {
		require.Equal(t, "Bearer "+uploadToken, r.header.Get("Authorization"))
		require.NotContains(t, fmt.Sprint(r.header), eventToken)
		require.NotContains(t, string(r.body), eventToken)
		require.Equal(t, imageBytes, r.body)
	}
	in, ob := rec.counts()
	require.Equal(t, 1, in, "only the interceptor whose upload succeeded is called")
	require.Equal(t, 1, ob)

	// What the SDK reported.
	texts = append(texts, logs.String())
	require.Contains(t, logs.String(), "ahp: delivery failed")
	for _, s := range texts {
		require.NotContains(t, s, uploadToken)
		require.NotContains(t, s, eventToken)
	}
}

// TestBadReceiptStopsDelivery: a receiver whose receipt does not match the
// bytes sent (wrong size, wrong digest) fails that upload: the
// subscription's delivery does not happen under its failure policy (a
// fail-open interceptor is skipped with a diagnostic, a fail-closed one
// denies synthetically, an observer gets a gap and a diagnostic), and the
// unconfirmed reference reaches no receiver and not the Result.
func TestBadReceiptStopsDelivery(t *testing.T) {
	up := newUploadReceivers(t, "good", "owed")
	sum := sha256.Sum256(imageBytes)
	digest := hex.EncodeToString(sum[:])
	bad := http.NewServeMux()
	receipt := func(ref string, size int, sha string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = fmt.Fprintf(w, `{"ref":%q,"size":%d,"sha256":%q}`, ref, size, sha)
		}
	}
	bad.Handle("/size", receipt("BADREF-size", len(imageBytes)+1, digest))
	bad.Handle("/digest", receipt("BADREF-digest", len(imageBytes), strings.Repeat("ab", 32)))
	badSrv := httptest.NewServer(bad)
	defer badSrv.Close()
	badUpload := func(path string) string {
		return `"upload":{"endpoint":"` + badSrv.URL + path + `","timeoutMs":10000,"maxBytes":1048576}`
	}
	icpt := func(policy, upload string) string {
		return `{"events":["turn.start"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"` + policy + `","content":{"default":"body"},` + upload + `}`
	}
	recs := map[string]*recorder{"com.example.size": {}, "com.example.good": {}, "com.example.digest": {}, "com.example.owed": {}, "com.example.observer": {}}
	cfg := uploadConfig()
	cfg.Transports = map[string]transport.Transport{}
	caps := map[string]*capturingTransport{}
	for id, r := range recs {
		caps[id] = &capturingTransport{Transport: transport.NewInProcess(r.handler(), transport.InProcessOptions{})}
		cfg.Transports[id] = caps[id]
	}
	u := httpTransport("http://127.0.0.1:1/x")
	h, err := hooks.New(registration(
		backendJSON("com.example.size", u, icpt("fail-open", badUpload("/size"))),
		backendJSON("com.example.good", u, icpt("fail-open", up.endpoint("good"))),
		backendJSON("com.example.digest", u, icpt("fail-closed", badUpload("/digest"))),
		backendJSON("com.example.owed", u, icpt("fail-open", up.endpoint("owed"))),
		backendJSON("com.example.observer", u, `{"events":["turn.start"],"mode":"observe","content":{"default":"body"},`+badUpload("/digest")+`}`)), cfg)
	require.NoError(t, err)
	defer h.Close()
	img := newOwnedImage(t)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	defer res.Close()

	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.True(t, res.SyntheticDenial)
	type diag struct {
		backend string
		mode    gen.Mode
		policy  hooks.FailurePolicy
		denial  bool
	}
	var got []diag
	for _, d := range res.Diagnostics {
		require.Equal(t, transport.CodePreparation, d.Code)
		require.Equal(t, "upload", d.Reason)
		got = append(got, diag{d.BackendID, d.Mode, d.FailurePolicy, d.SyntheticDenial})
	}
	require.Equal(t, []diag{
		{"com.example.size", gen.ModeIntercept, hooks.FailOpen, false},
		{"com.example.digest", gen.ModeIntercept, hooks.FailClosed, true},
		{"com.example.observer", gen.ModeObserve, "", false},
	}, got)

	count := func(id string) string { i, o := recs[id].counts(); return fmt.Sprintf("%d/%d", i, o) }
	require.Equal(t, "0/0", count("com.example.size"), "not called")
	require.Equal(t, "1/0", count("com.example.good"))
	require.Equal(t, "0/0", count("com.example.digest"), "not called: the synthetic denial")
	require.Equal(t, "0/1", count("com.example.owed"), "owed an observation after the denial")
	require.Equal(t, "0/1", count("com.example.observer"))
	p := imagePart(t, recs["com.example.observer"].observed[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentGapPart)
	require.Equal(t, "upload failed", p.AttachmentGapPart.Gap.Reason)
	for id, items := range map[string][]gen.ModelVisibleItem{
		"good": recs["com.example.good"].intercept[0].Params.Event.TurnStart.Items,
		"owed": recs["com.example.owed"].observed[0].Params.Event.TurnStart.Items,
	} {
		require.Equal(t, imageBytes, up.bytesOf(t, id, imagePart(t, items).AttachmentBodyPart.Body.Ref), id)
	}
	for id, c := range caps {
		for _, b := range c.bodies {
			require.NotContains(t, string(b), "BADREF", id)
		}
	}
	enc, err := gen.EncodeEvent(res.Event())
	require.NoError(t, err)
	require.NotContains(t, string(enc), "BADREF")
	require.NotContains(t, fmt.Sprintf("%+v", *res), "BADREF")
	require.Equal(t, int32(1), img.opens.Load(), "one read for every upload")
}

// trackedFile is a real open file whose Close is counted. A stalled one
// blocks every Read until it is closed, like a source that stopped
// delivering.
type trackedFile struct {
	*os.File
	src     *fileSource
	closes  atomic.Int32
	stop    chan struct{}
	stopped sync.Once
}

func (f *trackedFile) Read(p []byte) (int, error) {
	f.src.first.Do(func() { close(f.src.started) })
	if f.src.stall {
		<-f.stop
		return 0, os.ErrClosed
	}
	return f.File.Read(p)
}

func (f *trackedFile) Close() error {
	f.closes.Add(1)
	f.stopped.Do(func() { close(f.stop) })
	return f.File.Close()
}

// fileSource is a lazy attachment reading a real temporary file, keeping
// every file it opened; started is closed at the first Read.
type fileSource struct {
	path    string
	stall   bool
	started chan struct{}
	first   sync.Once
	mu      sync.Mutex
	files   []*trackedFile
}

func newFileSource(t *testing.T, size int, stall bool) *fileSource {
	data := make([]byte, size)
	_, _ = rand.Read(data)
	path := filepath.Join(t.TempDir(), "attachment.bin")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return &fileSource{path: path, stall: stall, started: make(chan struct{})}
}

func (s *fileSource) open(context.Context) (io.ReadCloser, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	tf := &trackedFile{File: f, src: s, stop: make(chan struct{})}
	s.mu.Lock()
	s.files = append(s.files, tf)
	s.mu.Unlock()
	return tf, nil
}

func (s *fileSource) attachment(t *testing.T, opts ...content.Option) *content.Attachment {
	a, err := content.Lazy("application/octet-stream", s.open, nil, opts...)
	require.NoError(t, err)
	return a
}

// requireClosed checks that the source was opened and that every file it
// opened is closed, once.
func (s *fileSource) requireClosed(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.files)
	for _, f := range s.files {
		require.Equal(t, int32(1), f.closes.Load())
		_, err := f.File.Stat()
		require.ErrorIs(t, err, os.ErrClosed, "the descriptor is closed")
	}
}

// stallingBody passes through the first n bytes of an upload, then tells
// reached and waits for release before reading on.
type stallingBody struct {
	r       io.ReadCloser
	n       int
	reached chan struct{}
	once    sync.Once
	release <-chan struct{}
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		b.once.Do(func() { close(b.reached) })
		<-b.release
		return b.r.Read(p)
	}
	if len(p) > b.n {
		p = p[:b.n]
	}
	k, err := b.r.Read(p)
	b.n -= k
	return k, err
}

func (b *stallingBody) Close() error { return b.r.Close() }

// TestUploadFailuresReleaseEverything: an attachment over its byte limit,
// over the upload's maxBytes or over the receiver's limit, a lazy load that
// times out or is cancelled, and a call cancelled while its upload is half
// sent each end the call with no goroutine left, every file the loader
// opened closed, and nothing committed or staged in the receiver's storage.
func TestUploadFailuresReleaseEverything(t *testing.T) {
	const big = 32 << 20 // more than loopback socket buffers hold
	for name, tc := range map[string]struct {
		size        int
		stall       bool // the source stops delivering
		opts        []content.Option
		maxBytes    int   // the upload's; 0 = 64 MiB
		recvLimit   int64 // the receiver's MaxBytes; 0 = 64 MiB
		cancelLoad  bool  // cancel the call at the first Read of the source
		cancelSend  bool  // cancel the call when the receiver has 64 KiB
		requests    int   // upload requests the receiver gets
		interrupted bool
	}{
		"attachment byte limit":   {size: 64 << 10, opts: []content.Option{content.WithMaxBytes(1 << 10)}},
		"upload maxBytes":         {size: 64 << 10, maxBytes: 1 << 10},
		"receiver limit":          {size: 64 << 10, recvLimit: 1 << 10, requests: 1},
		"load timeout":            {size: 1 << 10, stall: true, opts: []content.Option{content.WithLoadTimeout(50 * time.Millisecond)}},
		"cancelled while loading": {size: 1 << 10, stall: true, cancelLoad: true, interrupted: true},
		"cancelled mid-upload":    {size: big, cancelSend: true, requests: 1, interrupted: true},
	} {
		t.Run(name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			src := newFileSource(t, tc.size, tc.stall)
			store := &server.MemoryStorage{}
			func() {
				limit := tc.recvLimit
				if limit == 0 {
					limit = 64 << 20
				}
				rcv := &server.UploadReceiver{Storage: store, MaxBytes: limit, Authorize: func(*http.Request) (string, error) { return "scope", nil }}
				require.NoError(t, rcv.Validate())
				var requests atomic.Int32
				reached, release := make(chan struct{}), make(chan struct{})
				handled := make(chan struct{}, 8)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer func() { handled <- struct{}{} }()
					requests.Add(1)
					if tc.cancelSend {
						r.Body = &stallingBody{r: r.Body, n: 64 << 10, reached: reached, release: release}
					}
					rcv.ServeHTTP(w, r)
				}))
				defer srv.Close()
				maxBytes := tc.maxBytes
				if maxBytes == 0 {
					maxBytes = 64 << 20
				}
				rec := &recorder{}
				h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.a": rec}, registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
					`{"events":["turn.start"],"mode":"intercept","timeoutMs":60000,"failurePolicy":"fail-closed","content":{"default":"body"},"upload":{"endpoint":"`+srv.URL+`","timeoutMs":60000,"maxBytes":`+strconv.Itoa(maxBytes)+`}}`)))
				opts := append([]content.Option{content.WithMaxBytes(64 << 20)}, tc.opts...)
				a := src.attachment(t, opts...)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				switch {
				case tc.cancelLoad:
					go func() {
						<-src.started
						cancel()
					}()
				case tc.cancelSend:
					go func() {
						<-reached
						cancel()
					}()
				}
				res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", a))
				if tc.interrupted {
					require.ErrorIs(t, err, context.Canceled)
					require.True(t, res.Interrupted)
				} else {
					require.NoError(t, err)
					require.True(t, res.SyntheticDenial)
					require.Len(t, res.Diagnostics, 1)
					require.Equal(t, transport.CodePreparation, res.Diagnostics[0].Code)
					require.Equal(t, "upload", res.Diagnostics[0].Reason)
				}
				in, _ := rec.counts()
				require.Zero(t, in, "the interceptor is never called")
				src.requireClosed(t) // before the Result is closed: the call read and closed it
				require.NoError(t, res.Close())
				_, serr := a.Snapshot(context.Background())
				require.ErrorIs(t, serr, content.ErrClosed)
				require.NoError(t, h.Close())

				close(release) // the receiver reads on: the client is gone
				for range tc.requests {
					<-handled
				}
				require.Equal(t, int32(tc.requests), requests.Load())
				require.Zero(t, store.Len(), "nothing committed")
				require.Zero(t, store.Staging(), "nothing left staged")
			}()
			goleak.VerifyNone(t, ignore)
		})
	}
}
