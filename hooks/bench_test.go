package hooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

const benchResponse = `{"jsonrpc":"2.0","id":"evt-bench","result":{"protocolVersion":"draft","effects":[]}}`

func benchRequest(b *testing.B) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"evt-bench","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"},"capabilities":{"effects":["deny","allow"]},"state":{"permission":"none","candidate":null}}}`)
}

func benchHooks(b *testing.B, transport string) *hooks.Hooks {
	reg := registration(backendJSON("com.example.bench", transport, interceptSub(`"tool.before"`, 5000, "fail-closed")))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = h.Close() })
	return h
}

func benchCall(b *testing.B, h *hooks.Hooks) {
	ctx := context.Background()
	in := toolInput()
	in.ID = "evt-bench"
	// Warm up outside the timing: schema compilation and, for stdio, the
	// child's start happen once per process or transport.
	if _, err := h.ToolBefore(ctx, in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := h.ToolBefore(ctx, in)
		if err != nil || res.Permission != gen.PermissionNone || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkToolBeforeHTTP: the SDK end to end against a loopback backend
// built on package server (which validates canonically too).
func BenchmarkToolBeforeHTTP(b *testing.B) {
	srv := httptest.NewServer(&server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}})
	defer srv.Close()
	benchCall(b, benchHooks(b, httpTransport(srv.URL)))
}

// BenchmarkToolBeforeHTTPRawBackend: the SDK end to end against the raw
// pre-encoded handler of the baseline (isolates the harness side).
func BenchmarkToolBeforeHTTPRawBackend(b *testing.B) {
	srv := httptest.NewServer(rawHandler())
	defer srv.Close()
	benchCall(b, benchHooks(b, httpTransport(srv.URL)))
}

func rawHandler() http.Handler {
	resp := []byte(benchResponse)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	})
}

// BenchmarkRawHTTP is the baseline: a raw net/http client posting the same
// pre-encoded request to a raw handler returning a pre-encoded response.
func BenchmarkRawHTTP(b *testing.B) {
	rawPost(b, rawHandler(), nil, nil)
}

// BenchmarkRawHTTPServerBackend: the baseline's raw client against the
// backend of BenchmarkToolBeforeHTTP (isolates the backend side).
func BenchmarkRawHTTPServerBackend(b *testing.B) {
	rawPost(b, &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}, nil, nil)
}

// rawPost posts a request to h with a raw net/http client: the
// pre-encoded request, or what encode returns each time when it is set;
// check, when set, reads each answer, which must otherwise not be empty.
func rawPost(b *testing.B, h http.Handler, encode func() []byte, check func([]byte)) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	body := benchRequest(b)
	post := func() {
		if encode != nil {
			body = encode()
		}
		resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case check != nil:
			check(data)
		case len(data) == 0:
			b.Fatal("empty")
		}
	}
	// Warm up outside the timing, as benchCall does: a server.Handler
	// compiles its schemas on first use.
	post()
	b.ReportAllocs()
	for b.Loop() {
		post()
	}
}

// BenchmarkToolBeforeStdio: the SDK over a persistent stdio child serving
// package server.
func BenchmarkToolBeforeStdio(b *testing.B) {
	benchCall(b, benchHooks(b, backendCmd(b, "none", "persistent")))
}

// BenchmarkToolBeforeStdioRawBackend: the SDK over a persistent child that
// answers every line with the pre-encoded response.
func BenchmarkToolBeforeStdioRawBackend(b *testing.B) {
	benchCall(b, benchHooks(b, backendCmd(b, "echo", "persistent")))
}

// benchChild starts the test binary as a backend in mode, without the
// SDK: the raw pipes of its stdin and stdout. It is reaped at the end of b.
func benchChild(b *testing.B, mode string) (io.Writer, *bufio.Reader) {
	exe, err := os.Executable()
	require.NoError(b, err)
	cmd := exec.Command(exe, "-ahp-backend", mode)
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	return stdin, bufio.NewReader(stdout)
}

// BenchmarkRawStdioEcho is the baseline: write the pre-encoded request line
// to a child over pipes and read its pre-encoded response line.
func BenchmarkRawStdioEcho(b *testing.B) {
	stdin, r := benchChild(b, "echo")
	line := append(benchRequest(b), '\n')
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// The pieces: canonical validation of the event and of the response, the
// two v6 validations the harness does per call.
func BenchmarkValidateEvent(b *testing.B) {
	ev := []byte(`{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`)
	v := validate.Default()
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate("tool-before.schema.json", ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseInterceptResponse(b *testing.B) {
	resp := []byte(benchResponse)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gen.ParseInterceptResponse(resp); err != nil {
			b.Fatal(err)
		}
	}
}

// cannedTransport answers every exchange with the same bytes, without I/O.
type cannedTransport struct{ answer []byte }

func (c cannedTransport) Exchange(context.Context, transport.Message) ([]byte, error) {
	return c.answer, nil
}
func (c cannedTransport) Notify(context.Context, transport.Message) error { return nil }
func (c cannedTransport) Close() error                                    { return nil }

// BenchmarkToolBeforeNoTransport is the harness's own work per call, with
// a transport that answers at once: build, encode and validate the event,
// settle, build the request, check and settle the answer, assemble the
// Result.
func BenchmarkToolBeforeNoTransport(b *testing.B) {
	reg := registration(backendJSON("com.example.bench", httpTransport("http://127.0.0.1:1"), interceptSub(`"tool.before"`, 5000, "fail-closed")))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
		Transports:   map[string]transport.Transport{"com.example.bench": cannedTransport{[]byte(benchResponse)}}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = h.Close() })
	benchCall(b, h)
}

// BenchmarkBaselineEncodeDecode is BenchmarkToolBeforeNoTransport's
// baseline: what a host without the SDK would at least do per call with
// encoding/json, encode the same request from a map and decode the answer
// into a map.
func BenchmarkBaselineEncodeDecode(b *testing.B) {
	var req map[string]any
	require.NoError(b, json.Unmarshal(benchRequest(b), &req))
	answer := []byte(benchResponse)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(req); err != nil {
			b.Fatal(err)
		}
		var resp map[string]any
		if err := json.Unmarshal(answer, &resp); err != nil {
			b.Fatal(err)
		}
	}
}

// The floors: what a host and a backend that skip everything the SDK adds
// (canonical validation, typed codecs, capability checks, settlement,
// diagnostics, deadlines) would at least do per call with encoding/json.
// The host encodes the request from a map and decodes the answer to a map;
// the backend decodes the request to a map and encodes an answer from one.
// They put the SDK's ratios in context: a ratio target below the floor's
// own ratio cannot be met by any implementation that does the minimum with
// encoding/json.

// floorAnswer is the floor backend's work on one request.
func floorAnswer(body []byte) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"protocolVersion": "draft", "effects": []any{}}})
}

// floorRequest is the floor host's work before sending: the request as a map.
func floorRequest(b *testing.B) map[string]any {
	var req map[string]any
	require.NoError(b, json.Unmarshal(benchRequest(b), &req))
	return req
}

// floorDecode is the floor host's work on the answer.
func floorDecode(b *testing.B, data []byte) {
	var resp map[string]any
	if err := json.Unmarshal(data, &resp); err != nil || resp["result"] == nil {
		b.Fatalf("%v %s", err, data)
	}
}

// BenchmarkFloorHTTP: the encoding/json floor on both sides over loopback
// HTTP (compare with BenchmarkRawHTTP and BenchmarkToolBeforeHTTP).
func BenchmarkFloorHTTP(b *testing.B) {
	floor := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			body, err = floorAnswer(body)
		}
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	req := floorRequest(b)
	rawPost(b, floor, func() []byte {
		body, err := json.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		return body
	}, func(data []byte) { floorDecode(b, data) })
}

// BenchmarkFloorStdio: the encoding/json floor on both sides over a
// persistent child's pipes (compare with BenchmarkRawStdioEcho and
// BenchmarkToolBeforeStdio).
func BenchmarkFloorStdio(b *testing.B) {
	stdin, r := benchChild(b, "json")
	req := floorRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		body, err := json.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write(append(body, '\n')); err != nil {
			b.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		floorDecode(b, line)
	}
}

// BenchmarkBaselineAfterIdle is BenchmarkBaselineEncodeDecode's work timed
// alone, once in a loop and once after each 1 ms of sleep (the core idle):
// the "work-ns/op" metrics show how much slower the same short work runs
// when the caches and predictors it relies on went cold, which is where
// every call of the end-to-end benchmarks runs.
func BenchmarkBaselineAfterIdle(b *testing.B) {
	var req map[string]any
	require.NoError(b, json.Unmarshal(benchRequest(b), &req))
	answer := []byte(benchResponse)
	work := func() {
		if _, err := json.Marshal(req); err != nil {
			b.Fatal(err)
		}
		var resp map[string]any
		if err := json.Unmarshal(answer, &resp); err != nil {
			b.Fatal(err)
		}
	}
	for _, idle := range []time.Duration{0, time.Millisecond} {
		b.Run("idle="+idle.String(), func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				if idle > 0 {
					time.Sleep(idle)
				}
				start := time.Now()
				work()
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "work-ns/op")
		})
	}
}

// BenchmarkToolBeforeChainNoTransport is BenchmarkToolBeforeNoTransport
// with two interceptors, the first merging into the tool input: the second
// request carries the modified event, encoded again.
func BenchmarkToolBeforeChainNoTransport(b *testing.B) {
	merged, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(gen.JSONRPCIDFromString("evt-bench")),
		Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{server.MergeInput(map[string]any{"by": "first"})}}})
	require.NoError(b, err)
	sub := interceptSub(`"tool.before"`, 5000, "fail-closed")
	reg := registration(backendJSON("com.example.first", httpTransport("http://127.0.0.1:1"), sub), backendJSON("com.example.second", httpTransport("http://127.0.0.1:1"), sub))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow().ModifyInput(hooks.Merge)},
		Transports: map[string]transport.Transport{
			"com.example.first":  cannedTransport{merged},
			"com.example.second": cannedTransport{[]byte(benchResponse)},
		}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = h.Close() })
	in := toolInput()
	in.ID = "evt-bench"
	res, err := h.ToolBefore(context.Background(), in)
	require.NoError(b, err)
	require.JSONEq(b, `{"path":"/etc/hosts","by":"first"}`, string(res.Event().ToolBefore.Tool.Input))
	benchCall(b, h)
}

// BenchmarkToolAfterObserveNoTransport is the harness's own work for an
// event that is only observed (tool.after, one observer), with a transport
// that accepts at once: build, encode and validate the event, the
// notification, the Result.
func BenchmarkToolAfterObserveNoTransport(b *testing.B) {
	reg := registration(backendJSON("com.example.bench", httpTransport("http://127.0.0.1:1"), observeSub(`"tool.after"`)))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolAfter: hooks.Observe()},
		Transports:   map[string]transport.Transport{"com.example.bench": cannedTransport{}}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = h.Close() })
	in := hooks.ToolAfterInput{ID: "evt-bench", Name: "read_file", Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative,
		CallID: "call-1", Path: "native", Items: []gen.ModelVisibleItem{}, Outcome: gen.ExecutionEventOutcomeOk, Execution: gen.ExecutionEventExecution{Executed: &gen.ExecutionEventExecutionExecuted{}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := h.ToolAfter(ctx, in)
		if err != nil || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
