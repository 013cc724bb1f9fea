package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

const injectMessages = `[{"id":"injected1","role":"system","parts":[{"id":"injected1-text","kind":"text","mediaType":"text/plain","selection":"body","text":"test feedback"}]}]`

func messages(t testing.TB) gen.CanonicalMessages {
	t.Helper()
	var m gen.CanonicalMessages
	require.NoError(t, json.Unmarshal([]byte(injectMessages), &m))
	return m
}

// toolBefore returns a tool.before intercept request advertising caps.
func toolBefore(t testing.TB, caps string) []byte {
	t.Helper()
	return mutate(t, interceptBase(t), func(m map[string]any) {
		var c any
		require.NoError(t, json.Unmarshal([]byte(caps), &c))
		params(m)["capabilities"] = c
	})
}

// toolAfter returns a tool.after intercept request advertising caps, built
// from the event of an observe fixture.
func toolAfter(t testing.TB, caps string) []byte {
	t.Helper()
	obs := compact(t, readFixture(t, "http/observe-tool-error.valid.json"))
	return mutate(t, obs, func(m map[string]any) {
		var c any
		require.NoError(t, json.Unmarshal([]byte(caps), &c))
		params(m)["capabilities"] = c
		m["id"] = event(m)["id"]
		m["method"] = jsonrpc.MethodIntercept
	})
}

func parseRequest(t testing.TB, msg []byte) *gen.InterceptRequest {
	t.Helper()
	req, err := gen.ParseInterceptRequest(msg)
	require.NoError(t, err)
	return req
}

const (
	denyOnly       = `{"effects":["deny"]}`
	toolBeforeFull = `{"effects":["deny","allow","ask","modify","inject","flow","return","message"],"modify":{"input":{"replace":true,"merge":false}},"flow":{"operations":["stop"]},"inject":{"context":{"append":true,"deliverAt":["next_turn"]}}}`
)

func TestAdmission(t *testing.T) {
	msgs := messages(t)
	type tc struct {
		name    string
		req     []byte
		effects []gen.Effect
		// rejected: the effect index and family of the AdmissionError;
		// index -2 means admitted.
		index  int
		family string
		reason string
	}
	const ok = -2
	cases := []tc{
		{name: "no effects", req: toolBefore(t, denyOnly), index: ok},
		{name: "deny", req: toolBefore(t, denyOnly), effects: []gen.Effect{server.Deny("policy")}, index: ok},
		{name: "allow not advertised", req: toolBefore(t, denyOnly), effects: []gen.Effect{server.Allow()}, index: 0, family: "allow", reason: "not advertised"},
		{name: "compound with ungranted member", req: toolBefore(t, denyOnly), effects: []gen.Effect{server.Deny("policy"), server.Message("note")}, index: 1, family: "message"},
		{name: "empty deny reason", req: toolBefore(t, denyOnly), effects: []gen.Effect{server.Deny("")}, index: 0, family: "deny", reason: "not valid against"},
		{name: "compound with invalid member rejected whole", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.Allow(), server.Deny("")}, index: 1, family: "deny"},
		{name: "no arm", req: toolBefore(t, denyOnly), effects: []gen.Effect{{}}, index: 0, reason: "no effect arm"},
		{name: "compound granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{
			server.Allow(), server.ReplaceInput(map[string]string{"path": "SAFE.md", "content": "x"}), server.Message("rewritten"),
		}, index: ok},
		{name: "merge not granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.MergeInput(map[string]any{"path": "a"})}, index: 0, family: "modify", reason: `does not grant "merge" on target "input"`},
		{name: "target not granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.ReplaceMessages(gen.ModifyMessagesEffectTargetPrompt, msgs)}, index: 0, family: "modify"},
		{name: "inject granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.Inject(gen.DeliverAtNextTurn, msgs)}, index: ok},
		{name: "inject delivery not granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.Inject(gen.DeliverAtNow, msgs)}, index: 0, family: "inject", reason: "deliverAt"},
		{name: "stop granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.StopFlow("budget")}, index: ok},
		{name: "continue not granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.ContinueFlow("")}, index: 0, family: "flow"},
		{name: "return granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.Return(map[string]any{"ok": true})}, index: ok},
		{name: "ask granted", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{server.Ask()}, index: ok},
		{name: "hand-built strict effect", req: toolBefore(t, toolBeforeFull), effects: []gen.Effect{{ModifyInput: &gen.ModifyInputEffect{Target: "output", Operation: gen.EffectOperationReplace, Value: json.RawMessage(`{}`)}}}, index: 0, family: "modify"},
		{name: "continue with allowance", req: toolAfter(t, `{"effects":["flow"],"flow":{"operations":["stop","continue"],"remainingContinuations":1,"continuationCount":0}}`), effects: []gen.Effect{server.ContinueFlow("Check tests.")}, index: ok},
		{name: "continue exhausted", req: toolAfter(t, `{"effects":["flow"],"flow":{"operations":["stop","continue"],"remainingContinuations":0,"continuationCount":3}}`), effects: []gen.Effect{server.ContinueFlow("again")}, index: 0, family: "flow", reason: "remainingContinuations"},
		{name: "modify output granted", req: toolAfter(t, `{"effects":["modify"],"modify":{"output":{"replace":true,"merge":true}}}`), effects: []gen.Effect{server.MergeMessages(gen.ModifyMessagesEffectTargetOutput, msgs)}, index: ok},
		{name: "deny impossible at tool.after", req: toolAfter(t, `{"effects":["flow"],"flow":{"operations":["stop"]}}`), effects: []gen.Effect{server.Deny("late")}, index: 0, family: "deny", reason: "cannot grant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := parseRequest(t, c.req)
			err := server.Admit(req, server.InterceptResult{Effects: c.effects})
			if c.index == ok {
				require.NoError(t, err)
			} else {
				var ae *server.AdmissionError
				require.ErrorAs(t, err, &ae)
				require.Equal(t, c.index, ae.Index, "%v", err)
				require.Equal(t, c.family, ae.Effect, "%v", err)
				require.Equal(t, gen.EventName(req.Params.Event.Type()), ae.Event)
				if c.reason != "" {
					require.Contains(t, err.Error(), c.reason)
				}
			}

			// The same verdict on the wire, over both bindings.
			h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
				return server.InterceptResult{Effects: c.effects}, nil
			}}
			for bname, ex := range bindings {
				raw, _ := ex(t, h, c.req)
				r := decodeReply(t, raw)
				if c.index == ok {
					require.Zero(t, r.code(), "%s: %s", bname, raw)
					checkResponse(t, r, c.req)
					resp, err := gen.ParseInterceptResponse(raw)
					require.NoError(t, err)
					require.Len(t, resp.Result.Effects, len(c.effects))
				} else {
					require.Equal(t, jsonrpc.CodeBackendInternalError, r.code(), bname)
					require.Nil(t, r.Result, "an inadmissible response is never sent")
				}
			}
		})
	}
}

// TestNeverSendsUngranted checks that a callback cannot get an ungranted
// effect out, even by editing the request it was given, and that the author
// gets a clear error in the log hook.
func TestNeverSendsUngranted(t *testing.T) {
	logs := &logRecorder{}
	h := &server.Handler{
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			req.Params.Capabilities.Effects = append(req.Params.Capabilities.Effects, gen.EffectFamilyAllow)
			return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
		},
		Logger: slog.New(logs),
	}
	for bname, ex := range bindings {
		t.Run(bname, func(t *testing.T) {
			raw, _ := ex(t, h, toolBefore(t, denyOnly))
			r := decodeReply(t, raw)
			require.Equal(t, jsonrpc.CodeBackendInternalError, r.code())
			require.NotContains(t, string(raw), "allow")
		})
	}
	errs := logs.errs()
	require.NotEmpty(t, errs)
	var ae *server.AdmissionError
	require.ErrorAs(t, errs[0], &ae)
	require.Equal(t, 0, ae.Index)
	require.Equal(t, "allow", ae.Effect)
	require.Equal(t, gen.EventToolBefore, ae.Event)
	require.Contains(t, logs.text(), "not admitted")
}

func TestAdmitErrors(t *testing.T) {
	require.Error(t, server.Admit(nil, server.InterceptResult{}))
	ae := &server.AdmissionError{Event: gen.EventToolBefore, Index: -1, Reason: "whole"}
	require.Equal(t, "server: intercept response for tool.before not admitted: whole", ae.Error())
	require.Nil(t, ae.Unwrap())

	// Extensions are validated too.
	req := parseRequest(t, toolBefore(t, denyOnly))
	require.NoError(t, server.Admit(req, server.InterceptResult{Extensions: json.RawMessage(`{"com.example.trace":{"id":"1"}}`)}))
	err := server.Admit(req, server.InterceptResult{Extensions: json.RawMessage(`{"not reverse dns":1}`)})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "not valid against"), "%v", err)
}

// elicitationResult returns a user.elicitation.result intercept request
// with the given action, advertising modify(content).
func elicitationResult(t testing.TB, action string) []byte {
	t.Helper()
	obs := compact(t, readFixture(t, "http/catalogue-user.elicitation.result.valid.json"))
	return mutate(t, obs, func(m map[string]any) {
		el := event(m)["elicitation"].(map[string]any)
		el["action"] = action
		body := `{"action":"` + action + `","content":{"answer":"yes"}}`
		if action != "accept" {
			body = `{"action":"` + action + `"}`
		}
		el["result"].(map[string]any)["text"] = body
		params(m)["capabilities"] = map[string]any{
			"effects":     []any{"modify"},
			"modify":      map[string]any{"content": map[string]any{"replace": true, "merge": true}},
			"elicitation": map[string]any{"form": map[string]any{}},
		}
		m["id"] = event(m)["id"]
		m["method"] = jsonrpc.MethodIntercept
	})
}

// TestAdmissionBoundaryContext covers a rule that only the settlement
// engine knows: form answers can be modified only in an accepted form
// result.
func TestAdmissionBoundaryContext(t *testing.T) {
	answers := gen.OrderedMap[gen.FormAnswerValue]{{Name: "answer", Value: gen.FormAnswerValueFromString("no")}}
	res := server.InterceptResult{Effects: []gen.Effect{server.MergeForm(answers)}}

	accepted := parseRequest(t, elicitationResult(t, "accept"))
	require.NoError(t, server.Admit(accepted, res))

	declined := elicitationResult(t, "decline")
	err := server.Admit(parseRequest(t, declined), res)
	var ae *server.AdmissionError
	require.ErrorAs(t, err, &ae, "%v", err)
	require.Equal(t, 0, ae.Index)
	require.Equal(t, "modify", ae.Effect)
	require.Contains(t, err.Error(), "settlement rules")

	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) { return res, nil }}
	for bname, ex := range bindings {
		raw, _ := ex(t, h, declined)
		require.Equal(t, jsonrpc.CodeBackendInternalError, decodeReply(t, raw).code(), bname)
		raw, _ = ex(t, h, elicitationResult(t, "accept"))
		require.Zero(t, decodeReply(t, raw).code(), bname)
	}

	// A request that the settlement engine finds inconsistent (the action
	// differs from the result body) is invalid params, before the callback.
	inconsistent := mutate(t, elicitationResult(t, "accept"), func(m map[string]any) {
		event(m)["elicitation"].(map[string]any)["action"] = "decline"
	})
	var called atomic.Bool
	h2 := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		called.Store(true)
		return server.InterceptResult{}, nil
	}}
	raw, _ := viaHTTP(t, h2, inconsistent)
	require.Equal(t, jsonrpc.CodeInvalidParams, decodeReply(t, raw).code())
	require.False(t, called.Load())
}
