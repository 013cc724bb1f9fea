package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestNoEffectAnswer checks, on both bindings, the exact answer to an
// intercept request whose callback returns no effects, with and without
// extensions, and that the request id is echoed verbatim.
func TestNoEffectAnswer(t *testing.T) {
	// json.Marshal escapes < and >: the id text is "\u003cevt\u003e é".
	msg := mutate(t, interceptBase(t), func(m map[string]any) {
		m["id"] = "<evt> é"
		event(m)["id"] = "<evt> é"
	})
	idText := `"\u003cevt\u003e é"`
	require.Contains(t, string(msg), `"id":`+idText+`,`)

	cases := []struct {
		name string
		res  server.InterceptResult
		want string // the exact answer, or "" for backend_internal_error
	}{
		{"nil effects", server.InterceptResult{},
			`{"jsonrpc":"2.0","id":` + idText + `,"result":{"protocolVersion":"draft","effects":[]}}`},
		{"empty effects", server.InterceptResult{Effects: []gen.Effect{}},
			`{"jsonrpc":"2.0","id":` + idText + `,"result":{"protocolVersion":"draft","effects":[]}}`},
		{"extensions", server.InterceptResult{Extensions: json.RawMessage(`{"com.example.trace":{"id":"1"}}`)},
			`{"jsonrpc":"2.0","id":` + idText + `,"result":{"protocolVersion":"draft","effects":[],"extensions":{"com.example.trace":{"id":"1"}}}}`},
		{"invalid extensions", server.InterceptResult{Extensions: json.RawMessage(`{"not reverse dns":1}`)}, ""},
		{"empty extensions", server.InterceptResult{Extensions: json.RawMessage{}}, ""},
	}
	for _, tc := range cases {
		h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			return tc.res, nil
		}}
		for bname, ex := range bindings {
			t.Run(tc.name+"/"+bname, func(t *testing.T) {
				raw, _ := ex(t, h, msg)
				if tc.want != "" {
					require.Equal(t, tc.want, string(raw))
					return
				}
				r := decodeReply(t, raw)
				require.Equal(t, jsonrpc.CodeBackendInternalError, r.code(), "reply: %s", raw)
				require.Equal(t, idText, string(r.ID))
			})
		}
	}
}

// TestReplyHeaders checks the headers of an HTTP answer, also when the
// ResponseWriter already holds values for them: Content-Type is
// application/json alone, and the handler adds no other header (the
// caller's stay as they are).
func TestReplyHeaders(t *testing.T) {
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/plain")
	rec.Header().Add("Cache-Control", "no-cache")
	rec.Header().Set("X-Other", "kept")
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(interceptBase(t)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, http.Header{
		"Content-Type":  {"application/json"},
		"Cache-Control": {"no-cache"},
		"X-Other":       {"kept"},
	}, rec.Result().Header)

	// Appending to the value leaves a later reply's alone.
	hdr := http.Header{}
	w := &headerWriter{ResponseWriter: httptest.NewRecorder(), hdr: hdr}
	req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(interceptBase(t)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, req)
	hdr.Add("Content-Type", "x")
	require.Equal(t, []string{"application/json", "x"}, hdr.Values("Content-Type"))
	hdr2 := http.Header{}
	w = &headerWriter{ResponseWriter: httptest.NewRecorder(), hdr: hdr2}
	req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(interceptBase(t)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, req)
	require.Equal(t, http.Header{"Content-Type": {"application/json"}}, hdr2)
}

// headerWriter is a ResponseWriter whose header map the test keeps.
type headerWriter struct {
	http.ResponseWriter
	hdr http.Header
}

func (w *headerWriter) Header() http.Header { return w.hdr }
