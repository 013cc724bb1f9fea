package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

var bindings = map[string]exchange{"http": viaHTTP, "stdio": viaStdio}

// interceptBase is a valid tool.before intercept request (one line).
func interceptBase(t testing.TB) []byte {
	return compact(t, readFixture(t, "http/intercept-request.valid.json"))
}

// mutate decodes msg, applies f and re-encodes it.
func mutate(t testing.TB, msg []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(msg, &m))
	f(m)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

func params(m map[string]any) map[string]any { return m["params"].(map[string]any) }
func event(m map[string]any) map[string]any  { return params(m)["event"].(map[string]any) }

// withEventType returns an intercept request for another event type, with
// a matching id (schema-valid or not does not matter for the early checks).
func withEventType(t testing.TB, typ string) []byte {
	return mutate(t, interceptBase(t), func(m map[string]any) { event(m)["type"] = typ })
}

// replyCase is one message and the reply it must get on every binding.
type replyCase struct {
	name string
	msg  []byte
	code int    // expected error code; 0 = success
	id   string // expected id text of the reply ("null" for null)
	// noReply: the message is a notification and must not be answered;
	// HTTP answers status instead.
	noReply bool
	status  int
}

func runReplyCases(t *testing.T, h *server.Handler, cases []replyCase) {
	t.Helper()
	for _, tc := range cases {
		for bname, ex := range bindings {
			t.Run(tc.name+"/"+bname, func(t *testing.T) {
				raw, status := ex(t, h, tc.msg)
				if tc.noReply {
					require.Nil(t, raw, "a notification is never answered")
					if bname == "http" {
						want := tc.status
						if want == 0 {
							want = http.StatusBadRequest
						}
						require.Equal(t, want, status)
					}
					return
				}
				require.NotNil(t, raw)
				if bname == "http" {
					require.Equal(t, http.StatusOK, status)
				}
				r := decodeReply(t, raw)
				require.Equal(t, tc.code, r.code(), "reply: %s", raw)
				if tc.id != "" {
					require.Equal(t, tc.id, string(r.ID))
				}
				if r.Error != nil {
					require.Equal(t, jsonrpc.CodeText(tc.code), r.Error.Message, "generic message")
				}
			})
		}
	}
}

func TestEnvelopeErrors(t *testing.T) {
	var calls atomic.Int32
	h := &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			calls.Add(1)
			return server.InterceptResult{}, nil
		},
		Observe: func(context.Context, *gen.ObserveNotification) error { calls.Add(1); return nil },
	}
	base := interceptBase(t)
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	withID := func(id string) []byte {
		return []byte(strings.Replace(string(base), `"id":"evt_http_001","method"`, `"id":`+id+`,"method"`, 1))
	}
	cases := []replyCase{
		{name: "truncated JSON", msg: base[:len(base)/2], code: jsonrpc.CodeParseError, id: "null"},
		{name: "invalid UTF-8", msg: []byte(strings.Replace(string(base), "write_file", "write_\xff\xfe", 1)), code: jsonrpc.CodeParseError, id: "null"},
		{name: "not JSON", msg: []byte("hello"), code: jsonrpc.CodeParseError, id: "null"},
		{name: "two values", msg: append(append([]byte{}, base...), base...), code: jsonrpc.CodeParseError, id: "null"},
		{name: "batch", msg: []byte("[" + string(base) + "]"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "scalar", msg: []byte("42"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "empty object", msg: []byte("{}"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "jsonrpc 1.0", msg: []byte(strings.Replace(string(base), `"2.0"`, `"1.0"`, 1)), code: jsonrpc.CodeInvalidRequest, id: `"evt_http_001"`},
		{name: "duplicate id", msg: []byte(strings.Replace(string(base), `"id":"evt_http_001","method"`, `"id":"evt_http_001","id":"evt_http_001","method"`, 1)), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "fractional id", msg: withID("1.5"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "exponent id", msg: withID("1e3"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "boolean id", msg: withID("true"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "object id", msg: withID(`{"a":1}`), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "null id", msg: withID("null"), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "empty string id", msg: withID(`""`), code: jsonrpc.CodeInvalidRequest, id: "null"},
		// Integer ids are valid JSON-RPC ids; they cannot equal the string
		// event id, so canonical validation fails, and the error echoes the
		// id with its exact type and text.
		{name: "integer id", msg: withID("7"), code: jsonrpc.CodeInvalidParams, id: "7"},
		{name: "huge integer id", msg: withID("123456789012345678901234567890"), code: jsonrpc.CodeInvalidParams, id: "123456789012345678901234567890"},
		{name: "negative integer id", msg: withID("-0"), code: jsonrpc.CodeInvalidParams, id: "-0"},
		{name: "escaped string id", msg: withID(`"evt\u005fhttp\u005f001"`), id: `"evt\u005fhttp\u005f001"`},
		{name: "params array", msg: mutate(t, base, func(m map[string]any) { m["params"] = []any{1} }), code: jsonrpc.CodeInvalidParams, id: `"evt_http_001"`},
		{name: "params missing", msg: mutate(t, base, func(m map[string]any) { delete(m, "params") }), code: jsonrpc.CodeInvalidParams, id: `"evt_http_001"`},
		{name: "params string", msg: mutate(t, base, func(m map[string]any) { m["params"] = "x" }), code: jsonrpc.CodeInvalidRequest, id: `"evt_http_001"`},
		{name: "unknown method", msg: mutate(t, base, func(m map[string]any) { m["method"] = "hooks/other" }), code: jsonrpc.CodeMethodNotFound, id: `"evt_http_001"`},
		{name: "unknown method notification", msg: mutate(t, base, func(m map[string]any) { m["method"] = "hooks/other"; delete(m, "id") }), noReply: true},
		{name: "observe with id", msg: mutate(t, observe, func(m map[string]any) { m["id"] = "n1" }), code: jsonrpc.CodeInvalidRequest, id: `"n1"`},
		{name: "observe with integer id", msg: mutate(t, observe, func(m map[string]any) { m["id"] = 9 }), code: jsonrpc.CodeInvalidRequest, id: `9`},
		{name: "intercept without id", msg: mutate(t, base, func(m map[string]any) { delete(m, "id") }), noReply: true},
		{name: "capabilities without id", msg: []byte(`{"jsonrpc":"2.0","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`), noReply: true},
		{name: "success response", msg: compact(t, readFixture(t, "http/no-effect-response.valid.json")), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "error response", msg: compact(t, readFixture(t, "http/error-response.valid.json")), code: jsonrpc.CodeInvalidRequest, id: "null"},
		{name: "capabilities not served", msg: compact(t, readFixture(t, "http/capabilities-request.valid.json")), code: jsonrpc.CodeMethodNotFound, id: `"discovery"`},
	}
	runReplyCases(t, h, cases)
	// Only the escaped-id request is valid enough to reach the callback,
	// once per binding.
	require.Equal(t, int32(2), calls.Load())
}

func TestVersionAndEventErrors(t *testing.T) {
	var observed atomic.Int32
	h := &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{}, nil
		},
		Observe:  func(context.Context, *gen.ObserveNotification) error { observed.Add(1); return nil },
		Manifest: testManifest(t),
	}
	base := interceptBase(t)
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	capReq := compact(t, readFixture(t, "http/capabilities-request.valid.json"))
	setVersion := func(msg []byte, v any) []byte {
		return mutate(t, msg, func(m map[string]any) { params(m)["protocolVersion"] = v })
	}
	cases := []replyCase{
		{name: "intercept old version", msg: setVersion(base, "1900-01-01"), code: jsonrpc.CodeUnsupportedProtocolVersion, id: `"evt_http_001"`},
		{name: "intercept 0.1", msg: setVersion(base, "0.1"), code: jsonrpc.CodeUnsupportedProtocolVersion},
		{name: "intercept numeric version", msg: setVersion(base, 1), code: jsonrpc.CodeUnsupportedProtocolVersion},
		{name: "intercept missing version", msg: mutate(t, base, func(m map[string]any) { delete(params(m), "protocolVersion") }), code: jsonrpc.CodeInvalidParams},
		{name: "version beats unknown event", msg: setVersion(withEventType(t, "tool.error"), "2099-01-01"), code: jsonrpc.CodeUnsupportedProtocolVersion},
		{name: "capabilities old version", msg: setVersion(capReq, "1900-01-01"), code: jsonrpc.CodeUnsupportedProtocolVersion, id: `"discovery"`},
		{name: "capabilities extra param", msg: mutate(t, capReq, func(m map[string]any) { params(m)["extra"] = true }), code: jsonrpc.CodeInvalidParams},
		{name: "capabilities", msg: capReq, id: `"discovery"`},
		{name: "observe old version", msg: setVersion(observe, "1900-01-01"), noReply: true},
		{name: "unknown event type", msg: withEventType(t, "tool.error"), code: jsonrpc.CodeUnsupportedEvent, id: `"evt_http_001"`},
		{name: "observe-only event", msg: withEventType(t, "turn.end"), code: jsonrpc.CodeUnsupportedEvent},
		{name: "session.end is observe-only", msg: withEventType(t, "session.end"), code: jsonrpc.CodeUnsupportedEvent},
		{name: "event type not a string", msg: mutate(t, base, func(m map[string]any) { event(m)["type"] = 3 }), code: jsonrpc.CodeInvalidParams},
		{name: "event missing", msg: mutate(t, base, func(m map[string]any) { delete(params(m), "event") }), code: jsonrpc.CodeInvalidParams},
		{name: "observe unknown event", msg: mutate(t, observe, func(m map[string]any) { event(m)["type"] = "tool.error" }), noReply: true},
	}
	runReplyCases(t, h, cases)
	require.Zero(t, observed.Load(), "Observe never sees an unsupported notification")

	// -32001 carries the supported versions (base/errors.md example).
	raw, _ := viaHTTP(t, h, setVersion(base, "1900-01-01"))
	r := decodeReply(t, raw)
	require.JSONEq(t, `{"supported":["draft"]}`, string(r.Error.Data))
	require.Equal(t, "Unsupported protocol version", r.Error.Message)

	// The capabilities result is the manifest, with protocolVersion and no
	// effects (AHP-VER-001).
	raw, _ = viaStdio(t, h, capReq)
	resp, err := gen.ParseCapabilitiesResponse(raw)
	require.NoError(t, err)
	require.Equal(t, *testManifest(t), resp.Result.Manifest)
	var result map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(decodeReply(t, raw).Result, &result))
	require.NotContains(t, result, "effects")

	// InterceptEvents narrows the supported events: -32002 for the others.
	only := &server.Handler{
		Intercept:       h.Intercept,
		InterceptEvents: []gen.EventName{gen.EventToolAfter},
	}
	escapedType := bytes.Replace(base, []byte(`"type":"tool.before"`), []byte(`"\u0074ype":"tool.before"`), 1)
	require.NotEqual(t, base, escapedType)
	runReplyCases(t, only, []replyCase{
		{name: "event outside InterceptEvents", msg: base, code: jsonrpc.CodeUnsupportedEvent},
		// An escaped member name is read as the name it spells.
		{name: "escaped type member outside InterceptEvents", msg: escapedType, code: jsonrpc.CodeUnsupportedEvent},
		// The unsupported event is reported before the invalid params,
		// whichever the dispatcher checks first.
		{name: "invalid request outside InterceptEvents", msg: mutate(t, base, func(m map[string]any) { event(m)["time"] = 7 }), code: jsonrpc.CodeUnsupportedEvent},
		{name: "invalid request for a supported event", msg: mutate(t, withEventType(t, "tool.after"), func(m map[string]any) { event(m)["time"] = 7 }), code: jsonrpc.CodeInvalidParams},
	})
	// ObserveEvents drops the others without calling Observe.
	obsOnly := &server.Handler{Observe: h.Observe, ObserveEvents: []gen.EventName{gen.EventSessionEnd}}
	runReplyCases(t, obsOnly, []replyCase{
		{name: "event outside ObserveEvents", msg: observe, noReply: true},
	})
	require.Zero(t, observed.Load())
	// A Handler without Observe drops notifications (HTTP 400).
	noObs := &server.Handler{Intercept: h.Intercept}
	runReplyCases(t, noObs, []replyCase{{name: "no Observe", msg: observe, noReply: true}})
	// An accepted notification is 204.
	runReplyCases(t, h, []replyCase{{name: "accepted", msg: observe, noReply: true, status: http.StatusNoContent}})
	require.Equal(t, int32(2), observed.Load())
}

func TestUnknownMembersIgnored(t *testing.T) {
	var got atomic.Pointer[gen.InterceptRequest]
	h := &server.Handler{Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		got.Store(req)
		return server.InterceptResult{}, nil
	}}
	msg := mutate(t, interceptBase(t), func(m map[string]any) {
		m["x-envelope-extra"] = map[string]any{"a": 1}
		params(m)["x-params-extra"] = []any{"b"}
	})
	for name, ex := range bindings {
		t.Run(name, func(t *testing.T) {
			raw, _ := ex(t, h, msg)
			r := decodeReply(t, raw)
			require.Zero(t, r.code(), "%s", raw)
			require.NotNil(t, got.Load())
		})
	}
}

func TestDuplicateDelivery(t *testing.T) {
	h := fixtureHandler(&recorder{}, nil)
	msg := interceptBase(t)
	for name, ex := range bindings {
		t.Run(name, func(t *testing.T) {
			first, _ := ex(t, h, msg)
			second, _ := ex(t, h, msg)
			require.Equal(t, string(first), string(second), "a retry with the same ids gets an equivalent answer")
		})
	}
}

func TestCallbackErrorsRedacted(t *testing.T) {
	const secret = "sk-live-SECRET-token-0123456789"
	logs := &logRecorder{}
	var mode atomic.Value
	mode.Store("")
	h := &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			switch mode.Load().(string) {
			case "error":
				return server.InterceptResult{}, errors.New("policy store says " + secret)
			case "unavailable":
				return server.InterceptResult{}, fmt.Errorf("policy store down (%s): %w", secret, server.ErrUnavailable)
			case "panic":
				panic("boom " + secret)
			case "panic-error":
				panic(errors.New(secret))
			}
			return server.InterceptResult{}, nil
		},
		Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
			switch mode.Load().(string) {
			case "panic":
				panic(secret)
			case "error":
				return errors.New(secret)
			}
			return nil
		},
		Logger: slog.New(logs),
	}
	base := interceptBase(t)
	observe := compact(t, readFixture(t, "http/observe-tool-before.valid.json"))
	for _, tc := range []struct {
		mode string
		code int
	}{
		{"error", jsonrpc.CodeBackendInternalError},
		{"unavailable", jsonrpc.CodeBackendUnavailable},
		{"panic", jsonrpc.CodeBackendInternalError},
		{"panic-error", jsonrpc.CodeBackendInternalError},
	} {
		for bname, ex := range bindings {
			t.Run(tc.mode+"/"+bname, func(t *testing.T) {
				mode.Store(tc.mode)
				raw, _ := ex(t, h, base)
				r := decodeReply(t, raw)
				require.Equal(t, tc.code, r.code())
				require.Equal(t, `"evt_http_001"`, string(r.ID))
				require.Nil(t, r.Error.Data)
				require.NotContains(t, string(raw), "SECRET")
				require.NotContains(t, string(raw), "boom")
				require.NotContains(t, string(raw), "goroutine")

				// The server keeps serving.
				mode.Store("")
				raw, _ = ex(t, h, base)
				require.Zero(t, decodeReply(t, raw).code())
			})
		}
	}
	// The callback author sees the error, panic value and stack in the log.
	text := logs.text()
	require.Contains(t, text, "Intercept callback failed")
	require.Contains(t, text, "Intercept callback panicked")
	require.Contains(t, text, "stack=goroutine")

	// Observe failures: HTTP 500 without body, stdio silent, and serving
	// goes on.
	for _, m := range []string{"panic", "error"} {
		mode.Store(m)
		raw, status := viaHTTP(t, h, observe)
		require.Nil(t, raw)
		require.Equal(t, http.StatusInternalServerError, status)
		raw, _ = viaStdio(t, h, observe)
		require.Nil(t, raw)
	}
	mode.Store("")
	_, status := viaHTTP(t, h, observe)
	require.Equal(t, http.StatusNoContent, status)
	require.Contains(t, logs.text(), "Observe callback panicked")
}

func TestValidate(t *testing.T) {
	ok := func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}
	require.NoError(t, (&server.Handler{Intercept: ok}).Validate())
	require.NoError(t, (&server.Handler{Manifest: testManifest(t)}).Validate())
	require.Error(t, (*server.Handler)(nil).Validate())
	require.ErrorContains(t, (&server.Handler{}).Validate(), "no Intercept, Observe or Manifest")
	require.ErrorContains(t, (&server.Handler{Intercept: ok, MaxBodyBytes: -1}).Validate(), "MaxBodyBytes")
	require.ErrorContains(t, (&server.Handler{Intercept: ok, MaxConcurrency: -1}).Validate(), "MaxConcurrency")
	require.ErrorContains(t, (&server.Handler{Intercept: ok, InterceptEvents: []gen.EventName{"tool.error"}}).Validate(), "unknown event")
	require.ErrorContains(t, (&server.Handler{Intercept: ok, InterceptEvents: []gen.EventName{gen.EventTurnEnd}}).Validate(), "cannot be intercepted")
	require.ErrorContains(t, (&server.Handler{Intercept: ok, ObserveEvents: []gen.EventName{"nope"}}).Validate(), "unknown event")

	bad := *testManifest(t)
	// A managed policy scope cannot be disableable.
	bad.ManagedPolicy = gen.StaticCapabilityManifestManagedPolicy{
		Scopes:      []gen.StaticCapabilityManifestManagedPolicyScope{gen.StaticCapabilityManifestManagedPolicyScopeManaged},
		Disableable: true,
	}
	err := (&server.Handler{Manifest: &bad}).Validate()
	require.ErrorContains(t, err, "Manifest")

	// An invalid manifest is never served: the client gets -32004.
	logs := &logRecorder{}
	h := &server.Handler{Manifest: &bad, Logger: slog.New(logs)}
	raw, _ := viaHTTP(t, h, compact(t, readFixture(t, "http/capabilities-request.valid.json")))
	require.Equal(t, jsonrpc.CodeBackendInternalError, decodeReply(t, raw).code())
	require.Contains(t, logs.text(), "Manifest is not a valid")

	// ServeStdio refuses an invalid Handler before reading.
	require.ErrorContains(t, server.ServeStdio(context.Background(), strings.NewReader(""), &strings.Builder{}, &server.Handler{}), "no Intercept")
}
