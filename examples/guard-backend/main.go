// Command guard-backend is an example AHP backend built with package
// server. It denies tool.before for shell commands that match a deny-list
// and audits every observed event and every decision as JSON lines.
//
//	guard-backend -stdio [-audit FILE] [-deny REGEXP ...]
//	guard-backend -http 127.0.0.1:8080 [-audit FILE] [-deny REGEXP ...]
//
// In stdio mode standard output carries protocol frames only; the audit
// goes to standard error or to FILE, diagnostics to standard error. The
// audit records event types, ids and the matching rule, never the command
// text or the tool input, which may hold secrets.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// defaultDenyList returns patterns for a few destructive or remote-code
// shell commands.
func defaultDenyList() []string {
	return []string{
		`\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*(rf|fr)[a-zA-Z]*\b`,
		`\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b`,
		`\bmkfs(\.[a-z0-9]+)?\b`,
		`\bdd\s+[^|]*\bof=/dev/`,
		`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`,
		`\bgit\s+push\s+(.*\s)?(--force|-f)\b`,
		`\bchmod\s+(-[a-zA-Z]+\s+)*777\s+/`,
	}
}

// denyCode is the reverse-DNS code of this guard's denials.
const denyCode = "com.example.guard.deny-list"

// isShellTool reports whether a tool name means shell execution when the
// harness does not set tool.kind to "shell".
func isShellTool(name string) bool {
	switch strings.ToLower(name) {
	case "bash", "sh", "shell", "exec", "run_shell_command", "terminal":
		return true
	}
	return false
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// rules is a flag.Value collecting -deny patterns.
type rules []string

func (r *rules) String() string     { return strings.Join(*r, ",") }
func (r *rules) Set(v string) error { *r = append(*r, v); return nil }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("guard-backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stdio := fs.Bool("stdio", false, "serve the AHP stdio binding on stdin/stdout")
	addr := fs.String("http", "", "serve the AHP HTTP binding on `ADDR` (e.g. 127.0.0.1:8080)")
	auditPath := fs.String("audit", "", "append the JSON-lines audit to `FILE` (default: stderr)")
	verbose := fs.Bool("v", false, "log protocol diagnostics to stderr")
	var deny rules
	fs.Var(&deny, "deny", "deny shell commands matching `REGEXP` (repeatable; replaces the default list)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stdio == (*addr != "") {
		fmt.Fprintln(stderr, "guard-backend: exactly one of -stdio or -http ADDR is required")
		return 2
	}
	if len(deny) == 0 {
		deny = defaultDenyList()
	}
	g, err := newGuard(deny)
	if err != nil {
		fmt.Fprintln(stderr, "guard-backend:", err)
		return 2
	}

	auditOut := stderr
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "guard-backend:", err)
			return 1
		}
		defer f.Close()
		auditOut = f
	}
	g.audit = &auditLog{w: auditOut}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	h := &server.Handler{
		Intercept:       g.intercept,
		Observe:         g.observe,
		InterceptEvents: []gen.EventName{gen.EventToolBefore},
		Logger:          slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	if err := h.Validate(); err != nil {
		fmt.Fprintln(stderr, "guard-backend:", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stdio {
		if err := server.ServeStdio(ctx, stdin, stdout, h); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "guard-backend:", err)
			return 1
		}
		return 0
	}
	if err := serveHTTP(ctx, *addr, h, stderr); err != nil {
		fmt.Fprintln(stderr, "guard-backend:", err)
		return 1
	}
	return 0
}

// serveHTTP serves h on addr until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, addr string, h http.Handler, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Read, write and idle timeouts at the server package's defaults: a
	// backend served without them can be held open by clients that never
	// finish a request.
	srv := server.NewHTTPServer(addr, h)
	fmt.Fprintf(stderr, "guard-backend: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// guard holds the compiled deny-list.
type guard struct {
	rules []*regexp.Regexp
	audit *auditLog
}

func newGuard(patterns []string) (*guard, error) {
	g := &guard{}
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("deny rule %d: %w", i, err)
		}
		g.rules = append(g.rules, re)
	}
	return g, nil
}

// match returns the index of the first rule matching command, or -1.
func (g *guard) match(command string) int {
	for i, re := range g.rules {
		if re.MatchString(command) {
			return i
		}
	}
	return -1
}

// shellCommand returns the command of a shell tool call: input.command (a
// string) or input.cmd (a string or an array of strings).
func shellCommand(tool *gen.ExecutionEventTool) (string, bool) {
	isShell := (tool.Kind != nil && *tool.Kind == "shell") || isShellTool(tool.Name)
	if !isShell {
		return "", false
	}
	var input struct {
		Command json.RawMessage `json:"command"`
		Cmd     json.RawMessage `json:"cmd"`
	}
	if err := json.Unmarshal(tool.Input, &input); err != nil {
		return "", false
	}
	for _, raw := range []json.RawMessage{input.Command, input.Cmd} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s, true
		}
		var argv []string
		if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
			return strings.Join(argv, " "), true
		}
	}
	return "", false
}

// intercept denies a tool.before shell call that matches the deny-list.
func (g *guard) intercept(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
	ev := req.Params.Event.ToolBefore
	if ev == nil {
		return server.InterceptResult{}, errors.New("guard: not a tool.before event")
	}
	command, ok := shellCommand(&ev.Tool)
	if !ok {
		g.audit.write(auditRecord{Kind: "decision", Event: ev.Type, ID: ev.ID, Source: ev.Source, Tool: ev.Tool.Name, Decision: "none"})
		return server.InterceptResult{}, nil
	}
	rule := g.match(command)
	if rule < 0 {
		g.audit.write(auditRecord{Kind: "decision", Event: ev.Type, ID: ev.ID, Source: ev.Source, Tool: ev.Tool.Name, Decision: "none"})
		return server.InterceptResult{}, nil
	}
	deny := server.Deny(fmt.Sprintf("shell command blocked by guard policy (rule %d)", rule))
	code := denyCode
	deny.Deny.Code = &code
	res := server.InterceptResult{Effects: []gen.Effect{deny}}
	if err := server.Admit(req, res); err != nil {
		// The harness did not advertise deny: answer with an error so that
		// its failure policy decides; never send an ungranted effect.
		g.audit.write(auditRecord{Kind: "decision", Event: ev.Type, ID: ev.ID, Source: ev.Source, Tool: ev.Tool.Name, Decision: "error", Rule: &rule})
		return server.InterceptResult{}, fmt.Errorf("guard: cannot deny: %w", err)
	}
	g.audit.write(auditRecord{Kind: "decision", Event: ev.Type, ID: ev.ID, Source: ev.Source, Tool: ev.Tool.Name, Decision: "deny", Rule: &rule})
	return res, nil
}

// observe audits every observed event.
func (g *guard) observe(ctx context.Context, n *gen.ObserveNotification) error {
	ev := &n.Params.Event
	g.audit.write(auditRecord{Kind: "observe", Event: ev.Type(), ID: ev.ID(), Source: ev.Source()})
	return nil
}

// auditRecord is one JSON line of the audit.
type auditRecord struct {
	Time     string `json:"time"`
	Kind     string `json:"kind"`
	Event    string `json:"event"`
	ID       string `json:"id"`
	Source   string `json:"source"`
	Tool     string `json:"tool,omitempty"`
	Decision string `json:"decision,omitempty"`
	Rule     *int   `json:"rule,omitempty"`
}

// auditLog writes audit records, one JSON line each, safely from
// concurrent callbacks.
type auditLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (a *auditLog) write(r auditRecord) {
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(append(line, '\n'))
}
