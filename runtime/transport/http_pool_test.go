package transport_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// TestHTTPPoolFitsConcurrentCallers: 64 concurrent callers of one HTTP
// backend, each making many calls through the transport's own client,
// reuse their connections: the server accepts about one connection per
// caller, not one per call beyond net/http's 2 idle ones (before the pool
// was sized, this run opened over a thousand). A smaller configured pool
// is used as given.
func TestHTTPPoolFitsConcurrentCallers(t *testing.T) {
	const callers, rounds = 64, 20
	tests := []struct {
		name    string
		maxIdle int
		atMost  int64
		atLeast int64
	}{
		{"default", 0, callers + callers/4, 1},
		{"configured 2", 2, callers * rounds, callers * 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var accepted atomic.Int64
			// Every round is a barrier: all callers have a request in the
			// server before any is answered, so the load is truly 64 wide.
			var mu sync.Mutex
			arrived := 0
			release := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				arrived++
				if arrived == callers {
					arrived = 0
					close(release)
				}
				gate := release
				mu.Unlock()
				<-gate
				w.Header().Set("Content-Type", "application/json")
				_, _ = fmt.Fprint(w, `{"jsonrpc":"2.0","id":"x","result":{}}`)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					accepted.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()

			tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{MaxIdleConnsPerHost: tc.maxIdle})
			defer func() { require.NoError(t, tr.Close()) }()
			msg := transport.Message{ID: jsonrpc.StringID("x"), Method: jsonrpc.MethodIntercept,
				Body: []byte(`{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{}}`)}
			for range rounds {
				mu.Lock()
				release = make(chan struct{})
				mu.Unlock()
				var wg sync.WaitGroup
				errs := make(chan error, callers)
				for range callers {
					wg.Go(func() {
						_, err := tr.Exchange(context.Background(), msg)
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
			}
			n := accepted.Load()
			t.Logf("%d callers x %d rounds: %d connections accepted", callers, rounds, n)
			require.LessOrEqual(t, n, tc.atMost)
			require.GreaterOrEqual(t, n, tc.atLeast)
		})
	}
}
