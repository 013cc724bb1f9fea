package hooks_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// heldBodies keeps every request body its transports are given, with a copy
// of its bytes at the time, and reads each body from a goroutine of its own
// until release: as a transport may go on reading a body after Exchange
// returns (net/http's writer after an early response, a transport that
// logs asynchronously). Under -race, a write into a body after it was
// handed over is reported.
type heldBodies struct {
	mu     sync.Mutex
	ids    []string // the receiving backend of each body
	bodies [][]byte
	copies [][]byte
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newHeldBodies() *heldBodies { return &heldBodies{stop: make(chan struct{})} }

func (h *heldBodies) keep(id string, b []byte) {
	h.mu.Lock()
	h.ids = append(h.ids, id)
	h.bodies = append(h.bodies, b)
	h.copies = append(h.copies, bytes.Clone(b))
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			select {
			case <-h.stop:
				return
			default:
			}
			_ = crc32.ChecksumIEEE(b)
			runtime.Gosched()
		}
	}()
}

// release stops the readers and returns the bodies, their copies and
// their receivers, in the order they were handed over.
func (h *heldBodies) release() (bodies, copies [][]byte, ids []string) {
	close(h.stop)
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bodies, h.copies, h.ids
}

// heldTransport hands every message to next after held keeps its body.
type heldTransport struct {
	held *heldBodies
	next transport.Transport
}

func (t *heldTransport) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	t.held.keep(msg.BackendID, msg.Body)
	return t.next.Exchange(ctx, msg)
}

func (t *heldTransport) Notify(ctx context.Context, msg transport.Message) error {
	t.held.keep(msg.BackendID, msg.Body)
	return t.next.Notify(ctx, msg)
}

func (t *heldTransport) Close() error { return t.next.Close() }

// sameSlice reports whether a and b are the same bytes of memory.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// overlap reports whether a and b share a byte of memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// TestRequestBodiesOutliveTheCall: the request bodies a call hands to its
// transports are never written after they were handed over, while the call
// goes on (later deliveries, settlement, the result, observers) and after
// it returned, and no two deliveries share their memory; each body is the
// canonical encoding of the request it carries, with the event the
// receiver was due (the built one, or the one an earlier modification
// made).
func TestRequestBodiesOutliveTheCall(t *testing.T) {
	merge := func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{server.MergeInput(map[string]any{"by": "first"})}
	}
	for name, tc := range map[string]struct {
		first      func(*gen.InterceptRequest) []gen.Effect
		modifies   bool // the first modifies the event
		others     int  // interceptors besides the first
		observer   bool
		wantBodies int
	}{
		"one interceptor":               {wantBodies: 1},
		"two interceptors":              {others: 1, wantBodies: 2},
		"the first modifies":            {first: merge, modifies: true, others: 1, wantBodies: 2},
		"the first modifies, three":     {first: merge, modifies: true, others: 2, wantBodies: 3},
		"the first denies":              {first: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }, others: 1, wantBodies: 2}, // the other is owed an observation
		"two interceptors, an observer": {others: 1, observer: true, wantBodies: 3},
	} {
		t.Run(name, func(t *testing.T) {
			held := newHeldBodies()
			cfg := baseConfig()
			cfg.Transports = map[string]transport.Transport{}
			var backends []string
			add := func(id string, rec *recorder, sub string) {
				cfg.Transports[id] = &heldTransport{held: held, next: transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
				backends = append(backends, `{"id":"`+id+`","subscriptions":[`+sub+`]}`)
			}
			add("com.example.first", &recorder{effects: tc.first}, interceptSub(`"tool.before"`, 2000, "fail-closed"))
			for i := range tc.others {
				add(fmt.Sprintf("com.example.other%d", i), &recorder{}, interceptSub(`"tool.before"`, 2000, "fail-closed"))
			}
			if tc.observer {
				add("com.example.observer", &recorder{}, observeSub(`"tool.before"`))
			}
			h, err := hooks.New(registration(backends...), cfg)
			require.NoError(t, err)
			defer h.Close()

			res, err := h.ToolBefore(context.Background(), toolInput())
			require.NoError(t, err)
			effective, err := gen.EncodeEvent(res.Event())
			require.NoError(t, err)
			require.NoError(t, h.Close()) // observers delivered
			bodies, copies, ids := held.release()

			require.Len(t, bodies, tc.wantBodies)
			// Every receiver up to the first (included) gets the built event;
			// any after it the first's modification (the effective event).
			modified := false
			for i, b := range bodies {
				require.Equal(t, string(copies[i]), string(b), "body %d was written after it was handed over", i)
				for j := range i {
					if !sameSlice(bodies[j], b) { // one view's body goes to each of its observers
						require.False(t, overlap(bodies[j], b), "bodies %d and %d share memory", j, i)
					}
				}
				req, err := gen.ParseInterceptRequest(b)
				if err != nil {
					n, err := gen.ParseObserveNotification(b)
					require.NoError(t, err, "body %d", i)
					again, err := gen.EncodeObserveNotification(n)
					require.NoError(t, err)
					require.Equal(t, string(again), string(b), "body %d is not canonical", i)
					continue
				}
				again, err := gen.EncodeInterceptRequest(req)
				require.NoError(t, err)
				require.Equal(t, string(again), string(b), "body %d is not canonical", i)
				got := string(mustEncode(t, &req.Params.Event))
				if tc.modifies && !modified {
					require.NotEqual(t, string(effective), got, "body %d", i)
				} else {
					require.Equal(t, string(effective), got, "body %d", i)
				}
				modified = modified || ids[i] == "com.example.first"
			}
		})
	}
}

func mustEncode(t *testing.T, ev *gen.Event) []byte {
	t.Helper()
	b, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	return b
}

// TestHTTPRequestBodiesAreCanonical: over HTTP (net/http reads the body in
// its own goroutine and may close it after RoundTrip returns), each of two
// interceptors receives the canonical encoding of its request, the same
// event in both.
func TestHTTPRequestBodiesAreCanonical(t *testing.T) {
	var mu sync.Mutex
	var raw [][]byte
	serve := func() *httptest.Server {
		inner := (&recorder{}).handler()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "read", http.StatusBadRequest)
				return
			}
			mu.Lock()
			raw = append(raw, b)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
			inner.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	a, b := serve(), serve()
	h, err := hooks.New(registration(
		backendJSON("com.example.a", httpTransport(a.URL), interceptSub(`"tool.before"`, 2000, "fail-closed")),
		backendJSON("com.example.b", httpTransport(b.URL), interceptSub(`"tool.before"`, 2000, "fail-closed")),
	), baseConfig())
	require.NoError(t, err)
	defer h.Close()
	for range 3 {
		res, err := h.ToolBefore(context.Background(), toolInput())
		require.NoError(t, err)
		effective := mustEncode(t, res.Event())
		mu.Lock()
		got := raw
		raw = nil
		mu.Unlock()
		require.Len(t, got, 2)
		for _, body := range got {
			req, err := gen.ParseInterceptRequest(body)
			require.NoError(t, err)
			again, err := gen.EncodeInterceptRequest(req)
			require.NoError(t, err)
			require.Equal(t, string(again), string(body))
			require.Equal(t, string(effective), string(mustEncode(t, &req.Params.Event)))
		}
	}
}

// TestObservationBodiesOutliveTheCall: as TestRequestBodiesOutliveTheCall,
// for the notifications of an event that is only observed: the first view's
// body is built around the call's encoding of the event, later views' are
// buffers of their own, and none is written after it was handed over.
func TestObservationBodiesOutliveTheCall(t *testing.T) {
	held := newHeldBodies()
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{}
	var backends []string
	for _, b := range []struct{ id, sub string }{
		{"com.example.a", observeSub(`"tool.after"`)},
		{"com.example.b", observeSub(`"tool.after"`)}, // the same view as a
		{"com.example.native", `{"events":["tool.after"],"mode":"observe","content":{"default":"body"},"includeNative":true}`},
		{"com.example.metadata", `{"events":["tool.after"],"mode":"observe","content":{"default":"metadata"}}`},
	} {
		cfg.Transports[b.id] = &heldTransport{held: held, next: transport.NewInProcess((&recorder{}).handler(), transport.InProcessOptions{})}
		backends = append(backends, `{"id":"`+b.id+`","subscriptions":[`+b.sub+`]}`)
	}
	h, err := hooks.New(registration(backends...), cfg)
	require.NoError(t, err)
	defer h.Close()
	res, err := h.ToolAfter(context.Background(), hooks.ToolAfterInput{Name: "read_file", Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative,
		CallID: "call-1", Path: "native", Items: []gen.ModelVisibleItem{}, Outcome: gen.ExecutionEventOutcomeOk, Execution: gen.ExecutionEventExecution{Executed: &gen.ExecutionEventExecutionExecuted{}}})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	effective := mustEncode(t, res.Event())
	require.NoError(t, h.Close())
	bodies, copies, ids := held.release()
	require.Len(t, bodies, 4)
	byID := map[string][]byte{}
	for i, b := range bodies {
		require.Equal(t, string(copies[i]), string(b), "body %d was written after it was handed over", i)
		for j := range i {
			if !sameSlice(bodies[j], b) {
				require.False(t, overlap(bodies[j], b), "bodies %d and %d share memory", j, i)
			}
		}
		n, err := gen.ParseObserveNotification(b)
		require.NoError(t, err)
		again, err := gen.EncodeObserveNotification(n)
		require.NoError(t, err)
		require.Equal(t, string(again), string(b), "body %d is not canonical", i)
		require.Equal(t, string(effective), string(mustEncode(t, &n.Params.Event)), "body %d", i)
		byID[ids[i]] = b
	}
	require.True(t, sameSlice(byID["com.example.a"], byID["com.example.b"]), "one view, one body")
	require.False(t, overlap(byID["com.example.a"], byID["com.example.native"]))
}
