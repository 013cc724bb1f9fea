package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The end-to-end tests drive the adapter exactly as the cross-language
// runner does: commands from interop/adapter.json, executed from the
// repository root with --config ABSOLUTE_PATH appended. To stay fast they
// replace the `go run ./cmd/interop` prefix by a binary built once;
// TestAdapterJSONCommandsVerbatim runs the commands as written.

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

// adapterBinary builds the adapter once per test process.
func adapterBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "interop-test")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "interop")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/interop")
		cmd.Dir = filepath.Join("..", "..")
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
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

type adapterManifest struct {
	Language string   `json:"language"`
	Server   []string `json:"server"`
	Client   []string `json:"client"`
}

func loadAdapter(t *testing.T) adapterManifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "interop", "adapter.json"))
	require.NoError(t, err)
	var m adapterManifest
	require.NoError(t, json.Unmarshal(data, &m))
	require.Equal(t, "go", m.Language)
	require.NotEmpty(t, m.Server)
	require.NotEmpty(t, m.Client)
	return m
}

// fast swaps the adapter command's `go run ./cmd/interop` prefix for
// the prebuilt binary, keeping the role argument from adapter.json.
func fast(t *testing.T, cmd []string) []string {
	t.Helper()
	prefix := []string{"go", "run", "./cmd/interop"}
	require.True(t, len(cmd) > len(prefix) && slices.Equal(cmd[:len(prefix)], prefix), "adapter command must be go run ./cmd/interop ROLE")
	return append([]string{adapterBinary(t)}, cmd[len(prefix):]...)
}

// lockedBuffer collects a child's output.
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

func writeConfig(t *testing.T, dir, name string, v any) string {
	t.Helper()
	p := filepath.Join(dir, name)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// runningServer is an HTTP scripted server owned by the test, as the
// matrix controller owns it.
type runningServer struct {
	cmd      *exec.Cmd
	stderr   *lockedBuffer
	stdout   *lockedBuffer
	ready    readinessDoc
	waitErr  chan error
	shutdown bool
}

type readinessDoc struct {
	Endpoint        *string `json:"endpoint"`
	ControlEndpoint string  `json:"controlEndpoint"`
	PID             int     `json:"pid"`
}

// startServer launches cmd --config CONFIG from the repository root and
// waits (under a bounded watchdog) for the atomic readiness file and a
// healthy control endpoint.
func startServer(t *testing.T, cmdline []string, cfg ServerConfig, watchdog time.Duration) *runningServer {
	t.Helper()
	dir := t.TempDir()
	cfg.ReadinessFile = filepath.Join(dir, "ready.json")
	cfgPath := writeConfig(t, dir, "server.json", cfg)
	cmd := exec.Command(cmdline[0], append(slices.Clone(cmdline[1:]), "--config", cfgPath)...)
	cmd.Dir = repoRoot(t)
	rs := &runningServer{cmd: cmd, stderr: &lockedBuffer{}, stdout: &lockedBuffer{}, waitErr: make(chan error, 1)}
	cmd.Stderr = rs.stderr
	cmd.Stdout = rs.stdout
	require.NoError(t, cmd.Start())
	go func() { rs.waitErr <- cmd.Wait() }()
	t.Cleanup(func() { rs.stop(t) })

	deadline := time.Now().Add(watchdog)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(cfg.ReadinessFile)
		if err == nil {
			require.NoError(t, json.Unmarshal(data, &rs.ready), "readiness is written atomically")
			break
		}
		select {
		case err := <-rs.waitErr:
			rs.waitErr <- err
			t.Fatalf("server exited before readiness: %v\n%s", err, rs.stderr.String())
		case <-tick.C:
		}
		require.True(t, time.Now().Before(deadline), "server readiness watchdog expired\n%s", rs.stderr.String())
	}
	var health struct {
		Ready bool `json:"ready"`
	}
	getJSON(t, rs.ready.ControlEndpoint+"/health", &health)
	require.True(t, health.Ready)
	require.Equal(t, "", rs.stdout.String(), "an HTTP server writes nothing to stdout")
	return rs
}

// stop shuts the server down through the control endpoint and requires a
// clean exit; it kills the process only if the watchdog expires.
func (rs *runningServer) stop(t *testing.T) {
	if rs.shutdown {
		return
	}
	rs.shutdown = true
	resp, err := http.Post(rs.ready.ControlEndpoint+"/shutdown", "application/json", nil)
	if err == nil {
		_ = resp.Body.Close()
	}
	select {
	case err := <-rs.waitErr:
		if err != nil {
			t.Errorf("server exit: %v\n%s", err, rs.stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = rs.cmd.Process.Kill()
		<-rs.waitErr
		t.Errorf("server did not exit after /shutdown")
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// runClientCmd runs the client to completion and returns its exit status,
// report bytes and stderr.
func runClientCmd(t *testing.T, cmdline []string, cfg ClientConfig, watchdog time.Duration) (int, []byte, string) {
	t.Helper()
	dir := t.TempDir()
	cfg.ReportFile = filepath.Join(dir, "report.json")
	cfgPath := writeConfig(t, dir, "client.json", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], append(slices.Clone(cmdline[1:]), "--config", cfgPath)...)
	cmd.Dir = repoRoot(t)
	cmd.WaitDelay = 10 * time.Second
	stderr, stdout := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stderr, cmd.Stdout = stderr, stdout
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "client watchdog expired\n%s", stderr.String())
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.Equal(t, "", stdout.String(), "the client writes nothing to stdout")
	rep, err := os.ReadFile(cfg.ReportFile)
	require.NoError(t, err, "the client always writes its report\n%s", stderr.String())
	return code, rep, stderr.String()
}

func corpusAbs(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(corpusPath)
	require.NoError(t, err)
	return p
}

// verifyReport checks a report as the matrix runner does: right language,
// every scenario exactly once, no unknown ids, every row passed, and every
// actual independently compared with the scenario's expectation.
func verifyReport(t *testing.T, f *ScenarioFile, data []byte) {
	t.Helper()
	var rep report
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, "go", rep.Language)
	byID := map[string]reportEntry{}
	for _, r := range rep.Results {
		_, dup := byID[r.ID]
		require.False(t, dup, "duplicate report row %s", r.ID)
		byID[r.ID] = r
	}
	require.Len(t, byID, len(f.Scenarios))
	for _, sc := range f.Scenarios {
		r, ok := byID[sc.ID]
		require.True(t, ok, "missing report row %s", sc.ID)
		require.Equal(t, statusPassed, r.Status, "%s: %s", sc.ID, r.Error)
		if sc.ExpectError {
			require.JSONEq(t, `{"rejected":true}`, string(r.Actual), sc.ID)
			require.True(t, strings.HasPrefix(r.Error, "rejected at "), "%s: a negative passes only on rejection of the scripted response: %s", sc.ID, r.Error)
		} else {
			require.NoError(t, ComparePartial(sc.Expected, r.Actual), sc.ID)
		}
	}
}

// verifyReceipts checks that the server recorded every scenario exactly
// once with the canonical method and the exact request.
func verifyReceipts(t *testing.T, control string, f *ScenarioFile) {
	t.Helper()
	var got struct {
		Requests []receipt `json:"requests"`
	}
	getJSON(t, control+"/receipts", &got)
	seen := map[string]int{}
	for _, r := range got.Requests {
		seen[r.ID]++
		require.Equal(t, "hooks/intercept", r.Method)
		require.True(t, r.Accepted)
	}
	require.Len(t, got.Requests, len(f.Scenarios))
	for _, sc := range f.Scenarios {
		require.Equal(t, 1, seen[sc.ID], sc.ID)
	}
	for _, r := range got.Requests {
		var want, have any
		for _, sc := range f.Scenarios {
			if sc.ID == r.ID {
				require.NoError(t, DecodeJSON(sc.Request, &want))
			}
		}
		require.NoError(t, DecodeJSON(r.Message, &have))
		require.True(t, JSONEqual(want, have), "receipt %s holds the exact request", r.ID)
	}
}

// requireNoLeak asserts that no credential or ephemeral port appears.
func requireNoLeak(t *testing.T, what string, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" {
			require.NotContains(t, text, s, "%s leaks a secret or port", what)
		}
	}
}

func portOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	return ":" + port
}

// TestAdapterHTTP runs our corpus through the adapter.json commands over
// HTTP under every auth label: none; bearer (static token); oauth (the
// client-credentials grant against a local issuer, the token verified by
// the server as an HS256 JWT under the fixed clock); mtls (a real TLS
// handshake, client certificate required, https readiness); workload (a
// pre-signed assertion). Every row passes, every receipt holds the exact
// request, and no secret or port reaches a report or a log.
func TestAdapterHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	a := loadAdapter(t)
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	for _, mode := range allModes {
		t.Run(mode, func(t *testing.T) {
			fx := fixtureFor(t, mode)
			srv := startServer(t, fast(t, a.Server), ServerConfig{Transport: TransportHTTP, ScenarioFile: corpusAbs(t), Auth: fx.server}, 60*time.Second)
			require.NotNil(t, srv.ready.Endpoint)
			wantScheme := "http://"
			if mode == AuthMTLS {
				wantScheme = "https://"
			}
			require.True(t, strings.HasPrefix(*srv.ready.Endpoint, wantScheme), "readiness advertises %s", wantScheme)
			code, rep, stderr := runClientCmd(t, fast(t, a.Client), ClientConfig{Transport: TransportHTTP, Endpoint: *srv.ready.Endpoint, ScenarioFile: corpusAbs(t), Auth: fx.client}, 2*time.Minute)
			require.Equal(t, 0, code, stderr)
			verifyReport(t, f, rep)
			verifyReceipts(t, srv.ready.ControlEndpoint, f)
			if fx.issuer != nil {
				grants := fx.issuer.granted()
				require.Len(t, grants, 1, "one token, cached for the whole run")
				require.Equal(t, "client_credentials", grants[0].form["grant_type"][0])
				require.Equal(t, interopAud, grants[0].form["audience"][0])
				require.Empty(t, grants[0].authHeader, "client credentials are posted in the form")
				fx.secrets = append(fx.secrets, grants[0].issued)
			}
			leaks := append(fx.secrets, portOf(t, *srv.ready.Endpoint), portOf(t, srv.ready.ControlEndpoint))
			for _, text := range []struct{ what, body string }{{"report", string(rep)}, {"client log", stderr}, {"server log", srv.stderr.String()}} {
				requireNoLeak(t, text.what, text.body, leaks...)
			}
			srv.stop(t)
			requireNoLeak(t, "server log", srv.stderr.String(), leaks...)
		})
	}
}

func TestAdapterStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	a := loadAdapter(t)
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	dir := t.TempDir()
	srvCfg := writeConfig(t, dir, "server.json", ServerConfig{Transport: TransportStdio, ReadinessFile: filepath.Join(dir, "ready.json"), ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}})
	code, rep, stderr := runClientCmd(t, fast(t, a.Client), ClientConfig{
		Transport: TransportStdio, ServerCommand: fast(t, a.Server), ServerCwd: repoRoot(t), ServerConfig: srvCfg,
		ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone},
	}, 2*time.Minute)
	require.Equal(t, 0, code, stderr)
	verifyReport(t, f, rep)
}

// TestAdapterJSONCommandsVerbatim runs interop/adapter.json's commands as
// written (go run from the repository root): the client over stdio owning
// the server command as its child, and an HTTP server started by go run.
func TestAdapterJSONCommandsVerbatim(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end, compiles with go run")
	}
	a := loadAdapter(t)
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	dir := t.TempDir()
	srvCfg := writeConfig(t, dir, "server.json", ServerConfig{Transport: TransportStdio, ReadinessFile: filepath.Join(dir, "ready.json"), ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}})
	code, rep, stderr := runClientCmd(t, a.Client, ClientConfig{
		Transport: TransportStdio, ServerCommand: a.Server, ServerCwd: repoRoot(t), ServerConfig: srvCfg,
		ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone},
	}, 5*time.Minute)
	require.Equal(t, 0, code, stderr)
	verifyReport(t, f, rep)

	srv := startServer(t, a.Server, ServerConfig{Transport: TransportHTTP, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}}, 5*time.Minute)
	code, rep, stderr = runClientCmd(t, fast(t, a.Client), ClientConfig{Transport: TransportHTTP, Endpoint: *srv.ready.Endpoint, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}}, 2*time.Minute)
	require.Equal(t, 0, code, stderr)
	verifyReport(t, f, rep)
	verifyReceipts(t, srv.ready.ControlEndpoint, f)
}

// TestAdapterStdioAuthInapplicable: over stdio (process trust) every auth
// label but none is reported inapplicable and never passed; the server
// refuses it with status 3 and no readiness file.
func TestAdapterStdioAuthInapplicable(t *testing.T) {
	bin := adapterBinary(t)
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	for _, mode := range []string{AuthBearer, AuthOAuth, AuthMTLS, AuthWorkload} {
		t.Run(mode, func(t *testing.T) {
			cfg := ClientConfig{Transport: TransportStdio, ServerCommand: []string{bin, "server"}, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: mode, Token: "tok-never-used"}}
			code, rep, stderr := runClientCmd(t, []string{bin, "client"}, cfg, time.Minute)
			require.Equal(t, 0, code, stderr)
			var r report
			require.NoError(t, json.Unmarshal(rep, &r))
			require.Len(t, r.Results, len(f.Scenarios))
			for _, row := range r.Results {
				require.Equal(t, statusInapplicable, row.Status)
			}
			requireNoLeak(t, "report", string(rep), "tok-never-used")

			dir := t.TempDir()
			ready := filepath.Join(dir, "ready.json")
			srvCfg := writeConfig(t, dir, "server.json", ServerConfig{Transport: TransportStdio, ReadinessFile: ready, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: mode, Token: "tok-never-used"}})
			cmd := exec.Command(bin, "server", "--config", srvCfg)
			var serr lockedBuffer
			cmd.Stderr = &serr
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, ExitUnsupported, ee.ExitCode())
			require.NoFileExists(t, ready)
			requireNoLeak(t, "server log", serr.String(), "tok-never-used")
		})
	}
}

// TestAdapterAuthConfigErrors: an HTTP auth object missing what its mode
// needs is a configuration error (status 2) on either side, before any
// readiness file or report, and the message names members, never values.
func TestAdapterAuthConfigErrors(t *testing.T) {
	bin := adapterBinary(t)
	const secret = "CANARY-config-3b1d"
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	cases := []struct {
		name   string
		server bool
		auth   AuthConfig
	}{
		{"server bearer without token", true, AuthConfig{Mode: AuthBearer}},
		{"server oauth without signingKey", true, AuthConfig{Mode: AuthOAuth, Issuer: interopIss, Audience: interopAud, Purpose: "p"}},
		{"server oauth without purpose", true, AuthConfig{Mode: AuthOAuth, SigningKey: secret, Issuer: interopIss, Audience: interopAud}},
		{"server oauth with a bad clock", true, AuthConfig{Mode: AuthOAuth, SigningKey: secret, Issuer: interopIss, Audience: interopAud, Purpose: "p", Clock: "1e999"}},
		{"server workload without audience", true, AuthConfig{Mode: AuthWorkload, SigningKey: secret, Issuer: interopIss}},
		{"server mtls with unreadable files", true, AuthConfig{Mode: AuthMTLS, CAFile: missing, CertFile: missing, KeyFile: missing}},
		{"server unknown mode", true, AuthConfig{Mode: "kerberos"}},
		{"client oauth without clientSecret", false, AuthConfig{Mode: AuthOAuth, TokenEndpoint: "http://127.0.0.1:9/token", ClientID: "c", Audience: interopAud}},
		{"client oauth with a remote plain-http token endpoint", false, AuthConfig{Mode: AuthOAuth, TokenEndpoint: "http://issuer.example/token", ClientID: "c", ClientSecret: secret, Audience: interopAud}},
		{"client workload without assertion", false, AuthConfig{Mode: AuthWorkload}},
		{"client mtls over plain http", false, AuthConfig{Mode: AuthMTLS, CAFile: missing, CertFile: missing, KeyFile: missing}},
		{"client unknown mode", false, AuthConfig{Mode: "kerberos"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			var cfgPath, out string
			if c.server {
				cfgPath = writeConfig(t, d, "server.json", ServerConfig{Transport: TransportHTTP, ReadinessFile: filepath.Join(d, "ready.json"), ScenarioFile: corpusAbs(t), Auth: c.auth})
				out = filepath.Join(d, "ready.json")
			} else {
				out = filepath.Join(d, "report.json")
				cfgPath = writeConfig(t, d, "client.json", ClientConfig{Transport: TransportHTTP, Endpoint: "http://127.0.0.1:9/intercept", ScenarioFile: corpusAbs(t), ReportFile: out, Auth: c.auth})
			}
			role := "client"
			if c.server {
				role = "server"
			}
			cmd := exec.Command(bin, role, "--config", cfgPath)
			var serr lockedBuffer
			cmd.Stderr = &serr
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, serr.String())
			require.Equal(t, ExitUsage, ee.ExitCode(), serr.String())
			require.NoFileExists(t, out)
			requireNoLeak(t, "log", serr.String(), secret, missing)
		})
	}
}

// TestAdapterDeliveryFailuresNeverPass: transport failures, refused
// credentials and spawn failures fail every row, negatives included, and
// the client exits non-zero.
func TestAdapterDeliveryFailuresNeverPass(t *testing.T) {
	bin := adapterBinary(t)
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/intercept"
	require.NoError(t, ln.Close())

	requireAllFailed := func(t *testing.T, code int, rep []byte) {
		t.Helper()
		require.Equal(t, ExitFailed, code)
		var r report
		require.NoError(t, json.Unmarshal(rep, &r))
		require.Len(t, r.Results, len(f.Scenarios))
		for _, row := range r.Results {
			require.Equal(t, statusFailed, row.Status, row.ID)
		}
	}
	t.Run("connection-refused", func(t *testing.T) {
		code, rep, stderr := runClientCmd(t, []string{bin, "client"}, ClientConfig{Transport: TransportHTTP, Endpoint: dead, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}}, time.Minute)
		requireAllFailed(t, code, rep)
		requireNoLeak(t, "client log", stderr, portOf(t, dead))
		requireNoLeak(t, "report", string(rep), portOf(t, dead))
	})
	t.Run("spawn-failure", func(t *testing.T) {
		code, rep, _ := runClientCmd(t, []string{bin, "client"}, ClientConfig{Transport: TransportStdio, ServerCommand: []string{filepath.Join(t.TempDir(), "no-such-server")}, ScenarioFile: corpusAbs(t), Auth: AuthConfig{Mode: AuthNone}}, time.Minute)
		requireAllFailed(t, code, rep)
	})
	// refused runs the server with srvAuth and the client with cliAuth and
	// requires every row failed, nothing dispatched, and none of secrets
	// in the report or either log.
	refused := func(t *testing.T, srvAuth, cliAuth AuthConfig, secrets ...string) {
		t.Helper()
		if testing.Short() {
			t.Skip("end-to-end")
		}
		srv := startServer(t, []string{bin, "server"}, ServerConfig{Transport: TransportHTTP, ScenarioFile: corpusAbs(t), Auth: srvAuth}, time.Minute)
		code, rep, stderr := runClientCmd(t, []string{bin, "client"}, ClientConfig{Transport: TransportHTTP, Endpoint: *srv.ready.Endpoint, ScenarioFile: corpusAbs(t), Auth: cliAuth}, time.Minute)
		requireAllFailed(t, code, rep)
		var got struct {
			Requests []receipt `json:"requests"`
		}
		getJSON(t, srv.ready.ControlEndpoint+"/receipts", &got)
		require.Empty(t, got.Requests, "nothing is dispatched without the credential")
		srv.stop(t)
		for _, text := range []string{string(rep), stderr, srv.stderr.String()} {
			requireNoLeak(t, "output", text, secrets...)
		}
	}
	t.Run("wrong-bearer-token", func(t *testing.T) {
		const good, bad = "tok-good-0b5e", "tok-bad-91c2"
		refused(t, AuthConfig{Mode: AuthBearer, Token: good}, AuthConfig{Mode: AuthBearer, Token: bad}, good, bad)
	})
	t.Run("oauth-token-endpoint-refuses", func(t *testing.T) {
		const canary = "CANARY-token-endpoint-body-4f0a"
		fx := fixtureFor(t, AuthOAuth)
		fx.issuer.refuse = true
		fx.issuer.refuseBody = `{"error":"invalid_client","error_description":"` + canary + `"}`
		refused(t, fx.server, fx.client, append(fx.secrets, canary)...)
		require.NotEmpty(t, fx.issuer.granted(), "the grant was attempted")
	})
	t.Run("oauth-token-for-another-purpose", func(t *testing.T) {
		fx := fixtureFor(t, AuthOAuth)
		fx.server.Purpose = "upload" // the issuer's tokens are for ahp-event
		fx.client.SigningKey = ""    // the client cannot check before sending
		refused(t, fx.server, fx.client, fx.secrets...)
		require.Len(t, fx.issuer.granted(), 2, "discovery: the rejected token, then one replay with a fresh one")
	})
	t.Run("workload-assertion-expired", func(t *testing.T) {
		fx := fixtureFor(t, AuthWorkload)
		c := claimsFor(PurposeWorkload)
		c["exp"] = fixtureNow - 1
		fx.client.Assertion = signedToken(t, workloadKey, c)
		refused(t, fx.server, fx.client, append(fx.secrets, fx.client.Assertion)...)
	})
	t.Run("workload-assertion-signed-with-the-oauth-key", func(t *testing.T) {
		fx := fixtureFor(t, AuthWorkload)
		fx.client.Assertion = signedToken(t, oauthKey, claimsFor(PurposeWorkload))
		refused(t, fx.server, fx.client, append(fx.secrets, fx.client.Assertion)...)
	})
	t.Run("mtls-client-certificate-of-another-ca", func(t *testing.T) {
		fx := fixtureFor(t, AuthMTLS)
		other, _ := mtlsFixture(t, "another-ca")
		cli := fx.client
		cli.CertFile, cli.KeyFile = other.client.CertFile, other.client.KeyFile
		refused(t, fx.server, cli, fx.secrets...)
	})
}
