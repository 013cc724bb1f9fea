package transport_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// notification is a hooks/observe message.
func notification() transport.Message {
	return transport.Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}
}

// TestInProcessEndedContextRunsNoHandler: a message whose context has
// already ended fails with that end and never reaches the handler, whether
// the context was cancelled or its deadline passed.
func TestInProcessEndedContextRunsNoHandler(t *testing.T) {
	var ran atomic.Int32
	tr := transport.NewInProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}), transport.InProcessOptions{})
	defer tr.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	cases := []struct {
		name   string
		ctx    context.Context
		code   transport.Code
		reason string
	}{
		{name: "cancelled", ctx: cancelled, code: transport.CodeCancelled, reason: "cancelled"},
		{name: "deadline", ctx: expired, code: transport.CodeDeadlineExceeded, reason: "deadline"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tr.Notify(tc.ctx, notification())
			requireFail(t, err, tc.code, transport.StageSend, tc.reason)
			require.ErrorIs(t, err, tc.ctx.Err())
			_, err = tr.Exchange(tc.ctx, req("1"))
			requireFail(t, err, tc.code, transport.StageSend, tc.reason)
			require.Zero(t, ran.Load(), "the handler never ran")
		})
	}
}

// TestInProcessJoinsItsHandler: a message returns only once its handler
// has, also when its context ends first ("MUST NOT leave detached observer
// deliveries running", base/composition.md): the handler sees its request
// context end, and the message fails with that end after the handler
// returned, whatever it answered.
func TestInProcessJoinsItsHandler(t *testing.T) {
	for _, method := range []string{"notify", "exchange"} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				entered, sawEnd, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
				var exited atomic.Bool
				tr := transport.NewInProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					close(entered)
					<-r.Context().Done()
					close(sawEnd)
					<-release // cleanup the handler does after giving up
					exited.Store(true)
					w.WriteHeader(http.StatusNoContent)
				}), transport.InProcessOptions{})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					var err error
					if method == "notify" {
						err = tr.Notify(ctx, notification())
					} else {
						_, err = tr.Exchange(ctx, req("1"))
					}
					done <- err
				}()
				<-entered
				cancel()
				<-sawEnd
				synctest.Wait() // everything is blocked: the handler on release
				select {
				case err := <-done:
					close(release) // let the handler end before the test does
					t.Fatalf("the message returned (%v) while its handler was still running", err)
				default:
				}
				close(release)
				err := <-done
				require.True(t, exited.Load())
				requireFail(t, err, transport.CodeCancelled, transport.StageReceive, "cancelled")
				require.ErrorIs(t, err, context.Canceled)
				require.NoError(t, tr.Close())
			})
		})
	}
}
