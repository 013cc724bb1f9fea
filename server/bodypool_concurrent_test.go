package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestPooledBodiesConcurrentObservers: notifications that an Observe
// callback hands to another goroutine (which the callback's contract
// allows), the records a Logger keeps, and their error values stay intact
// while concurrent requests over a real server reuse the pooled buffers the
// notifications were read into. Every value is checked only after all
// requests have been answered.
func TestPooledBodiesConcurrentObservers(t *testing.T) {
	observe := string(compact(t, readFixture(t, "http/observe-tool-before.valid.json")))
	const id = `"evt_observe_before_001"`
	const path = `"README.md"`
	require.Contains(t, observe, id)
	require.Contains(t, observe, path)

	logs := &logRecorder{}
	kept := make(chan *gen.ObserveNotification, 4096)
	h := &server.Handler{
		Observe: func(_ context.Context, n *gen.ObserveNotification) error {
			kept <- n // read later, by the test, after the server moved on
			if strings.HasSuffix(n.Params.Event.ID(), "_fail") {
				return fmt.Errorf("observer failed for %s", n.Params.Event.ID())
			}
			return nil
		},
		Logger: slog.New(logs),
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Bodies of many sizes below 16 KiB, with short (chunked), long and
	// escaped strings, so that later bodies land in earlier buffers.
	var bodies []string
	want := map[string]string{}
	for i := range 300 {
		evt := fmt.Sprintf("evt_%d_%s", i, strings.Repeat("y", (i*37)%200))
		if i%5 == 0 {
			evt += "_fail"
		}
		p := fmt.Sprintf(`"p%d\u00e9\n%s"`, i, strings.Repeat("z", (i*13)%90))
		msg := strings.Replace(strings.Replace(observe, id, `"`+evt+`"`, 1), path, p, 1)
		n, err := gen.ParseObserveNotification([]byte(msg))
		require.NoError(t, err, msg)
		enc, err := gen.EncodeObserveNotification(n)
		require.NoError(t, err)
		want[evt] = string(enc)
		bodies = append(bodies, msg)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(bodies))
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(bodies); i += 4 {
				resp, err := http.Post(srv.URL, "application/json", bytes.NewReader([]byte(bodies[i])))
				if err != nil {
					errs <- err
					continue
				}
				_ = resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	close(kept)
	got := 0
	for n := range kept {
		enc, err := gen.EncodeObserveNotification(n)
		require.NoError(t, err)
		require.Equal(t, want[n.Params.Event.ID()], string(enc))
		got++
	}
	require.Equal(t, len(bodies), got)
	failed := 0
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, r := range logs.records {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				failed++
				require.Regexp(t, `^observer failed for evt_\d+_y*_fail$`, a.Value.String())
			}
			return true
		})
	}
	require.Equal(t, len(bodies)/5, failed)
}
