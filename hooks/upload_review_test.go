package hooks_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestRemovedAttachmentUploadFailureIsNotCharged: the first interceptor
// replaces the prompt with a text-only message, removing the attachment;
// the second interceptor (fail-closed) selects the body and its upload
// failed. Its view no longer refers to the attachment, so the failed
// upload affects no delivery of it (content-upload.md: upload failures
// remain associated with the affected delivery): it is delivered, and no
// synthetic denial comes of an upload nothing refers to. An observer
// whose upload failed likewise gets its notification without a gap.
func TestRemovedAttachmentUploadFailureIsNotCharged(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	up := newUploadReceivers(t, "first")
	remove := func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{{ModifyMessages: &gen.ModifyMessagesEffect{Target: gen.ModifyMessagesEffectTargetPrompt, Operation: gen.EffectOperationReplace,
			Value: gen.CanonicalMessages{{ID: "only", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "t2", Text: "no image"}}}}}}}}
	}
	first, second, obs := &recorder{effects: remove}, &recorder{}, &recorder{}
	cfg := uploadConfig()
	cfg.Capabilities = map[gen.EventName]hooks.Grant{gen.EventTurnStart: hooks.Intercept().Deny().ModifyPrompt(hooks.Merge, hooks.Replace)}
	broken := `"upload":{"endpoint":"` + up.srv.URL + `/upload/broken","timeoutMs":10000,"maxBytes":1048576}`
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.first": first, "com.example.second": second, "com.example.obs": obs}, registration(
		backendJSON("com.example.first", u, uploadSub("intercept", `{"default":"body"}`, up.endpoint("first"))),
		backendJSON("com.example.second", u, uploadSub("intercept", `{"default":"body"}`, broken)),
		backendJSON("com.example.obs", u, uploadSub("observe", `{"default":"body"}`, broken))))
	img := newOwnedImage(t)
	res, err := h.TurnStart(context.Background(), turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
	require.NoError(t, err)
	require.Len(t, res.Accepted, 2)
	require.Len(t, res.Accepted[0].Effects, 1, "the replacement is accepted")
	require.False(t, res.SyntheticDenial, "no failure policy acts on an upload the effective event does not refer to")
	require.Equal(t, gen.PermissionNone, res.Permission)
	in, _ := second.counts()
	require.Equal(t, 1, in, "the second interceptor is delivered")
	require.Len(t, second.intercept[0].Params.Event.TurnStart.Items, 1)
	_, observed := obs.counts()
	require.Equal(t, 1, observed)
	require.Empty(t, res.Diagnostics)
	require.NoError(t, res.Close())
	require.NoError(t, h.Close())
	up.srv.Close()
	goleak.VerifyNone(t, ignore)
}

// TestObserverUploadsYieldPermitsToInterceptors: with one upload permit,
// observers whose uploads stall (held by their receivers for longer than
// the call's budget) never hold the permit the interceptor's upload
// needs: observation uploads are best effort, never an execution gate
// (content-upload.md). The interceptor is delivered with its confirmed
// reference and the call is not interrupted; each observation is cut by
// ObserveTimeout while it waits for its own upload. Several rounds, since
// which group asks first is up to the scheduler.
func TestObserverUploadsYieldPermitsToInterceptors(t *testing.T) {
	for _, limit := range []int{1, 2} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) { observerUploadsYield(t, limit) })
	}
}

func observerUploadsYield(t *testing.T, limit int) {
	ignore := goleak.IgnoreCurrent()
	up := newUploadReceivers(t, "icpt")
	held := newHeldUploads()
	recI := &recorder{}
	recs := map[string]*recorder{"com.example.i": recI}
	backends := []string{backendJSON("com.example.i", httpTransport("http://127.0.0.1:1/x"), subJSON("intercept", "fail-closed", "body", up.endpoint("icpt")))}
	for _, id := range []string{"o1", "o2", "o3"} {
		recs["com.example."+id] = &recorder{}
		backends = append(backends, backendJSON("com.example."+id, httpTransport("http://127.0.0.1:1/x"), subJSON("observe", "", "body", held.upload("/"+id, 60000))))
	}
	cfg := uploadConfig()
	cfg.MaxConcurrentUploads = limit
	cfg.ObserveTimeout = 100 * time.Millisecond
	h := inproc(t, cfg, recs, registration(backends...))
	for round := range 5 {
		img := newOwnedImage(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := h.TurnStart(ctx, turnStart(imagePrompt()), hooks.WithAttachment("img", img.a))
		cancel()
		require.NoError(t, err, "round %d", round)
		require.False(t, res.Interrupted, "round %d", round)
		require.False(t, res.SyntheticDenial, "round %d", round)
		require.Len(t, res.Diagnostics, 3, "round %d: the three observations, cut waiting for their uploads", round)
		for _, d := range res.Diagnostics {
			require.Equal(t, gen.ModeObserve, d.Mode)
		}
		require.NoError(t, res.Close())
	}
	in, _ := recI.counts()
	require.Equal(t, 5, in)
	require.NoError(t, h.Close())
	held.srv.Close()
	up.srv.Close()
	goleak.VerifyNone(t, ignore)
}
