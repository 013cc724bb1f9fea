// Spec requirements covered by the tests of package server (backend role,
// HTTP and stdio bindings), with the tests that cover them:
//
//	AHP-RPC-001   UTF-8 JSON-RPC 2.0: invalid UTF-8, truncated JSON, non-JSON
//	              → -32700 id null; envelope rules → -32600
//	              (TestEnvelopeErrors, TestFixtures*, FuzzServeHTTPBody)
//	AHP-RPC-002   hooks/intercept is a request, hooks/observe a notification:
//	              observe with an id → -32600, intercept without an id is
//	              never answered (TestEnvelopeErrors, fixture
//	              http.observe-with-id.invalid)
//	AHP-VER-001   every successful result carries protocolVersion "draft";
//	              an unsupported version is -32001 with data.supported for
//	              requests and is never answered for notifications
//	              (TestVersionAndEventErrors, TestFixtures*)
//	AHP-CORE-003  unknown envelope members are ignored; unknown and
//	              observe-only event types on intercept are -32002; effects
//	              are strict and a response is rejected as a whole
//	              (TestUnknownMembersIgnored, TestVersionAndEventErrors,
//	              TestAdmission, TestEffectConstructors)
//	AHP-CORE-004  duplicate delivery gets an equivalent answer; id must equal
//	              params.event.id (TestDuplicateDelivery, fixture
//	              http.intercept-request-id-mismatch.invalid)
//	AHP-HTTP-001  one JSON-RPC object per POST with application/json, at most
//	              one response: 200 + JSON for requests, 204 without body
//	              for accepted notifications; 405/415/413 for wrong method,
//	              media type, size (TestHTTPBinding, TestFixturesHTTP)
//	AHP-STDIO-001 one compact object per LF-terminated line, nothing but
//	              protocol frames on the output, malformed lines answered
//	              with -32700 and serving continues (TestStdio*,
//	              TestFixturesStdioSubprocess, FuzzServeStdio)
//	AHP-CAP-001   a backend returns only advertised effects: an ungranted
//	              effect (family, target, operation, delivery, continuation,
//	              elicitation mode, boundary context) is never sent
//	              (TestAdmission, TestAdmissionBoundaryContext,
//	              TestNeverSendsUngranted)
//	AHP-CAP-002   capabilities.effects is required on intercept
//	              (fixture http.intercept-request-effects-missing.invalid)
//	AHP-DEC-001   the result always carries an ordered effects array, empty
//	              or compound, every member valid and advertised
//	              (TestAdmission, TestFixtures*)
//	AHP-DEC-002   deny carries a non-empty reason (TestAdmission,
//	              TestEffectConstructors)
//	AHP-DEC-003   the no-effect answer is sent as "effects": []
//	              (TestFixtures*)
//	AHP-TB-001    tool.before requests reach the callback as typed values
//	              (TestFixtures*)
//
// base/errors.md (no requirement id): -32001..-32004 and the JSON-RPC codes
// are used as defined; error data never carries callback text or secrets
// (TestCallbackErrorsRedacted); notifications never get a response.
package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

// stdioServerEnv makes the test binary serve the fixture handler on its own
// stdin/stdout (TestFixturesStdioSubprocess).
const stdioServerEnv = "AHP_SERVER_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		os.Exit(runStdioServer())
	}
	goleak.VerifyTestMain(m)
}

// runStdioServer is the subprocess side of TestFixturesStdioSubprocess.
func runStdioServer() int {
	rec := &recorder{}
	h := fixtureHandler(rec, testManifest(nil))
	h.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := server.ServeStdio(context.Background(), os.Stdin, os.Stdout, h); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// recorder keeps what the callbacks received.
type recorder struct {
	mu         sync.Mutex
	intercepts []*gen.InterceptRequest
	observes   []*gen.ObserveNotification
}

func (r *recorder) addIntercept(req *gen.InterceptRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intercepts = append(r.intercepts, req)
}

func (r *recorder) addObserve(n *gen.ObserveNotification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observes = append(r.observes, n)
}

func (r *recorder) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.intercepts), len(r.observes)
}

// fixtureHandler records every callback; Intercept denies when deny is
// advertised and otherwise returns no effects.
func fixtureHandler(rec *recorder, manifest *gen.StaticCapabilityManifest) *server.Handler {
	return &server.Handler{
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			rec.addIntercept(req)
			if slices.Contains(req.Params.Capabilities.Effects, gen.EffectFamilyDeny) {
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("blocked by the fixture handler")}}, nil
			}
			return server.InterceptResult{}, nil
		},
		Observe: func(_ context.Context, n *gen.ObserveNotification) error {
			rec.addObserve(n)
			return nil
		},
		Manifest: manifest,
	}
}

// testManifest returns the manifest of the capabilities-response fixture.
func testManifest(t testing.TB) *gen.StaticCapabilityManifest {
	data, err := os.ReadFile(fixturePath("http/capabilities-response.valid.json"))
	if err == nil {
		var resp *gen.CapabilitiesResponse
		resp, err = gen.ParseCapabilitiesResponse(data)
		if err == nil {
			return &resp.Result.Manifest
		}
	}
	if t != nil {
		t.Fatalf("manifest fixture: %v", err)
	}
	panic(err)
}

func fixturePath(rel string) string {
	return fixtures.Root() + "/fixtures/draft/" + rel
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(fixturePath(rel))
	require.NoError(t, err)
	return data
}

// compact returns data as one line.
func compact(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, data))
	return b.Bytes()
}

// logRecorder is a slog.Handler that keeps records in memory.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// errs returns the "err" attributes of the recorded records.
func (l *logRecorder) errs() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []error
	for _, r := range l.records {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				if e, ok := a.Value.Any().(error); ok {
					out = append(out, e)
				}
			}
			return true
		})
	}
	return out
}

// text renders every record with its attributes.
func (l *logRecorder) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.records {
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Any())
			return true
		})
		b.WriteString("\n")
	}
	return b.String()
}

// rpcReply is a decoded JSON-RPC response.
type rpcReply struct {
	Raw    []byte
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeReply(t testing.TB, raw []byte) rpcReply {
	t.Helper()
	env, err := jsonrpc.Classify(raw)
	require.NoError(t, err, "reply is not a JSON-RPC envelope: %s", raw)
	require.Contains(t, []jsonrpc.Kind{jsonrpc.KindResponse, jsonrpc.KindErrorResponse}, env.Kind)
	var r rpcReply
	require.NoError(t, json.Unmarshal(raw, &r))
	r.Raw = raw
	return r
}

func (r rpcReply) code() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// exchange sends one message over a binding and returns the reply (nil when
// none) and, for HTTP, the status.
type exchange func(t *testing.T, h *server.Handler, msg []byte) (reply []byte, status int)

// viaHTTP posts msg to a real loopback httptest.Server.
func viaHTTP(t *testing.T, h *server.Handler, msg []byte) ([]byte, int) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	return post(t, srv.URL, "application/json", msg)
}

func post(t *testing.T, url, contentType string, body []byte) ([]byte, int) {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	switch resp.StatusCode {
	case http.StatusOK:
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		return data, resp.StatusCode
	default:
		require.Empty(t, data, "status %d must have no body", resp.StatusCode)
		return nil, resp.StatusCode
	}
}

// viaStdio runs ServeStdio over real pipes with msg as the only line.
func viaStdio(t *testing.T, h *server.Handler, msg []byte) ([]byte, int) {
	t.Helper()
	out := serveStdio(t, h, append(append([]byte{}, msg...), '\n'))
	lines := outputLines(t, out)
	require.LessOrEqual(t, len(lines), 1, "at most one reply per message")
	if len(lines) == 0 {
		return nil, 0
	}
	return lines[0], 0
}

// serveStdio feeds input to ServeStdio through os.Pipe and returns
// everything it wrote.
func serveStdio(t *testing.T, h *server.Handler, input []byte) []byte {
	t.Helper()
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer outR.Close()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = inW.Write(input)
		_ = inW.Close()
	}()
	var out []byte
	go func() {
		defer wg.Done()
		out, _ = io.ReadAll(outR)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serr := server.ServeStdio(ctx, inR, outW, h)
	require.NoError(t, outW.Close())
	wg.Wait()
	require.NoError(t, serr)
	return out
}

// outputLines splits stdio output into frames, checking the framing: every
// frame is one compact JSON-RPC response terminated by LF.
func outputLines(t testing.TB, out []byte) [][]byte {
	t.Helper()
	if len(out) == 0 {
		return nil
	}
	require.Equal(t, byte('\n'), out[len(out)-1], "output must end with LF")
	var lines [][]byte
	for _, line := range bytes.Split(out[:len(out)-1], []byte("\n")) {
		require.NotEmpty(t, line)
		require.NotContains(t, string(line), "\r")
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, line))
		require.Equal(t, b.String(), string(line), "frames are compact")
		decodeReply(t, line)
		lines = append(lines, line)
	}
	return lines
}

// requestFixture is a fixture message that a backend receives.
type requestFixture struct {
	c      fixtures.Case
	msg    []byte
	method string
	hasID  bool
}

// requestFixtures returns every fixture that is a request or notification
// (the messages a backend receives), one entry per message.
func requestFixtures(t *testing.T) []requestFixture {
	t.Helper()
	cases, err := fixtures.Load()
	require.NoError(t, err)
	var out []requestFixture
	for _, c := range cases {
		if c.Binding == "registration-json" {
			continue
		}
		data, err := c.Read()
		require.NoError(t, err)
		if c.Binding == "stdio-jsonl" && c.SchemaFile() == "intercept-request.schema.json" && !c.ExpectedValid {
			// A framing fixture: its lines are not messages.
			for _, line := range c.Messages(data) {
				out = append(out, requestFixture{c: c, msg: line})
			}
			continue
		}
		for _, msg := range c.Messages(data) {
			var probe map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(msg, &probe), c.ID)
			m, ok := probe["method"]
			if !ok {
				continue // a response fixture
			}
			var method string
			require.NoError(t, json.Unmarshal(m, &method))
			_, hasID := probe["id"]
			out = append(out, requestFixture{c: c, msg: msg, method: method, hasID: hasID})
		}
	}
	require.NotEmpty(t, out)
	return out
}

// invalidRequestCodes is the error every invalid request fixture must get.
// Invalid notifications (no id) are never answered.
var invalidRequestCodes = map[string]int{
	"http.intercept-request-effects-missing.invalid": jsonrpc.CodeInvalidParams,
	"http.intercept-request-id-mismatch.invalid":     jsonrpc.CodeInvalidParams,
	"http.observe-with-id.invalid":                   jsonrpc.CodeInvalidRequest,
	"http.task-return-capability.invalid":            jsonrpc.CodeInvalidParams,
	"http.tool-before-continue-capability.invalid":   jsonrpc.CodeInvalidParams,
}

// frameCode is the error a line of the stdio framing fixture gets: a line
// that happens to be a JSON value but not an object is an invalid request,
// anything else a parse error.
func frameCode(line []byte) int {
	if json.Valid(line) {
		return jsonrpc.CodeInvalidRequest
	}
	return jsonrpc.CodeParseError
}

// checkTyped asserts that the event reached the callback as the typed arm
// the catalogue names.
func checkTyped(t *testing.T, id string, event *gen.Event, msg []byte) {
	t.Helper()
	var probe struct {
		Params struct {
			Event struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"event"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(msg, &probe))
	require.Equal(t, probe.Params.Event.Type, event.Type(), id)
	require.Equal(t, probe.Params.Event.ID, event.ID(), id)
	info, ok := gen.LookupEvent(gen.EventName(event.Type()))
	require.True(t, ok)
	require.NotNil(t, event.Value(), id)
	require.Equal(t, info.GoName, setArm(event), id)
}

// setArm returns the name of the gen.Event field that is set; the union has
// one field per catalogue event, named after its GoName.
func setArm(event *gen.Event) string {
	v := reflect.ValueOf(event).Elem()
	name := ""
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			if name != "" {
				return "<several>"
			}
			name = v.Type().Field(i).Name
		}
	}
	return name
}

// checkResponse validates a success response against the generic and the
// per-event response schemas and checks its correlation.
func checkResponse(t *testing.T, reply rpcReply, req []byte) {
	t.Helper()
	env, err := jsonrpc.Classify(req)
	require.NoError(t, err)
	require.Equal(t, env.ID.String(), string(reply.ID), "the response echoes the request id exactly")
	_, name, _ := eventTypeOf(req)
	info, ok := gen.LookupEvent(name)
	require.True(t, ok)
	v := validate.Default()
	require.NoError(t, v.Validate("intercept-response.schema.json", reply.Raw))
	require.NoError(t, v.Validate(info.ResponseSchema, reply.Raw))
	var res struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Effects         []json.RawMessage `json:"effects"`
	}
	require.NoError(t, json.Unmarshal(reply.Result, &res))
	require.Equal(t, gen.ProtocolVersion, res.ProtocolVersion)
	require.NotNil(t, res.Effects, "effects is always present")
}

func eventTypeOf(msg []byte) (string, gen.EventName, bool) {
	var probe struct {
		Params struct {
			Event struct {
				Type string `json:"type"`
			} `json:"event"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &probe); err != nil {
		return "", "", false
	}
	return probe.Params.Event.Type, gen.EventName(probe.Params.Event.Type), true
}
