package hooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// largeMembers is the size of the large answers and inputs of these tests.
const largeMembers = 100000

// hostileResults are the results hostile backends answer with, by mode.
// A stdio backend started in one of these modes (see runBackend) answers
// every request with it.
var hostileResults = map[string]func() string{
	// The examples: read last-wins, both settle as allow.
	"dup-effects": func() string {
		return `{"protocolVersion":"draft","effects":[{"type":"deny","reason":"blocked"}],"effects":[{"type":"allow"}]}`
	},
	"dup-type": func() string { return `{"protocolVersion":"draft","effects":[{"type":"deny","type":"allow"}]}` },
	// An input replacement of largeMembers members.
	"large-input": func() string {
		return `{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace","value":` +
			hostile.Object(largeMembers) + `}]}`
	},
}

// answerTo is the answer with result to the request msg.
func answerTo(msg []byte, result string) ([]byte, error) {
	env, err := jsonrpc.Classify(msg)
	if err != nil {
		return nil, err
	}
	return []byte(`{"jsonrpc":"2.0","id":` + env.ID.String() + `,"result":` + result + `}`), nil
}

// serveHostile is a stdio backend that answers every request with result.
func serveHostile(result string) int {
	r := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return 0
		}
		out, err := answerTo(line, result)
		if err != nil {
			continue
		}
		if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
			return 1
		}
	}
}

// hostileHandler answers every request with result over HTTP.
func hostileHandler(result string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		out, err := answerTo(body, result)
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// hostileHooks builds a Hooks whose one tool.before interceptor answers
// with hostileResults[mode] over the named binding (http, stdio or
// in-process). With wrap, the Hooks borrows the binding's transport
// wrapped by wrap (closed when the test ends).
func hostileHooks(t *testing.T, binding, mode string, timeoutMs int, policy string, wrap func(transport.Transport) transport.Transport) *hooks.Hooks {
	t.Helper()
	const id = "com.example.hostile"
	result := hostileResults[mode]()
	cfg := baseConfig()
	tr := httpTransport("http://in-process.invalid/")
	var own transport.Transport
	switch binding {
	case "http":
		srv := httptest.NewServer(hostileHandler(result))
		t.Cleanup(srv.Close)
		tr = httpTransport(srv.URL)
		if wrap != nil {
			own = transport.NewHTTP(srv.URL, transport.HTTPOptions{BackendID: id})
		}
	case "stdio":
		tr = backendCmd(t, mode, "persistent")
		if wrap != nil {
			exe, err := os.Executable()
			require.NoError(t, err)
			own = transport.NewStdio(transport.StdioOptions{BackendID: id, Command: exe, Args: []string{"-ahp-backend", mode},
				Lifecycle: gen.StdioTransportLifecyclePersistent})
		}
	case "in-process":
		own = transport.NewInProcess(hostileHandler(result), transport.InProcessOptions{})
	}
	if own != nil {
		t.Cleanup(func() { require.NoError(t, own.Close()) })
		if wrap != nil {
			own = wrap(own)
		}
		cfg.Transports = map[string]transport.Transport{id: own}
	}
	h, err := hooks.New(registration(backendJSON(id, tr, interceptSub(`"tool.before"`, timeoutMs, policy))), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	return h
}

var bindings = []string{"http", "stdio", "in-process"}

// TestBackendDuplicateMembersRejected: an answer that repeats a member
// name, at the top of the result or inside an effect, is a protocol
// rejection under the failure policy, not read last-wins (which made both
// of these an allow).
func TestBackendDuplicateMembersRejected(t *testing.T) {
	for _, binding := range bindings {
		for _, mode := range []string{"dup-effects", "dup-type"} {
			t.Run(binding+"/"+mode, func(t *testing.T) {
				h := hostileHooks(t, binding, mode, 5000, "fail-open", nil)
				res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
				require.NoError(t, err)
				require.NotEqual(t, gen.PermissionAllow, res.Permission)
				require.Equal(t, gen.PermissionNone, res.Permission)
				require.Len(t, res.Diagnostics, 1)
				d := res.Diagnostics[0]
				require.Equal(t, transport.CodeProtocolRejection, d.Code)
				require.Equal(t, transport.StageReceive, d.Stage)
				// The stdio transport classifies each frame itself, so
				// there the frame is refused before the harness reads it.
				want := "invalid_envelope"
				if binding == "stdio" {
					want = "not_response"
				}
				require.Equal(t, want, d.Reason)
			})
		}
	}
}

// TestBackendLargeAnswer: an answer of a hundred thousand members is
// read and admitted (linear parsing) over every binding.
func TestBackendLargeAnswer(t *testing.T) {
	for _, binding := range bindings {
		t.Run(binding, func(t *testing.T) {
			h := hostileHooks(t, binding, "large-input", 60000, "fail-closed", nil)
			res, err := h.ToolBefore(ctxTimeout(t, 2*time.Minute), toolInput())
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			var in map[string]int
			require.NoError(t, res.DecodeInput(&in))
			require.Len(t, in, largeMembers)
			require.Equal(t, largeMembers-1, in[fmt.Sprintf("k%d", largeMembers-1)])
		})
	}
}

// atDeadline is a transport that completes the real exchange and hands
// its answer over only once the delivery's deadline has passed: an answer
// that arrives at the deadline.
type atDeadline struct{ transport.Transport }

func (a atDeadline) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	raw, err := a.Transport.Exchange(context.WithoutCancel(ctx), msg)
	<-ctx.Done()
	return raw, err
}

// TestBackendLargeAnswerAtDeadline: a large answer that arrives when the
// delivery's deadline has passed is not parsed; the call completes with a
// deadline diagnostic under the subscription's failure policy, and the
// caller's own deadline (longer) is not an error.
func TestBackendLargeAnswerAtDeadline(t *testing.T) {
	for _, binding := range bindings {
		t.Run(binding, func(t *testing.T) {
			h := hostileHooks(t, binding, "large-input", 1000, "fail-closed", func(tr transport.Transport) transport.Transport { return atDeadline{tr} })
			res, err := h.ToolBefore(ctxTimeout(t, 2*time.Minute), toolInput())
			require.NoError(t, err)
			require.Equal(t, gen.PermissionDeny, res.Permission)
			require.Len(t, res.Diagnostics, 1)
			d := res.Diagnostics[0]
			require.Equal(t, transport.CodeDeadlineExceeded, d.Code)
			require.True(t, d.SyntheticDenial)
			require.Equal(t, hooks.FailClosed, d.FailurePolicy)
			var in map[string]any
			require.NoError(t, res.DecodeInput(&in))
			require.Equal(t, map[string]any{"path": "/etc/hosts"}, in, "the late answer was not applied")
		})
	}
}

// TestHostInputLarge: a tool input of a hundred thousand members is
// validated, delivered and settled (linear parsing), over every binding.
func TestHostInputLarge(t *testing.T) {
	rec := &recorder{}
	for _, binding := range bindings {
		t.Run(binding, func(t *testing.T) {
			cfg := baseConfig()
			var tr string
			switch binding {
			case "http":
				srv := httptest.NewServer(rec.handler())
				t.Cleanup(srv.Close)
				tr = httpTransport(srv.URL)
			case "stdio":
				tr = backendCmd(t, "none", "persistent")
			case "in-process":
				tr = httpTransport("http://in-process.invalid/")
				cfg.Transports = map[string]transport.Transport{"com.example.big": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
			}
			h, err := hooks.New(registration(backendJSON("com.example.big", tr, interceptSub(`"tool.before"`, 60000, "fail-closed"))), cfg)
			require.NoError(t, err)
			defer func() { require.NoError(t, h.Close()) }()
			in := toolInput()
			in.Input = json.RawMessage(hostile.Object(largeMembers))
			res, err := h.ToolBefore(ctxTimeout(t, 2*time.Minute), in)
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			require.Equal(t, gen.PermissionNone, res.Permission)
		})
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.intercept, 2) // http and in-process; stdio is its own process
	for _, req := range rec.intercept {
		var got map[string]int
		require.NoError(t, json.Unmarshal(req.Params.Event.ToolBefore.Tool.Input, &got))
		require.Len(t, got, largeMembers)
	}
}

// TestHostInputDuplicateMembers: host input that repeats a member name,
// in the tool input (small or large, at the top or nested), native data or
// extensions, is invalid host input naming the pointer of the repeat; no
// backend is asked.
func TestHostInputDuplicateMembers(t *testing.T) {
	rec := &recorder{}
	cfg := baseConfig()
	cfg.Transports = map[string]transport.Transport{"com.example.a": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
	h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://in-process.invalid/"), interceptSub(`"tool.before"`, 1000, "fail-closed"))), cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Close()) }()
	for _, c := range []struct {
		name    string
		set     func(*hooks.ToolBeforeInput)
		pointer string
	}{
		{"input", func(in *hooks.ToolBeforeInput) { in.Input = json.RawMessage(`{"path":"/safe","path":"/etc/passwd"}`) }, "/tool/input/path"},
		{"nested input", func(in *hooks.ToolBeforeInput) { in.Input = json.RawMessage(`{"opts":{"a":1,"b":2,"a":3}}`) }, "/tool/input/opts/a"},
		{"large input", func(in *hooks.ToolBeforeInput) { in.Input = json.RawMessage(hostile.ObjectDup(largeMembers)) }, "/tool/input/k0"},
		{"native", func(in *hooks.ToolBeforeInput) { in.Native = json.RawMessage(`{"x":1,"x":2}`) }, "/native/x"},
		{"extensions", func(in *hooks.ToolBeforeInput) {
			in.Extensions = json.RawMessage(`{"com.example.a":{"v":1},"com.example.a":{"v":2}}`)
		}, "/extensions/com.example.a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := toolInput()
			c.set(&in)
			res, err := h.ToolBefore(ctxTimeout(t, time.Minute), in)
			require.Nil(t, res)
			require.ErrorIs(t, err, hooks.ErrInvalidInput)
			require.ErrorIs(t, err, validate.ErrDuplicateMember)
			var ve *hooks.ValidationError
			require.True(t, errors.As(err, &ve))
			require.Equal(t, "event", ve.Doc)
			require.Equal(t, c.pointer, ve.Pointer)
			require.Equal(t, validate.KeywordDuplicateMember, ve.Keyword)
			require.NotContains(t, err.Error(), "passwd")
		})
	}
	n, _ := rec.counts()
	require.Zero(t, n)
}

// BenchmarkToolBeforeLargeAnswer measures ToolBefore against an HTTP
// backend whose answer replaces the input with n members, under a 1 s
// timeoutMs and a 2 s caller deadline (the setting), beside the
// baseline of the same exchange answered without effects. A run that hits
// the deadline reports it as deadline/op.
func BenchmarkToolBeforeLargeAnswer(b *testing.B) {
	for _, n := range []int{10000, largeMembers} {
		result := `{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace","value":` + hostile.Object(n) + `}]}`
		for _, c := range []struct{ name, result string }{
			{fmt.Sprintf("members=%d", n), result},
			{fmt.Sprintf("members=%d/baseline-no-effects", n), `{"protocolVersion":"draft","effects":[]}`},
		} {
			b.Run(c.name, func(b *testing.B) {
				srv := httptest.NewServer(hostileHandler(c.result))
				defer srv.Close()
				h, err := hooks.New(registration(backendJSON("com.example.big", httpTransport(srv.URL), interceptSub(`"tool.before"`, 1000, "fail-closed"))), baseConfig())
				require.NoError(b, err)
				defer h.Close()
				late := 0
				b.ReportAllocs()
				for b.Loop() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					res, err := h.ToolBefore(ctx, toolInput())
					cancel()
					if err != nil || len(res.Diagnostics) > 0 {
						late++
					}
				}
				b.ReportMetric(float64(late)/float64(b.N), "deadline/op")
			})
		}
	}
}

// BenchmarkToolBeforeLargeInput measures ToolBefore with a host tool input
// of n members against an in-process backend without effects: ns/member
// should stay flat from 5k to 50k members.
func BenchmarkToolBeforeLargeInput(b *testing.B) {
	for _, n := range []int{5000, 50000} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			rec := &recorder{}
			cfg := baseConfig()
			cfg.Transports = map[string]transport.Transport{"com.example.a": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})}
			h, err := hooks.New(registration(backendJSON("com.example.a", httpTransport("http://in-process.invalid/"), interceptSub(`"tool.before"`, 60000, "fail-closed"))), cfg)
			require.NoError(b, err)
			defer h.Close()
			in := toolInput()
			in.Input = json.RawMessage(hostile.Object(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.ToolBefore(context.Background(), in); err != nil {
					b.Fatal(err)
				}
				rec.mu.Lock()
				rec.intercept = rec.intercept[:0]
				rec.mu.Unlock()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}

// nearDeadline is a transport that completes the real exchange and hands
// its answer over lead before the delivery's deadline: an answer that
// arrives just in time to be read, or not.
type nearDeadline struct {
	transport.Transport
	lead time.Duration
}

func (a nearDeadline) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	raw, err := a.Transport.Exchange(context.WithoutCancel(ctx), msg)
	if deadline, ok := ctx.Deadline(); ok {
		t := time.NewTimer(time.Until(deadline) - a.lead)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return raw, err
}

// BenchmarkToolBeforeLargeAnswerNearDeadline measures how long after the
// delivery's deadline ToolBefore returns when a valid 4 MiB answer (an
// input replacement of 250k members) arrives lead before it, beside the
// same answer arriving with time to spare (baseline: the full handling).
// late-ms/op is the mean time from the deadline to the return, max-late-ms
// the worst run; accepted/op the share of runs that read the answer in
// time (a late one is a deadline diagnostic).
func BenchmarkToolBeforeLargeAnswerNearDeadline(b *testing.B) {
	result := `{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace","value":` +
		hostile.Object(250000) + `}]}`
	const timeout = 400 * time.Millisecond
	for _, c := range []struct {
		name string
		lead time.Duration
	}{
		{"lead=390ms/baseline", 390 * time.Millisecond},
		{"lead=20ms", 20 * time.Millisecond},
		{"lead=5ms", 5 * time.Millisecond},
	} {
		b.Run(c.name, func(b *testing.B) {
			own := transport.NewInProcess(hostileHandler(result), transport.InProcessOptions{})
			defer own.Close()
			cfg := baseConfig()
			cfg.Transports = map[string]transport.Transport{"com.example.big": nearDeadline{own, c.lead}}
			h, err := hooks.New(registration(backendJSON("com.example.big", httpTransport("http://in-process.invalid/"),
				interceptSub(`"tool.before"`, int(timeout/time.Millisecond), "fail-closed"))), cfg)
			require.NoError(b, err)
			defer h.Close()
			var late, worst time.Duration
			accepted := 0
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				res, err := h.ToolBefore(context.Background(), toolInput())
				if err != nil {
					b.Fatal(err)
				}
				// The delivery's deadline is timeout after the exchange
				// began, which is within microseconds of start.
				d := max(time.Since(start)-timeout, 0)
				late += d
				worst = max(worst, d)
				if len(res.Diagnostics) == 0 {
					accepted++
				}
			}
			b.ReportMetric(float64(late.Microseconds())/1000/float64(b.N), "late-ms/op")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-late-ms")
			b.ReportMetric(float64(accepted)/float64(b.N), "accepted/op")
		})
	}
}
