package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// seen records what the callbacks of a comparison handler received, one
// encoding per call, in order.
type seen struct {
	mu    sync.Mutex
	calls []string
}

func (s *seen) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, v)
}

func (s *seen) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

// bytePathHandlers returns handlers answering with every kind of answer:
// no effects, a deny, allow/ask, a supplied result, an input merge and
// replacement, a flow stop and continuation, a message, extensions, an
// answer that is not admissible, callback errors and a panic, event
// restrictions, observation and the manifest. Each records the request it
// gets (encoded) in s.
func bytePathHandlers(t testing.TB, s *seen) map[string]*Handler {
	t.Helper()
	manifest := fixtureManifest(t)
	record := func(req *gen.InterceptRequest) {
		b, err := gen.EncodeInterceptRequest(req)
		if err != nil {
			s.add("encode error: " + err.Error())
			return
		}
		s.add(string(b))
	}
	with := func(es ...string) func(context.Context, *gen.InterceptRequest) (InterceptResult, error) {
		return func(_ context.Context, req *gen.InterceptRequest) (InterceptResult, error) {
			record(req)
			out := InterceptResult{}
			for _, e := range es {
				var eff gen.Effect
				if err := eff.UnmarshalJSON([]byte(e)); err != nil {
					return InterceptResult{}, err
				}
				out.Effects = append(out.Effects, eff)
			}
			return out, nil
		}
	}
	observe := func(_ context.Context, n *gen.ObserveNotification) error {
		b, err := gen.EncodeObserveNotification(n)
		if err != nil {
			return err
		}
		s.add(string(b))
		if strings.Contains(string(b), `"tool.after"`) {
			return errors.New("observe failed")
		}
		return nil
	}
	return map[string]*Handler{
		"none":     {Intercept: with(), Observe: observe, Manifest: manifest},
		"deny":     {Intercept: with(`{"type":"deny","reason":"blocked"}`)},
		"denyCode": {Intercept: with(`{"type":"deny","reason":"blocked","code":"com.example.policy"}`)},
		"allowAsk": {Intercept: with(`{"type":"allow"}`, `{"type":"ask"}`)},
		"return":   {Intercept: with(`{"type":"return","value":{"ok":true}}`)},
		"merge":    {Intercept: with(`{"type":"modify","target":"input","operation":"merge","value":{"path":"/safe"}}`)},
		"replace":  {Intercept: with(`{"type":"modify","target":"input","operation":"replace","value":{"path":"README.md","content":"example"}}`)},
		"flow":     {Intercept: with(`{"type":"flow","operation":"stop","reason":"s"}`, `{"type":"flow","operation":"continue","instruction":"i"}`)},
		"message":  {Intercept: with(`{"type":"message","text":"m"}`, `{"type":"deny","reason":"d"}`)},
		"invalid":  {Intercept: with(`{"type":"deny","reason":""}`)},
		"answers":  {Intercept: with(`{"type":"modify","target":"content","operation":"merge","value":{"answer":"no"}}`)},
		"extensions": {Intercept: func(_ context.Context, req *gen.InterceptRequest) (InterceptResult, error) {
			record(req)
			return InterceptResult{Extensions: json.RawMessage(`{"com.example.x":{"a":1}}`)}, nil
		}},
		"fail": {Intercept: func(_ context.Context, req *gen.InterceptRequest) (InterceptResult, error) {
			record(req)
			return InterceptResult{}, errors.New("secret backend failure")
		}},
		"unavailable": {Intercept: func(_ context.Context, req *gen.InterceptRequest) (InterceptResult, error) {
			record(req)
			return InterceptResult{}, fmt.Errorf("down: %w", ErrUnavailable)
		}},
		"panic": {Intercept: func(_ context.Context, req *gen.InterceptRequest) (InterceptResult, error) {
			record(req)
			panic("boom")
		}},
		"restricted": {
			Intercept:       with(`{"type":"deny","reason":"blocked"}`),
			InterceptEvents: []gen.EventName{gen.EventToolPermissionRequest},
			Observe:         observe,
			ObserveEvents:   []gen.EventName{gen.EventToolAfter},
		},
	}
}

// fixtureManifest is the manifest of the capabilities-response fixture.
func fixtureManifest(t testing.TB) *gen.StaticCapabilityManifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures.Root(), "fixtures", "draft", "http", "capabilities-response.valid.json"))
	require.NoError(t, err)
	resp, err := gen.ParseCapabilitiesResponse(data)
	require.NoError(t, err)
	m := resp.Result.Manifest
	return &m
}

// bytePathSeeds are classifySeeds plus intercept requests whose tool input
// is large, deep, escaped or repeats names, and requests with a version,
// event or params that fail in each precedence order.
func bytePathSeeds(t testing.TB) [][]byte {
	t.Helper()
	seeds := classifySeeds(t)
	data, err := os.ReadFile(filepath.Join(fixtures.Root(), "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	compact, err := json.Marshal(v)
	require.NoError(t, err)
	base := string(compact)
	const input = `"input":{"content":"example","path":"README.md"}`
	require.Contains(t, base, input)
	for _, in := range []string{
		`{}`, `{"p\u0061th":"x","\ud83d\ude00":1}`, `{"n":1.0,"e":1e400}`, hostile.Object(3000), hostile.ObjectDup(3000),
		hostile.Deep(100, `{"x":1}`), hostile.Deep(600, `{"x":1}`), `{"a":{"b":[{"c":1,"c":2}]}}`, `{"s":"\ud800"}`,
		`{"content":"` + strings.Repeat("All work and no play. ", 3000) + `"}`, `[1]`, `"x"`,
	} {
		seeds = append(seeds, []byte(strings.Replace(base, input, `"input":`+in, 1)))
	}
	for _, r := range [][2]string{
		{`"protocolVersion":"draft"`, `"protocolVersion":"v0"`},
		{`"protocolVersion":"draft"`, `"protocolVersion":"v0","x":1`},
		{`"type":"tool.before"`, `"type":"tool.after"`},
		{`"type":"tool.before"`, `"type":"tool.permission.request"`},
		{`"type":"tool.before"`, `"type":"no.such.event"`},
		{`"type":"tool.before"`, `"type":"tool.before","x":1`},
		{`"time":"`, `"time":"x`},
		{`"capabilities":{`, `"capabilities":{"x":1,`},
		{`"method":"hooks/intercept"`, `"method":"hooks/observe"`},
		{`"method":"hooks/intercept"`, `"method":"hooks/capabilities"`},
		{`"id":"evt_http_001","jsonrpc"`, `"jsonrpc"`},
	} {
		require.Contains(t, base, r[0])
		seeds = append(seeds, []byte(strings.Replace(base, r[0], r[1], 1)))
	}
	// Elicitation results that the settlement engine, not the schema,
	// finds consistent or not (action against body, content outside an
	// accepted form, a body that is not JSON).
	obs, err := os.ReadFile(filepath.Join(fixtures.Root(), "fixtures", "draft", "http", "catalogue-user.elicitation.result.valid.json"))
	require.NoError(t, err)
	for _, c := range [][2]string{
		{"accept", `{"action":"accept","content":{"answer":"yes"}}`},
		{"decline", `{"action":"accept","content":{"answer":"yes"}}`},
		{"decline", `{"action":"decline","content":{"answer":"yes"}}`},
		{"decline", `{"action":"decline"}`},
		{"accept", `{"action":"accept","content":{"answer":{"x":1}}}`},
		{"accept", `not json`},
		{"accept", `{"action":"accept","content":{"a":1,"a":2}}`},
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(obs, &m))
		params := m["params"].(map[string]any)
		event := params["event"].(map[string]any)
		el := event["elicitation"].(map[string]any)
		el["action"] = c[0]
		el["result"].(map[string]any)["text"] = c[1]
		params["capabilities"] = map[string]any{
			"effects":     []any{"modify"},
			"modify":      map[string]any{"content": map[string]any{"replace": true, "merge": true}},
			"elicitation": map[string]any{"form": map[string]any{}},
		}
		m["id"], m["method"] = event["id"], "hooks/intercept"
		b, err := json.Marshal(m)
		require.NoError(t, err)
		seeds = append(seeds, b)
	}
	return seeds
}

// requireSameReply dispatches msg through h on the one-scan path and on the
// byte path and requires the same outcome, the same reply bytes and the
// same callback arguments.
func requireSameReply(t *testing.T, name string, h *Handler, s *seen, msg []byte) {
	t.Helper()
	ctx := context.Background()
	s.take()
	got := h.dispatch(ctx, msg)
	gotCalls := s.take()
	want := h.dispatchDoc(ctx, msg, nil)
	wantCalls := s.take()
	require.Equal(t, want.out, got.out, "handler %s: outcome of %.200q", name, msg)
	require.Equal(t, string(want.body), string(got.body), "handler %s: reply to %.200q", name, msg)
	require.Equal(t, wantCalls, gotCalls, "handler %s: callback arguments for %.200q", name, msg)
}

// TestOneScanRepliesAgreeWithBytePath: for every seed (the fixture corpus,
// envelope errors, hostile and mutated requests) and every kind of
// handler, the dispatcher's one-scan path gives the outcome, the reply
// bytes and the callback arguments of the byte path, which classifies,
// validates, decodes and snapshots from the message bytes and settles with
// settle.CheckEvent and settle.Admit.
func TestOneScanRepliesAgreeWithBytePath(t *testing.T) {
	var s seen
	handlers := bytePathHandlers(t, &s)
	tokens := 0
	for _, msg := range bytePathSeeds(t) {
		d := validate.Scan(context.Background(), msg)
		if d.Tokens() {
			tokens++
		}
		d.Release()
		for name, h := range handlers {
			requireSameReply(t, name, h, &s, msg)
		}
	}
	require.Greater(t, tokens, 60, "seeds with tokens")
}

// FuzzOneScanReplies is TestOneScanRepliesAgreeWithBytePath on arbitrary
// messages.
func FuzzOneScanReplies(f *testing.F) {
	for _, s := range bytePathSeeds(f) {
		f.Add(s)
	}
	var s seen
	handlers := bytePathHandlers(f, &s)
	f.Fuzz(func(t *testing.T, msg []byte) {
		for name, h := range handlers {
			requireSameReply(t, name, h, &s, msg)
		}
	})
}
