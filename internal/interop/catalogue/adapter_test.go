package catalogue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/interop/interoptest"
	"github.com/agenthooks/agenthooks-go/server"
)

// The adapter test runs the corpus through the real commands the runner
// launches: cmd/lifecycle-client and cmd/lifecycle-server with suite
// "catalogue", over stdio (the client spawns and reaps the server) and over
// HTTP with all five auth labels (the test starts the server, as the runner
// does). By default the commands are built once with go build;
// AHP_LIFECYCLE_LAUNCH=adapter runs the interop/adapter.json launchers
// (go run from the module root) instead, as .ci/run does.

type launchers struct {
	root           string
	client, server []string
}

func adapterLaunchers(t *testing.T) launchers {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	if os.Getenv("AHP_LIFECYCLE_LAUNCH") == "adapter" {
		data, err := os.ReadFile(filepath.Join(root, "interop", "adapter.json"))
		require.NoError(t, err)
		var a struct {
			LifecycleClient []string `json:"lifecycleClient"`
			LifecycleServer []string `json:"lifecycleServer"`
		}
		require.NoError(t, json.Unmarshal(data, &a))
		require.NotEmpty(t, a.LifecycleClient)
		require.NotEmpty(t, a.LifecycleServer)
		return launchers{root: root, client: a.LifecycleClient, server: a.LifecycleServer}
	}
	dir := t.TempDir()
	for _, name := range []string{"lifecycle-client", "lifecycle-server"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return launchers{root: root, client: []string{filepath.Join(dir, "lifecycle-client")}, server: []string{filepath.Join(dir, "lifecycle-server")}}
}

// TestCatalogueAdapters runs the committed corpus through the adapter
// commands over every combination and verifies each report.
func TestCatalogueAdapters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the adapters")
	}
	l := adapterLaunchers(t)
	path, err := filepath.Abs(corpusPath)
	require.NoError(t, err)
	f, err := Load(path)
	require.NoError(t, err)
	combos := [][2]string{{"stdio", "none"}}
	for _, m := range interoptest.AuthModes {
		combos = append(combos, [2]string{"http", m})
	}
	for _, c := range combos {
		t.Run(c[0]+"-"+c[1], func(t *testing.T) { runAdapters(t, l, path, f, c[0], c[1]) })
	}
}

func runAdapters(t *testing.T, l launchers, scenarioFile string, f *File, transport, mode string) {
	dir := t.TempDir()
	serverAuth, clientAuth, secrets := interoptest.AuthFixture(t, mode, "catalogue-event-token-CANARY")
	serverCfg := filepath.Join(dir, "server.json")
	readiness := filepath.Join(dir, "ready.json")
	writeJSON(t, serverCfg, map[string]any{"suite": Suite, "transport": transport, "readinessFile": readiness,
		"scenarioFile": scenarioFile, "auth": serverAuth, "uploadAuth": map[string]any{"token": "catalogue-upload-token", "subscriptions": []string{"body"}}})
	report := filepath.Join(dir, "report.json")
	ccfg := map[string]any{"suite": Suite, "transport": transport, "scenarioFile": scenarioFile, "reportFile": report, "auth": clientAuth}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var control string
	if transport == "http" {
		srv := exec.CommandContext(ctx, l.server[0], append(l.server[1:], "--config", serverCfg)...)
		srv.Dir = l.root
		srv.Stderr = os.Stderr
		srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, srv.Start())
		exited := make(chan error, 1)
		go func() { exited <- srv.Wait() }()
		defer func() {
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}()
		var rd interop.Readiness
		for {
			data, err := os.ReadFile(readiness)
			if err == nil && json.Unmarshal(data, &rd) == nil && rd.Endpoint != nil {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("server exited before readiness: %v", err)
			case <-ctx.Done():
				t.Fatal("no readiness")
			case <-time.After(20 * time.Millisecond): // startup polling only
			}
		}
		control = rd.ControlEndpoint
		require.NotNil(t, rd.UploadEndpoint, "readiness keeps the lifecycle shape")
		// The upload endpoint has its own trust: the event credential is
		// not an upload credential.
		req, err := http.NewRequest(http.MethodPost, *rd.UploadEndpoint, strings.NewReader("x"))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer catalogue-event-token-CANARY")
		req.Header.Set("Content-Type", "application/octet-stream")
		sum := sha256.Sum256([]byte("x"))
		req.Header.Set(server.UploadSHA256Header, hex.EncodeToString(sum[:]))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		ccfg["endpoint"], ccfg["controlEndpoint"] = *rd.Endpoint, rd.ControlEndpoint
		if mode != interop.AuthNone && mode != interop.AuthMTLS {
			// The endpoint refuses an unauthenticated observation before
			// it reaches the receiver (no receipt).
			resp, err := http.Post(*rd.Endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		}
	} else {
		ccfg["serverCommand"], ccfg["serverCwd"], ccfg["serverConfig"] = l.server, l.root, serverCfg
		ccfg["childPidFile"] = filepath.Join(dir, "child.pid")
	}
	clientCfg := filepath.Join(dir, "client.json")
	writeJSON(t, clientCfg, ccfg)
	cl := exec.CommandContext(ctx, l.client[0], append(l.client[1:], "--config", clientCfg)...)
	cl.Dir = l.root
	var stderr bytes.Buffer
	cl.Stderr = &stderr
	cl.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	runErr := cl.Run()
	if control != "" {
		resp, err := http.Post(control+"/shutdown", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
	}
	require.NoError(t, runErr, "client stderr:\n%s", tailText(stderr.String(), 4000))
	if transport == "stdio" {
		pid, err := os.ReadFile(filepath.Join(dir, "child.pid"))
		require.NoError(t, err)
		var childPid int
		_, err = fmt.Sscan(string(pid), &childPid)
		require.NoError(t, err)
		require.True(t, interoptest.Gone(childPid), "the stdio server child %d outlived the client", childPid)
	}
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	for _, secret := range secrets {
		require.NotContains(t, string(data), secret, "a secret in the report")
		require.NotContains(t, stderr.String(), secret, "a secret in the client's log")
	}
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	require.NoError(t, Verify(f, &rep))
}

func tailText(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
