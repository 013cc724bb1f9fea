package compaction

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// binary builds cmd/compaction and cmd/compaction-wire once per test
// process and returns the path of name.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "compaction-adapters")
		if buildErr != nil {
			return
		}
		for _, cmd := range []string{"compaction", "compaction-wire"} {
			c := exec.Command("go", "build", "-o", filepath.Join(buildDir, cmd), "./cmd/"+cmd)
			c.Dir = filepath.Join("..", "..", "..")
			if out, err := c.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %w: %s", cmd, err, out)
				return
			}
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(buildDir, name)
}

// corpus is testdata/interop/compaction.json.
type corpus struct {
	Rules map[string]string `json:"rules"`
	Cases []corpusCase      `json:"cases"`
}

type corpusCase struct {
	Name   string          `json:"name"`
	Rules  []string        `json:"rules"`
	Params json.RawMessage `json:"params"`
	Expect json.RawMessage `json:"expect,omitempty"`
	Error  int             `json:"error,omitempty"`
}

func loadCorpus(t *testing.T) corpus {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "interop", "compaction.json"))
	require.NoError(t, err)
	var c corpus
	require.NoError(t, decodeStrict(raw, &c))
	return c
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "tok-" + hex.EncodeToString(b)
}

// texts flattens canonical text parts to their texts; null stays nil.
func texts(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ps []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &ps) != nil {
		return "not text parts"
	}
	out := []string{}
	for _, p := range ps {
		if p.Text != nil {
			out = append(out, *p.Text)
		}
	}
	return out
}

// digest is the comparison view of a RunResult the corpus expects.
func digest(t *testing.T, raw []byte) []byte {
	t.Helper()
	var r RunResult
	require.NoError(t, json.Unmarshal(raw, &r))
	prov := "generator"
	if !r.Provenance.Generated {
		prov = r.Provenance.Supplier
	}
	d := map[string]any{
		"applied": r.Applied, "denied": r.Denied, "denyReason": r.DenyReason, "failedClosed": r.FailedClosed,
		"failedAt": r.FailedAt, "generated": r.Generated, "instructions": texts(r.Instructions),
		"summary": texts(r.Summary), "downstream": texts(r.Downstream), "provenance": prov,
	}
	msgs, trace, seen := []string{}, []string{}, []string{}
	for _, m := range r.Messages {
		msgs = append(msgs, m.Boundary+"/"+m.Supplier+":"+m.Text)
	}
	for _, s := range r.Trace {
		e := s.Boundary + "/" + s.Supplier + ":" + s.Outcome
		if s.Reason != "" {
			e += ":" + s.Reason
		}
		trace = append(trace, e)
	}
	for _, s := range r.Seen {
		ts, _ := texts(s.Text).([]string)
		e := s.Boundary + "/" + s.Supplier + ":" + strings.Join(ts, "|")
		if s.Supplied {
			e += "+supplied"
		}
		seen = append(seen, e)
	}
	d["messages"], d["trace"], d["seen"] = msgs, trace, seen
	if r.Observed != nil {
		obs := []any{}
		for _, o := range r.Observed {
			obs = append(obs, texts(o))
		}
		d["observed"] = obs
	}
	if !r.Applied {
		require.Equal(t, "null", string(r.Downstream), "a result that is not applied has no downstream summary")
	}
	b, err := json.Marshal(d)
	require.NoError(t, err)
	return b
}

// checkReply checks one JSON-RPC reply against its corpus case.
func checkReply(t *testing.T, c corpusCase, reply []byte) {
	t.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(reply, &env), c.Name)
	if c.Error != 0 {
		require.NotNil(t, env.Error, c.Name)
		require.Equal(t, c.Error, env.Error.Code, c.Name)
		return
	}
	require.Nil(t, env.Error, c.Name)
	got := digest(t, env.Result)
	require.NoError(t, interop.ComparePartial(c.Expect, got), "%s:\nexpect %s\ngot    %s", c.Name, c.Expect, got)
}

// TestCorpusRules: every rule of the corpus has a case, and every case
// names known rules.
func TestCorpusRules(t *testing.T) {
	c := loadCorpus(t)
	covered := map[string]int{}
	for _, cs := range c.Cases {
		require.NotEmpty(t, cs.Rules, cs.Name)
		require.True(t, (cs.Expect == nil) != (cs.Error == 0), "%s: exactly one of expect and error", cs.Name)
		for _, r := range cs.Rules {
			_, ok := c.Rules[r]
			require.True(t, ok, "%s: unknown rule %q", cs.Name, r)
			covered[r]++
		}
	}
	for r := range c.Rules {
		require.NotZero(t, covered[r], "rule %q has no case", r)
	}
}

// TestCorpusInProcess runs the corpus through Handle.
func TestCorpusInProcess(t *testing.T) {
	for i, c := range loadCorpus(t).Cases {
		t.Run(c.Name, func(t *testing.T) {
			req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": MethodRun, "params": c.Params})
			require.NoError(t, err)
			checkReply(t, c, Handle(context.Background(), req))
		})
	}
}

// startServer runs the built `compaction server` with token and returns
// its endpoint and a stop function that signals it and waits.
func startServer(t *testing.T, token string) (string, *lockedBuffer, func()) {
	t.Helper()
	cmd := exec.Command(binary(t, "compaction"), "server")
	cmd.Env = append(os.Environ(), TokenEnv+"="+token)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadBytes('\n')
	require.NoError(t, err, "server stderr: %s", stderr.String())
	var ready struct {
		Endpoint string `json:"endpoint"`
	}
	require.NoError(t, decodeStrict(line, &ready))
	require.True(t, strings.HasPrefix(ready.Endpoint, "http://127.0.0.1:"))
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, out)
		require.NoError(t, cmd.Wait())
	}
	return ready.Endpoint, stderr, stop
}

// lockedBuffer is a buffer a child process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runClient runs the built `compaction client` with input on stdin.
func runClient(t *testing.T, input any) ([]byte, string, error) {
	t.Helper()
	body, err := json.Marshal(input)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t, "compaction"), "client")
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

func corpusRequests(cases []corpusCase) []json.RawMessage {
	out := make([]json.RawMessage, len(cases))
	for i, c := range cases {
		out[i] = c.Params
	}
	return out
}

// TestCorpusHTTP runs the corpus between the built client and server over
// real loopback HTTP with a fresh bearer token; a wrong token is refused
// before any run, and no token reaches either side's output.
func TestCorpusHTTP(t *testing.T) {
	cases := loadCorpus(t).Cases
	token := randomToken(t)
	endpoint, srvErr, stop := startServer(t, token)
	defer stop()
	out, stderr, err := runClient(t, ClientInput{Transport: "http", Endpoint: endpoint, Token: token, Requests: corpusRequests(cases)})
	require.NoError(t, err, stderr)
	var replies []json.RawMessage
	require.NoError(t, json.Unmarshal(out, &replies))
	require.Len(t, replies, len(cases))
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) { checkReply(t, c, replies[i]) })
	}

	wrong := randomToken(t)
	out, stderr, err = runClient(t, ClientInput{Transport: "http", Endpoint: endpoint, Token: wrong, Requests: corpusRequests(cases[:1])})
	require.Error(t, err)
	require.Contains(t, stderr, "401")
	require.Empty(t, out)
	require.NotContains(t, stderr, wrong)
	require.NotContains(t, srvErr.String(), wrong)
	require.NotContains(t, srvErr.String(), token)
}

// TestCorpusStdio runs the corpus with the built client starting the built
// receiver as its stdio child (NDJSON on stdin/stdout).
func TestCorpusStdio(t *testing.T) {
	cases := loadCorpus(t).Cases
	out, stderr, err := runClient(t, ClientInput{Transport: "stdio", Command: []string{binary(t, "compaction"), "stdio"}, Requests: corpusRequests(cases)})
	require.NoError(t, err, stderr)
	var replies []json.RawMessage
	require.NoError(t, json.Unmarshal(out, &replies))
	require.Len(t, replies, len(cases))
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) { checkReply(t, c, replies[i]) })
	}
}

// TestServerUsage: the server without a token and the commands with bad
// arguments or input are usage errors (exit 2).
func TestServerUsage(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		env   string
		stdin string
	}{
		{args: []string{"server"}, env: TokenEnv + "="},
		{args: []string{}},
		{args: []string{"serve"}},
		{args: []string{"client"}, stdin: `{"transport":"carrier-pigeon","requests":[]}`},
		{args: []string{"client"}, stdin: `{"transport":"http","requests":[]}`},
		{args: []string{"client"}, stdin: `not json`},
	} {
		cmd := exec.Command(binary(t, "compaction"), tc.args...)
		cmd.Env = append(os.Environ(), tc.env)
		cmd.Stdin = strings.NewReader(tc.stdin)
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", tc.args)
		require.Equal(t, interop.ExitUsage, ee.ExitCode(), "%v", tc.args)
	}
}

// TestDecodeStrict: repeated member names at any depth, unknown members
// and trailing data are errors.
func TestDecodeStrict(t *testing.T) {
	var in ClientInput
	require.NoError(t, decodeStrict([]byte(` {"transport":"http","requests":[{"a":1}]} `), &in))
	for _, bad := range []string{
		`{"transport":"http","transport":"stdio","requests":[]}`,
		`{"transport":"http","requests":[{"a":1,"a":2}]}`,
		`{"transport":"http","requests":[],"extra":true}`,
		`{"transport":"http","requests":[]} {}`,
		`{"transport":`,
	} {
		require.Error(t, decodeStrict([]byte(bad), &in), bad)
	}
}
