package elicitation_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The wire corpus: each scenario starts its own authenticated receiver
// (cmd/elicitation server), runs a plan through cmd/elicitation client over
// loopback HTTP with the bearer tokens, checks every step's status and
// body, then the receiver's /receipts. Cases follow interop/ELICITATION.md.

// Form requests. formSchema carries upstream default annotations that must
// not be applied: a fractional default on an integer property and an enum
// default outside its options.
const (
	formSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0,"maximum":150,"default":1.5},"color":{"type":"string","enum":["red","green"],"default":"blue"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["name"]}`
	formBody   = `{"message":"Profile please","requestedSchema":` + formSchema + `,"_meta":{"trace":"t-1"}}`
	formMode   = `{"mode":"form","message":"Pick","requestedSchema":{"type":"object","properties":{"pick":{"type":"string","enum":["x","y"]}},"required":["pick"]}}`
	urlBody    = `{"mode":"url","message":"Authorize access","url":"https://auth.example.com/start?state=a%2Fb&x=1","elicitationId":"el-7781"}`
)

var (
	capsForm = `{"effects":[],"elicitation":{"form":{}}}`
	capsURL  = `{"effects":[],"elicitation":{"url":{}}}`
	capsBoth = `{"effects":[],"elicitation":{"form":{},"url":{}}}`
	capsNone = `{"effects":[]}`
	capsNo   = `{"effects":[],"elicitation":{}}`
)

type wstep struct {
	step   map[string]any
	status int
	body   string // expected subset of the body, "" for none
}

func intercept(event json.RawMessage, caps string) map[string]any {
	return map[string]any{"op": "intercept", "event": event, "capabilities": json.RawMessage(caps)}
}

const accepted = `{"jsonrpc":"2.0","result":{"protocolVersion":"draft","effects":[]}}`

func rejected(check string) string {
	return `{"error":{"code":-32602,"message":"Invalid params","data":{"check":"` + check + `"}}}`
}

// ok and bad are the two usual intercept expectations.
func ok(event json.RawMessage, caps string) wstep {
	return wstep{intercept(event, caps), 200, accepted}
}

func bad(event json.RawMessage, caps, check string) wstep {
	return wstep{intercept(event, caps), 200, rejected(check)}
}

type scenario struct {
	name    string
	steps   []wstep
	uploads int
	// checks are the checks of the intercept receipts in order ("" for an
	// accepted one).
	checks  []string
	absent  []string // never in the receipts
	present []string // in the receipts
	// receipts is an expected subset of the intercept receipts, in order
	// ("" for no assertion beyond checks).
	receipts []string
	// after checks the step outcomes further.
	after func(t *testing.T, outs []outcome)
}

type outcome struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

func formReq(id, session, part string) ev {
	return ev{id: id, session: session, server: "mcp.example", mode: "form", part: part}
}

func formRes(id, parent, session, action, part string) ev {
	return ev{id: id, parent: parent, session: session, server: "mcp.example", mode: "form", action: action, part: part}
}

func urlReq(id, part string) ev {
	return ev{id: id, session: "s1", server: "mcp.example", mode: "url", part: part}
}

func urlRes(id, parent, action, part string) ev {
	return ev{id: id, parent: parent, session: "s1", server: "mcp.example", mode: "url", action: action, part: part}
}

// Canaries: text that must never reach a metadata/omit receiver.
const (
	canaryPrompt = "CANARY-PROMPT-5b1"
	canarySchema = "canary_schema_field_77"
	canaryURL    = "https://canary.example.com/c-9d2"
	canaryResult = "CANARY-RESULT-e40"
)

var (
	canaryForm   = `{"message":"` + canaryPrompt + `","requestedSchema":{"type":"object","properties":{"` + canarySchema + `":{"type":"string"}},"required":["` + canarySchema + `"]}}`
	canaryAnswer = `{"action":"accept","content":{"` + canarySchema + `":"` + canaryResult + `"}}`
	canaryURLReq = `{"mode":"url","message":"` + canaryPrompt + `","url":"` + canaryURL + `","elicitationId":"canary-id"}`
	canaries     = []string{canaryPrompt, canarySchema, canaryURL, canaryResult, "canary-id"}
)

func hooksStep(selection, mode, reqText, action, resText string) map[string]any {
	return map[string]any{"op": "hooks", "selection": selection, "session": "s-h", "server": "mcp.example", "mode": mode,
		"requestId": "hq-" + selection + "-" + mode, "requestText": reqText, "resultId": "hr-" + selection + "-" + mode, "action": action, "resultText": resText}
}

const hooksOK = `{"request":{"permission":"none","diagnostics":[]},"result":{"permission":"none","diagnostics":[]}}`

func scenarios() []scenario {
	fq := textBody("q", formBody)
	ans := func(content string) string { return textBody("r", `{"action":"accept","content":`+content+`}`) }
	return []scenario{
		{name: "default form mode accept", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","age":36,"color":"red","tags":["a","b"]}`)).result(), capsNone),
		}, checks: []string{"", ""}, receipts: []string{
			`{"principal":"sender-go","eventType":"user.elicitation.request","requestBody":"body","body":` + jsonString(formBody) + `}`,
			`{"eventType":"user.elicitation.result","parentEventId":"q1","resultBody":"body","result":{"action":"accept","content":{"name":"Ada","age":36,"color":"red","tags":["a","b"]}},"origin":"mcp","verifiedHuman":false}`,
		}},
		{name: "explicit form mode accept", steps: []wstep{
			ok(formReq("q1", "s1", textBody("q", formMode)).request(), capsForm),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"pick":"y"}`)).result(), capsNone),
		}, checks: []string{"", ""}},
		{name: "form decline and cancel", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(formReq("q2", "s1", fq).request(), capsForm),
			ok(formRes("r1", "q1", "s1", "decline", textBody("r", `{"action":"decline"}`)).result(), capsNone),
			ok(formRes("r2", "q2", "s1", "cancel", textBody("r", `{"action":"cancel"}`)).result(), capsNone),
		}, checks: []string{"", "", "", ""}},
		{name: "url accept decline cancel keep id and address", steps: []wstep{
			ok(urlReq("u1", textBody("q", urlBody)).request(), capsURL),
			ok(urlReq("u2", textBody("q", urlBody)).request(), capsURL),
			ok(urlReq("u3", textBody("q", urlBody)).request(), capsBoth),
			ok(urlRes("v1", "u1", "accept", textBody("r", `{"action":"accept"}`)).result(), capsNone),
			ok(urlRes("v2", "u2", "decline", textBody("r", `{"action":"decline"}`)).result(), capsNone),
			ok(urlRes("v3", "u3", "cancel", textBody("r", `{"action":"cancel"}`)).result(), capsNone),
		}, checks: []string{"", "", "", "", "", ""}, present: []string{`https://auth.example.com/start?state=a%2Fb\u0026x=1`, `el-7781`}, receipts: []string{
			`{"mode":"url","body":` + jsonString(urlBody) + `}`, `{}`, `{}`,
			`{"action":"accept","result":{"action":"accept"},"completed":false}`, `{"action":"decline"}`, `{"action":"cancel"}`,
		}},
		{name: "missing mode-specific fields", steps: []wstep{
			bad(formReq("q1", "s1", textBody("q", `{"message":"no schema"}`)).request(), capsForm, "request_body"),
			bad(urlReq("u1", textBody("q", `{"mode":"url","message":"m","url":"https://a.example.com"}`)).request(), capsURL, "request_body"),
			bad(urlReq("u2", textBody("q", `{"mode":"url","message":"m","elicitationId":"e"}`)).request(), capsURL, "request_body"),
			bad(urlReq("u3", textBody("q", `{"mode":"url","url":"https://a.example.com","elicitationId":"e"}`)).request(), capsURL, "request_body"),
		}, checks: []string{"request_body", "request_body", "request_body", "request_body"}},
		{name: "not a complete MCP params body", steps: []wstep{
			bad(formReq("q1", "s1", textBody("q", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":`+formBody+`}`)).request(), capsForm, "request_body"),
			bad(formReq("q2", "s1", textBody("q", `Profile please`)).request(), capsForm, "request_body"),
			bad(formReq("q3", "s1", textBody("q", `{"message":"m","requestedSchema":{"type":"object","properties":{"o":{"type":"object"}}}}`)).request(), capsForm, "request_body"),
		}, checks: []string{"request_body", "request_body", "request_body"}},
		{name: "invalid actions", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "accept", textBody("r", `{"action":"approve"}`)).result(), capsNone, "result_body"),
			{intercept(formRes("r2", "q1", "s1", "approve", "").result(), capsNone), 200, `{"error":{"code":-32602}}`},
			ok(formRes("r3", "q1", "s1", "decline", textBody("r", `{"action":"decline"}`)).result(), capsNone),
		}, checks: []string{"", "result_body", "canonical", ""}},
		{name: "invalid content", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "accept", ans(`[{"type":"text","text":"Ada"}]`)).result(), capsNone, "result_body"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":{"first":"Ada"}}`)).result(), capsNone, "result_body"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`"Ada"`)).result(), capsNone, "result_body"),
		}, checks: []string{"", "result_body", "result_body", "result_body"}},
		{name: "submitted form data fails required type enum number", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"age":3}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", textBody("r", `{"action":"accept"}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":7}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","color":"blue"}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","tags":["c"]}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","age":151}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","age":-1}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada","age":1.5}`)).result(), capsNone, "answers"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":""}`)).result(), capsNone, "answers"),
			// every failure left the request pending
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone),
		}, checks: []string{"", "answers", "answers", "answers", "answers", "answers", "answers", "answers", "answers", "answers", ""}},
		{name: "defaults are annotations, never applied", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone),
		}, checks: []string{"", ""}, present: []string{`\"default\":1.5`, `\"default\":\"blue\"`}, receipts: []string{
			`{}`, `{"result":{"action":"accept","content":{"name":"Ada"}}}`,
		}},
		{name: "forbidden url decline cancel content", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(urlReq("u1", textBody("q", urlBody)).request(), capsURL),
			bad(formRes("r1", "q1", "s1", "decline", textBody("r", `{"action":"decline","content":{"name":"Ada"}}`)).result(), capsNone, "content"),
			bad(formRes("r1", "q1", "s1", "cancel", textBody("r", `{"action":"cancel","content":{}}`)).result(), capsNone, "content"),
			bad(urlRes("v1", "u1", "accept", textBody("r", `{"action":"accept","content":{"token":"x"}}`)).result(), capsNone, "content"),
		}, checks: []string{"", "", "content", "content", "content"}},
		{name: "metadata mismatches", steps: []wstep{
			bad(ev{id: "q0", session: "s1", server: "mcp.example", mode: "url", part: fq}.request(), capsBoth, "mode"),
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "decline", ans(`{"name":"Ada"}`)).result(), capsNone, "action"),
			bad(ev{id: "r1", parent: "q1", session: "s1", server: "mcp.other", mode: "form", action: "decline"}.result(), capsNone, "server"),
			bad(ev{id: "r1", parent: "q1", session: "s1", server: "mcp.example", mode: "url", action: "decline"}.result(), capsNone, "mode"),
		}, checks: []string{"mode", "", "action", "server", "mode"}},
		{name: "selected gaps fail closed", steps: []wstep{
			bad(formReq("q0", "s1", textGap("q")).request(), capsForm, "request_gap"),
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "accept", textGap("r")).result(), capsNone, "result_gap"),
		}, checks: []string{"request_gap", "", "result_gap"}},
		{name: "body-selected accept needs the request body", steps: []wstep{
			ok(formReq("q1", "s1", textMeta("q")).request(), capsForm),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone, "form_context"),
			ok(formRes("r1", "q1", "s1", "accept", textMeta("r")).result(), capsNone),
		}, checks: []string{"", "form_context", ""}, receipts: []string{`{"requestBody":"not-selected","body":null}`, `{}`, `{"resultBody":"not-selected","body":null,"result":null}`}},
		{name: "mode support is per mode and independent", steps: []wstep{
			bad(formReq("q1", "s1", fq).request(), capsNone, "mode_support"),
			bad(formReq("q2", "s1", fq).request(), capsNo, "mode_support"),
			bad(formReq("q3", "s1", fq).request(), capsURL, "mode_support"),
			bad(urlReq("u1", textBody("q", urlBody)).request(), capsForm, "mode_support"),
			ok(urlReq("u2", textBody("q", urlBody)).request(), capsURL),
			ok(formReq("q4", "s1", fq).request(), capsForm),
		}, checks: []string{"mode_support", "mode_support", "mode_support", "mode_support", "", ""}},
		{name: "result correlation", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formRes("r1", "", "s1", "decline", "").result(), capsNone, "parent"),
			bad(formRes("r1", "q9", "s1", "decline", "").result(), capsNone, "unknown_request"),
			bad(ev{id: "r1", parent: "q1", source: "urn:test:other", session: "s1", server: "mcp.example", mode: "form", action: "decline"}.result(), capsNone, "unknown_request"),
			bad(formRes("r1", "q1", "s2", "decline", textBody("r", `{"action":"decline"}`)).result(), capsNone, "session"),
			bad(formRes("r1", "q1", "s2", "decline", textMeta("r")).result(), capsNone, "session"),
			bad(formRes("r1", "q1", "s2", "decline", textOmit("r")).result(), capsNone, "session"),
			bad(formRes("r1", "q1", "", "decline", "").result(), capsNone, "session"),
			// failed correlation consumed nothing
			ok(formRes("r1", "q1", "s1", "decline", textBody("r", `{"action":"decline"}`)).result(), capsNone),
			// the request is settled: a second result is unknown
			bad(formRes("r2", "q1", "s1", "decline", "").result(), capsNone, "unknown_request"),
		}, checks: []string{"", "parent", "unknown_request", "unknown_request", "session", "session", "session", "session", "", "unknown_request"}},
		{name: "pending requests are indexed by source and id", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(ev{id: "q1", source: "urn:test:other", session: "s1", server: "mcp.example", mode: "form", part: textBody("q", formMode)}.request(), capsForm),
			ok(ev{id: "r1", parent: "q1", source: "urn:test:other", session: "s1", server: "mcp.example", mode: "form", action: "accept", part: ans(`{"pick":"x"}`)}.result(), capsNone),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone),
		}, checks: []string{"", "", "", ""}},
		{name: "duplicate live identity is rejected without replacement", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			bad(formReq("q1", "s1", textBody("q", formMode)).request(), capsForm, "duplicate"),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"pick":"x"}`)).result(), capsNone, "answers"),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone),
		}, checks: []string{"", "duplicate", "answers", ""}},
		{name: "two outstanding requests in one session settled in reverse order", steps: []wstep{
			ok(formReq("q1", "s1", fq).request(), capsForm),
			ok(formReq("q2", "s1", textBody("q", formMode)).request(), capsForm),
			bad(formRes("r2", "q2", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone, "answers"),
			ok(formRes("r2", "q2", "s1", "accept", ans(`{"pick":"y"}`)).result(), capsNone),
			bad(formRes("r1", "q1", "s1", "accept", ans(`{"pick":"y"}`)).result(), capsNone, "answers"),
			ok(formRes("r1", "q1", "s1", "accept", ans(`{"name":"Ada"}`)).result(), capsNone),
		}, checks: []string{"", "", "answers", "", "answers", ""}},
		{name: "principal comes from the bearer configuration", steps: []wstep{
			ok(ev{id: "q1", source: "urn:authenticated:mallory", session: "s1", server: "authenticated:mallory", mode: "form", part: fq}.request(), capsForm),
		}, checks: []string{""}, receipts: []string{`{"principal":"sender-go"}`}},
		{name: "wrong tokens", steps: []wstep{
			{map[string]any{"op": "intercept", "token": "wrong", "event": formReq("q1", "s1", fq).request(), "capabilities": json.RawMessage(capsForm)}, 401, ""},
			{map[string]any{"op": "intercept", "token": "upload", "event": formReq("q1", "s1", fq).request(), "capabilities": json.RawMessage(capsForm)}, 401, ""},
			{map[string]any{"op": "intercept", "token": "none", "event": formReq("q1", "s1", fq).request(), "capabilities": json.RawMessage(capsForm)}, 401, ""},
			{map[string]any{"op": "receipts", "token": "wrong"}, 401, ""},
			{map[string]any{"op": "receipts", "token": "upload"}, 401, ""},
			{map[string]any{"op": "upload", "token": "wrong", "text": "abc"}, 401, ""},
			{map[string]any{"op": "upload", "token": "hooks", "text": "abc"}, 401, ""},
			{map[string]any{"op": "upload", "token": "none", "text": "abc"}, 401, ""},
		}, uploads: 0, checks: []string{}},
		{name: "uploads: receipts, bad digests, immutable references", steps: []wstep{
			{map[string]any{"op": "upload", "text": "abc"}, 201, `{"size":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`},
			{map[string]any{"op": "upload", "text": "abc"}, 201, `{"size":3}`},
			{map[string]any{"op": "upload", "text": "abc", "sha256": strings.Repeat("0", 64)}, 400, ""},
			{map[string]any{"op": "upload", "text": "abc", "sha256": "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}, 400, ""},
			{map[string]any{"op": "upload", "text": "abcd", "length": 3, "sha256": "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"}, 400, ""},
			{map[string]any{"op": "upload", "text": ""}, 201, `{"size":0}`},
		}, uploads: 3, checks: []string{}, after: func(t *testing.T, outs []outcome) {
			var a, b struct {
				Ref string `json:"ref"`
			}
			require.NoError(t, json.Unmarshal(outs[0].Body, &a))
			require.NoError(t, json.Unmarshal(outs[1].Body, &b))
			require.NotEmpty(t, a.Ref)
			require.NotEqual(t, a.Ref, b.Ref, "the same bytes uploaded again get a new receiver reference")
		}},
		{name: "bodies are inline text, never upload references", steps: []wstep{
			{intercept(formReq("q1", "s1", `{"id":"q","kind":"attachment","mediaType":"application/json","body":{"ref":"missing-ref"}}`).request(), capsForm), 200, `{"error":{"code":-32602}}`},
			{intercept(formReq("q2", "s1", `{"id":"q","kind":"text","mediaType":"text/plain","selection":"body","ref":"missing-ref"}`).request(), capsForm), 200, `{"error":{"code":-32602}}`},
		}, checks: []string{"canonical", "canonical"}},
		{name: "malformed envelopes", steps: []wstep{
			{map[string]any{"op": "raw", "path": "/hooks/intercept", "body": `{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{}}}`}, 200, `{"error":{"code":-32602}}`},
			{map[string]any{"op": "raw", "path": "/hooks/intercept", "body": `{`}, 200, `{"error":{"code":-32700}}`},
			{map[string]any{"op": "raw", "path": "/hooks/intercept", "body": `{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + string(formReq("x", "s1", fq).request()) + `,"capabilities":{"effects":[]},"capabilities":{"effects":[]}}}`}, 200, `{"error":{}}`},
		}, checks: []string{"canonical", "canonical", "canonical"}},

		// Metadata/omit through the SDK's own sender (hooks): the receiver
		// gets no prompt, schema, URL, result text or body bytes, and no
		// upload happens.
		{name: "metadata form through hooks", steps: []wstep{
			{hooksStep("metadata", "form", canaryForm, "accept", canaryAnswer), 200, hooksOK},
		}, checks: []string{"", ""}, absent: canaries, receipts: []string{`{"requestBody":"not-selected","body":null}`, `{"resultBody":"not-selected","body":null,"result":null}`}},
		{name: "omit form through hooks", steps: []wstep{
			{hooksStep("omit", "form", canaryForm, "accept", canaryAnswer), 200, hooksOK},
		}, checks: []string{"", ""}, absent: canaries, receipts: []string{`{"requestBody":"not-selected","body":null}`, `{"resultBody":"not-selected","body":null}`}},
		{name: "metadata url through hooks", steps: []wstep{
			{hooksStep("metadata", "url", canaryURLReq, "accept", `{"action":"accept"}`), 200, hooksOK},
		}, checks: []string{"", ""}, absent: canaries},
		{name: "omit url through hooks", steps: []wstep{
			{hooksStep("omit", "url", canaryURLReq, "decline", `{"action":"decline"}`), 200, hooksOK},
		}, checks: []string{"", ""}, absent: canaries},
		{name: "body form through hooks", steps: []wstep{
			{hooksStep("body", "form", canaryForm, "accept", canaryAnswer), 200, hooksOK},
		}, checks: []string{"", ""}, present: []string{canaryPrompt, canaryResult}, receipts: []string{`{"requestBody":"body"}`, `{"resultBody":"body","result":` + canaryAnswer + `}`}},
		{name: "body url through hooks", steps: []wstep{
			{hooksStep("body", "url", canaryURLReq, "accept", `{"action":"accept"}`), 200, hooksOK},
		}, checks: []string{"", ""}, present: []string{canaryURL}},
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestWireCorpus(t *testing.T) {
	for _, sc := range append(scenarios(), stageScenarios()...) {
		t.Run(sc.name, func(t *testing.T) {
			runScenario(t, sc)
		})
	}
}

func runScenario(t *testing.T, sc scenario) {
	endpoint := startServer(t)
	steps := make([]map[string]any, 0, len(sc.steps)+1)
	for _, s := range sc.steps {
		steps = append(steps, s.step)
	}
	steps = append(steps, map[string]any{"op": "receipts"})
	plan, err := json.Marshal(map[string]any{"endpoint": endpoint, "steps": steps})
	require.NoError(t, err)
	var outs []outcome
	require.NoError(t, json.Unmarshal(run(t, plan, "client"), &outs))
	require.Len(t, outs, len(steps))
	for i, s := range sc.steps {
		require.Equal(t, s.status, outs[i].Status, "step %d body %s", i, outs[i].Body)
		if s.body != "" {
			requireSubset(t, s.body, outs[i].Body, "step body")
		}
	}
	rec := outs[len(outs)-1]
	require.Equal(t, 200, rec.Status)
	var receipts struct {
		Principal string            `json:"principal"`
		Uploads   int               `json:"uploads"`
		Receipts  []json.RawMessage `json:"receipts"`
	}
	require.NoError(t, json.Unmarshal(rec.Body, &receipts))
	require.Equal(t, principal, receipts.Principal)
	require.Equal(t, sc.uploads, receipts.Uploads, "uploads")
	var intercepts []json.RawMessage
	for _, r := range receipts.Receipts {
		var head struct {
			Route string  `json:"route"`
			Check *string `json:"check"`
		}
		require.NoError(t, json.Unmarshal(r, &head))
		if head.Route == "/hooks/intercept" {
			intercepts = append(intercepts, r)
		}
	}
	checks := make([]string, len(intercepts))
	for i, r := range intercepts {
		var head struct {
			Check    *string `json:"check"`
			Accepted bool    `json:"accepted"`
		}
		require.NoError(t, json.Unmarshal(r, &head))
		if head.Check != nil {
			checks[i] = *head.Check
		}
		require.Equal(t, head.Check == nil, head.Accepted)
	}
	if sc.checks != nil {
		require.Equal(t, sc.checks, checks, "receipt checks")
	}
	for i, want := range sc.receipts {
		requireSubset(t, want, intercepts[i], "receipt")
	}
	if sc.after != nil {
		sc.after(t, outs)
	}
	all := string(rec.Body)
	for _, c := range sc.absent {
		require.NotContains(t, all, c, "canary in receipts")
	}
	for _, p := range sc.present {
		require.Contains(t, all, p)
	}
	require.NotContains(t, all, hooksToken)
	require.NotContains(t, all, uploadToken)
}

func stage(request, result json.RawMessage, caps, effects, deliverID string) map[string]any {
	m := map[string]any{"op": "stage", "request": request, "capabilities": json.RawMessage(caps), "effects": json.RawMessage(effects), "supplier": "hook:policy", "deliver": map[string]any{"id": deliverID}}
	if result != nil {
		m["result"] = result
	}
	return m
}

const hookProvenance = `{"kind":"hook","supplier":"hook:policy"}`

// stageScenarios run the sender's atomic helper, then deliver its actual
// staged output to the receiver; a failed list publishes nothing.
func stageScenarios() []scenario {
	fq := textBody("q", formBody)
	q1 := formReq("q1", "s1", fq).request()
	r1 := formRes("r1", "q1", "s1", "accept", textBody("r", `{"action":"accept","content":{"name":"Ada","age":36},"_meta":{"m":1}}`)).result()
	reqCaps := `{"effects":["deny","return","message"],"elicitation":{"form":{}}}`
	resCaps := `{"effects":["modify"],"modify":{"content":{"replace":true,"merge":true}},"elicitation":{"form":{}}}`
	u1 := urlReq("u1", textBody("q", urlBody)).request()
	urlCaps := `{"effects":["deny","return"],"elicitation":{"url":{}}}`
	return []scenario{
		{name: "stage before-return", steps: []wstep{
			ok(q1, capsForm),
			{stage(q1, nil, reqCaps, `[{"type":"return","value":{"action":"accept","content":{"name":"Bot"}}}]`, "r-staged"), 200,
				`{"staged":{"accepted":true,"inputUnchanged":true,"summary":{"returned":true,"origin":"hook","provenance":` + hookProvenance + `}},"published":true,"response":` + accepted + `}`},
		}, checks: []string{"", ""}, receipts: []string{`{}`, `{"eventId":"r-staged","parentEventId":"q1","action":"accept","result":{"action":"accept","content":{"name":"Bot"}}}`}},
		{name: "stage before-deny", steps: []wstep{
			ok(q1, capsForm),
			{stage(q1, nil, reqCaps, `[{"type":"deny","reason":"not now"}]`, "r-staged"), 200, `{"staged":{"accepted":true,"summary":{"denied":true,"reason":"not now","provenance":null}},"published":false}`},
		}, checks: []string{""}},
		{name: "stage result merge", steps: []wstep{
			ok(q1, capsForm),
			{stage(q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"age":40,"color":"green"}}]`, "r1"), 200,
				`{"staged":{"accepted":true,"summary":{"modified":true,"origin":"hook","provenance":` + hookProvenance + `}},"published":true,"response":` + accepted + `}`},
		}, checks: []string{"", ""}, receipts: []string{`{}`, `{"result":{"action":"accept","content":{"name":"Ada","age":40,"color":"green"},"_meta":{"m":1}}}`}},
		{name: "stage result replace", steps: []wstep{
			ok(q1, capsForm),
			{stage(q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"replace","value":{"name":"Bea"}}]`, "r1"), 200, `{"published":true,"response":` + accepted + `}`},
		}, checks: []string{"", ""}, receipts: []string{`{}`, `{"result":{"action":"accept","content":{"name":"Bea"},"_meta":{"m":1}}}`}},
		{name: "stage url return and deny", steps: []wstep{
			ok(u1, capsURL),
			{stage(u1, nil, urlCaps, `[{"type":"deny","reason":"blocked"}]`, "v0"), 200, `{"staged":{"accepted":true,"summary":{"denied":true}},"published":false}`},
			{stage(u1, nil, urlCaps, `[{"type":"return","value":{"action":"decline"}}]`, "v1"), 200, `{"published":true,"response":` + accepted + `}`},
		}, checks: []string{"", ""}, receipts: []string{`{}`, `{"eventId":"v1","mode":"url","action":"decline","result":{"action":"decline"},"completed":false}`}},
		{name: "stage failed lists publish nothing", steps: []wstep{
			ok(q1, capsForm),
			{stage(q1, nil, reqCaps, `[{"type":"deny","reason":"x"},{"type":"return","value":{"action":"decline"}}]`, "r-x"), 422,
				`{"staged":{"accepted":false,"inputUnchanged":true,"summary":{"rejection":{"effectIndex":1,"reason":"conflicting_effects"},"result":null,"provenance":null}},"published":false}`},
			{stage(q1, nil, `{"effects":["deny"],"elicitation":{"form":{}}}`, `[{"type":"return","value":{"action":"decline"}}]`, "r-x"), 422, `{"staged":{"summary":{"rejection":{"reason":"effect_not_granted"}}}}`},
			{stage(q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"age":41}},{"type":"modify","target":"content","operation":"merge","value":{"color":"blue"}}]`, "r1"), 422, `{"staged":{"summary":{"rejection":{"effectIndex":1,"reason":"invalid_value"}}}}`},
			{stage(q1, r1, `{"effects":["modify"],"modify":{"content":{"merge":true}},"elicitation":{"form":{}}}`, `[{"type":"modify","target":"content","operation":"replace","value":{"name":"x"}}]`, "r1"), 422, `{"staged":{"summary":{"rejection":{"reason":"operation_not_granted"}}}}`},
			// the request is still pending: the unmodified result settles it
			ok(r1, capsNone),
		}, checks: []string{"", ""}, receipts: []string{`{}`, `{"result":{"action":"accept","content":{"name":"Ada","age":36},"_meta":{"m":1}}}`}},
	}
}
