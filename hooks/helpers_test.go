package hooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// canary is planted in backend error messages, stderr and the environment;
// it must never appear in a diagnostic, error string or log line.
const canary = "CANARY-7f3a9c-SECRET"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-ahp-backend" {
		os.Exit(runBackend(os.Args[2]))
	}
	goleak.VerifyTestMain(m)
}

// runBackend is the stdio backend process: the test binary re-executed.
func runBackend(mode string) int {
	fmt.Fprintln(os.Stderr, "backend stderr "+canary+" "+os.Getenv("AHP_TEST_CANARY"))
	if result, ok := hostileResults[mode]; ok { // hostile_test.go
		return serveHostile(result())
	}
	h := &server.Handler{MaxConcurrency: 1}
	if rest, ok := strings.CutPrefix(mode, "tee:"); ok {
		return runTee(rest)
	}
	switch mode {
	case "none", "deny", "allow", "modify", "slow", "stuck", "pid", "env":
		h.Intercept = func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			switch mode {
			case "deny":
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("blocked by stdio policy")}}, nil
			case "allow":
				return server.InterceptResult{Effects: []gen.Effect{server.Allow()}}, nil
			case "modify":
				return server.InterceptResult{Effects: []gen.Effect{server.ReplaceInput(map[string]any{"path": "/safe"})}}, nil
			case "slow":
				time.Sleep(2 * time.Second)
			case "stuck": // works on, whether or not the harness still waits
				time.Sleep(time.Hour)
			case "pid":
				return server.InterceptResult{Effects: []gen.Effect{server.Deny(fmt.Sprintf("pid:%d", os.Getpid()))}}, nil
			case "env":
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("env:" + os.Getenv("AHP_TEST_CANARY"))}}, nil
			}
			return server.InterceptResult{}, nil
		}
		h.Observe = func(context.Context, *gen.ObserveNotification) error { return nil }
		if err := server.ServeStdio(context.Background(), os.Stdin, os.Stdout, h); err != nil {
			return 1
		}
		return 0
	}
	if mode == "json" { // the benchmark's floor: decode each request to a map, encode an answer
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return 0
			}
			out, err := floorAnswer(line)
			if err != nil {
				return 1
			}
			if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
				return 1
			}
		}
	}
	if mode == "echo" { // the benchmark's raw backend: one pre-encoded answer per line
		resp := []byte(benchResponse + "\n")
		r := bufio.NewReader(os.Stdin)
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				return 0
			}
			if _, err := os.Stdout.Write(resp); err != nil {
				return 1
			}
		}
	}
	if mode == "hang" { // reads its message, then never answers nor exits (until killed)
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour)
		return 0
	}
	// Raw modes that misbehave on purpose.
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil || env.Kind != jsonrpc.KindRequest {
			continue
		}
		switch mode {
		case "crash":
			os.Exit(3)
		case "garbage":
			fmt.Println("Welcome to the policy backend v1.0")
		case "mismatch":
			fmt.Println(`{"jsonrpc":"2.0","id":"not-the-request","result":{"protocolVersion":"draft","effects":[]}}`)
		case "rpcerror":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32004,"message":"db password %s","data":{"secret":"%s"}}}`+"\n", env.ID, canary, canary)
		case "big":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"draft","effects":[],"pad":"%s"}}`+"\n", env.ID, strings.Repeat("x", 8<<10))
		case "ungranted":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"draft","effects":[{"type":"ask"}]}}`+"\n", env.ID)
		}
	}
	return 0
}

// runTee is the stdio backend of mode "tee:ANSWER:FILE": it appends every
// byte it reads to FILE, then serves it, denying every interception when
// ANSWER is "deny" and returning no effect otherwise.
func runTee(arg string) int {
	answer, path, ok := strings.Cut(arg, ":")
	if !ok {
		return 2
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 1
	}
	defer f.Close()
	h := &server.Handler{MaxConcurrency: 1, Observe: func(context.Context, *gen.ObserveNotification) error { return nil }}
	h.Intercept = func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		if answer == "deny" {
			return server.InterceptResult{Effects: []gen.Effect{server.Deny("denied over stdio")}}, nil
		}
		return server.InterceptResult{}, nil
	}
	if err := server.ServeStdio(context.Background(), io.TeeReader(os.Stdin, f), os.Stdout, h); err != nil {
		return 1
	}
	return 0
}

// backendCmd returns the registration transport of a stdio backend in mode.
func backendCmd(t testing.TB, mode, lifecycle string) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	b, _ := json.Marshal(map[string]any{"type": "stdio", "command": exe, "args": []string{"-ahp-backend", mode}, "lifecycle": lifecycle})
	return string(b)
}

func httpTransport(url string) string { return `{"type":"http","url":"` + url + `"}` }

// sub renders one subscription.
func interceptSub(events string, timeoutMs int, policy string) string {
	return fmt.Sprintf(`{"events":[%s],"mode":"intercept","timeoutMs":%d,"failurePolicy":"%s","content":{"default":"body"}}`, events, timeoutMs, policy)
}

func observeSub(events string) string {
	return fmt.Sprintf(`{"events":[%s],"mode":"observe","content":{"default":"body"}}`, events)
}

// backendJSON renders one backend with its subscriptions.
func backendJSON(id, transport string, subs ...string) string {
	return fmt.Sprintf(`{"id":%q,"transport":%s,"subscriptions":[%s]}`, id, transport, strings.Join(subs, ","))
}

func registration(backends ...string) []byte {
	return []byte(`{"protocolVersion":"draft","hooks":[` + strings.Join(backends, ",") + `]}`)
}

// plainGrants grants every event its plain mode: interception for the
// interceptable ones (no effects), observation for the others.
func plainGrants() map[gen.EventName]hooks.Grant {
	grants := map[gen.EventName]hooks.Grant{}
	for _, info := range gen.Events() {
		if info.Interceptable() {
			grants[info.Name] = hooks.Intercept()
		} else {
			grants[info.Name] = hooks.Observe()
		}
	}
	return grants
}

// toolGrant is the usual tool.before grant of the tests.
func toolGrant() hooks.Grant {
	return hooks.Intercept().Deny().Allow().Ask().ModifyInput(hooks.Replace, hooks.Merge).Return().Message().Stop()
}

func baseConfig() hooks.Config {
	return hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventToolBefore: toolGrant(),
		gen.EventToolAfter:  hooks.Observe(),
		gen.EventTurnEnd:    hooks.Observe(),
	}}
}

func toolInput() hooks.ToolBeforeInput {
	return hooks.ToolBeforeInput{Name: "read_file", Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
}

// recorder is a server.Handler backend that records what it receives.
type recorder struct {
	mu        sync.Mutex
	intercept []*gen.InterceptRequest
	observed  []*gen.ObserveNotification
	effects   func(req *gen.InterceptRequest) []gen.Effect
}

func (r *recorder) handler() *server.Handler {
	return &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			r.mu.Lock()
			r.intercept = append(r.intercept, req)
			f := r.effects
			r.mu.Unlock()
			if f == nil {
				return server.InterceptResult{}, nil
			}
			return server.InterceptResult{Effects: f(req)}, nil
		},
		Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
			r.mu.Lock()
			r.observed = append(r.observed, n)
			r.mu.Unlock()
			return nil
		},
	}
}

func (r *recorder) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.intercept), len(r.observed)
}

// faultServer serves misbehaving HTTP backends, one per path.
func faultServer(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	respond := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
	id := func(r *http.Request) string {
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		return string(env.ID)
	}
	mux.HandleFunc("/timeout", func(w http.ResponseWriter, r *http.Request) {
		i := id(r)
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
			return
		}
		respond(w, `{"jsonrpc":"2.0","id":`+i+`,"result":{"protocolVersion":"draft","effects":[]}}`)
	})
	mux.HandleFunc("/status500", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal error "+canary, http.StatusInternalServerError)
	})
	mux.HandleFunc("/malformed", func(w http.ResponseWriter, r *http.Request) { respond(w, `{"jsonrpc":"2.0", oops `+canary) })
	mux.HandleFunc("/mismatch", func(w http.ResponseWriter, r *http.Request) {
		respond(w, `{"jsonrpc":"2.0","id":"someone-else","result":{"protocolVersion":"draft","effects":[]}}`)
	})
	mux.HandleFunc("/rpcerror", func(w http.ResponseWriter, r *http.Request) {
		respond(w, `{"jsonrpc":"2.0","id":`+id(r)+`,"error":{"code":-32004,"message":"db password `+canary+`","data":{"secret":"`+canary+`"}}}`)
	})
	mux.HandleFunc("/ungranted", func(w http.ResponseWriter, r *http.Request) {
		respond(w, `{"jsonrpc":"2.0","id":`+id(r)+`,"result":{"protocolVersion":"draft","effects":[{"type":"ask"}]}}`)
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			return
		}
		c, _, err := hj.Hijack()
		if err == nil {
			_ = c.Close()
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/deny", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/wrongtype", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + id(r) + `,"result":{"protocolVersion":"draft","effects":[]}}`))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		respond(w, `{"jsonrpc":"2.0","id":`+id(r)+`,"result":{"protocolVersion":"draft","effects":[],"extensions":{"com.example.pad":"`+strings.Repeat("x", 8<<10)+`"}}}`)
	})
	deny := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("denied over http")}}, nil
	}}
	mux.Handle("/deny", deny)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// capture is a slog handler that keeps every rendered line.
type capture struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (c *capture) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{c}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct{ c *capture }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.buf.Write(p)
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// ctxTimeout is a test context bounded by d.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func allowEffect() gen.Effect { return server.Allow() }
