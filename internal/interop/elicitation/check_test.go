package elicitation_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckCorpus runs the offline `check` entry point on the atomic
// application cases of interop/ELICITATION.md: canonical return, deny and
// modify effects; per-request grants; modify target/operation grants;
// trusted hook provenance; whole-list rejection with no partial result;
// unchanged inputs; metadata/omit never authorizing execution.
func TestCheckCorpus(t *testing.T) {
	fq := textBody("q", formBody)
	q1 := formReq("q1", "s1", fq).request()
	qMeta := formReq("q1", "s1", textMeta("q")).request()
	qOmit := formReq("q1", "s1", textOmit("q")).request()
	r1 := formRes("r1", "q1", "s1", "accept", textBody("r", `{"action":"accept","content":{"name":"Ada","age":36}}`)).result()
	rMeta := formRes("r1", "q1", "s1", "accept", textMeta("r")).result()
	rDecline := formRes("r1", "q1", "s1", "decline", textBody("r", `{"action":"decline"}`)).result()
	u1 := urlReq("u1", textBody("q", urlBody)).request()
	reqCaps := `{"effects":["deny","return","message"],"elicitation":{"form":{}}}`
	resCaps := `{"effects":["modify","message"],"modify":{"content":{"replace":true,"merge":true}},"elicitation":{"form":{}}}`
	type tc struct {
		name            string
		request, result json.RawMessage
		caps, effects   string
		supplier        string
		want            string // expected subset of the report
	}
	prov := `{"kind":"hook","supplier":"hook:policy"}`
	cases := []tc{
		{"return accept", q1, nil, reqCaps, `[{"type":"return","value":{"action":"accept","content":{"name":"Bot"}}}]`, "", `{"accepted":true,"inputUnchanged":true,"summary":{"returned":true,"origin":"hook","provenance":` + prov + `,"result":{"action":"accept","content":{"name":"Bot"}},"rejection":null}}`},
		{"return decline", q1, nil, reqCaps, `[{"type":"return","value":{"action":"decline"}},{"type":"message","text":"declined for you"}]`, "", `{"accepted":true,"summary":{"returned":true,"result":{"action":"decline"},"messages":["declined for you"]}}`},
		{"deny", q1, nil, reqCaps, `[{"type":"deny","reason":"untrusted server"}]`, "", `{"accepted":true,"summary":{"denied":true,"reason":"untrusted server","returned":false,"provenance":null,"result":null}}`},
		{"url return", u1, nil, `{"effects":["return"],"elicitation":{"url":{}}}`, `[{"type":"return","value":{"action":"cancel"}}]`, "", `{"accepted":true,"summary":{"returned":true,"result":{"action":"cancel"}}}`},
		{"url deny", u1, nil, `{"effects":["deny"],"elicitation":{"url":{}}}`, `[{"type":"deny","reason":"no"}]`, "", `{"accepted":true,"summary":{"denied":true}}`},
		{"merge", q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"age":37}}]`, "", `{"accepted":true,"inputUnchanged":true,"summary":{"modified":true,"origin":"hook","provenance":` + prov + `,"result":{"action":"accept","content":{"name":"Ada","age":37}}}}`},
		{"replace", q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"replace","value":{"name":"Bea"}}]`, "", `{"accepted":true,"summary":{"modified":true,"result":{"action":"accept","content":{"name":"Bea"}}}}`},
		{"unmodified result is mcp", q1, r1, resCaps, `[]`, "", `{"accepted":true,"summary":{"modified":false,"origin":"mcp","provenance":null,"result":{"action":"accept","content":{"name":"Ada","age":36}}}}`},

		{"return not granted", q1, nil, `{"effects":["deny"],"elicitation":{"form":{}}}`, `[{"type":"return","value":{"action":"decline"}}]`, "", `{"accepted":false,"inputUnchanged":true,"summary":{"rejection":{"effectIndex":0,"reason":"effect_not_granted"},"result":null,"provenance":null}}`},
		{"mode not granted", q1, nil, `{"effects":["return"],"elicitation":{"url":{}}}`, `[{"type":"return","value":{"action":"decline"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"mode_not_granted"}}}`},
		{"deny not granted", q1, nil, `{"effects":["return"],"elicitation":{"form":{}}}`, `[{"type":"deny","reason":"x"}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"effect_not_granted"}}}`},
		{"modify target not granted", q1, r1, `{"effects":["modify"],"elicitation":{"form":{}}}`, `[{"type":"modify","target":"content","operation":"merge","value":{"age":1}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"target_not_granted"}}}`},
		{"modify operation not granted", q1, r1, `{"effects":["modify"],"modify":{"content":{"merge":true}},"elicitation":{"form":{}}}`, `[{"type":"modify","target":"content","operation":"replace","value":{"name":"x"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"operation_not_granted"}}}`},
		{"request has no modify", q1, nil, reqCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"boundary_forbidden"}}}`},
		{"result has no return", q1, r1, resCaps, `[{"type":"return","value":{"action":"decline"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"boundary_forbidden"}}}`},
		{"conflicting terminal effects", q1, nil, reqCaps, `[{"type":"return","value":{"action":"decline"}},{"type":"deny","reason":"x"}]`, "", `{"accepted":false,"summary":{"rejection":{"effectIndex":1,"reason":"conflicting_effects"}}}`},
		{"invalid later effect", q1, r1, resCaps, `[{"type":"message","text":"ok"},{"type":"modify","target":"content","operation":"merge","value":{"age":"old"}}]`, "", `{"accepted":false,"summary":{"rejection":{"effectIndex":1,"reason":"invalid_value"},"messages":[]}}`},
		{"invalid submitted form data", q1, nil, reqCaps, `[{"type":"return","value":{"action":"accept","content":{"age":2}}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"invalid_value"}}}`},
		{"list at the answer object", q1, r1, resCaps, `[{"type":"modify","target":"content","operation":"replace","value":[{"id":"m","role":"user","parts":[]}]}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"invalid_value"}}}`},
		{"modify a declined result", q1, rDecline, resCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"target_unavailable"}}}`},
		{"metadata result cannot be edited", q1, rMeta, resCaps, `[{"type":"modify","target":"content","operation":"merge","value":{"name":"x"}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"target_unavailable"}}}`},
		{"metadata request cannot authorize an accept", qMeta, nil, reqCaps, `[{"type":"return","value":{"action":"accept","content":{"name":"x"}}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"content_unavailable"}}}`},
		{"omit request cannot authorize an accept", qOmit, nil, reqCaps, `[{"type":"return","value":{"action":"accept","content":{"name":"x"}}}]`, "", `{"accepted":false,"summary":{"rejection":{"reason":"content_unavailable"}}}`},
		{"uncorrelated result", q1, formRes("r1", "q2", "s1", "accept", textBody("r", `{"action":"accept","content":{"name":"a"}}`)).result(), resCaps, `[]`, "", `{"accepted":false,"summary":{"rejection":{"check":"parent"}}}`},
		{"no supplier", q1, nil, reqCaps, `[{"type":"deny","reason":"x"}]`, "-", `{"accepted":false,"summary":{"rejection":{"check":"supplier"}}}`},
	}
	in := make([]map[string]any, len(cases))
	for i, c := range cases {
		sup := "hook:policy"
		if c.supplier == "-" {
			sup = ""
		}
		m := map[string]any{"name": c.name, "request": c.request, "capabilities": json.RawMessage(c.caps), "effects": json.RawMessage(c.effects), "supplier": sup}
		if c.result != nil {
			m["result"] = c.result
		}
		in[i] = m
	}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	var reports []json.RawMessage
	require.NoError(t, json.Unmarshal(run(t, data, "check"), &reports))
	require.Len(t, reports, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireSubset(t, `{"name":`+jsonString(c.name)+`,"inputUnchanged":true}`, reports[i], "report")
			requireSubset(t, c.want, reports[i], "report")
		})
	}
	// One case as an object gives one report object.
	one, err := json.Marshal(in[0])
	require.NoError(t, err)
	requireSubset(t, `{"accepted":true}`, run(t, one, "check"), "single report")
}

// TestUsage: bad command lines, a schema directory that differs from the
// SDK's, and missing tokens are usage errors (exit 2) that never print a
// token.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(dir, "mcp-elicitation.schema.json"), `{"changed":true}`))
	for name, c := range map[string]struct {
		args []string
		env  []string
	}{
		"no args":          {},
		"unknown":          {args: []string{"serve"}},
		"server args":      {args: []string{"server", "schemas"}},
		"principal":        {args: []string{"server", filepath.Join(repoRoot(t), "schemas"), "sender-go"}},
		"schema differs":   {args: []string{"server", dir, "authenticated:x"}},
		"no schema":        {args: []string{"server", t.TempDir(), "authenticated:x"}},
		"missing tokens":   {args: []string{"server", filepath.Join(repoRoot(t), "schemas"), "authenticated:x"}, env: []string{"PATH=/usr/bin:/bin"}},
		"client extra arg": {args: []string{"client", "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(adapter(t), c.args...)
			cmd.Env = tokenEnv()
			if c.env != nil {
				cmd.Env = c.env
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			require.Equal(t, 2, ee.ExitCode(), "%s", out)
			require.False(t, strings.Contains(string(out), hooksToken) || strings.Contains(string(out), uploadToken))
		})
	}
	// A malformed plan is a usage error too.
	cmd := exec.Command(adapter(t), "client")
	cmd.Env = tokenEnv()
	cmd.Stdin = strings.NewReader(`{"endpoint":"http://example.com","steps":[]}`)
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode(), "a non-loopback endpoint is refused")
}

// TestRepeatedMembers: a stdin document (a check case or a client plan)
// with a repeated member name at any depth is a usage error (exit 2):
// encoding/json would silently keep the last value, so `check` would
// stage another supplier's or another effect list than the one a reader
// sees first.
func TestRepeatedMembers(t *testing.T) {
	q1 := string(formReq("q1", "s1", textBody("q", formBody)).request())
	caps := `{"effects":["deny","return","message"],"elicitation":{"form":{}}}`
	for name, c := range map[string]struct{ sub, in string }{
		"case supplier": {"check", `{"request":` + q1 + `,"capabilities":` + caps + `,"effects":[{"type":"deny","reason":"x"}],"supplier":"hook:a","supplier":"hook:b"}`},
		"case effects":  {"check", `{"request":` + q1 + `,"capabilities":` + caps + `,"effects":[],"effects":[{"type":"deny","reason":"x"}],"supplier":"hook:a"}`},
		"cases array":   {"check", `[{"request":` + q1 + `,"capabilities":` + caps + `,"effects":[],"supplier":"hook:a","name":"a","name":"b"}]`},
		"nested effect": {"check", `{"request":` + q1 + `,"capabilities":` + caps + `,"effects":[{"type":"deny","reason":"x","reason":"y"}],"supplier":"hook:a"}`},
		"plan endpoint": {"client", `{"endpoint":"http://127.0.0.1:1","endpoint":"http://127.0.0.1:2","steps":[]}`},
		"plan step":     {"client", `{"endpoint":"http://127.0.0.1:1","steps":[{"op":"receipts","token":"hooks","token":"wrong"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(adapter(t), c.sub)
			cmd.Env = tokenEnv()
			cmd.Stdin = strings.NewReader(c.in)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			require.Equal(t, 2, ee.ExitCode(), "%s", out)
		})
	}
}
