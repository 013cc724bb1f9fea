package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// invalidBodies returns the intercept request fixture (compact) and two
// small invalid variants of it: an event time that is not a date-time, and
// an event without its required "source".
func invalidBodies(tb testing.TB) (valid, badTime, missing []byte) {
	var doc map[string]any
	require.NoError(tb, json.Unmarshal(readFixture(tb, "http/intercept-request.valid.json"), &doc))
	enc := func(mut func(ev map[string]any)) []byte {
		var c map[string]any
		raw, _ := json.Marshal(doc)
		require.NoError(tb, json.Unmarshal(raw, &c))
		if mut != nil {
			mut(c["params"].(map[string]any)["event"].(map[string]any))
		}
		out, err := json.Marshal(c)
		require.NoError(tb, err)
		return out
	}
	return enc(nil), enc(func(ev map[string]any) { ev["time"] = "yesterday" }), enc(func(ev map[string]any) { delete(ev, "source") })
}

// BenchmarkServeHTTPInvalid compares ServeHTTP rejecting a small invalid
// request with accepting the valid fixture request (the baseline, in the
// same run): without a Logger, rejection takes the validator's verdict
// alone; with one that shows Debug records ("-logged"), the validator also
// locates the violation, in a second pass over the request.
func BenchmarkServeHTTPInvalid(b *testing.B) {
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	logged := *h
	logged.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	valid, badTime, missing := invalidBodies(b)
	for _, c := range []struct {
		name string
		h    *server.Handler
		body []byte
	}{{"valid", h, valid}, {"bad-time", h, badTime}, {"missing-source", h, missing}, {"bad-time-logged", &logged, badTime}} {
		h := c.h
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(c.body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code == 0 {
					b.Fatal("no answer")
				}
			}
		})
	}
}

// TestServeHTTPInvalidAnswered checks what the benchmark measures: both
// invalid requests get an error answer, the valid one a result.
func TestServeHTTPInvalidAnswered(t *testing.T) {
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	valid, badTime, missing := invalidBodies(t)
	for _, c := range []struct {
		body    []byte
		isError bool
	}{{valid, false}, {badTime, true}, {missing, true}} {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, c.isError, bytes.Contains(w.Body.Bytes(), []byte(`"error"`)), w.Body.String())
	}
}
