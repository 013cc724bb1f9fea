package roundtrip_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// The captured request is what a server.Handler accepts, and the call the
// programs make succeeds against one.
func TestRequestAndCall(t *testing.T) {
	ctx := context.Background()
	body, err := roundtrip.Request(ctx)
	require.NoError(t, err)
	var req struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	require.Equal(t, "evt-bench", req.ID)
	require.Equal(t, "hooks/intercept", req.Method)

	var seen int
	srv := httptest.NewServer(&server.Handler{Intercept: func(_ context.Context, r *gen.InterceptRequest) (server.InterceptResult, error) {
		seen++
		return server.InterceptResult{}, nil
	}})
	defer srv.Close()
	h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
	require.NoError(t, err)
	defer h.Close()
	require.NoError(t, roundtrip.Call(ctx, h))
	require.Equal(t, 1, seen)
}
