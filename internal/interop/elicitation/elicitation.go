// Package elicitation is the Go SDK's adapter for the Agent Hooks Protocol
// offline MCP elicitation matrix (agent-hooks-protocol/interop/ELICITATION.md),
// run as cmd/elicitation:
//
//	elicitation server SCHEMA authenticated:SENDER
//	elicitation client   < PLAN.json
//	elicitation check    < CASES.json
//
// The server is an authenticated loopback HTTP receiver. It prints
// {"endpoint": URL} on one line and serves POST /upload (the §4 content
// upload binding, bearer AHP_ELICITATION_UPLOAD_TOKEN: 201 with the
// receiver's reference, 401 on a wrong token), POST /hooks/intercept
// (bearer AHP_ELICITATION_TOKEN: canonical envelopes, complete MCP bodies,
// mode support, and request/result correlation through pending requests
// indexed by (source, request event id)) and GET /receipts (the receiver's
// evidence, same token). SENDER is the principal the tokens authenticate:
// the receiver's own configuration, never a field of an event. SCHEMA is
// the canonical schema directory of the protocol checkout; it must equal
// the schemas this SDK embeds and validates with.
//
// The client reads a plan {"endpoint", "steps": [...]} on standard input,
// runs each step with the SDK (raw HTTP steps, a hooks step through the
// public hooks API, a stage step through settle.ApplyElicitationEffects
// whose staged output it then delivers) and prints [{status, body}], one
// entry per step.
//
// The check command reads one case or an array of cases {name, request,
// result, capabilities, effects, supplier} and prints, per case,
// {name, accepted, inputUnchanged, summary}: the atomic application of the
// effect list with settle.ApplyElicitationEffects, and the provenance of a
// supplied or edited result.
//
// Elicitation request and result bodies are inline ordinary text in this
// protocol revision (interaction-payloads.md: no upload is required or
// permitted for this binding); /upload is the generic attachment receiver,
// and the receipts count uploads so that a scenario can prove none.
package elicitation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/schemas"
)

// maxStdin bounds a plan or a case file.
const maxStdin = 16 << 20

const usage = "usage: elicitation server SCHEMA authenticated:SENDER | client | check"

// Run is the adapter's entry point: args are the command line after the
// program name, getenv reads the environment.
func Run(args []string, stdio interop.Stdio, getenv func(string) string) int {
	if len(args) < 1 {
		fmt.Fprintln(stdio.Stderr, usage)
		return interop.ExitUsage
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, nil)).With("adapter", "go", "role", "elicitation-"+args[0])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "server":
		if len(args) != 3 {
			fmt.Fprintln(stdio.Stderr, usage)
			return interop.ExitUsage
		}
		err = serve(ctx, args[1], args[2], stdio.Stdout, getenv, log)
	case "client", "check":
		if len(args) != 1 {
			fmt.Fprintln(stdio.Stderr, usage)
			return interop.ExitUsage
		}
		var in []byte
		in, err = readStdin(stdio)
		if err == nil {
			var out []byte
			if args[0] == "client" {
				out, err = RunClient(ctx, in, getenv)
			} else {
				out, err = RunCheck(ctx, in)
			}
			if err == nil {
				_, err = stdio.Stdout.Write(append(out, '\n'))
			}
		}
	default:
		fmt.Fprintln(stdio.Stderr, usage)
		return interop.ExitUsage
	}
	code := interop.ExitCode(err)
	if err != nil {
		log.Error("failed", "error", err)
	}
	return code
}

func readStdin(stdio interop.Stdio) ([]byte, error) {
	in := stdio.Stdin()
	defer func() { _ = in.Close() }()
	data, err := io.ReadAll(io.LimitReader(in, maxStdin+1))
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	if len(data) > maxStdin {
		return nil, fmt.Errorf("%w: standard input exceeds %d bytes", interop.ErrUsage, maxStdin)
	}
	return data, nil
}

// CheckSchemas verifies that the checkout's schema directory (or a file in
// it) holds the same canonical documents as the SDK: the adapter validates
// with the embedded copy, so a different checkout is a usage error.
func CheckSchemas(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: schema path: %w", interop.ErrUsage, err)
	}
	dir := path
	if !st.IsDir() {
		dir = filepath.Dir(path)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp-elicitation.schema.json")); err != nil {
		return fmt.Errorf("%w: %s has no mcp-elicitation.schema.json", interop.ErrUsage, dir)
	}
	for _, name := range schemas.Documents() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: read %s: %w", interop.ErrUsage, name, err)
		}
		want, err := schemas.Read(name)
		if err != nil {
			return err
		}
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			return fmt.Errorf("%w: %s differs from the schema this SDK embeds", interop.ErrUsage, name)
		}
	}
	return nil
}

func serve(ctx context.Context, schemaPath, principal string, stdout io.Writer, getenv func(string) string, log *slog.Logger) error {
	if err := CheckSchemas(schemaPath); err != nil {
		return err
	}
	sender, ok := strings.CutPrefix(principal, "authenticated:")
	if !ok || sender == "" {
		return fmt.Errorf("%w: the principal must be authenticated:SENDER", interop.ErrUsage)
	}
	tok, up := getenv(TokenEnv), getenv(UploadTokenEnv)
	if tok == "" || up == "" {
		return fmt.Errorf("%w: %s and %s must be set", interop.ErrUsage, TokenEnv, UploadTokenEnv)
	}
	recv, err := NewReceiver(sender, tok, up, log)
	if err != nil {
		return fmt.Errorf("%w: %w", interop.ErrUsage, err)
	}
	hs, err := interop.StartHTTP(ctx, recv, nil, log)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]string{"endpoint": hs.URL})
	if _, err := stdout.Write(append(line, '\n')); err != nil {
		return errors.Join(err, hs.Stop())
	}
	<-ctx.Done()
	return hs.Stop()
}
