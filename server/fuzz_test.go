package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// fuzzHandler answers with effects picked from the event id, so that the
// fuzzer reaches both admitted and rejected responses.
func fuzzHandler(maxBody int64) *server.Handler {
	return &server.Handler{
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(req.Params.Event.ID()))
			switch h.Sum32() % 6 {
			case 0:
				return server.InterceptResult{}, nil
			case 1:
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("fuzz")}}, nil
			case 2:
				return server.InterceptResult{Effects: []gen.Effect{server.Allow(), server.Message("m")}}, nil
			case 3:
				return server.InterceptResult{Effects: []gen.Effect{server.ReplaceInput(map[string]int{"n": 1})}}, nil
			case 4:
				return server.InterceptResult{Effects: []gen.Effect{server.StopFlow("")}}, nil
			default:
				panic("fuzz panic")
			}
		},
		Observe:      func(context.Context, *gen.ObserveNotification) error { return nil },
		Manifest:     testManifest(nil),
		MaxBodyBytes: maxBody,
	}
}

// fuzzSeeds returns every fixture message plus a few malformed inputs.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{
		nil, []byte("{"), []byte("[]"), []byte(`{"jsonrpc":"2.0","id":1,"method":"hooks/intercept","params":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{"protocolVersion":"1900-01-01"}}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"type":"turn.end"}}}`),
		[]byte("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\"}"),
	}
	for _, name := range []string{
		"http/intercept-request.valid.json", "http/observe-tool-before.valid.json",
		"http/capabilities-request.valid.json", "http/intercept-request-id-mismatch.invalid.json",
		"http/model-response-intercept-supplied-stop.valid.json", "http/observe-with-id.invalid.json",
		"http/tool-before-continue-capability.invalid.json", "http/catalogue-user.elicitation.result.valid.json",
	} {
		data := readFixture(f, name)
		seeds = append(seeds, data, compactOrSelf(data))
	}
	// Thousands of members and elements, deep nesting and repeated names,
	// as tool input and as an unknown member of the event.
	base := string(compactOrSelf(readFixture(f, "http/intercept-request.valid.json")))
	for _, v := range hostile.Values() {
		seeds = append(seeds,
			[]byte(strings.Replace(base, `"input":{"path":"README.md","content":"example"}`, `"input":`+v, 1)),
			[]byte(strings.Replace(base, `"path":"example"`, `"path":"example","x":`+v, 1)))
	}
	return seeds
}

func compactOrSelf(data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

// heapAllocBytes returns the cumulative bytes allocated on the heap.
func heapAllocBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// allocBudget bounds what one message may allocate: a fixed part for the
// compiled-schema validation of a request and its response plus a generous
// multiple of the input size (JSON decoded to generic values for the
// validator, the typed decode, the copy for admission). The point is that
// the bound is finite and linear in an input the limit already bounds.
func allocBudget(n int) uint64 { return 8<<20 + 400*uint64(n) }

// FuzzServeHTTPBody drives the HTTP body path: classification, validation,
// callbacks, admission and encoding. It checks that nothing panics, that
// every answer is a status the binding allows with a well-formed body, and
// that allocation stays within a linear bound of the (limited) input.
func FuzzServeHTTPBody(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	const limit = 64 << 10
	h := fuzzHandler(limit)
	f.Fuzz(func(t *testing.T, body []byte) {
		before := heapAllocBytes()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		used := heapAllocBytes() - before

		n := min(len(body), limit+1)
		if used > allocBudget(n) {
			t.Fatalf("allocated %d bytes for a %d-byte body", used, len(body))
		}
		switch rec.Code {
		case http.StatusOK:
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			checkFuzzReply(t, rec.Body.Bytes())
			if len(body) <= limit && hostile.HasDuplicate(body) {
				// A repeated member name anywhere is an invalid request.
				env, _ := jsonrpc.Classify(rec.Body.Bytes())
				if e, err := env.DecodeError(); err != nil || e.Code != jsonrpc.CodeInvalidRequest {
					t.Fatalf("a request with a repeated member name was answered %s", rec.Body.Bytes())
				}
			}
		case http.StatusNoContent, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusInternalServerError:
			if rec.Body.Len() != 0 {
				t.Fatalf("status %d with a body", rec.Code)
			}
			if rec.Code == http.StatusRequestEntityTooLarge && len(body) <= limit {
				t.Fatalf("413 for %d bytes", len(body))
			}
		default:
			t.Fatalf("unexpected status %d", rec.Code)
		}
	})
}

// checkFuzzReply checks one reply: a single compact JSON-RPC response whose
// error, if any, uses a code the dispatcher may send with its generic text.
func checkFuzzReply(t *testing.T, raw []byte) {
	t.Helper()
	if bytes.ContainsAny(raw, "\r\n") {
		t.Fatalf("reply spans lines")
	}
	env, err := jsonrpc.Classify(raw)
	if err != nil {
		t.Fatalf("reply is not JSON-RPC: %v", err)
	}
	switch env.Kind {
	case jsonrpc.KindResponse:
	case jsonrpc.KindErrorResponse:
		e, err := env.DecodeError()
		if err != nil {
			t.Fatal(err)
		}
		switch e.Code {
		case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams,
			jsonrpc.CodeUnsupportedProtocolVersion, jsonrpc.CodeUnsupportedEvent, jsonrpc.CodeBackendInternalError:
		default:
			t.Fatalf("unexpected code %d", e.Code)
		}
		if e.Message != jsonrpc.CodeText(e.Code) || bytes.Contains(raw, []byte("fuzz panic")) {
			t.Fatalf("error text not generic: %s", raw)
		}
	default:
		t.Fatalf("reply kind %v", env.Kind)
	}
}

// FuzzServeStdio drives the stdio framer and dispatcher with arbitrary
// input: ServeStdio must return nil at the end of the input, write only
// well-formed frames, at most one per input line, and allocate within a
// linear bound.
func FuzzServeStdio(f *testing.F) {
	seeds := fuzzSeeds(f)
	f.Add(bytes.Join(seeds, []byte("\n")))
	for _, s := range seeds {
		f.Add(append(compactOrSelf(s), '\n'))
	}
	f.Add([]byte("\r\n\n{}\n[1]\n"))
	h := fuzzHandler(4 << 10)
	h.MaxConcurrency = 4
	f.Fuzz(func(t *testing.T, input []byte) {
		var out bytes.Buffer
		before := heapAllocBytes()
		err := server.ServeStdio(context.Background(), bytes.NewReader(input), &out, h)
		used := heapAllocBytes() - before
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		if used > allocBudget(len(input)) {
			t.Fatalf("allocated %d bytes for %d bytes of input", used, len(input))
		}
		data := out.Bytes()
		if len(data) == 0 {
			return
		}
		if data[len(data)-1] != '\n' {
			t.Fatal("output does not end with LF")
		}
		frames := bytes.Split(data[:len(data)-1], []byte("\n"))
		if max := bytes.Count(input, []byte("\n")) + 1; len(frames) > max {
			t.Fatalf("%d replies for %d lines", len(frames), max)
		}
		for _, fr := range frames {
			checkFuzzReply(t, fr)
		}
	})
}
