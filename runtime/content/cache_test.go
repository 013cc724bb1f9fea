package content_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/stretchr/testify/require"
)

func TestUploadAllReadsEachOwnerOnce(t *testing.T) {
	servers := []*receiver{{}, {}, {}}
	var jobs []content.Job
	g := newGated([]byte("one materialization for all"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	b := attach(t, []byte("another owner"))
	for i, rv := range servers {
		srv := newServer(t, rv)
		for sub := range 4 {
			d := dest(fmt.Sprintf("%s/b%d/s%d", srv.URL, i, sub))
			d.BackendID, d.SubscriptionIndex = fmt.Sprintf("b%d", i), sub
			jobs = append(jobs, content.Job{Attachment: a, Destination: d}, content.Job{Attachment: b, Destination: d})
		}
	}
	jobs = append(jobs, jobs[0]) // a repeated key shares its outcome
	u := newUploader(t, content.UploaderConfig{MaxConcurrentUploads: 3})
	var cache content.Cache
	done := make(chan []content.Outcome)
	go func() { done <- u.UploadAll(context.Background(), &cache, jobs) }()
	<-g.opened
	close(g.release)
	out := <-done
	require.Len(t, out, len(jobs))
	refs := map[string]bool{}
	for i, o := range out[:len(out)-1] {
		require.NoError(t, o.Err, i)
		require.False(t, o.Cached)
		require.False(t, refs[o.Confirmation.Reference.Ref+jobs[i].Destination.Upload.Endpoint], "one upload per key")
		refs[o.Confirmation.Reference.Ref+jobs[i].Destination.Upload.Endpoint] = true
	}
	require.Equal(t, out[0], out[len(out)-1])
	require.Equal(t, int32(1), g.opens.Load(), "the lazy owner is read once for 12 uploads")
	var hits, peak int32
	for _, rv := range servers {
		hits += rv.hits.Load()
		peak = max(peak, rv.peak.Load())
		for _, r := range rv.requests() {
			require.Contains(t, []string{"one materialization for all", "another owner"}, string(r.body))
		}
	}
	require.Equal(t, int32(24), hits)
	require.LessOrEqual(t, peak, int32(3))
	require.Equal(t, 24, cache.Len())
	require.Zero(t, u.Limiter().InUse())

	// Everything is confirmed already: nothing is sent again.
	again := u.UploadAll(context.Background(), &cache, jobs)
	for i, o := range again {
		require.NoError(t, o.Err)
		require.True(t, o.Cached)
		require.Equal(t, out[i].Confirmation, o.Confirmation)
	}
	c, ok := cache.Lookup(jobs[0].Key())
	require.True(t, ok)
	require.Equal(t, out[0].Confirmation, c)
	hits = 0
	for _, rv := range servers {
		hits += rv.hits.Load()
	}
	require.Equal(t, int32(24), hits)
	require.NoError(t, a.Close())
	require.Equal(t, int32(1), g.cleans.Load())
}

func TestUploadAllPeakConcurrency(t *testing.T) {
	// Each request is held until the limit is reached: the peak is the
	// limit exactly, never more.
	const limit = 2
	rv := &receiver{hold: make(chan struct{})}
	srv := newServer(t, rv)
	var jobs []content.Job
	a := attach(t, []byte("x"))
	for i := range 6 {
		d := dest(srv.URL)
		d.SubscriptionIndex = i
		jobs = append(jobs, content.Job{Attachment: a, Destination: d})
	}
	u := newUploader(t, content.UploaderConfig{MaxConcurrentUploads: limit})
	done := make(chan []content.Outcome)
	go func() { done <- u.UploadAll(context.Background(), nil, jobs) }()
	require.Eventually(t, func() bool { return rv.cur.Load() == limit }, 5*time.Second, time.Millisecond)
	close(rv.hold)
	for _, o := range <-done {
		require.NoError(t, o.Err)
	}
	require.Equal(t, int32(limit), rv.peak.Load())
}

func TestUploadAllFailuresStayWithTheirDestination(t *testing.T) {
	ok := newServer(t, &receiver{})
	accepted := newServer(t, &receiver{answer: func(w http.ResponseWriter, _ *http.Request, _ []byte, _ string) bool {
		w.WriteHeader(http.StatusAccepted)
		return true
	}})
	a := attach(t, []byte("abc"))
	jobs := []content.Job{{Attachment: a, Destination: dest(accepted.URL)}, {Attachment: a, Destination: dest(ok.URL)}}
	jobs[1].Destination.SubscriptionIndex = 1
	var cache content.Cache
	out := newUploader(t, content.UploaderConfig{}).UploadAll(context.Background(), &cache, jobs)
	require.ErrorIs(t, out[0].Err, content.ErrStatus)
	require.NoError(t, out[1].Err)
	_, hit := cache.Lookup(jobs[0].Key())
	require.False(t, hit, "only confirmed uploads are cached")
	_, hit = cache.Lookup(jobs[1].Key())
	require.True(t, hit)
}

func TestUploadAllCancellationJoins(t *testing.T) {
	rv := &receiver{hold: make(chan struct{})}
	defer close(rv.hold)
	srv := newServer(t, rv)
	l := newFileLoader(t, []byte(strings.Repeat("f", 10000)))
	a, err := content.Lazy("application/octet-stream", l.open, l.cleanup)
	require.NoError(t, err)
	var jobs []content.Job
	for i := range 5 {
		d := dest(srv.URL)
		d.SubscriptionIndex = i
		jobs = append(jobs, content.Job{Attachment: a, Destination: d})
	}
	u := newUploader(t, content.UploaderConfig{MaxConcurrentUploads: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []content.Outcome)
	go func() { done <- u.UploadAll(ctx, nil, jobs) }()
	require.Eventually(t, func() bool { return rv.cur.Load() == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	out := <-done
	for _, o := range out {
		require.ErrorIs(t, o.Err, context.Canceled)
	}
	require.Zero(t, u.Limiter().InUse())
	require.Equal(t, int32(2), rv.hits.Load(), "jobs not started are not sent after cancellation")
	require.NoError(t, a.Close())
	l.requireReleased(t)
	u.CloseIdleConnections()
}

func TestUploadAllCancelledWhileMaterializing(t *testing.T) {
	srv := newServer(t, &receiver{})
	g := newGated([]byte("never released"))
	a, err := content.Lazy("image/png", g.open, g.cleanup)
	require.NoError(t, err)
	jobs := []content.Job{{Attachment: a, Destination: dest(srv.URL)}, {Attachment: a, Destination: dest(srv.URL + "/2")}}
	jobs[1].Destination.SubscriptionIndex = 1
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []content.Outcome)
	go func() { done <- newUploader(t, content.UploaderConfig{}).UploadAll(ctx, nil, jobs) }()
	<-g.opened
	waitReaders(t, a, 2)
	cancel()
	for _, o := range <-done {
		require.ErrorIs(t, o.Err, context.Canceled)
	}
	require.True(t, g.loadEnded(), "materialization still running after UploadAll returned")
	require.Equal(t, int32(1), g.closes.Load())
	require.NoError(t, a.Close())
	require.Equal(t, int32(1), g.cleans.Load())
}

func TestCacheReusesOnlyTheSameDestination(t *testing.T) {
	first, second := &receiver{}, &receiver{}
	srvA, srvB := newServer(t, first), newServer(t, second)
	a := attach(t, []byte("abc"))
	p := &recorder{token: "upload-token"}
	u := newUploader(t, content.UploaderConfig{Credentials: p})
	withAuth := func(d content.Destination, auth *gen.Authentication) content.Destination {
		d.Upload.Auth = auth
		return d
	}
	refX, refY := "vault://x", "vault://y"
	bearerRef := func(ref *string) *gen.Authentication {
		return &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenRef: ref}}
	}
	var cache content.Cache
	base := content.Job{Attachment: a, Destination: withAuth(dest(srvA.URL+"/u"), bearerRef(&refX))}
	out := u.UploadAll(context.Background(), &cache, []content.Job{base})
	require.NoError(t, out[0].Err)
	require.Equal(t, 1, cache.Len())

	// The same attachment, backend and subscription index, under another
	// destination: never the cached reference.
	cases := []struct {
		name string
		d    content.Destination
		rv   *receiver
	}{
		{"another endpoint", withAuth(dest(srvB.URL+"/u"), bearerRef(&refX)), second},
		{"another path of the same origin", withAuth(dest(srvA.URL+"/v"), bearerRef(&refX)), first},
		{"another query", withAuth(dest(srvA.URL+"/u?scope=2"), bearerRef(&refX)), first},
		{"another secret", withAuth(dest(srvA.URL+"/u"), bearerRef(&refY)), first},
		{"another binding kind", withAuth(dest(srvA.URL+"/u"), bearerEnv("UPLOAD_TOKEN")), first},
		{"no binding", dest(srvA.URL + "/u"), first},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.rv.hits.Load()
			out := u.UploadAll(context.Background(), &cache, []content.Job{{Attachment: a, Destination: c.d}})
			require.NoError(t, out[0].Err)
			require.False(t, out[0].Cached, "a reference confirmed for another destination was reused")
			require.Equal(t, before+1, c.rv.hits.Load())
		})
	}
	// The original destination still hits.
	again := u.UploadAll(context.Background(), &cache, []content.Job{base})
	require.True(t, again[0].Cached)
	require.Equal(t, out[0].Confirmation, again[0].Confirmation)
}

func TestUploadAllDuplicatesShareOnlyTheSameDestination(t *testing.T) {
	first, second := &receiver{}, &receiver{}
	srvA, srvB := newServer(t, first), newServer(t, second)
	a := attach(t, []byte("abc"))
	jobs := []content.Job{{Attachment: a, Destination: dest(srvA.URL)}, {Attachment: a, Destination: dest(srvB.URL)}, {Attachment: a, Destination: dest(srvA.URL)}}
	out := newUploader(t, content.UploaderConfig{}).UploadAll(context.Background(), nil, jobs)
	for _, o := range out {
		require.NoError(t, o.Err)
	}
	require.Equal(t, int32(1), first.hits.Load())
	require.Equal(t, int32(1), second.hits.Load(), "a job to another endpoint took the first job's outcome")
	require.Equal(t, out[0], out[2])
}

func TestCacheBelongsToOneUploader(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	a := attach(t, []byte("abc"))
	jobs := []content.Job{{Attachment: a, Destination: dest(srv.URL)}}
	var cache content.Cache
	require.NoError(t, newUploader(t, content.UploaderConfig{}).UploadAll(context.Background(), &cache, jobs)[0].Err)
	// Another uploader (another credential provider) neither reads nor fills it.
	other := newUploader(t, content.UploaderConfig{Credentials: &recorder{}})
	out := other.UploadAll(context.Background(), &cache, jobs)
	require.NoError(t, out[0].Err)
	require.False(t, out[0].Cached)
	require.Equal(t, int32(2), rv.hits.Load())
	require.Equal(t, 1, cache.Len())
}

func TestUploadAllInvalidBindingIsNeverCached(t *testing.T) {
	rv := &receiver{}
	srv := newServer(t, rv)
	a := attach(t, []byte("abc"))
	env := "UPLOAD_TOKEN"
	u := newUploader(t, content.UploaderConfig{Credentials: &recorder{token: "t"}})
	good := dest(srv.URL)
	good.Upload.Auth = bearerEnv(env)
	var cache content.Cache
	require.NoError(t, u.UploadAll(context.Background(), &cache, []content.Job{{Attachment: a, Destination: good}})[0].Err)
	// Both arms set: its encoding would name only the bearer arm.
	both := dest(srv.URL)
	both.Upload.Auth = &gen.Authentication{Bearer: good.Upload.Auth.Bearer, Oauth: &gen.AuthenticationOauth{}}
	none := dest(srv.URL)
	none.Upload.Auth = &gen.Authentication{}
	out := u.UploadAll(context.Background(), &cache, []content.Job{{Attachment: a, Destination: both}, {Attachment: a, Destination: none}})
	for _, o := range out {
		require.False(t, o.Cached)
		require.ErrorIs(t, o.Err, content.ErrInvalid)
	}
	require.Equal(t, int32(1), rv.hits.Load())
}
