package settle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// formSchemaBody is a form request whose requested schema carries upstream
// default annotations that must never be applied: a fractional default on
// an integer property and an enum default outside its options.
const formSchemaBody = `{"message":"Profile","requestedSchema":{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":1},` +
	`"age":{"type":"integer","minimum":0,"maximum":150,"default":1.5},` +
	`"color":{"type":"string","enum":["red","green"],"default":"blue"},` +
	`"ok":{"type":"boolean"},` +
	`"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},` +
	`"required":["name"]},"_meta":{"trace":"t1"}}`

const urlBody = `{"mode":"url","message":"Sign in","url":"https://example.com/auth?x=1","elicitationId":"el-42"}`

// elicitReq renders a user.elicitation.request event with request part part
// ("" for none).
func elicitReq(id, source, session, server, mode, part string) string {
	s := `{"id":"` + id + `","source":"` + source + `","time":"2026-09-15T12:00:00Z","type":"user.elicitation.request"`
	if session != "" {
		s += `,"session":{"id":"` + session + `"}`
	}
	s += `,"elicitation":{"server":"` + server + `","mode":"` + mode + `"`
	if part != "" {
		s += `,"request":` + part
	}
	return s + `}}`
}

// elicitRes renders a user.elicitation.result event.
func elicitRes(id, parent, source, session, server, mode, action, part string) string {
	s := `{"id":"` + id + `","source":"` + source + `","time":"2026-09-15T12:00:00Z","type":"user.elicitation.result"`
	if session != "" {
		s += `,"session":{"id":"` + session + `"}`
	}
	if parent != "" {
		s += `,"parentEventId":"` + parent + `"`
	}
	s += `,"elicitation":{"server":"` + server + `","mode":"` + mode + `","action":"` + action + `"`
	if part != "" {
		s += `,"result":` + part
	}
	return s + `}}`
}

func metaPart(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"metadata","size":10}`
}
func omitPart(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"omit"}`
}
func gapPart(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"body","gap":{"reason":"unavailable"}}`
}

func reqOf(t testing.TB, s string) *gen.UserElicitationRequestEvent {
	t.Helper()
	ev := parseEvent(t, s)
	require.NotNil(t, ev.UserElicitationRequest)
	return ev.UserElicitationRequest
}

func resOf(t testing.TB, s string) *gen.UserElicitationResultEvent {
	t.Helper()
	ev := parseEvent(t, s)
	require.NotNil(t, ev.UserElicitationResult)
	return ev.UserElicitationResult
}

const src = "urn:test:harness"

func formReq(part string) string { return elicitReq("q1", src, "s1", "srv", "form", part) }
func formRes(action, part string) string {
	return elicitRes("r1", "q1", src, "s1", "srv", "form", action, part)
}

// TestValidateElicitationExchange covers the exchange checks of
// interaction-payloads.md §MCP elicitation binding and ELICITATION.md: the
// correlation checks run before bodies are read, bodies are complete MCP
// JSON, form answers satisfy the requested schema without defaults, and
// selected gaps fail closed.
func TestValidateElicitationExchange(t *testing.T) {
	body := func(id, text string) string { return textPart(id, text) }
	fq := body("q", formSchemaBody)
	cases := []struct {
		name       string
		req, res   string
		check      string // "" for valid
		reqBody    string
		resBody    string
		resultText string
	}{
		{name: "form accept", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"Ada","age":36,"color":"red","ok":true,"tags":["a"]},"_meta":{"m":1}}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "explicit form mode", req: formReq(body("q", `{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)), res: formRes("accept", body("r", `{"action":"accept","content":{"a":"x"}}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "form accept without optional answers gets no defaults", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"Ada"}}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated, resultText: `{"action":"accept","content":{"name":"Ada"}}`},
		{name: "form decline", req: formReq(fq), res: formRes("decline", body("r", `{"action":"decline"}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "form cancel", req: formReq(fq), res: formRes("cancel", body("r", `{"action":"cancel"}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "url accept", req: elicitReq("q1", src, "s1", "srv", "url", body("q", urlBody)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "accept", body("r", `{"action":"accept"}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "url decline", req: elicitReq("q1", src, "s1", "srv", "url", body("q", urlBody)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "decline", body("r", `{"action":"decline"}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "url cancel", req: elicitReq("q1", src, "s1", "srv", "url", body("q", urlBody)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "cancel", body("r", `{"action":"cancel"}`)), reqBody: settle.BodyValidated, resBody: settle.BodyValidated},
		{name: "metadata both", req: formReq(metaPart("q")), res: formRes("accept", metaPart("r")), reqBody: settle.BodyNotSelected, resBody: settle.BodyNotSelected},
		{name: "omit both", req: formReq(omitPart("q")), res: formRes("decline", omitPart("r")), reqBody: settle.BodyNotSelected, resBody: settle.BodyNotSelected},
		{name: "no parts", req: formReq(""), res: formRes("cancel", ""), reqBody: settle.BodyAbsent, resBody: settle.BodyAbsent},
		{name: "url metadata", req: elicitReq("q1", src, "s1", "srv", "url", metaPart("q")), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "accept", omitPart("r")), reqBody: settle.BodyNotSelected, resBody: settle.BodyNotSelected},
		{name: "no session on either", req: elicitReq("q1", src, "", "srv", "form", fq), res: elicitRes("r1", "q1", src, "", "srv", "form", "decline", ""), reqBody: settle.BodyValidated, resBody: settle.BodyAbsent},

		// correlation, before any body: the bodies here are invalid too
		{name: "no parent", req: formReq(body("q", "not json")), res: elicitRes("r1", "", src, "s1", "srv", "form", "accept", body("r", "bad")), check: settle.CheckParent},
		{name: "wrong parent", req: formReq(body("q", "not json")), res: elicitRes("r1", "q2", src, "s1", "srv", "form", "accept", body("r", "bad")), check: settle.CheckParent},
		{name: "other source", req: formReq(body("q", "not json")), res: elicitRes("r1", "q1", "urn:test:other", "s1", "srv", "form", "accept", body("r", "bad")), check: settle.CheckSource},
		{name: "other session", req: formReq(body("q", "not json")), res: elicitRes("r1", "q1", src, "s2", "srv", "form", "accept", body("r", "bad")), check: settle.CheckSession},
		{name: "session on result only", req: elicitReq("q1", src, "", "srv", "form", body("q", "x")), res: formRes("accept", body("r", "bad")), check: settle.CheckSession},
		{name: "session on request only", req: formReq(body("q", "x")), res: elicitRes("r1", "q1", src, "", "srv", "form", "accept", body("r", "bad")), check: settle.CheckSession},
		{name: "other server", req: formReq(body("q", "x")), res: elicitRes("r1", "q1", src, "s1", "srv2", "form", "accept", body("r", "bad")), check: settle.CheckServer},
		{name: "other mode", req: formReq(body("q", "x")), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "accept", body("r", "bad")), check: settle.CheckMode},

		// request body
		{name: "request gap fails closed", req: formReq(gapPart("q")), res: formRes("decline", ""), check: settle.CheckRequestGap},
		{name: "request not json", req: formReq(body("q", "{")), res: formRes("decline", ""), check: settle.CheckRequestBody},
		{name: "request jsonrpc envelope", req: formReq(body("q", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":`+formSchemaBody+`}`)), res: formRes("decline", ""), check: settle.CheckRequestBody},
		{name: "request form without schema", req: formReq(body("q", `{"message":"m"}`)), res: formRes("decline", ""), check: settle.CheckRequestBody},
		{name: "request nested object schema", req: formReq(body("q", `{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}`)), res: formRes("decline", ""), check: settle.CheckRequestBody},
		{name: "request url without id", req: elicitReq("q1", src, "s1", "srv", "url", body("q", `{"mode":"url","message":"m","url":"https://example.com"}`)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "decline", ""), check: settle.CheckRequestBody},
		{name: "request url without url", req: elicitReq("q1", src, "s1", "srv", "url", body("q", `{"mode":"url","message":"m","elicitationId":"e"}`)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "decline", ""), check: settle.CheckRequestBody},
		{name: "metadata mode differs from body", req: elicitReq("q1", src, "s1", "srv", "url", fq), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "decline", ""), check: settle.CheckMode},

		// result body
		{name: "result gap fails closed", req: formReq(fq), res: formRes("accept", gapPart("r")), check: settle.CheckResultGap},
		{name: "result not json", req: formReq(fq), res: formRes("accept", body("r", "[")), check: settle.CheckResultBody},
		{name: "result invalid action", req: formReq(fq), res: formRes("accept", body("r", `{"action":"approve"}`)), check: settle.CheckResultBody},
		{name: "result content items", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":[{"type":"text","text":"x"}]}`)), check: settle.CheckResultBody},
		{name: "result nested answer", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":{"x":1}}}`)), check: settle.CheckResultBody},
		{name: "action mismatch", req: formReq(fq), res: formRes("decline", body("r", `{"action":"accept","content":{"name":"x"}}`)), check: settle.CheckAction},
		{name: "decline with content", req: formReq(fq), res: formRes("decline", body("r", `{"action":"decline","content":{"name":"x"}}`)), check: settle.CheckContent},
		{name: "cancel with content", req: formReq(fq), res: formRes("cancel", body("r", `{"action":"cancel","content":{}}`)), check: settle.CheckContent},
		{name: "url accept with content", req: elicitReq("q1", src, "s1", "srv", "url", body("q", urlBody)), res: elicitRes("r1", "q1", src, "s1", "srv", "url", "accept", body("r", `{"action":"accept","content":{"a":"b"}}`)), check: settle.CheckContent},
		{name: "missing required answer", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"age":3}}`)), check: settle.CheckAnswers},
		{name: "accept without content misses required", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept"}`)), check: settle.CheckAnswers},
		{name: "wrong type", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","ok":"yes"}}`)), check: settle.CheckAnswers},
		{name: "fractional integer", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","age":1.5}}`)), check: settle.CheckAnswers},
		{name: "enum outside options", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","color":"blue"}}`)), check: settle.CheckAnswers},
		{name: "multi-select outside options", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","tags":["c"]}}`)), check: settle.CheckAnswers},
		{name: "number above maximum", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","age":151}}`)), check: settle.CheckAnswers},
		{name: "number below minimum", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a","age":-1}}`)), check: settle.CheckAnswers},
		{name: "string too short", req: formReq(fq), res: formRes("accept", body("r", `{"action":"accept","content":{"name":""}}`)), check: settle.CheckAnswers},
		{name: "body accept without request body fails closed", req: formReq(metaPart("q")), res: formRes("accept", body("r", `{"action":"accept","content":{"name":"a"}}`)), check: settle.CheckFormContext},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, res := reqOf(t, tc.req), resOf(t, tc.res)
			before := encodeBoth(t, req, res)
			x, err := settle.ValidateElicitationExchange(req, res)
			require.Equal(t, before, encodeBoth(t, req, res), "inputs unchanged")
			if tc.check != "" {
				require.ErrorIs(t, err, settle.ErrInvalidExchange)
				var xe *settle.ExchangeError
				require.ErrorAs(t, err, &xe)
				require.Equal(t, tc.check, xe.Check)
				require.Nil(t, x)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.reqBody, x.RequestBody)
			require.Equal(t, tc.resBody, x.ResultBody)
			require.Equal(t, "srv", x.Server)
			if tc.resultText != "" {
				require.Equal(t, tc.resultText, x.ResultText, "no default injected")
			}
			if x.RequestBody == settle.BodyValidated && x.Request.Form != nil {
				// default annotations preserved as given
				if strings.Contains(tc.req, `1.5`) {
					b, err := x.Request.MarshalJSON()
					require.NoError(t, err)
					require.Contains(t, string(b), `"default":1.5`)
					require.Contains(t, string(b), `"default":"blue"`)
				}
			}
			if x.RequestBody == settle.BodyValidated && x.Request.URL != nil {
				require.Equal(t, "el-42", x.Request.URL.ElicitationID)
				require.Equal(t, "https://example.com/auth?x=1", x.Request.URL.URL)
			}
		})
	}
}

func encodeBoth(t testing.TB, req *gen.UserElicitationRequestEvent, res *gen.UserElicitationResultEvent) string {
	t.Helper()
	a, err := gen.EncodeEvent(&gen.Event{UserElicitationRequest: req})
	require.NoError(t, err)
	b, err := gen.EncodeEvent(&gen.Event{UserElicitationResult: res})
	require.NoError(t, err)
	return string(a) + string(b)
}

// TestElicitationModes: form and URL support are independent; an absent
// capability and AHP {} support neither; only an MCP-origin legacy {} is
// form support, and it never grants URL nor renders as AHP {}.
func TestElicitationModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ahp       string // capabilities.elicitation JSON ("" absent)
		form, url bool
	}{
		{"absent", "", false, false},
		{"empty", `{}`, false, false},
		{"form", `{"form":{}}`, true, false},
		{"url", `{"url":{}}`, false, true},
		{"both", `{"form":{},"url":{}}`, true, true},
	} {
		t.Run("ahp "+tc.name, func(t *testing.T) {
			var c *gen.CapabilitiesElicitation
			if tc.ahp != "" {
				c = &gen.CapabilitiesElicitation{}
				require.NoError(t, json.Unmarshal([]byte(tc.ahp), c))
			}
			m := settle.ModesOf(c)
			require.Equal(t, settle.ElicitationModes{Form: tc.form, URL: tc.url}, m)
			check := func(ok bool, mode gen.ElicitationMode) {
				err := settle.ValidateElicitationMode(m, mode)
				if ok {
					require.NoError(t, err)
					return
				}
				var xe *settle.ExchangeError
				require.ErrorAs(t, err, &xe)
				require.Equal(t, settle.CheckModeSupport, xe.Check)
			}
			check(tc.form, gen.ElicitationModeForm)
			check(tc.url, gen.ElicitationModeURL)
		})
	}
	for _, tc := range []struct {
		raw       string
		form, url bool
		ahp       string
	}{
		{"", false, false, "null"},
		{`{}`, true, false, `{"form":{}}`},
		{`{"form":{}}`, true, false, `{"form":{}}`},
		{`{"url":{}}`, false, true, `{"url":{}}`},
		{`{"form":{},"url":{}}`, true, true, `{"form":{},"url":{}}`},
	} {
		t.Run("mcp "+tc.raw, func(t *testing.T) {
			m, err := settle.MCPClientModes(json.RawMessage(tc.raw))
			require.NoError(t, err)
			require.Equal(t, settle.ElicitationModes{Form: tc.form, URL: tc.url}, m)
			b, err := json.Marshal(m.Capabilities())
			require.NoError(t, err)
			require.JSONEq(t, tc.ahp, string(b))
		})
	}
	_, err := settle.MCPClientModes(json.RawMessage(`{"form":{},"form":{}}`))
	require.Error(t, err, "repeated member names are errors")
}

func formCaps(t testing.TB, s string) gen.Capabilities {
	t.Helper()
	var c gen.Capabilities
	require.NoError(t, json.Unmarshal([]byte(s), &c))
	return c
}

func effectList(t testing.TB, s string) []gen.Effect {
	t.Helper()
	var es []gen.Effect
	require.NoError(t, json.Unmarshal([]byte(s), &es))
	return es
}

// TestApplyElicitationEffects covers atomic staging: request return/deny
// and result content replace/merge are distinct operations; invalid later
// effects, ungranted operations, conflicting terminal effects and invalid
// form data reject the whole list; inputs never change; supplied results
// carry authenticated hook provenance.
func TestApplyElicitationEffects(t *testing.T) {
	fq := textPart("q", formSchemaBody)
	req := formReq(fq)
	acc := formRes("accept", textPart("r", `{"action":"accept","content":{"name":"Ada","age":36},"_meta":{"m":1}}`))
	reqCaps := `{"effects":["deny","return","message"],"elicitation":{"form":{}}}`
	resCaps := `{"effects":["modify","message"],"modify":{"content":{"replace":true,"merge":true}},"elicitation":{"form":{}}}`
	mergeOnly := `{"effects":["modify"],"modify":{"content":{"merge":true}},"elicitation":{"form":{}}}`
	urlReq := elicitReq("q1", src, "s1", "srv", "url", textPart("q", urlBody))
	cases := []struct {
		name       string
		req, res   string
		caps, effs string
		supplier   string
		reason     string // rejection reason
		check      string // exchange check
		noSupplier bool
		denied     bool
		returned   bool
		modified   bool
		result     string
		origin     string
	}{
		{name: "request return", req: req, caps: reqCaps, effs: `[{"type":"return","value":{"action":"accept","content":{"name":"Bot"}}},{"type":"message","text":"answered"}]`, returned: true, result: `{"action":"accept","content":{"name":"Bot"}}`, origin: settle.OriginHook},
		{name: "request return decline", req: req, caps: reqCaps, effs: `[{"type":"return","value":{"action":"decline"}}]`, returned: true, result: `{"action":"decline"}`, origin: settle.OriginHook},
		{name: "request deny", req: req, caps: reqCaps, effs: `[{"type":"deny","reason":"no"}]`, denied: true},
		{name: "url return", req: urlReq, caps: `{"effects":["return"],"elicitation":{"url":{}}}`, effs: `[{"type":"return","value":{"action":"decline"}}]`, returned: true, result: `{"action":"decline"}`, origin: settle.OriginHook},
		{name: "url deny", req: urlReq, caps: `{"effects":["deny"],"elicitation":{"url":{}}}`, effs: `[{"type":"deny","reason":"blocked"}]`, denied: true},
		{name: "result merge", req: req, res: acc, caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"age":37,"color":"green"}}]`, modified: true, result: `{"_meta":{"m":1},"action":"accept","content":{"name":"Ada","age":37,"color":"green"}}`, origin: settle.OriginHook},
		{name: "result replace", req: req, res: acc, caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"replace","value":{"name":"Bea"}}]`, modified: true, result: `{"_meta":{"m":1},"action":"accept","content":{"name":"Bea"}}`, origin: settle.OriginHook},
		{name: "result message only keeps mcp result", req: req, res: acc, caps: resCaps, effs: `[{"type":"message","text":"seen"}]`, result: `{"action":"accept","content":{"name":"Ada","age":36},"_meta":{"m":1}}`, origin: settle.OriginMCP},

		{name: "no supplier", req: req, caps: reqCaps, effs: `[{"type":"deny","reason":"no"}]`, supplier: "-", noSupplier: true},
		{name: "deny and return conflict", req: req, caps: reqCaps, effs: `[{"type":"deny","reason":"no"},{"type":"return","value":{"action":"decline"}}]`, reason: settle.ReasonConflictingEffects},
		{name: "two returns conflict", req: req, caps: reqCaps, effs: `[{"type":"return","value":{"action":"decline"}},{"type":"return","value":{"action":"cancel"}}]`, reason: settle.ReasonConflictingEffects},
		{name: "invalid later effect", req: req, caps: reqCaps, effs: `[{"type":"message","text":"a"},{"type":"return","value":{"action":"accept","content":{"name":1}}}]`, reason: settle.ReasonInvalidValue},
		{name: "return not granted", req: req, caps: `{"effects":["deny"],"elicitation":{"form":{}}}`, effs: `[{"type":"return","value":{"action":"decline"}}]`, reason: settle.ReasonEffectNotGranted},
		{name: "return mode not granted", req: req, caps: `{"effects":["return"]}`, effs: `[{"type":"return","value":{"action":"decline"}}]`, reason: settle.ReasonModeNotGranted},
		{name: "url return mode not granted by form", req: urlReq, caps: `{"effects":["return"],"elicitation":{"form":{}}}`, effs: `[{"type":"return","value":{"action":"decline"}}]`, reason: settle.ReasonModeNotGranted},
		{name: "url return with content", req: urlReq, caps: `{"effects":["return"],"elicitation":{"url":{}}}`, effs: `[{"type":"return","value":{"action":"accept","content":{"a":"b"}}}]`, reason: settle.ReasonInvalidValue},
		{name: "return invalid form data", req: req, caps: reqCaps, effs: `[{"type":"return","value":{"action":"accept","content":{"age":3}}}]`, reason: settle.ReasonInvalidValue},
		{name: "return accept on metadata request", req: formReq(metaPart("q")), caps: reqCaps, effs: `[{"type":"return","value":{"action":"accept","content":{"name":"x"}}}]`, reason: settle.ReasonContentUnavailable},
		{name: "request modify forbidden", req: req, caps: reqCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, reason: settle.ReasonBoundaryForbidden},
		{name: "result replace not granted", req: req, res: acc, caps: mergeOnly, effs: `[{"type":"modify","target":"content","operation":"replace","value":{"name":"x"}}]`, reason: settle.ReasonOperationNotGranted},
		{name: "result merge invalid data", req: req, res: acc, caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"color":"blue"}}]`, reason: settle.ReasonInvalidValue},
		{name: "result replace drops required", req: req, res: acc, caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"age":1}},{"type":"modify","target":"content","operation":"replace","value":{"age":2}}]`, reason: settle.ReasonInvalidValue},
		{name: "result list value", req: req, res: acc, caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":[{"id":"m","role":"user","parts":[]}]}]`, reason: settle.ReasonInvalidValue},
		{name: "result deny forbidden", req: req, res: acc, caps: resCaps, effs: `[{"type":"deny","reason":"x"}]`, reason: settle.ReasonBoundaryForbidden},
		{name: "result modify declined", req: req, res: formRes("decline", textPart("r", `{"action":"decline"}`)), caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, reason: settle.ReasonTargetUnavailable},
		{name: "result modify metadata", req: req, res: formRes("accept", metaPart("r")), caps: resCaps, effs: `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, reason: settle.ReasonTargetUnavailable},
		{name: "uncorrelated result", req: req, res: elicitRes("r1", "other", src, "s1", "srv", "form", "accept", textPart("r", `{"action":"accept","content":{"name":"a"}}`)), caps: resCaps, effs: `[]`, check: settle.CheckParent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := settle.ElicitationEffects{Request: reqOf(t, tc.req), Granted: formCaps(t, tc.caps), Effects: effectList(t, tc.effs), Supplier: "hook:policy"}
			if tc.res != "" {
				in.Result = resOf(t, tc.res)
			} else {
				in.Result = nil
			}
			if tc.noSupplier {
				in.Supplier = ""
			}
			var before string
			if in.Result != nil {
				before = encodeBoth(t, in.Request, in.Result)
			}
			effBefore, err := json.Marshal(in.Effects)
			require.NoError(t, err)
			out, err := settle.ApplyElicitationEffects(context.Background(), in)
			if in.Result != nil {
				require.Equal(t, before, encodeBoth(t, in.Request, in.Result), "inputs unchanged")
			}
			effAfter, _ := json.Marshal(in.Effects)
			require.Equal(t, string(effBefore), string(effAfter))
			switch {
			case tc.noSupplier:
				require.ErrorIs(t, err, settle.ErrNoSupplier)
				require.Nil(t, out)
				return
			case tc.reason != "":
				var rj *settle.Rejection
				require.ErrorAs(t, err, &rj)
				require.Equal(t, tc.reason, rj.Reason)
				require.Nil(t, out, "no partial result")
				return
			case tc.check != "":
				var xe *settle.ExchangeError
				require.ErrorAs(t, err, &xe)
				require.Equal(t, tc.check, xe.Check)
				require.Nil(t, out)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.denied, out.Denied)
			require.Equal(t, tc.returned, out.Returned)
			require.Equal(t, tc.modified, out.Modified)
			require.Equal(t, tc.origin, out.Origin)
			if tc.result == "" {
				require.Nil(t, out.Result)
			} else {
				require.JSONEq(t, tc.result, string(out.Result))
			}
			if tc.returned || tc.modified {
				require.JSONEq(t, `{"kind":"hook","supplier":"hook:policy"}`, string(out.Provenance))
			} else {
				require.Nil(t, out.Provenance)
			}
		})
	}
}

// FuzzElicitationExchange: arbitrary request and result texts never panic,
// and an accepted exchange's validated texts are exactly the inputs.
func FuzzElicitationExchange(f *testing.F) {
	f.Add(formSchemaBody, `{"action":"accept","content":{"name":"Ada"}}`)
	f.Add(urlBody, `{"action":"accept"}`)
	f.Add(`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"integer","default":1.5}}}}`, `{"action":"accept","content":{"a":1e400}}`)
	f.Add(`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"]}}`, `{"action":"accept","content":{"a":"x","a":"y"}}`)
	f.Add(`[]`, `null`)
	f.Fuzz(func(t *testing.T, reqText, resText string) {
		req := &gen.UserElicitationRequestEvent{ID: "q1", Source: src, Time: "2026-09-15T12:00:00Z", Type: "user.elicitation.request",
			Elicitation: gen.InteractionEventUserElicitationRequestElicitation{Server: "srv", Mode: gen.ElicitationModeForm,
				Request: &gen.TextPart{Body: &gen.TextBodyPart{ID: "q", Text: reqText}}}}
		if strings.Contains(reqText, `"url"`) {
			req.Elicitation.Mode = gen.ElicitationModeURL
		}
		parent := "q1"
		res := &gen.UserElicitationResultEvent{ID: "r1", Source: src, Time: "2026-09-15T12:00:00Z", Type: "user.elicitation.result", ParentEventID: &parent,
			Elicitation: gen.InteractionEventUserElicitationResultElicitation{Server: "srv", Mode: req.Elicitation.Mode, Action: "accept",
				Result: &gen.TextPart{Body: &gen.TextBodyPart{ID: "r", Text: resText}}}}
		x, err := settle.ValidateElicitationExchange(req, res)
		if err != nil {
			require.ErrorIs(t, err, settle.ErrInvalidExchange)
			return
		}
		require.Equal(t, reqText, x.RequestText)
		require.Equal(t, resText, x.ResultText)
	})
}

// TestApplyElicitationEffectsLargeMerge: a merge of tens of thousands of
// answer fields over as many is linear in the members (it was quadratic:
// every supplied field scanned the whole growing answer object, so this
// case took a minute; -timeout 30s fails it), and keeps merge semantics: named fields replaced
// whole, omitted ones kept in place, new ones appended in order.
func TestApplyElicitationEffectsLargeMerge(t *testing.T) {
	const n = 40000
	var cur, sup strings.Builder
	cur.WriteString(`{"action":"accept","content":{"name":"Ada"`)
	sup.WriteString(`{"name":"Bea"`)
	for i := range n {
		fmt.Fprintf(&cur, `,"c%d":"x"`, i)
		fmt.Fprintf(&sup, `,"s%d":"y"`, i)
	}
	sup.WriteString(`,"c7":"z"}`)
	cur.WriteString(`}}`)
	resCaps := `{"effects":["modify"],"modify":{"content":{"merge":true}},"elicitation":{"form":{}}}`
	out, err := settle.ApplyElicitationEffects(context.Background(), settle.ElicitationEffects{
		Request: reqOf(t, formReq(textPart("q", formSchemaBody))), Result: resOf(t, formRes("accept", textPart("r", cur.String()))),
		Granted: formCaps(t, resCaps), Supplier: "hook:policy",
		Effects: effectList(t, `[{"type":"modify","target":"content","operation":"merge","value":`+sup.String()+`}]`),
	})
	require.NoError(t, err)
	require.True(t, out.Modified)
	var r struct {
		Content gen.OrderedMap[json.RawMessage] `json:"content"`
	}
	require.NoError(t, json.Unmarshal(out.Result, &r))
	require.Len(t, r.Content, 1+2*n)
	require.Equal(t, "name", r.Content[0].Name)
	require.JSONEq(t, `"Bea"`, string(r.Content[0].Value))
	require.Equal(t, "c7", r.Content[8].Name)
	require.JSONEq(t, `"z"`, string(r.Content[8].Value))
	require.Equal(t, "s0", r.Content[1+n].Name)
	require.Equal(t, fmt.Sprintf("s%d", n-1), r.Content[2*n].Name)
}
