package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// childEnv makes the test binary the catalogue server (the stdio child of
// the client under test): a real subprocess running ServerRole.
const childEnv = "AHP_CATALOGUE_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(interop.Command("lifecycle-server", "", os.Args[1:], interop.OSStdio(), ServerRole))
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const testToken = "catalogue-test-token"

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	body, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	return path
}

func authFor(mode string) map[string]any {
	if mode == interop.AuthBearer {
		return map[string]any{"mode": mode, "token": testToken}
	}
	return map[string]any{"mode": mode}
}

// runHTTP runs the server in process on loopback HTTP and the client
// against it; it returns the client's report.
func runHTTP(t *testing.T, mode, scenarios string) (*Report, error) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready.json")
	srvCfg := writeJSON(t, filepath.Join(dir, "server.json"), map[string]any{
		"suite": Suite, "transport": "http", "readinessFile": ready, "scenarioFile": scenarios, "auth": authFor(mode),
		"uploadAuth": map[string]any{"token": "upload-token"},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- ServerRole(ctx, srvCfg, interop.Stdio{Stdout: os.Stdout, Stderr: os.Stderr}, testLog(t))
	}()
	var rd interop.Readiness
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(ready)
		if err == nil && json.Unmarshal(data, &rd) == nil && rd.Endpoint != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "server readiness")
		time.Sleep(10 * time.Millisecond) // startup polling only
	}
	report := filepath.Join(dir, "report.json")
	cliCfg := writeJSON(t, filepath.Join(dir, "client.json"), map[string]any{
		"suite": Suite, "transport": "http", "endpoint": *rd.Endpoint, "controlEndpoint": rd.ControlEndpoint,
		"scenarioFile": scenarios, "reportFile": report, "auth": authFor(mode),
	})
	runErr := ClientRole(context.Background(), cliCfg, interop.Stdio{}, testLog(t))
	resp, err := http.Post(rd.ControlEndpoint+"/shutdown", "application/json", bytes.NewReader([]byte(`{}`)))
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, <-done)
	return readReport(t, report), runErr
}

// runStdio runs the client, which launches the server (this test binary)
// as its persistent stdio child.
func runStdio(t *testing.T, scenarios string) (*Report, error) {
	dir := t.TempDir()
	srvCfg := writeJSON(t, filepath.Join(dir, "server.json"), map[string]any{
		"suite": Suite, "transport": "stdio", "readinessFile": filepath.Join(dir, "ready.json"), "scenarioFile": scenarios,
		"auth": map[string]any{"mode": "none"},
	})
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(childEnv, "1")
	report := filepath.Join(dir, "report.json")
	cliCfg := writeJSON(t, filepath.Join(dir, "client.json"), map[string]any{
		"suite": Suite, "transport": "stdio", "serverCommand": []string{exe}, "serverConfig": srvCfg,
		"scenarioFile": scenarios, "reportFile": report, "auth": map[string]any{"mode": "none"},
		"childPidFile": filepath.Join(dir, "child.pid"),
	})
	runErr := ClientRole(context.Background(), cliCfg, interop.Stdio{}, testLog(t))
	return readReport(t, report), runErr
}

func readReport(t *testing.T, path string) *Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	return &rep
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func testLog(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(testWriter{t}, nil)) }

// TestCatalogueMatrix runs the committed corpus client ↔ server over HTTP
// (auth none and bearer) and stdio, and verifies each report as the
// runner does: exact actual per scenario, and the receipts independently.
func TestCatalogueMatrix(t *testing.T) {
	f, err := Load(corpusPath)
	require.NoError(t, err)
	abs, err := filepath.Abs(corpusPath)
	require.NoError(t, err)
	for _, tc := range []struct{ transport, auth string }{{"http", "none"}, {"http", "bearer"}, {"stdio", "none"}} {
		t.Run(tc.transport+"-"+tc.auth, func(t *testing.T) {
			var rep *Report
			var err error
			if tc.transport == "stdio" {
				rep, err = runStdio(t, abs)
			} else {
				rep, err = runHTTP(t, tc.auth, abs)
			}
			require.NoError(t, err)
			require.NotNil(t, rep)
			require.NoError(t, Verify(f, rep))
		})
	}
}

// Verify applies the runner's checks to a report: one result per scenario
// in order with actual exactly the expected object, exactly one discovery
// receipt whose response is a canonical manifest meeting the suite's
// requirements, and for every sent message exactly one observed or
// rejected receipt as the scenario's receipts say, and no other.
func Verify(f *File, rep *Report) error {
	if rep.Language != "go" || len(rep.Results) != len(f.Scenarios) || rep.Receipts == nil {
		return errors.New("report: language, result count or receipts")
	}
	var disc, msgs []Receipt
	for _, e := range rep.Receipts.Entries {
		switch e.Kind {
		case KindDiscovery:
			disc = append(disc, e)
		case KindObserved, KindRejected:
			msgs = append(msgs, e)
		default:
			return fmt.Errorf("unexpected receipt kind %q", e.Kind)
		}
	}
	if len(disc) != 1 {
		return fmt.Errorf("%d discovery receipts, want exactly one", len(disc))
	}
	if _, err := gen.ParseCapabilitiesRequest(disc[0].Request); err != nil {
		return fmt.Errorf("discovery request: %w", err)
	}
	resp, err := gen.ParseCapabilitiesResponse(disc[0].Response)
	if err != nil {
		return fmt.Errorf("discovery response: %w", err)
	}
	if err := CheckManifest(&resp.Result.Manifest); err != nil {
		return err
	}
	used := make([]bool, len(msgs))
	total := 0
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		res := rep.Results[i]
		if res.ID != sc.ID || res.Status != "passed" {
			return fmt.Errorf("%s: result %q status %q: %s", sc.ID, res.ID, res.Status, res.Error)
		}
		actual, err := json.Marshal(res.Actual)
		if err != nil {
			return err
		}
		if err := interop.CompareExact(sc.Expected, actual); err != nil {
			return fmt.Errorf("%s: %w", sc.ID, err)
		}
		var exp Actual
		if err := json.Unmarshal(sc.Expected, &exp); err != nil {
			return err
		}
		if len(sc.Receipts) != len(exp.Sent) {
			return fmt.Errorf("%s: fixture receipts do not match its sent messages", sc.ID)
		}
		for j, sent := range exp.Sent {
			total++
			match := -1
			for k, r := range msgs {
				if interop.JSONEqual(decodeAny(r.Message), decodeAny(sent)) {
					if match != -1 {
						return fmt.Errorf("%s: message %d has more than one receipt", sc.ID, j)
					}
					match = k
				}
			}
			if match == -1 {
				return fmt.Errorf("%s: message %d has no receipt", sc.ID, j)
			}
			used[match] = true
			r, want := msgs[match], sc.Receipts[j]
			raw, err := json.Marshal(r)
			if err != nil {
				return err
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(raw, &members); err != nil {
				return err
			}
			if r.Kind != want.Kind {
				return fmt.Errorf("%s: message %d: receipt %s, want %s", sc.ID, j, r.Kind, want.Kind)
			}
			if want.Kind == KindRejected {
				if r.ErrorKind != want.ErrorKind || len(members) != 3 {
					return fmt.Errorf("%s: message %d: rejected %q (%d members), want %q", sc.ID, j, r.ErrorKind, len(members), want.ErrorKind)
				}
				continue
			}
			if r.EventID != want.EventID || len(members) != 4 {
				return fmt.Errorf("%s: message %d: observed %q is not exactly {kind, eventId, event, message}", sc.ID, j, r.EventID)
			}
			var env struct {
				Params struct {
					SubscriptionID *json.RawMessage `json:"subscriptionId"`
					Event          json.RawMessage  `json:"event"`
				} `json:"params"`
			}
			if err := json.Unmarshal(r.Message, &env); err != nil {
				return err
			}
			if !interop.JSONEqual(decodeAny(env.Params.Event), decodeAny(r.Event)) || env.Params.SubscriptionID != nil {
				return fmt.Errorf("%s: message %d: observed event differs from its message, or carries subscriptionId", sc.ID, j)
			}
			if _, err := gen.ParseObserveNotification(r.Message); err != nil {
				return fmt.Errorf("%s: message %d: %w", sc.ID, j, err)
			}
		}
	}
	if len(msgs) != total {
		return fmt.Errorf("%d message receipts for %d sent messages", len(msgs), total)
	}
	for k, u := range used {
		if !u {
			return fmt.Errorf("receipt %d matches no sent message", k)
		}
	}
	return nil
}

func decodeAny(raw json.RawMessage) any {
	var v any
	if interop.DecodeJSON(raw, &v) != nil {
		return nil
	}
	return v
}

// TestVerifyRejectsTampered checks the verifier against success-shaped
// reports that lack the proofs: each mutation of a real report must fail.
func TestVerifyRejectsTampered(t *testing.T) {
	f, err := Load(corpusPath)
	require.NoError(t, err)
	abs, err := filepath.Abs(corpusPath)
	require.NoError(t, err)
	rep, err := runHTTP(t, "none", abs)
	require.NoError(t, err)
	require.NoError(t, Verify(f, rep))
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	fresh := func() *Report {
		var r Report
		require.NoError(t, json.Unmarshal(data, &r))
		return &r
	}
	find := func(r *Report, id string) *ReportEntry {
		for i := range r.Results {
			if r.Results[i].ID == id {
				return &r.Results[i]
			}
		}
		t.Fatalf("no result %s", id)
		return nil
	}
	for name, mutate := range map[string]func(r *Report){
		"flipped registration": func(r *Report) {
			e := find(r, "cat-reg-hook-failure")
			e.Actual.Registrations[0].Accepted = true
		},
		"missing registration": func(r *Report) {
			find(r, "cat-reg-sequence").Actual.Registrations = find(r, "cat-reg-sequence").Actual.Registrations[:2]
		},
		"dropped sent message": func(r *Report) {
			find(r, "cat-notify-turn-sequence").Actual.Sent = find(r, "cat-notify-turn-sequence").Actual.Sent[:2]
		},
		"second discovery": func(r *Report) {
			for _, e := range r.Receipts.Entries {
				if e.Kind == KindDiscovery {
					r.Receipts.Entries = append(r.Receipts.Entries, e)
					return
				}
			}
		},
		"no discovery": func(r *Report) {
			var keep []Receipt
			for _, e := range r.Receipts.Entries {
				if e.Kind != KindDiscovery {
					keep = append(keep, e)
				}
			}
			r.Receipts.Entries = keep
		},
		"duplicate observed": func(r *Report) {
			for _, e := range r.Receipts.Entries {
				if e.Kind == KindObserved {
					r.Receipts.Entries = append(r.Receipts.Entries, e)
					return
				}
			}
		},
		"observed turned rejected": func(r *Report) {
			for i, e := range r.Receipts.Entries {
				if e.Kind == KindObserved {
					r.Receipts.Entries[i] = Receipt{Kind: KindRejected, ErrorKind: ErrorInvalidParams, Message: e.Message}
					return
				}
			}
		},
		"wrong error kind": func(r *Report) {
			for i, e := range r.Receipts.Entries {
				if e.Kind == KindRejected {
					r.Receipts.Entries[i].ErrorKind = ErrorInvalidRequest + "x"
					return
				}
			}
		},
		"failed status": func(r *Report) { r.Results[0].Status = "failed" },
	} {
		t.Run(name, func(t *testing.T) {
			r := fresh()
			mutate(r)
			require.Error(t, Verify(f, r))
		})
	}
}

// TestStdioAuthInapplicable: over stdio only process trust applies; another
// auth label makes every scenario inapplicable and starts no server.
func TestStdioAuthInapplicable(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(corpusPath)
	require.NoError(t, err)
	report := filepath.Join(dir, "report.json")
	cfg := writeJSON(t, filepath.Join(dir, "client.json"), map[string]any{
		"suite": Suite, "transport": "stdio", "serverCommand": []string{"/nonexistent/lifecycle-server"},
		"serverConfig": filepath.Join(dir, "server.json"), "scenarioFile": abs, "reportFile": report,
		"auth": map[string]any{"mode": "bearer", "token": testToken},
	})
	require.NoError(t, ClientRole(context.Background(), cfg, interop.Stdio{}, testLog(t)))
	rep := readReport(t, report)
	require.NotNil(t, rep)
	f, err := Load(abs)
	require.NoError(t, err)
	require.Len(t, rep.Results, len(f.Scenarios))
	for _, e := range rep.Results {
		require.Equal(t, "inapplicable", e.Status)
	}
}

// TestUnknownOpFails: an op the suite does not define fails its scenario
// and the run (it never passes or skips); the other scenarios still run.
func TestUnknownOpFails(t *testing.T) {
	dir := t.TempDir()
	path := writeJSON(t, filepath.Join(dir, "scenarios.json"), map[string]any{"version": 1, "scenarios": []any{
		map[string]any{"id": "teleport", "requests": map[string]any{}, "responses": map[string]any{}, "steps": []any{map[string]any{"op": "teleport"}},
			"expected": map[string]any{"sent": []any{}, "registrations": []any{}}, "receipts": []any{}},
		map[string]any{"id": "after", "requests": map[string]any{}, "responses": map[string]any{},
			"steps":    []any{map[string]any{"op": "register", "registration": map[string]any{"protocolVersion": "draft", "hooks": []any{}}}},
			"expected": map[string]any{"sent": []any{}, "registrations": []any{map[string]any{"accepted": false}}}, "receipts": []any{}},
	}})
	rep, err := runHTTP(t, "none", path)
	require.Error(t, err)
	require.NotNil(t, rep)
	require.Equal(t, "failed", rep.Results[0].Status)
	require.Contains(t, rep.Results[0].Error, "unknown op")
	require.Equal(t, "passed", rep.Results[1].Status)
	require.Equal(t, []Registration{{Accepted: false}}, rep.Results[1].Actual.Registrations)
}
