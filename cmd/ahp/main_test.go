package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
)

// ahpBin and guardBin are the binaries built once by TestMain.
var ahpBin, guardBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ahp-cmd-test")
	if err != nil {
		panic(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	ahpBin = filepath.Join(dir, "ahp")
	guardBin = filepath.Join(dir, "guard-backend")
	for bin, pkg := range map[string]string{ahpBin: ".", guardBin: "../../examples/guard-backend"} {
		build := exec.Command(goTool, "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			_ = os.RemoveAll(dir)
			panic("build " + pkg + ": " + err.Error())
		}
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		defer func() {
			if err := goleak.Find(); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				code = 1
			}
		}()
		code = m.Run()
	}()
	os.Exit(code)
}

// outcome is a finished ahp process.
type outcome struct {
	code           int
	stdout, stderr string
}

// ahp runs the built binary with args and stdin, and waits for it.
func ahp(t *testing.T, stdin string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(ahpBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return outcome{code: code, stdout: out.String(), stderr: errb.String()}
}

// jsonLines decodes one JSON object per line.
func jsonLines[T any](t *testing.T, s string) []T {
	t.Helper()
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var v T
		require.NoError(t, json.Unmarshal([]byte(line), &v), line)
		out = append(out, v)
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

const fixtures = "../../testdata/fixtures/draft/"

const goodRegistration = `{"protocolVersion":"draft","hooks":[{"id":"com.example.a","transport":{"type":"http","url":"http://127.0.0.1:9/"},
 "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":500,"failurePolicy":"fail-open","content":{"default":"metadata"}}]}]}`

func TestHelpForEverySubcommand(t *testing.T) {
	for _, sub := range []string{"check", "probe", "events", "fake-backend"} {
		t.Run(sub, func(t *testing.T) {
			o := ahp(t, "", sub, "-h")
			require.Equal(t, 0, o.code, o.stderr)
			require.Contains(t, o.stdout, "Usage: ahp "+sub)
		})
	}
	o := ahp(t, "", "-h")
	require.Equal(t, 0, o.code)
	require.Contains(t, o.stdout, "ahp check")
	require.Equal(t, 2, ahp(t, "").code)
	require.Equal(t, 2, ahp(t, "", "frobnicate").code)
	require.Equal(t, 2, ahp(t, "", "events", "--bogus").code)
	require.Equal(t, 2, ahp(t, "", "events", "--format", "yaml").code)
}

func TestCheckReportsMembersWithPointers(t *testing.T) {
	dir := t.TempDir()
	missing := writeFile(t, dir, "missing.json", `{"protocolVersion":"draft","hooks":[{"id":"com.example.a","transport":{"type":"http"},
	 "subscriptions":[{"events":["tool.before"],"mode":"intercept","content":{"default":"metadata"}}]}]}`)
	dup := writeFile(t, dir, "dup.json", `{"protocolVersion":"draft","hooks":[
	 {"id":"com.example.a","transport":{"type":"http","url":"http://127.0.0.1:9/"},"subscriptions":[{"events":["tool.before"],"mode":"observe","content":{"default":"metadata"}}]},
	 {"id":"com.example.a","transport":{"type":"http","url":"http://127.0.0.1:9/"},"subscriptions":[{"events":["tool.before"],"mode":"observe","content":{"default":"metadata"}}]}]}`)
	insecure := writeFile(t, dir, "insecure.json", strings.Replace(goodRegistration, "127.0.0.1:9", "policy.example.com", 1))
	good := writeFile(t, dir, "good.json", goodRegistration)
	many := writeFile(t, dir, "many.json", `{"protocolVersion":"draft","hooks":[
	 {"id":"com.example.a","transport":{"type":"http","url":"http://policy.example.com/"},"subscriptions":[{"events":["tool.before","nope.*"],"mode":"observe","content":{"default":"metadata"}}]},
	 {"id":"com.example.a","transport":{"type":"http","url":"http://127.0.0.1:9/"},"subscriptions":[{"events":["tool.before"],"mode":"observe","content":{"default":"metadata"}}]}]}`)
	enum := writeFile(t, dir, "enum.json", strings.Replace(goodRegistration, `"fail-open"`, `"sk-live-SECRET"`, 1))
	unexpected := writeFile(t, dir, "unexpected.json", `{"jsonrpc":"2.0","id":"evt_1","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"x","bogus":1}]}}`)

	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		lines []string
	}{
		{name: "valid", args: []string{good}, code: 0, lines: []string{good + ": valid registration.schema.json"}},
		{name: "missing members", args: []string{missing}, code: 1, lines: []string{
			missing + `:/hooks/0/subscriptions/0: missing required member "timeoutMs"`,
			missing + `:/hooks/0/subscriptions/0: missing required member "failurePolicy"`,
			missing + `:/hooks/0/transport: missing required member "url"`}},
		{name: "load-time unique", args: []string{dup}, code: 1, lines: []string{dup + `:/hooks/1/id: backend id already used by /hooks/0 (load-time check "unique")`}},
		{name: "every load-time problem", args: []string{many}, code: 1, lines: []string{
			many + `:/hooks/0/transport/url: plain http is allowed only for loopback endpoints (load-time check "https")`,
			many + `:/hooks/0/subscriptions/0/events/1: no catalogue event belongs to this family (load-time check "family")`,
			many + `:/hooks/1/id: backend id already used by /hooks/0 (load-time check "unique")`}},
		{name: "allowed values", args: []string{enum}, code: 1, lines: []string{
			enum + `:/hooks/0/subscriptions/0/failurePolicy: must be one of "fail-open", "fail-closed" (keyword "enum"`}},
		{name: "load-time https", args: []string{insecure}, code: 1, lines: []string{insecure + `:/hooks/0/transport/url: plain http is allowed only for loopback endpoints (load-time check "https")`}},
		{name: "unexpected member", args: []string{unexpected}, code: 1, lines: []string{unexpected + `:/result/effects/0/bogus: unexpected member "bogus"`}},
		{name: "stdin", args: []string{"-"}, stdin: goodRegistration, code: 0, lines: []string{"<stdin>: valid registration.schema.json"}},
		{name: "malformed", args: []string{"-"}, stdin: `{"hooks": [`, code: 1, lines: []string{"<stdin>:(root): malformed JSON at byte offset"}},
		{name: "fixture valid", args: []string{fixtures + "http/intercept-request.valid.json", fixtures + "http/deny-response.valid.json"}, code: 0},
		{name: "schema by def name", args: []string{"--schema", "AllowEffect", "-"}, stdin: `{"type":"allow","bogus":1}`, code: 1,
			lines: []string{`<stdin>:/bogus: unexpected member "bogus"`}},
		{name: "ambiguous def name", args: []string{"--schema", "config.change.before", "-"}, code: 2},
		{name: "schema by reference", args: []string{"--schema", "effect.schema.json#/$defs/AllowEffect", "-"}, stdin: `{"type":"allow"}`, code: 0},
		{name: "schema by root name", args: []string{"--schema", "registration", "-"}, stdin: `{}`, code: 1,
			lines: []string{`<stdin>:(root): missing required member "protocolVersion"`, `<stdin>:(root): missing required member "hooks"`}},
		{name: "unknown schema", args: []string{"--schema", "NoSuchThing", "-"}, code: 2},
		{name: "unreadable", args: []string{filepath.Join(dir, "absent.json")}, code: 1, lines: []string{"absent.json: cannot read"}},
		{name: "no files", args: nil, code: 2},
		{name: "unknown shape", args: []string{"-"}, stdin: `[1,2]`, code: 1, lines: []string{"not a recognizable AHP document"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ahp(t, tc.stdin, append([]string{"check"}, tc.args...)...)
			require.Equal(t, tc.code, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
			for _, l := range tc.lines {
				require.Contains(t, o.stdout, l)
			}
			require.NotContains(t, o.stdout+o.stderr, "SECRET")
		})
	}
}

func TestCheckJSONOneObjectPerDocument(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.json", goodRegistration)
	bad := writeFile(t, dir, "bad.json", `{"protocolVersion":"draft","hooks":[]}`)
	o := ahp(t, "", "check", "--format", "json", good, bad)
	require.Equal(t, 1, o.code, o.stderr)
	reps := jsonLines[checkReport](t, o.stdout)
	require.Len(t, reps, 2)
	require.True(t, reps[0].Valid)
	require.Equal(t, registrationSchema, reps[0].Schema)
	require.False(t, reps[1].Valid)
	require.Equal(t, []problem{{Pointer: "/hooks", Keyword: "minItems", SchemaLocation: "registration.schema.json#/properties/hooks/minItems",
		Message: `has too few items (keyword "minItems" at registration.schema.json#/properties/hooks/minItems)`}}, reps[1].Problems)
	// Flags may follow the operands.
	o = ahp(t, "", "check", good, "--format", "json")
	require.Equal(t, 0, o.code, o.stderr)
	require.Len(t, jsonLines[checkReport](t, o.stdout), 1)
}

func TestEventsListsTheCatalogue(t *testing.T) {
	o := ahp(t, "", "events")
	require.Equal(t, 0, o.code, o.stderr)
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	require.Len(t, lines, 1+len(gen.Events()))
	require.Regexp(t, `^tool\.before\s+intercept,observe\s+deny,allow,ask,modify,inject,flow,return,message\s+input$`, lines[1])
	require.Regexp(t, `^session\.end\s+observe\s+-\s+-$`, lines[4])

	o = ahp(t, "", "events", "--format", "json")
	require.Equal(t, 0, o.code, o.stderr)
	evs := jsonLines[eventLine](t, o.stdout)
	require.Len(t, evs, len(gen.Events()))
	for i, info := range gen.Events() {
		require.Equal(t, string(info.Name), evs[i].Name)
		require.Equal(t, strs(info.ModifyTargets), evs[i].ModifyTargets)
	}
}

// TestCheckDetectsEveryValidFixture: every valid protocol fixture is
// recognized from its shape and passes, a registration through hooks.New.
func TestCheckDetectsEveryValidFixture(t *testing.T) {
	files, err := filepath.Glob(fixtures + "*/*.valid.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	o := ahp(t, "", append([]string{"check", "--format", "json"}, files...)...)
	require.Equal(t, 0, o.code, o.stdout)
	reps := jsonLines[checkReport](t, o.stdout)
	require.Len(t, reps, len(files))
	for _, r := range reps {
		require.True(t, r.Valid, r.File)
		require.NotEmpty(t, r.Schema, r.File)
	}
}
