package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// imageBytes are the bytes of the attachment of these tests.
var imageBytes = []byte("\x89PNG\r\n\x1a\n CANARY-SECRET-IMAGE-BYTES")

// uploadReceivers serves one server.UploadReceiver per backend, each with
// its own storage and authorization scope, on a real loopback server.
type uploadReceivers struct {
	srv     *httptest.Server
	storage map[string]*server.MemoryStorage
}

func newUploadReceivers(t *testing.T, ids ...string) *uploadReceivers {
	u := &uploadReceivers{storage: map[string]*server.MemoryStorage{}}
	mux := http.NewServeMux()
	for _, id := range ids {
		st := &server.MemoryStorage{}
		u.storage[id] = st
		scope := "scope-" + id
		rcv := &server.UploadReceiver{Storage: st, Authorize: func(*http.Request) (string, error) { return scope, nil }}
		require.NoError(t, rcv.Validate())
		mux.Handle("/upload/"+id, rcv)
	}
	mux.HandleFunc("/upload/broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "storage down", http.StatusInternalServerError)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

func (u *uploadReceivers) endpoint(id string) string {
	return `"upload":{"endpoint":"` + u.srv.URL + `/upload/` + id + `","timeoutMs":10000,"maxBytes":1048576}`
}

// bytesOf returns the bytes a backend's storage holds for ref.
func (u *uploadReceivers) bytesOf(t *testing.T, id, ref string) []byte {
	rc, receipt, err := u.storage[id].Open(context.Background(), "scope-"+id, ref)
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), receipt.Size)
	return data
}

// uploadConfig is selectionConfig for the plain http loopback upload
// receivers of these tests: an explicitly configured loopback test.
func uploadConfig() hooks.Config {
	cfg := selectionConfig()
	cfg.AllowLoopbackHTTPUploads = true
	return cfg
}

// countingImage is a lazy attachment whose loader counts its opens.
func countingImage(t *testing.T, opens *atomic.Int32) *content.Attachment {
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(bytes.NewReader(imageBytes)), nil
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// imagePrompt is a turn.start prompt with an attachment part "img" that
// the SDK fills from WithAttachment.
func imagePrompt() []gen.ModelVisibleItem {
	return []gen.ModelVisibleItem{{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{
		{TextBodyPart: &gen.TextBodyPart{ID: "t", Text: "look at this"}},
		{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "img"}},
	}}}
}

// imagePart returns the part "img" of the prompt of a request.
func imagePart(t *testing.T, items []gen.ModelVisibleItem) gen.ContentItem {
	for _, m := range items {
		for _, p := range m.Parts {
			if p.ID() == "img" {
				return p
			}
		}
	}
	t.Fatal("no part img")
	return gen.ContentItem{}
}

func uploadSub(mode, content, upload string) string {
	s := `{"events":["turn.start"],"mode":"` + mode + `","content":` + content
	if mode == "intercept" {
		s += `,"timeoutMs":20000,"failurePolicy":"fail-closed"`
	}
	if upload != "" {
		s += "," + upload
	}
	return s + "}"
}

// TestAttachmentUploads: an attachment given with WithAttachment is read
// once and uploaded to the upload endpoint of each subscription that
// selects its body, which gets only its own receiver's {"ref"}; a metadata
// subscription gets the part without a reference, a body subscription
// without an upload endpoint a gap; the owed observation after a denial
// and an explicit observer are served the same way. The Result keeps the
// SDK's canonical reference.
func TestAttachmentUploads(t *testing.T) {
	up := newUploadReceivers(t, "body", "meta", "owed", "observer")
	body := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }}
	meta, noUpload, owed, observer := &recorder{}, &recorder{}, &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.meta": meta, "com.example.noupload": noUpload, "com.example.body": body, "com.example.owed": owed, "com.example.observer": observer}, registration(
		backendJSON("com.example.meta", u, uploadSub("intercept", `{"default":"metadata"}`, up.endpoint("meta"))),
		backendJSON("com.example.noupload", u, uploadSub("intercept", `{"default":"body"}`, "")),
		backendJSON("com.example.body", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("body"))),
		backendJSON("com.example.owed", u, uploadSub("intercept", `{"default":"metadata","images":"body"}`, up.endpoint("owed"))),
		backendJSON("com.example.observer", u, uploadSub("observe", `{"default":"body"}`, up.endpoint("observer")))))
	var opens atomic.Int32
	img := countingImage(t, &opens)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Equal(t, gen.PermissionDeny, res.Permission)
	require.Equal(t, int32(1), opens.Load(), "the source is read once for every upload")

	// The metadata interceptor: no reference, no upload.
	require.Len(t, meta.intercept, 1)
	p := imagePart(t, meta.intercept[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentMetadataPart)
	require.Equal(t, "image/png", p.AttachmentMetadataPart.MediaType)
	require.Zero(t, up.storage["meta"].Len())
	// Body without an upload endpoint: a gap.
	require.Len(t, noUpload.intercept, 1)
	p = imagePart(t, noUpload.intercept[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentGapPart)
	require.Equal(t, "no upload endpoint", p.AttachmentGapPart.Gap.Reason)
	// The body interceptor, the owed interceptor (images: body) and the
	// observer: each its own reference, resolving to the bytes in its own
	// receiver's storage.
	refs := map[string]bool{}
	for id, items := range map[string][]gen.ModelVisibleItem{
		"body":     body.intercept[0].Params.Event.TurnStart.Items,
		"owed":     owed.observed[0].Params.Event.TurnStart.Items,
		"observer": observer.observed[0].Params.Event.TurnStart.Items,
	} {
		p := imagePart(t, items)
		require.NotNil(t, p.AttachmentBodyPart, id)
		ref := p.AttachmentBodyPart.Body.Ref
		require.False(t, strings.HasPrefix(ref, "ahp:"), id)
		require.Equal(t, imageBytes, up.bytesOf(t, id, ref), id)
		require.Equal(t, 1, up.storage[id].Len(), id)
		refs[ref] = true
	}
	require.Len(t, refs, 3, "no reference is shared between receivers")
	require.Len(t, owed.intercept, 0)

	// The host's Result: the canonical reference.
	p = imagePart(t, res.Event().TurnStart.Items)
	require.Equal(t, "ahp:attachment:img", p.AttachmentBodyPart.Body.Ref)
}

// TestAttachmentNotReadWithoutBodySelection: metadata and omit selections
// never read the source.
func TestAttachmentNotReadWithoutBodySelection(t *testing.T) {
	up := newUploadReceivers(t, "meta", "omit")
	meta, omit := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.meta": meta, "com.example.omit": omit}, registration(
		backendJSON("com.example.meta", u, uploadSub("intercept", `{"default":"body","images":"metadata"}`, up.endpoint("meta"))),
		backendJSON("com.example.omit", u, uploadSub("observe", `{"default":"omit"}`, up.endpoint("omit")))))
	var opens atomic.Int32
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Zero(t, opens.Load())
	require.NotNil(t, imagePart(t, meta.intercept[0].Params.Event.TurnStart.Items).AttachmentMetadataPart)
	require.NotNil(t, imagePart(t, omit.observed[0].Params.Event.TurnStart.Items).AttachmentOmittedPart)
}

// TestAttachmentUploadFailure: a failed upload is never replaced by the
// bytes: a fail-closed interceptor whose body cannot be published is a
// preparation failure under its policy (not delivered, a synthetic
// denial); an observer gets a gap and a diagnostic.
func TestAttachmentUploadFailure(t *testing.T) {
	up := newUploadReceivers(t)
	icpt, observer := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.i": icpt, "com.example.o": observer}, registration(
		backendJSON("com.example.i", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("broken"))),
		backendJSON("com.example.o", u, uploadSub("observe", `{"default":"body"}`, up.endpoint("broken")))))
	var opens atomic.Int32
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	require.True(t, res.SyntheticDenial)
	require.Empty(t, icpt.intercept)
	require.Len(t, res.Diagnostics, 2)
	for _, d := range res.Diagnostics {
		require.Equal(t, transport.CodePreparation, d.Code)
		require.Equal(t, "upload", d.Reason)
	}
	require.Len(t, observer.observed, 1)
	p := imagePart(t, observer.observed[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentGapPart)
	require.Equal(t, "upload failed", p.AttachmentGapPart.Gap.Reason)
	require.Equal(t, int32(1), opens.Load())
}

// TestAttachmentLoopbackHTTPUploadIsOptIn: without
// Config.AllowLoopbackHTTPUploads a plain http upload endpoint, loopback
// included, is not used: the body is a gap for an observer, nothing
// reaches the receiver and the source is not read.
func TestAttachmentLoopbackHTTPUploadIsOptIn(t *testing.T) {
	up := newUploadReceivers(t, "observer")
	observer := &recorder{}
	h := inproc(t, selectionConfig(), map[string]*recorder{"com.example.o": observer}, registration(
		backendJSON("com.example.o", httpTransport("http://127.0.0.1:1/x"), uploadSub("observe", `{"default":"body"}`, up.endpoint("observer")))))
	var opens atomic.Int32
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, "upload", res.Diagnostics[0].Reason)
	require.Len(t, observer.observed, 1)
	p := imagePart(t, observer.observed[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentGapPart)
	require.Zero(t, up.storage["observer"].Len())
	require.Zero(t, opens.Load(), "the endpoint is refused before the source is read")
}

// TestAttachmentRepeatedByBackend: a backend that repeats its own
// reference in a message-list effect repeats the established attachment
// (accepted), and the next receiver sees the attachment under its own
// reference; a reference given to another receiver is not accepted.
func TestAttachmentRepeatedByBackend(t *testing.T) {
	up := newUploadReceivers(t, "first", "second")
	repeat := func(req *gen.InterceptRequest) []gen.Effect {
		p := imagePart(nil, req.Params.Event.TurnStart.Items)
		return []gen.Effect{{ModifyMessages: &gen.ModifyMessagesEffect{Target: gen.ModifyMessagesEffectTargetPrompt, Operation: gen.EffectOperationMerge,
			Value: gen.CanonicalMessages{{ID: "again", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{p}}}}}}
	}
	first, second := &recorder{effects: repeat}, &recorder{}
	cfg := uploadConfig()
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.first": first, "com.example.second": second}, registration(
		backendJSON("com.example.first", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("first"))),
		backendJSON("com.example.second", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("second")))))
	var opens atomic.Int32
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, res.Accepted, 2)
	require.Len(t, res.Accepted[0].Effects, 1, "the first backend's merge is accepted")
	items := res.Event().TurnStart.Items
	require.Len(t, items, 2)
	require.Equal(t, "ahp:attachment:img", items[1].Parts[0].AttachmentBodyPart.Body.Ref)

	firstRef := imagePart(t, first.intercept[0].Params.Event.TurnStart.Items).AttachmentBodyPart.Body.Ref
	seen := second.intercept[0].Params.Event.TurnStart.Items
	require.Len(t, seen, 2)
	for _, m := range seen {
		for _, p := range m.Parts {
			if p.AttachmentBodyPart != nil {
				require.NotEqual(t, firstRef, p.AttachmentBodyPart.Body.Ref)
				require.Equal(t, imageBytes, up.bytesOf(t, "second", p.AttachmentBodyPart.Body.Ref))
			}
		}
	}

	// A backend (answering without server-side admission) repeats the
	// first one's reference: not its own, so not an established
	// attachment, and the harness refuses the response.
	cfg.Transports = map[string]transport.Transport{"com.example.first": answering{`[{"type":"modify","target":"prompt","operation":"merge","value":[{"id":"x","role":"user","parts":[{"id":"img","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"` + firstRef + `"}}]}]}]`}}
	h2, err := hooks.New(registration(backendJSON("com.example.first", u, `{"events":["turn.start"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-open","content":{"default":"body"},`+up.endpoint("second")+`}`)), cfg)
	require.NoError(t, err)
	defer h2.Close()
	res, err = h2.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	require.Empty(t, res.Accepted)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, transport.CodeProtocolRejection, res.Diagnostics[0].Code)
}

// TestAttachmentInputErrors: an attachment must name one attachment body
// part of the event without a reference.
func TestAttachmentInputErrors(t *testing.T) {
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.a": {}}, registration(
		backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"body"}`))))
	var opens atomic.Int32
	img := countingImage(t, &opens)
	text := []gen.ModelVisibleItem{{ID: "m", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "img", Text: "x"}}}}}
	withRef := imagePrompt()
	withRef[0].Parts[1].AttachmentBodyPart.Body.Ref = "r"
	reserved := imagePrompt()
	reserved[0].Parts = append(reserved[0].Parts, gen.ContentItem{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "other", MediaType: "image/png", Body: gen.ContentReference{Ref: "ahp:attachment:x"}}})
	otherType := imagePrompt()
	otherType[0].Parts[1].AttachmentBodyPart.MediaType = "audio/ogg"
	for name, tc := range map[string]struct {
		items []gen.ModelVisibleItem
		opts  []hooks.CallOption
	}{
		"no such part":   {items: imagePrompt(), opts: []hooks.CallOption{hooks.WithAttachment("other", img)}},
		"a text part":    {items: text, opts: []hooks.CallOption{hooks.WithAttachment("img", img)}},
		"a reference":    {items: withRef, opts: []hooks.CallOption{hooks.WithAttachment("img", img)}},
		"a media type":   {items: otherType, opts: []hooks.CallOption{hooks.WithAttachment("img", img)}},
		"twice":          {items: imagePrompt(), opts: []hooks.CallOption{hooks.WithAttachment("img", img), hooks.WithAttachment("img", img)}},
		"no attachment":  {items: imagePrompt(), opts: []hooks.CallOption{hooks.WithAttachment("img", nil)}},
		"reserved value": {items: reserved, opts: []hooks.CallOption{hooks.WithAttachment("img", img)}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.TurnStart(context.Background(), turnStart(tc.items), tc.opts...)
			require.ErrorIs(t, err, hooks.ErrInvalidInput)
		})
	}
	require.Zero(t, opens.Load())
}

// countingRoundTripper counts the requests it carries, by URL path.
type countingRoundTripper struct {
	mu    sync.Mutex
	paths []string
}

func (c *countingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingRoundTripper) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

// uploadRequests records the upload credential requests; it has no
// credential for an endpoint without a binding.
type uploadRequests struct {
	mu   sync.Mutex
	reqs []auth.Request
}

func (p *uploadRequests) Credential(_ context.Context, req auth.Request) (auth.Credential, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	return auth.Credential{}, nil
}

func (p *uploadRequests) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return auth.ErrNoReplay
}

// TestAttachmentUploadClient: uploads go through UploadHTTPClient (or a
// client of the Hooks' own), never through the event client HTTPClient,
// and the provider is asked with the backend's registration entry.
func TestAttachmentUploadClient(t *testing.T) {
	for _, withUploadClient := range []bool{true, false} {
		up := newUploadReceivers(t, "body")
		event, upload := &countingRoundTripper{}, &countingRoundTripper{}
		cfg := uploadConfig()
		cfg.HTTPClient = &http.Client{Transport: event}
		if withUploadClient {
			cfg.UploadHTTPClient = &http.Client{Transport: upload}
		}
		p := &uploadRequests{}
		cfg.AuthProvider = p
		body := &recorder{}
		h := inproc(t, cfg, map[string]*recorder{"com.example.body": body}, registration(
			backendJSON("com.example.body", httpTransport("http://127.0.0.1:1/x"), uploadSub("intercept", `{"default":"body"}`, up.endpoint("body")))))
		var opens atomic.Int32
		_, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
		require.NoError(t, err)
		require.NotNil(t, imagePart(t, body.intercept[0].Params.Event.TurnStart.Items).AttachmentBodyPart)
		require.Empty(t, event.seen(), "an upload went through the event client")
		if withUploadClient {
			require.Equal(t, []string{"/upload/body"}, upload.seen())
		}
		p.mu.Lock()
		require.Len(t, p.reqs, 1)
		req := p.reqs[0]
		p.mu.Unlock()
		require.Equal(t, auth.PurposeUpload, req.Purpose)
		require.NotNil(t, req.Backend, "the provider gets the backend's registration entry")
		require.Equal(t, "com.example.body", string(req.Backend.ID))
		require.Equal(t, up.srv.URL+"/upload/body", req.URL)
	}
}

// TestAttachmentForgedPlaceholderRefused: a backend that selected only metadata
// (it never received a body reference) guesses the documented placeholder
// "ahp:attachment:<part id>" from the part id its metadata view shows and
// republishes the attachment body in a message-list merge. It was not
// given that reference, so the harness must refuse it like any other
// reference it was not issued.
func TestAttachmentForgedPlaceholderRefused(t *testing.T) {
	for _, sel := range []string{`{"default":"metadata"}`, `{"default":"omit"}`} {
		t.Run(sel, func(t *testing.T) {
			up := newUploadReceivers(t, "first")
			cfg := uploadConfig()
			cfg.Transports = map[string]transport.Transport{"com.example.first": answering{`[{"type":"modify","target":"prompt","operation":"merge","value":[{"id":"x","role":"user","parts":[{"id":"img","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"ahp:attachment:img"}}]}]}]`}}
			u := httpTransport("http://127.0.0.1:1/x")
			h, err := hooks.New(registration(backendJSON("com.example.first", u, `{"events":["turn.start"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-open","content":`+sel+`,`+up.endpoint("first")+`}`)), cfg)
			require.NoError(t, err)
			defer h.Close()
			var opens atomic.Int32
			res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
			require.NoError(t, err)
			defer res.Close()
			require.Empty(t, res.Accepted, "a forged placeholder reference from a metadata/omit receiver is accepted: %d prompt items", len(res.Event().TurnStart.Items))
		})
	}
}

// TestDeliverErrorClosesAttachments: "a call that returns an
// error has closed them" (WithAttachment). Deliver given an event document
// that does not parse returns an error without closing the attachment: its
// cleanup never runs.
func TestDeliverErrorClosesAttachments(t *testing.T) {
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.a": {}}, registration(
		backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"body"}`))))
	for name, doc := range map[string]string{"not json": `{`, "no type": `{"specversion":"1.0"}`} {
		t.Run(name, func(t *testing.T) {
			var cleaned atomic.Int32
			a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(imageBytes)), nil
			}, func(context.Context) error { cleaned.Add(1); return nil })
			require.NoError(t, err)
			res, err := h.Deliver(context.Background(), []byte(doc), hooks.WithAttachment("img", a))
			require.Error(t, err)
			require.Nil(t, res)
			require.Equal(t, int32(1), cleaned.Load(), "the attachment given to a failed Deliver was not closed")
		})
	}
}

// TestAttachmentPlaceholderWithoutOptionRefused: AttachmentRef's reference
// "no backend ever receives". A host that reuses a Result's content in a
// later call (the prompt of res.Event(), here as the next turn's prompt)
// is refused as invalid input, with or without WithAttachment: the
// placeholder never reaches a backend.
func TestAttachmentPlaceholderWithoutOptionRefused(t *testing.T) {
	up := newUploadReceivers(t, "first")
	first := &recorder{}
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.first": first}, registration(
		backendJSON("com.example.first", httpTransport("http://127.0.0.1:1/x"), uploadSub("intercept", `{"default":"body"}`, up.endpoint("first")))))
	var opens atomic.Int32
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	defer res.Close()
	again := res.Event().TurnStart.Items // carries hooks.AttachmentRef("img")
	res2, err := h.TurnStart(context.Background(), turnStart(again))
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	require.Nil(t, res2)
	require.Len(t, first.intercept, 1, "the SDK's placeholder reached the backend")
}

// TestAttachmentReturnRepeatsOwnRef: a body receiver of model.request.before
// returns a model response (a message list) that repeats the attachment it
// was given, under its own reference: the candidate repeats the part, as
// the same repeat in a modify(messages) does (TestAttachmentRepeatedByBackend).
func TestAttachmentReturnRepeatsOwnRef(t *testing.T) {
	up := newUploadReceivers(t, "first")
	returns := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		p := imagePart(t, req.Params.Event.ModelRequestBefore.Items)
		return []gen.Effect{server.ReturnMessages(gen.CanonicalMessages{{ID: "r1", Role: gen.CanonicalMessageRoleAssistant, Parts: []gen.ContentItem{p}}})}
	}}
	cfg := uploadConfig()
	cfg.Capabilities[gen.EventModelRequestBefore] = hooks.Intercept().Deny().Return()
	h := inproc(t, cfg, map[string]*recorder{"com.example.first": returns}, registration(
		backendJSON("com.example.first", httpTransport("http://127.0.0.1:1/x"), `{"events":["model.request.before"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-open","content":{"default":"body"},`+up.endpoint("first")+`}`)))
	var opens atomic.Int32
	res, err := h.ModelRequestBefore(context.Background(), hooks.ModelRequestBeforeInput{Items: imagePrompt(),
		Model: gen.ExecutionEventModel{Provider: "example", ID: "m1"}, Attempt: gen.ExecutionEventAttempt{ID: "a1", Number: "1"}, Params: json.RawMessage(`{}`)},
		hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	defer res.Close()
	require.Len(t, returns.intercept, 1)
	require.Empty(t, res.Diagnostics, "the return repeating the receiver's own reference was refused")
	require.True(t, res.Candidate.Present)
	require.Contains(t, string(res.Candidate.Value), hooks.AttachmentRef("img"))
}

// TestAttachmentSameRefForTwoParts: one receiver can hold one reference for
// two attachment parts: the same owner given for two part ids shares one
// confirmed upload (one Key), and a content-addressed receiver returns one
// reference for equal bytes. The backend repeats its own references for
// both parts in a merge, which the SDK must accept (it repeats established
// attachments): each repeat maps to the canonical reference of its own part.
func TestAttachmentSameRefForTwoParts(t *testing.T) {
	up := newUploadReceivers(t, "first")
	repeat := func(req *gen.InterceptRequest) []gen.Effect {
		var ps []gen.ContentItem
		for _, m := range req.Params.Event.TurnStart.Items {
			for _, p := range m.Parts {
				if p.AttachmentBodyPart != nil {
					ps = append(ps, p)
				}
			}
		}
		return []gen.Effect{{ModifyMessages: &gen.ModifyMessagesEffect{Target: gen.ModifyMessagesEffectTargetPrompt, Operation: gen.EffectOperationMerge,
			Value: gen.CanonicalMessages{{ID: "again", Role: gen.CanonicalMessageRoleUser, Parts: ps}}}}}
	}
	first := &recorder{effects: repeat}
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.first": first}, registration(
		backendJSON("com.example.first", httpTransport("http://127.0.0.1:1/x"), uploadSub("intercept", `{"default":"body"}`, up.endpoint("first")))))
	prompt := []gen.ModelVisibleItem{{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{
		{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "img"}},
		{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "img2"}},
	}}}
	var opens atomic.Int32
	img := countingImage(t, &opens)
	res, err := h.TurnStart(context.Background(), turnStart(prompt), hooks.WithAttachment("img", img), hooks.WithAttachment("img2", img))
	require.NoError(t, err)
	defer res.Close()
	require.Len(t, first.intercept, 1)
	require.Empty(t, res.Diagnostics, "the backend's repeat of its own references was refused")
	require.Len(t, res.Accepted, 1)
}

// TestDeliverAttachmentPlaceholder: Deliver takes a canonical event
// document, in which a body-selected attachment part must carry a
// reference. A part given with WithAttachment may carry its own
// placeholder, AttachmentRef(partID) (what a Result's event holds): the
// bytes are uploaded and the receiver gets the reference its endpoint
// allocated, never the placeholder. Another part's placeholder stays
// refused.
func TestDeliverAttachmentPlaceholder(t *testing.T) {
	up := newUploadReceivers(t, "first")
	first := &recorder{}
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.first": first}, registration(
		backendJSON("com.example.first", httpTransport("http://127.0.0.1:1/x"), uploadSub("intercept", `{"default":"body"}`, up.endpoint("first")))))
	doc := func(ref string) []byte {
		return []byte(`{"id":"evt-deliver-att","source":"urn:test:harness","time":"2026-09-15T12:00:00Z","type":"turn.start","turn":{"id":"turn-1"},"trigger":"user",` +
			`"items":[{"id":"m1","role":"user","parts":[{"id":"t","kind":"text","mediaType":"text/plain","selection":"body","text":"look"},` +
			`{"id":"img","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"` + ref + `"}}]}]}`)
	}
	var opens atomic.Int32
	res, err := h.Deliver(context.Background(), doc(hooks.AttachmentRef("img")), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.NoError(t, err)
	defer res.Close()
	require.Empty(t, res.Diagnostics)
	require.Len(t, first.intercept, 1)
	p := imagePart(t, first.intercept[0].Params.Event.TurnStart.Items)
	require.NotNil(t, p.AttachmentBodyPart)
	require.Equal(t, imageBytes, up.bytesOf(t, "first", p.AttachmentBodyPart.Body.Ref))
	require.Equal(t, int32(1), opens.Load())

	_, err = h.Deliver(context.Background(), doc(hooks.AttachmentRef("other")), hooks.WithAttachment("img", countingImage(t, &opens)))
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	require.Len(t, first.intercept, 1, "another part's placeholder reached the backend")
}
