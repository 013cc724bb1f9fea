package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// hotpathRequest is a compact tool.before intercept request whose backend
// answers without effects: the most common request of a guard backend.
const hotpathRequest = `{"jsonrpc":"2.0","id":"evt-bench","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"},"capabilities":{"effects":["deny","allow"]},"state":{"permission":"none","candidate":null}}}`

// hotpathResponse is the no-effect answer to hotpathRequest.
const hotpathResponse = `{"jsonrpc":"2.0","id":"evt-bench","result":{"protocolVersion":"draft","effects":[]}}`

// noEffectHandler answers every intercept request without effects.
func noEffectHandler() *server.Handler {
	return &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
}

// serveHotpath serves one hotpathRequest over HTTP and checks the answer.
func serveHotpath(b *testing.B, h http.Handler, body []byte) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != hotpathResponse {
		b.Fatalf("status %d, body %q", rec.Code, rec.Body.String())
	}
}

// BenchmarkHotpathHTTP compares the full dispatch of a no-effect intercept
// request through Handler.ServeHTTP with a baseline http.Handler that only
// drains the body and writes the pre-encoded answer. The difference is what
// the Handler costs per request.
func BenchmarkHotpathHTTP(b *testing.B) {
	body := []byte(hotpathRequest)
	resp := []byte(hotpathResponse)
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"Handler", noEffectHandler()},
		{"Baseline", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(resp)
		})},
	}
	for _, hc := range handlers {
		b.Run(hc.name, func(b *testing.B) {
			serveHotpath(b, hc.h, body) // compiles the schemas outside the timing
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				serveHotpath(b, hc.h, body)
			}
		})
	}
}
