package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

// benchBody is the intercept request fixture, exactly as vendored.
func benchBody(b *testing.B) []byte {
	return readFixture(b, "http/intercept-request.valid.json")
}

func serveOnce(b *testing.B, h http.Handler, body []byte) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d", rec.Code)
	}
	return rec
}

// BenchmarkServeHTTPIntercept is the full dispatch of the intercept request
// fixture: read, classify, pre-checks, canonical validation and typed
// decode, snapshot of the grants, callback (a deny), admission (grants,
// encode, two schema validations) and write.
func BenchmarkServeHTTPIntercept(b *testing.B) {
	body := benchBody(b)
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("blocked")}}, nil
	}}
	serveOnce(b, h, body) // compiles the schemas once per process, outside the timing
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		serveOnce(b, h, body)
	}
}

// BenchmarkBaselineUnmarshal is the raw baseline: the same request through
// an http.Handler that only json.Unmarshals the body into a map and writes
// a constant response.
func BenchmarkBaselineUnmarshal(b *testing.B) {
	body := benchBody(b)
	resp := []byte(`{"jsonrpc":"2.0","id":"evt_http_001","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"blocked"}]}}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(resp)
	})
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		serveOnce(b, h, body)
	}
}

// The stages of the dispatch, to show where the time goes.

func BenchmarkStageClassify(b *testing.B) {
	body := benchBody(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.Classify(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStageValidateRequest(b *testing.B) {
	body := benchBody(b)
	v := validate.Default()
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate("intercept-request.schema.json", body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageParseRequest is validation plus the lossless typed decode.
func BenchmarkStageParseRequest(b *testing.B) {
	body := benchBody(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gen.ParseInterceptRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageSnapshot is the detached decode of event and capabilities
// that admission uses.
func BenchmarkStageSnapshot(b *testing.B) {
	body := benchBody(b)
	env, err := jsonrpc.Classify(body)
	if err != nil {
		b.Fatal(err)
	}
	ev, _ := jsonrpc.Member(env.Params, "event")
	caps, _ := jsonrpc.Member(env.Params, "capabilities")
	b.ReportAllocs()
	for b.Loop() {
		var e gen.Event
		var c gen.Capabilities
		if err := json.Unmarshal(ev, &e); err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(caps, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageAdmit is admission of a one-deny answer: grants, encoding
// and validation against intercept-response.schema.json and the tool.before
// response definition.
func BenchmarkStageAdmit(b *testing.B) {
	req, err := gen.ParseInterceptRequest(benchBody(b))
	if err != nil {
		b.Fatal(err)
	}
	res := server.InterceptResult{Effects: []gen.Effect{server.Deny("blocked")}}
	b.ReportAllocs()
	for b.Loop() {
		if err := server.Admit(req, res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServeHTTPInvalidLarge is the full dispatch of an invalid
// request of about 4 MB (a tool input of 250k members and a tool kind of
// the wrong type, answered -32602), beside the validation it went through
// before (gen.ParseInterceptRequest: the fast path, then v6 to explain the
// failure) and after (gen.ParseInterceptRequestContext: the linear path
// alone), and the baselines of the same request made valid, dispatched and
// answered without effects, and of json.Valid on its bytes.
func BenchmarkServeHTTPInvalidLarge(b *testing.B) {
	valid := withInput(b, hostile.Object(250000))
	invalid := bytes.Replace(valid, []byte(`"kind":"file_write"`), []byte(`"kind":7`), 1)
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	serveOnce(b, h, benchBody(b)) // compiles the schemas once per process, outside the timing
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"ServeHTTP", func() error { serveOnce(b, h, invalid); return nil }},
		{"before=ParseInterceptRequest", func() error { _, err := gen.ParseInterceptRequest(invalid); return wantInvalid(err) }},
		{"after=ParseInterceptRequestContext", func() error {
			_, err := gen.ParseInterceptRequestContext(ctx, invalid)
			return wantInvalid(err)
		}},
		{"baseline=ServeHTTP-valid", func() error { serveOnce(b, h, valid); return nil }},
		{"baseline=json.Valid", func() error {
			if !json.Valid(invalid) {
				return errors.New("not JSON")
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(invalid)))
			for b.Loop() {
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// wantInvalid maps the expected validation failure to nil.
func wantInvalid(err error) error {
	if errors.Is(err, gen.ErrInvalid) {
		return nil
	}
	return fmt.Errorf("want a validation failure, got %v", err)
}
