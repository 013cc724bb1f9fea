package elicitation_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
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

// adapter builds cmd/elicitation once per test process: the tests run the
// built binary, as the protocol's matrix does.
func adapter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "elicitation-test")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "elicitation")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/elicitation")
		cmd.Dir = repoRoot(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return buildPath
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return root
}

const (
	hooksToken  = "hooks-token-7f3a"
	uploadToken = "upload-token-91c2"
	principal   = "sender-go"
)

func tokenEnv() []string {
	return append(os.Environ(), "AHP_ELICITATION_TOKEN="+hooksToken, "AHP_ELICITATION_UPLOAD_TOKEN="+uploadToken)
}

// startServer runs `elicitation server` and returns its endpoint; the
// process is interrupted and joined at cleanup.
func startServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(adapter(t), "server", filepath.Join(repoRoot(t), "schemas"), "authenticated:"+principal)
	cmd.Env = tokenEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait() // joins the stderr copy before it is read
		require.NoError(t, err, "server exit: %s", stderr.String())
		require.NotContains(t, stderr.String(), hooksToken)
		require.NotContains(t, stderr.String(), uploadToken)
	})
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("server printed no endpoint: %v: %s", err, stderr.String())
	}
	var ready struct {
		Endpoint string `json:"endpoint"`
	}
	require.NoError(t, json.Unmarshal(line, &ready))
	require.True(t, strings.HasPrefix(ready.Endpoint, "http://127.0.0.1:"), ready.Endpoint)
	return ready.Endpoint
}

// run runs a subcommand with stdin and returns stdout.
func run(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(adapter(t), args...)
	cmd.Env = tokenEnv()
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	return stdout.Bytes()
}

// subset reports whether actual contains expected: objects by the expected
// members (recursively), arrays element-wise with equal length, other
// values equal. It returns the JSON pointer of the first difference.
func subset(expected, actual any, ptr string) (string, bool) {
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return ptr, false
		}
		for k, v := range e {
			av, ok := a[k]
			if !ok {
				return ptr + "/" + k, false
			}
			if p, ok := subset(v, av, ptr+"/"+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return ptr, false
		}
		for i := range e {
			if p, ok := subset(e[i], a[i], fmt.Sprintf("%s/%d", ptr, i)); !ok {
				return p, false
			}
		}
		return "", true
	default:
		eb, _ := json.Marshal(expected)
		ab, _ := json.Marshal(actual)
		return ptr, bytes.Equal(eb, ab)
	}
}

func requireSubset(t *testing.T, expected string, actual json.RawMessage, msg string) {
	t.Helper()
	var e, a any
	require.NoError(t, json.Unmarshal([]byte(expected), &e), "expected: %s", expected)
	require.NoError(t, json.Unmarshal(actual, &a))
	p, ok := subset(e, a, "")
	require.True(t, ok, "%s: differs at %q\nexpected %s\nactual   %s", msg, p, expected, actual)
}

// Event builders (canonical shapes of interaction-event.schema.json).

const src = "urn:test:harness"

func textBody(id, text string) string {
	b, _ := json.Marshal(text)
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"body","text":` + string(b) + `}`
}

func textMeta(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"metadata","size":42}`
}

func textOmit(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"omit"}`
}

func textGap(id string) string {
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"body","gap":{"reason":"unavailable"}}`
}

type ev struct {
	id, source, session, parent, server, mode, action, part string
}

func (e ev) request() json.RawMessage {
	if e.source == "" {
		e.source = src
	}
	s := `{"id":"` + e.id + `","source":"` + e.source + `","time":"2026-09-15T12:00:00Z","type":"user.elicitation.request"`
	if e.session != "" {
		s += `,"session":{"id":"` + e.session + `"}`
	}
	s += `,"elicitation":{"server":"` + e.server + `","mode":"` + e.mode + `"`
	if e.part != "" {
		s += `,"request":` + e.part
	}
	return json.RawMessage(s + `}}`)
}

func (e ev) result() json.RawMessage {
	if e.source == "" {
		e.source = src
	}
	s := `{"id":"` + e.id + `","source":"` + e.source + `","time":"2026-09-15T12:00:01Z","type":"user.elicitation.result"`
	if e.session != "" {
		s += `,"session":{"id":"` + e.session + `"}`
	}
	if e.parent != "" {
		s += `,"parentEventId":"` + e.parent + `"`
	}
	s += `,"elicitation":{"server":"` + e.server + `","mode":"` + e.mode + `","action":"` + e.action + `"`
	if e.part != "" {
		s += `,"result":` + e.part
	}
	return json.RawMessage(s + `}}`)
}

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o600) }
