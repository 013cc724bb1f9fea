package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestRequestBuffersReused: what a request hands on (the decoded request
// a callback keeps, the records a Logger keeps) stays intact while later
// requests of the same and other sizes are read into the buffers its body
// was read into.
func TestRequestBuffersReused(t *testing.T) {
	logs := &logRecorder{}
	var kept []*gen.InterceptRequest
	h := &server.Handler{
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			kept = append(kept, req)
			return server.InterceptResult{}, nil
		},
		Logger: slog.New(logs),
	}
	base := string(interceptBase(t))
	const id = `"evt_http_001"`
	require.Contains(t, base, id)
	var want []string
	var bodies [][]byte
	for i := range 40 {
		evt := fmt.Sprintf(`"evt_%d_%s"`, i, strings.Repeat("x", i*7))
		msg := strings.ReplaceAll(base, id, evt)
		if i%3 == 2 {
			msg = strings.Replace(msg, `"kind":"file_write"`, `"kind":7`, 1) // rejected, logged
		}
		bodies = append(bodies, []byte(msg))
	}
	for _, body := range bodies {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		if n := len(kept); n > len(want) {
			b, err := gen.EncodeInterceptRequest(kept[n-1])
			require.NoError(t, err)
			want = append(want, string(b))
		}
	}
	require.Len(t, kept, 27)
	for i, req := range kept {
		b, err := gen.EncodeInterceptRequest(req)
		require.NoError(t, err)
		require.Equal(t, want[i], string(b), "kept request %d", i)
	}
	var ids []string
	logs.mu.Lock()
	for _, r := range logs.records {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "id" {
				ids = append(ids, a.Value.String())
			}
			return true
		})
	}
	logs.mu.Unlock()
	require.Len(t, ids, 13)
	for k, got := range ids {
		i := 3*k + 2
		require.Equal(t, fmt.Sprintf(`"evt_%d_%s"`, i, strings.Repeat("x", i*7)), got)
	}
}
