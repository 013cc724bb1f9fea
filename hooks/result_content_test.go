package hooks_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// ownedImage is a lazy attachment counting its opens and cleanups; the
// test does not close it: whoever owns it must.
type ownedImage struct {
	opens, cleanups atomic.Int32
	a               *content.Attachment
}

func newOwnedImage(t *testing.T) *ownedImage {
	o := &ownedImage{}
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		o.opens.Add(1)
		return io.NopCloser(bytes.NewReader(imageBytes)), nil
	}, func(context.Context) error {
		o.cleanups.Add(1)
		return nil
	})
	require.NoError(t, err)
	o.a = a
	return o
}

// TestResultOwnsAttachments: a successful Result owns the call's
// attachment, unread when no receiver selected its body; it stays readable
// after Hooks.Close, and Result.Close releases it exactly once.
func TestResultOwnsAttachments(t *testing.T) {
	meta := &recorder{}
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.meta": meta}, registration(
		backendJSON("com.example.meta", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"metadata"}`))))
	img := newOwnedImage(t)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Zero(t, img.opens.Load(), "a metadata receiver does not read the source")
	require.Zero(t, img.cleanups.Load(), "the Result owns the attachment")

	all := res.Attachments().All()
	require.Len(t, all, 1)
	require.Equal(t, "img", all[0].PartID)
	require.Equal(t, "ahp:attachment:img", all[0].Ref)
	require.Equal(t, hooks.AttachmentRef("img"), all[0].Ref)
	require.True(t, all[0].InEvent)
	require.Same(t, img.a, all[0].Attachment)

	// The reference in the effective event maps back to the attachment.
	ref := imagePart(t, res.Event().TurnStart.Items).AttachmentBodyPart.Body.Ref
	id, ok := hooks.AttachmentPartID(ref)
	require.True(t, ok)
	require.Equal(t, "img", id)

	require.NoError(t, h.Close())
	snap, err := res.Attachments().Read(context.Background(), "img")
	require.NoError(t, err, "readable after Hooks.Close")
	require.Equal(t, imageBytes, snap.Bytes())
	require.Equal(t, int32(1), img.opens.Load())
	_, err = res.Attachments().Read(context.Background(), "other")
	require.ErrorIs(t, err, hooks.ErrNoAttachment)

	require.NoError(t, res.Close())
	require.NoError(t, res.Close())
	require.NoError(t, res.Attachments().Close())
	require.Equal(t, int32(1), img.cleanups.Load(), "closed exactly once")
	_, err = res.Attachments().Read(context.Background(), "img")
	require.ErrorIs(t, err, content.ErrClosed)
	p, ok := res.Attachments().Lookup("img")
	require.True(t, ok, "still described after Close")
	require.Equal(t, "img", p.PartID)
}

// TestResultCloseUnopened: closing a Result runs the cleanup of a lazy
// source that was never opened.
func TestResultCloseUnopened(t *testing.T) {
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.omit": {}}, registration(
		backendJSON("com.example.omit", httpTransport("http://127.0.0.1:1/x"), observeContent(`{"default":"omit"}`))))
	img := newOwnedImage(t)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.NoError(t, res.Close())
	require.Zero(t, img.opens.Load())
	require.Equal(t, int32(1), img.cleanups.Load())
}

// TestResultWithoutAttachments: a Result of a call given no attachment
// holds none, and its Close does nothing.
func TestResultWithoutAttachments(t *testing.T) {
	h := inproc(t, uploadConfig(), map[string]*recorder{"com.example.a": {}}, registration(
		backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"body"}`))))
	res, err := h.TurnStart(context.Background(), turnStart(secretItems(t)))
	require.NoError(t, err)
	require.Nil(t, res.Attachments())
	require.Nil(t, res.Attachments().All())
	_, ok := res.Attachments().Lookup("img")
	require.False(t, ok)
	_, err = res.Attachments().Read(context.Background(), "img")
	require.ErrorIs(t, err, hooks.ErrNoAttachment)
	require.NoError(t, res.Close())
	var nilResult *hooks.Result
	require.NoError(t, nilResult.Close())
	for _, ref := range []string{"ahp:attachment:", "ref-1", "ahp:attachmentimg"} {
		_, ok := hooks.AttachmentPartID(ref)
		require.False(t, ok, ref)
	}
}

// blockingBackend is an in-process backend whose interception waits until
// its context ends, after telling started.
func blockingBackend(started chan<- struct{}) transport.Transport {
	return transport.NewInProcess(&server.Handler{Intercept: func(ctx context.Context, _ *gen.InterceptRequest) (server.InterceptResult, error) {
		close(started)
		<-ctx.Done()
		return server.InterceptResult{}, ctx.Err()
	}}, transport.InProcessOptions{})
}

// TestAttachmentsClosedOnError: a call that returns an error has closed
// the attachments it took over, exactly once, read or not: invalid input,
// a closed Hooks, a context ended before the call, and an interruption
// (cancellation and Close) in the middle of the chain, whose interrupted
// Result holds them closed.
func TestAttachmentsClosedOnError(t *testing.T) {
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"metadata"}`)))
	newHooks := func(t *testing.T, tr transport.Transport) *hooks.Hooks {
		cfg := uploadConfig()
		cfg.Transports = map[string]transport.Transport{"com.example.a": tr}
		h, err := hooks.New(reg, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	// Two attachment parts: "img" and "other".
	twoParts := func() []gen.ModelVisibleItem {
		items := imagePrompt()
		items[0].Parts = append(items[0].Parts, gen.ContentItem{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "other"}})
		return items
	}
	idle := func() transport.Transport {
		return transport.NewInProcess(answerHandler(false), transport.InProcessOptions{})
	}
	for name, tc := range map[string]struct {
		run         func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error)
		want        error
		interrupted bool // the call returns an interrupted Result
	}{
		"invalid input": {want: hooks.ErrInvalidInput, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			return newHooks(t, idle()).TurnStart(context.Background(), turnStart(secretItems(t)), opts...) // no part "img"
		}},
		"undeclared event": {want: hooks.ErrInvalidInput, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			return newHooks(t, idle()).ContextCompactBefore(context.Background(), hooks.ContextCompactBeforeInput{}, opts...)
		}},
		"closed": {want: hooks.ErrClosed, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			h := newHooks(t, idle())
			require.NoError(t, h.Close())
			return h.TurnStart(context.Background(), turnStart(twoParts()), opts...)
		}},
		"context ended before": {want: context.Canceled, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return newHooks(t, idle()).TurnStart(ctx, turnStart(twoParts()), opts...)
		}},
		"cancelled in the chain": {want: context.Canceled, interrupted: true, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			started := make(chan struct{})
			h := newHooks(t, blockingBackend(started))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-started
				cancel()
			}()
			return h.TurnStart(ctx, turnStart(twoParts()), opts...)
		}},
		"Close in the chain": {want: hooks.ErrClosed, interrupted: true, run: func(t *testing.T, opts ...hooks.CallOption) (*hooks.Result, error) {
			started := make(chan struct{})
			h := newHooks(t, blockingBackend(started))
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-started
				_ = h.Close()
			}()
			defer wg.Wait()
			return h.TurnStart(context.Background(), turnStart(twoParts()), opts...)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			img, other := newOwnedImage(t), newOwnedImage(t)
			res, err := tc.run(t, hooks.WithAttachment("img", img.a), hooks.WithAttachment("other", other.a))
			require.ErrorIs(t, err, tc.want)
			for _, o := range []*ownedImage{img, other} {
				require.Equal(t, int32(1), o.cleanups.Load(), "the call closed it")
				_, serr := o.a.Snapshot(context.Background())
				require.ErrorIs(t, serr, content.ErrClosed)
			}
			require.Equal(t, tc.interrupted, res != nil)
			if res != nil {
				require.True(t, res.Interrupted)
				_, rerr := res.Attachments().Read(context.Background(), "img")
				require.ErrorIs(t, rerr, content.ErrClosed)
				require.NoError(t, res.Close())
			}
			require.Equal(t, int32(1), img.cleanups.Load(), "never twice")
		})
	}
}

// TestAttachmentRemovedByEdit: an accepted replace that drops the
// attachment part leaves it out of the effective event, and out of the
// later receivers' views; the Result still holds it (InEvent false) and
// closes it once.
func TestAttachmentRemovedByEdit(t *testing.T) {
	up := newUploadReceivers(t, "first", "second")
	replace := func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{{ModifyMessages: &gen.ModifyMessagesEffect{Target: gen.ModifyMessagesEffectTargetPrompt, Operation: gen.EffectOperationReplace,
			Value: gen.CanonicalMessages{{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "t", Text: "text only"}}}}}}}}
	}
	first, second := &recorder{effects: replace}, &recorder{}
	cfg := uploadConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().Deny().ModifyPrompt(hooks.Replace, hooks.Merge)
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.first": first, "com.example.second": second}, registration(
		backendJSON("com.example.first", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("first"))),
		backendJSON("com.example.second", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("second")))))
	img := newOwnedImage(t)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, res.Accepted, 2)
	require.Len(t, res.Accepted[0].Effects, 1)

	// Both uploads were prepared before the chain (content-upload.md: an
	// upload can commit even if an earlier interceptor removes the
	// attachment), but the second receiver's view no longer has it.
	require.Equal(t, 1, up.storage["second"].Len())
	for _, m := range second.intercept[0].Params.Event.TurnStart.Items {
		for _, p := range m.Parts {
			require.Nil(t, p.AttachmentBodyPart)
		}
	}
	enc, err := gen.EncodeEvent(res.Event())
	require.NoError(t, err)
	require.NotContains(t, string(enc), "ahp:attachment:")

	p, ok := res.Attachments().Lookup("img")
	require.True(t, ok)
	require.False(t, p.InEvent)
	require.Zero(t, img.cleanups.Load())
	require.NoError(t, res.Close())
	require.Equal(t, int32(1), img.cleanups.Load())
}

// capturingTransport records every message body delivered through it.
type capturingTransport struct {
	transport.Transport
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capturingTransport) record(m transport.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, bytes.Clone(m.Body))
}

func (c *capturingTransport) Exchange(ctx context.Context, m transport.Message) ([]byte, error) {
	c.record(m)
	return c.Transport.Exchange(ctx, m)
}

func (c *capturingTransport) Notify(ctx context.Context, m transport.Message) error {
	c.record(m)
	return c.Transport.Notify(ctx, m)
}

// preparedEvents is a Preparer that records the events it is given.
type preparedEvents struct {
	mu     sync.Mutex
	events [][]byte
}

func (p *preparedEvents) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	b, err := gen.EncodeEvent(d.Event)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.events = append(p.events, b)
	p.mu.Unlock()
	return d.Event, nil
}

// TestAttachmentRefNeverDelivered: the harness's own reference
// (ahp:attachment:...) reaches no backend and no Preparer, whatever the
// selection (body with and without an upload endpoint, metadata, omit),
// the mode (interception, observation, owed observation) or the slot (an
// injection in the request state that repeats the attachment); the
// Result has it in every place the attachment is, each mapping back.
func TestAttachmentRefNeverDelivered(t *testing.T) {
	up := newUploadReceivers(t, "inject", "body", "owed", "observer")
	inject := func(req *gen.InterceptRequest) []gen.Effect {
		p := imagePart(nil, req.Params.Event.TurnStart.Items)
		return []gen.Effect{{Inject: &gen.InjectEffect{Type: "inject", Target: "context", DeliverAt: gen.DeliverAtNow,
			Value: gen.CanonicalMessages{{ID: "ctx", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{p}}}}}}
	}
	deny := func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }
	recs := map[string]*recorder{
		"com.example.inject": {effects: inject}, "com.example.meta": {}, "com.example.noupload": {},
		"com.example.body": {effects: deny}, "com.example.owed": {}, "com.example.omit": {}, "com.example.observer": {},
	}
	cfg := uploadConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().Deny().ModifyPrompt(hooks.Merge).Inject(gen.DeliverAtNow)
	prep := &preparedEvents{}
	cfg.Preparer = prep
	cfg.Transports = map[string]transport.Transport{}
	caps := map[string]*capturingTransport{}
	for id, r := range recs {
		caps[id] = &capturingTransport{Transport: transport.NewInProcess(r.handler(), transport.InProcessOptions{})}
		cfg.Transports[id] = caps[id]
	}
	u := httpTransport("http://127.0.0.1:1/x")
	h, err := hooks.New(registration(
		backendJSON("com.example.inject", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("inject"))),
		backendJSON("com.example.meta", u, uploadSub("intercept", `{"default":"metadata"}`, up.endpoint("inject"))),
		backendJSON("com.example.noupload", u, uploadSub("intercept", `{"default":"body"}`, "")),
		backendJSON("com.example.body", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("body"))),
		backendJSON("com.example.owed", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("owed"))),
		backendJSON("com.example.omit", u, uploadSub("observe", `{"default":"omit"}`, "")),
		backendJSON("com.example.observer", u, uploadSub("observe", `{"default":"body"}`, up.endpoint("observer")))), cfg)
	require.NoError(t, err)
	defer h.Close()
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", newOwnedImage(t).a))
	require.NoError(t, err)
	defer res.Close()
	require.Empty(t, res.Diagnostics)
	require.Equal(t, gen.PermissionDeny, res.Permission)

	delivered := 0
	for id, c := range caps {
		for _, b := range c.bodies {
			delivered++
			require.NotContains(t, string(b), "ahp:attachment", id)
		}
	}
	require.Equal(t, 7, delivered, "four interceptions, one owed observation, two observations")
	require.Len(t, prep.events, 7)
	for _, b := range prep.events {
		require.NotContains(t, string(b), "ahp:attachment")
	}
	// The later interceptors got the injection with their own reference
	// (or its metadata view) in the request state.
	state := recs["com.example.body"].intercept[0].Params.State
	require.Len(t, state.Injections, 1)
	ref := state.Injections[0].Value[0].Parts[0].AttachmentBodyPart.Body.Ref
	require.Equal(t, imageBytes, up.bytesOf(t, "body", ref))

	// The Result: the harness's reference in the event, the injection and
	// the accepted effect.
	require.Len(t, res.Injections, 1)
	for _, r := range []string{
		imagePart(t, res.Event().TurnStart.Items).AttachmentBodyPart.Body.Ref,
		res.Injections[0].Value[0].Parts[0].AttachmentBodyPart.Body.Ref,
		res.Accepted[0].Effects[0].Inject.Value[0].Parts[0].AttachmentBodyPart.Body.Ref,
	} {
		id, ok := hooks.AttachmentPartID(r)
		require.True(t, ok, r)
		require.Equal(t, "img", id)
	}
	snap, err := res.Attachments().Read(context.Background(), "img")
	require.NoError(t, err)
	require.Equal(t, imageBytes, snap.Bytes())
}
