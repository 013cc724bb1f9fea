package transport_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// firstReadBody signals arrived on its first Read: by then the transport
// has chosen the buffer it reads the response into.
type firstReadBody struct {
	io.ReadCloser
	once    sync.Once
	arrived func()
}

func (b *firstReadBody) Read(p []byte) (int, error) {
	b.once.Do(b.arrived)
	return b.ReadCloser.Read(p)
}

// bodyWatch is a RoundTripper that wraps every response body in a
// firstReadBody.
type bodyWatch struct {
	rt      http.RoundTripper
	arrived func()
}

func (w bodyWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &firstReadBody{ReadCloser: resp.Body, arrived: w.arrived}
	}
	return resp, err
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestHTTPMemoryFollowsReceivedBytes: a backend that declares a response
// just under MaxResponseBytes and sends nothing costs the harness memory for
// the bytes it sent, not for the length it declared. Every exchange is
// blocked reading its response body (the barrier is the body's first Read)
// when the heap is measured.
func TestHTTPMemoryFollowsReceivedBytes(t *testing.T) {
	const exchanges = 100
	declared := int64(transport.DefaultMaxResponseBytes - 1)

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(declared, 10))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select { // then stall: the body never comes
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()

	var reading sync.WaitGroup
	reading.Add(exchanges)
	rt := http.DefaultTransport.(*http.Transport).Clone()
	defer rt.CloseIdleConnections()
	client := &http.Client{Transport: bodyWatch{rt: rt, arrived: reading.Done}}
	h := transport.NewHTTP(srv.URL, transport.HTTPOptions{Client: client})
	defer h.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := heapInUse()
	errs := make(chan error, exchanges)
	var wg sync.WaitGroup
	for range exchanges {
		wg.Go(func() {
			_, err := h.Exchange(ctx, req("big"))
			errs <- err
		})
	}
	reading.Wait()
	after := heapInUse()
	close(release)
	wg.Wait()
	close(errs)

	growth := int64(after) - int64(before)
	t.Logf("heap for %d stalled responses declaring %d bytes: %d KiB (%d KiB each)", exchanges, declared, growth>>10, growth/exchanges>>10)
	require.Less(t, growth, exchanges*declared/32, "heap grows with the bytes received, not with Content-Length")
	for err := range errs {
		requireFail(t, err, transport.CodeTransport, transport.StageReceive, "read")
	}
}
