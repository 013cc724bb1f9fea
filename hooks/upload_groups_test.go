package hooks_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// clientUploads is the upload HTTP client of these tests: a real loopback
// transport that tells when the client's round trip of an upload to a
// watched path has returned, which is when the SDK has finished or given
// up that upload (the server side cannot tell that reliably).
type clientUploads struct {
	base     *http.Transport
	mu       sync.Mutex
	returned map[string]chan struct{}
}

func newClientUploads(paths ...string) *clientUploads {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ExpectContinueTimeout = time.Second
	c := &clientUploads{base: base, returned: map[string]chan struct{}{}}
	for _, p := range paths {
		c.returned[p] = make(chan struct{})
	}
	return c
}

func (c *clientUploads) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	c.mu.Lock()
	if ch := c.returned[r.URL.Path]; ch != nil {
		close(ch)
		delete(c.returned, r.URL.Path) // one upload per watched path
	}
	c.mu.Unlock()
	return resp, err
}

// done reports whether the upload to path has returned on the client.
func (c *clientUploads) done(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, pending := c.returned[path]
	return !pending
}

func (c *clientUploads) client() *http.Client { return &http.Client{Transport: c} }

// heldUploads is an upload endpoint that never answers: each request is
// read in full, reported on entered (by path), and held until the client
// gives it up.
type heldUploads struct {
	srv     *httptest.Server
	mu      sync.Mutex
	entered map[string]chan struct{}
}

func newHeldUploads(paths ...string) *heldUploads {
	h := &heldUploads{entered: map[string]chan struct{}{}}
	for _, p := range paths {
		h.entered[p] = make(chan struct{})
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		if ch := h.entered[r.URL.Path]; ch != nil {
			close(ch)
			delete(h.entered, r.URL.Path)
		}
		h.mu.Unlock()
		<-r.Context().Done()
	}))
	return h
}

// upload is the upload member of a subscription uploading to path.
func (h *heldUploads) upload(path string, timeoutMs int) string {
	return `"upload":{"endpoint":"` + h.srv.URL + path + `","timeoutMs":` + strconv.Itoa(timeoutMs) + `,"maxBytes":1048576}`
}

// arrived returns the channel closed when the upload to path has reached
// the endpoint (nil once it has).
func (h *heldUploads) arrived(path string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch := h.entered[path]; ch != nil {
		return ch
	}
	done := make(chan struct{})
	close(done)
	return done
}

// gatedBackend serves rec over real loopback HTTP; before each request,
// before runs (when set) with the request's context, once the body has
// been read (the server notices a client giving up only from then on).
func gatedBackend(rec *recorder, before func(ctx context.Context)) *httptest.Server {
	h := rec.handler()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			before(r.Context())
		}
		h.ServeHTTP(w, r)
	}))
}

func subJSON(mode, policy, content, upload string) string {
	s := `{"events":["turn.start"],"mode":"` + mode + `","content":{"default":"` + content + `"}`
	if mode == "intercept" {
		s += `,"timeoutMs":20000,"failurePolicy":"` + policy + `"`
	}
	if upload != "" {
		s += "," + upload
	}
	return s + "}"
}

// TestUploadStallDelaysOnlyItsSubscription: interceptor A selects metadata
// and comes first; interceptor B selects the body and its upload endpoint
// never answers. A is delivered and answers while B's upload is still in
// flight (it does not wait for uploads that are not its own); B's upload
// times out by its own upload.timeoutMs, and B ends under its failure
// policy when its turn comes; the call returns within its budget; an
// observer is notified; nothing is left running.
func TestUploadStallDelaysOnlyItsSubscription(t *testing.T) {
	for _, policy := range []string{"fail-open", "fail-closed"} {
		t.Run(policy, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			held := newHeldUploads("/b")
			cu := newClientUploads("/b")
			recA, recB, recC := &recorder{}, &recorder{}, &recorder{}
			var aDuringUpload atomic.Bool
			srvA := gatedBackend(recA, func(ctx context.Context) {
				select {
				case <-held.arrived("/b"): // B's upload is at its endpoint
				case <-ctx.Done():
					return
				}
				aDuringUpload.Store(!cu.done("/b"))
			})
			srvB, srvC := gatedBackend(recB, nil), gatedBackend(recC, nil)
			cfg := uploadConfig()
			cfg.UploadHTTPClient = cu.client()
			h, err := hooks.New(registration(
				backendJSON("com.example.a", httpTransport(srvA.URL), subJSON("intercept", "fail-closed", "metadata", "")),
				backendJSON("com.example.b", httpTransport(srvB.URL), subJSON("intercept", policy, "body", held.upload("/b", 700))),
				backendJSON("com.example.c", httpTransport(srvC.URL), subJSON("observe", "", "metadata", "")),
			), cfg)
			require.NoError(t, err)
			img := newOwnedImage(t)
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
			require.NoError(t, err, "the call returns within its budget")
			require.False(t, res.Interrupted)

			require.True(t, aDuringUpload.Load(), "A was delivered while B's upload was still in flight")
			in, out := recA.counts()
			require.Equal(t, [2]int{1, 0}, [2]int{in, out})
			require.NotNil(t, imagePart(t, recA.intercept[0].Params.Event.TurnStart.Items).AttachmentMetadataPart)
			in, out = recB.counts()
			require.Equal(t, [2]int{0, 0}, [2]int{in, out}, "B's upload failed: B is not delivered to")
			in, out = recC.counts()
			require.Equal(t, [2]int{0, 1}, [2]int{in, out})

			require.Len(t, res.Diagnostics, 1)
			d := res.Diagnostics[0]
			require.Equal(t, "com.example.b", d.BackendID)
			require.Equal(t, gen.ModeIntercept, d.Mode)
			require.Equal(t, transport.CodePreparation, d.Code)
			require.Equal(t, "upload", d.Reason)
			if policy == "fail-closed" {
				require.True(t, d.SyntheticDenial)
				require.True(t, res.SyntheticDenial)
				require.Equal(t, gen.PermissionDeny, res.Permission)
			} else {
				require.False(t, res.SyntheticDenial)
				require.Equal(t, gen.PermissionNone, res.Permission)
			}
			require.True(t, cu.done("/b"), "B's upload was joined")
			require.Equal(t, int32(1), img.opens.Load())

			require.NoError(t, res.Close())
			require.Equal(t, int32(1), img.cleanups.Load())
			require.NoError(t, h.Close())
			srvA.Close()
			srvB.Close()
			srvC.Close()
			held.srv.Close()
			cu.base.CloseIdleConnections()
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestObserverUploadFailureLeavesInterceptionAlone: an observer whose
// upload fails (the receiver answers 500) or never answers does not delay
// or change interception: the interceptor gets its own confirmed reference,
// the settled result stands, and the observer alone carries the failure
// (a gap in its notification, or an observation cut at ObserveTimeout
// while it waited for its upload), recorded and never acted on.
func TestObserverUploadFailureLeavesInterceptionAlone(t *testing.T) {
	for _, stalled := range []bool{false, true} {
		name := "broken"
		if stalled {
			name = "stalled"
		}
		t.Run(name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			up := newUploadReceivers(t, "icpt")
			held := newHeldUploads("/o")
			cu := newClientUploads("/o")
			recI, recO := &recorder{}, &recorder{}
			var iDuringUpload atomic.Bool
			var before func(context.Context)
			obsUpload := `"upload":{"endpoint":"` + up.srv.URL + `/upload/broken","timeoutMs":10000,"maxBytes":1048576}`
			if stalled {
				obsUpload = held.upload("/o", 60000)
				before = func(ctx context.Context) {
					select {
					case <-held.arrived("/o"): // the observer's upload is at its endpoint
					case <-ctx.Done():
						return
					}
					iDuringUpload.Store(!cu.done("/o"))
				}
			}
			srvI, srvO := gatedBackend(recI, before), gatedBackend(recO, nil)
			cfg := uploadConfig()
			cfg.UploadHTTPClient = cu.client()
			cfg.ObserveTimeout = 300 * time.Millisecond
			h, err := hooks.New(registration(
				backendJSON("com.example.i", httpTransport(srvI.URL), subJSON("intercept", "fail-closed", "body", up.endpoint("icpt"))),
				backendJSON("com.example.o", httpTransport(srvO.URL), subJSON("observe", "", "body", obsUpload)),
			), cfg)
			require.NoError(t, err)
			img := newOwnedImage(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
			require.NoError(t, err)
			require.False(t, res.SyntheticDenial)
			require.Equal(t, gen.PermissionNone, res.Permission)

			in, _ := recI.counts()
			require.Equal(t, 1, in)
			ref := imagePart(t, recI.intercept[0].Params.Event.TurnStart.Items).AttachmentBodyPart
			require.NotNil(t, ref)
			require.Equal(t, imageBytes, up.bytesOf(t, "icpt", ref.Body.Ref))

			require.Len(t, res.Diagnostics, 1)
			d := res.Diagnostics[0]
			require.Equal(t, "com.example.o", d.BackendID)
			require.Equal(t, gen.ModeObserve, d.Mode)
			require.False(t, d.SyntheticDenial)
			require.Equal(t, "upload", d.Reason)
			_, observed := recO.counts()
			if stalled {
				require.True(t, iDuringUpload.Load(), "the interceptor was delivered while the observer's upload was in flight")
				require.Equal(t, transport.CodeDeadlineExceeded, d.Code)
				require.Zero(t, observed, "the observation's budget ran out waiting for its upload")
			} else {
				require.Equal(t, transport.CodePreparation, d.Code)
				require.Equal(t, 1, observed)
				p := imagePart(t, recO.observed[0].Params.Event.TurnStart.Items)
				require.NotNil(t, p.AttachmentGapPart)
				require.Equal(t, "upload failed", p.AttachmentGapPart.Gap.Reason)
			}
			require.True(t, !stalled || cu.done("/o"), "the observer's upload was joined")
			require.Equal(t, int32(1), img.opens.Load())

			require.NoError(t, res.Close())
			require.NoError(t, h.Close())
			srvI.Close()
			srvO.Close()
			held.srv.Close()
			up.srv.Close()
			cu.base.CloseIdleConnections()
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestOwedObservationWaitsForItsUpload: the first interceptor denies while
// the upload of the second (which selects the body) is still held by its
// receiver; the owed observation of the second waits for that upload, its
// own, and carries the confirmed reference: the bytes were uploaded once,
// and the reference resolves to them in that receiver's storage.
func TestOwedObservationWaitsForItsUpload(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	store := &server.MemoryStorage{}
	rcv := &server.UploadReceiver{Storage: store, Authorize: func(*http.Request) (string, error) { return "scope-e", nil }}
	require.NoError(t, rcv.Validate())
	denied := make(chan struct{})
	var uploads atomic.Int32
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uploads.Add(1)
		select {
		case <-denied: // commit only once the chain has been decided
		case <-r.Context().Done():
			return
		}
		rcv.ServeHTTP(w, r)
	}))
	recD := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }}
	recE := &recorder{}
	hd := recD.handler()
	srvD := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd.ServeHTTP(w, r)
		close(denied) // the deny is written: the upload may now commit
	}))
	srvE := gatedBackend(recE, nil)
	h, err := hooks.New(registration(
		backendJSON("com.example.d", httpTransport(srvD.URL), subJSON("intercept", "fail-closed", "metadata", "")),
		backendJSON("com.example.e", httpTransport(srvE.URL), subJSON("intercept", "fail-closed", "body",
			`"upload":{"endpoint":"`+upSrv.URL+`/e","timeoutMs":60000,"maxBytes":1048576}`)),
	), uploadConfig())
	require.NoError(t, err)
	img := newOwnedImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.False(t, res.SyntheticDenial)
	require.Empty(t, res.Diagnostics)

	in, out := recE.counts()
	require.Equal(t, [2]int{0, 1}, [2]int{in, out}, "owed an observation after the denial")
	p := imagePart(t, recE.observed[0].Params.Event.TurnStart.Items).AttachmentBodyPart
	require.NotNil(t, p, "the owed observation carries its confirmed reference")
	rc, receipt, err := store.Open(context.Background(), "scope-e", p.Body.Ref)
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	require.NoError(t, err)
	require.Equal(t, imageBytes, data)
	require.Equal(t, int64(len(imageBytes)), receipt.Size)
	require.Equal(t, int32(1), uploads.Load(), "uploaded once")
	require.Equal(t, 1, store.Len())
	require.Equal(t, int32(1), img.opens.Load())

	require.NoError(t, res.Close())
	require.NoError(t, h.Close())
	srvD.Close()
	srvE.Close()
	upSrv.Close()
	goleak.VerifyNone(t, ignore)
}

// TestEndOfCallJoinsPendingUploads: the call ends (its context is
// cancelled, or the Hooks closes) while the first interceptor is being
// delivered to and the uploads of a later interceptor and of an observer
// are still in flight: the call returns interrupted only after both
// uploads have been given up (nothing runs detached), having closed the
// attachment, and leaves no goroutine behind.
func TestEndOfCallJoinsPendingUploads(t *testing.T) {
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			held := newHeldUploads("/b", "/o")
			cu := newClientUploads("/b", "/o")
			recA, recB, recO := &recorder{}, &recorder{}, &recorder{}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var h *hooks.Hooks
			closed := make(chan error, 1)
			srvA := gatedBackend(recA, func(rctx context.Context) {
				for _, p := range []string{"/b", "/o"} {
					select {
					case <-held.arrived(p):
					case <-rctx.Done():
						return
					}
				}
				if how == "cancel" {
					cancel()
				} else {
					go func() { closed <- h.Close() }()
				}
				<-rctx.Done() // the client gives the delivery up
			})
			srvB, srvO := gatedBackend(recB, nil), gatedBackend(recO, nil)
			cfg := uploadConfig()
			cfg.UploadHTTPClient = cu.client()
			var err error
			h, err = hooks.New(registration(
				backendJSON("com.example.a", httpTransport(srvA.URL), subJSON("intercept", "fail-open", "metadata", "")),
				backendJSON("com.example.b", httpTransport(srvB.URL), subJSON("intercept", "fail-open", "body", held.upload("/b", 60000))),
				backendJSON("com.example.o", httpTransport(srvO.URL), subJSON("observe", "", "body", held.upload("/o", 60000))),
			), cfg)
			require.NoError(t, err)
			img := newOwnedImage(t)
			res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
			require.True(t, cu.done("/b") && cu.done("/o"), "both uploads ended before the call returned")
			if how == "cancel" {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.ErrorIs(t, err, hooks.ErrClosed)
				require.NoError(t, <-closed)
			}
			require.NotNil(t, res)
			require.True(t, res.Interrupted)
			require.Equal(t, gen.PermissionDeny, res.Permission)
			require.Equal(t, int32(1), img.cleanups.Load(), "the call closed the attachment")
			for _, r := range []*recorder{recB, recO} {
				in, out := r.counts()
				require.Zero(t, in+out)
			}

			require.NoError(t, h.Close())
			srvA.Close()
			srvB.Close()
			srvO.Close()
			held.srv.Close()
			cu.base.CloseIdleConnections()
			goleak.VerifyNone(t, ignore)
		})
	}
}

// pairedUploads is an upload receiver that records how many uploads it
// serves at once. An upload waits for a partner (a second upload in
// flight) before it is served, unless every expected upload has arrived,
// so that the limit is reached whenever the SDK allows it.
type pairedUploads struct {
	rcv      *server.UploadReceiver
	expected int32
	mu       sync.Mutex
	changed  chan struct{}
	inFlight int32
	arrived  int32
	peak     int32
}

func (p *pairedUploads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.inFlight++
	p.arrived++
	p.peak = max(p.peak, p.inFlight)
	close(p.changed)
	p.changed = make(chan struct{})
	for p.inFlight < 2 && p.arrived < p.expected {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-r.Context().Done():
		}
		p.mu.Lock()
		if r.Context().Err() != nil {
			break
		}
	}
	p.mu.Unlock()
	p.rcv.ServeHTTP(w, r)
	p.mu.Lock()
	p.inFlight--
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// TestUploadGroupsShareTheLimit: the upload groups of four interceptors
// and two observers run concurrently, but never more uploads at once than
// MaxConcurrentUploads; the attachment is read once for all six, and each
// subscription gets its own confirmed reference.
func TestUploadGroupsShareTheLimit(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	const limit = 2
	store := &server.MemoryStorage{}
	pu := &pairedUploads{rcv: &server.UploadReceiver{Storage: store, Authorize: func(*http.Request) (string, error) { return "scope", nil }}, expected: 6, changed: make(chan struct{})}
	require.NoError(t, pu.rcv.Validate())
	upSrv := httptest.NewServer(pu)
	var backends []string
	recs := map[string]*recorder{}
	var srvs []*httptest.Server
	for i := range 6 {
		id := "com.example.s" + strconv.Itoa(i)
		rec := &recorder{}
		recs[id] = rec
		srv := gatedBackend(rec, nil)
		srvs = append(srvs, srv)
		mode := "intercept"
		if i >= 4 {
			mode = "observe"
		}
		backends = append(backends, backendJSON(id, httpTransport(srv.URL), subJSON(mode, "fail-closed", "body",
			`"upload":{"endpoint":"`+upSrv.URL+`/`+id+`","timeoutMs":60000,"maxBytes":1048576}`)))
	}
	cfg := uploadConfig()
	cfg.MaxConcurrentUploads = limit
	h, err := hooks.New(registration(backends...), cfg)
	require.NoError(t, err)
	img := newOwnedImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	pu.mu.Lock()
	peak := pu.peak
	pu.mu.Unlock()
	require.Equal(t, int32(limit), peak, "uploads ran concurrently, within the limit")
	require.Equal(t, 6, store.Len())
	require.Equal(t, int32(1), img.opens.Load(), "one read for six uploads")
	refs := map[string]bool{}
	for id, rec := range recs {
		rec.mu.Lock()
		var items []gen.ModelVisibleItem
		if len(rec.intercept) == 1 {
			items = rec.intercept[0].Params.Event.TurnStart.Items
		} else {
			require.Len(t, rec.observed, 1, id)
			items = rec.observed[0].Params.Event.TurnStart.Items
		}
		rec.mu.Unlock()
		p := imagePart(t, items).AttachmentBodyPart
		require.NotNil(t, p, id)
		refs[p.Body.Ref] = true
	}
	require.Len(t, refs, 6, "a reference of its own for each subscription")

	require.NoError(t, res.Close())
	require.NoError(t, h.Close())
	for _, s := range srvs {
		s.Close()
	}
	upSrv.Close()
	goleak.VerifyNone(t, ignore)
}

// turnEvent is a canonical turn.start event whose prompt has the attachment
// part "img" without its body reference, for WithAttachment.
func turnEvent(t *testing.T) *gen.Event {
	t.Helper()
	ev, err := gen.ParseEvent([]byte(`{"id":"evt-u1","source":"urn:test:harness","type":"turn.start","time":"2026-01-15T10:00:00Z","session":{"id":"sess-1"},"turn":{"id":"t1"},"trigger":"user",` +
		`"items":[{"id":"m1","role":"user","parts":[{"id":"t","kind":"text","mediaType":"text/plain","selection":"body","text":"look"},{"id":"img","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"x"}}]}]}`))
	require.NoError(t, err)
	ev.TurnStart.Items[0].Parts[1].AttachmentBodyPart.Body.Ref = ""
	return ev
}

// TestInvocationUploadGroups: an invocation prepares the first
// interceptor's request (metadata selection) while a later interceptor's
// upload is still held by its endpoint, and Cancel cancels and joins that
// upload before it returns.
func TestInvocationUploadGroups(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	held := newHeldUploads("/b")
	cu := newClientUploads("/b")
	recA, recB := &recorder{}, &recorder{}
	srvA, srvB := gatedBackend(recA, nil), gatedBackend(recB, nil)
	cfg := uploadConfig()
	cfg.UploadHTTPClient = cu.client()
	h, err := hooks.New(registration(
		backendJSON("com.example.a", httpTransport(srvA.URL), subJSON("intercept", "fail-closed", "metadata", "")),
		backendJSON("com.example.b", httpTransport(srvB.URL), subJSON("intercept", "fail-closed", "body", held.upload("/b", 60000))),
	), cfg)
	require.NoError(t, err)
	img := newOwnedImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inv, err := h.Begin(ctx, turnEvent(t), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	req, ok := inv.Request()
	require.True(t, ok)
	require.Equal(t, "com.example.a", req.BackendID)
	<-held.arrived("/b")
	require.False(t, cu.done("/b"), "B's upload is still in flight")
	inv.Cancel()
	require.True(t, cu.done("/b"), "Cancel joined B's upload")
	res, err := inv.Accept(ctx)
	require.ErrorIs(t, err, hooks.ErrCancelled)
	require.True(t, res.Interrupted)
	require.Equal(t, int32(1), img.cleanups.Load())
	in, _ := recB.counts()
	require.Zero(t, in)

	require.NoError(t, h.Close())
	srvA.Close()
	srvB.Close()
	held.srv.Close()
	cu.base.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}
