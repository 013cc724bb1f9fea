package server_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/server"
)

// faultyContext is a request context whose Done panics the first time it
// is called: it stands in for a bug in the first step of dispatching, the
// scan of the message (validate.Scan is the first to ask for Done, at its
// first look at the context, a thousand values into a message).
type faultyContext struct {
	context.Context
	calls int
}

func (c *faultyContext) Done() <-chan struct{} {
	c.calls++
	if c.calls == 1 {
		panic("fault in the scan")
	}
	return c.Context.Done()
}

// TestDispatchGuardCoversScan: a panic while the message is scanned is a
// dispatcher fault like any other: the harness gets a -32603 reply with id
// null over HTTP, instead of the panic escaping ServeHTTP (net/http then
// aborts the connection without a response; under ServeStdio it would end
// the backend process).
func TestDispatchGuardCoversScan(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	called := false
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		called = true
		return server.InterceptResult{}, nil
	}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(&faultyContext{Context: r.Context()}))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // net/http reports an escaped panic here
	srv.Start()
	defer srv.Close()

	msg := withInput(t, hostile.Object(2000)) // long enough for Scan to look at its context
	resp, err := srv.Client().Post(srv.URL, "application/json", bytes.NewReader(msg))
	require.NoError(t, err, "the reply must not be lost")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`, string(body))
	require.False(t, called)
	srv.Client().CloseIdleConnections()
}
