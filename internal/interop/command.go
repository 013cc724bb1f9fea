// Package interop holds the Go SDK's adapters for the Agent Hooks Protocol
// cross-language interop matrices (agent-hooks-protocol/interop/CONTRACT.md)
// and the pieces every adapter command shares: configuration loading, the
// five endpoint authentication modes for both sides (bearer, oauth,
// workload, mtls, none), scenario loading, the verifier's comparisons,
// standard input for stdio servers, atomic readiness and report files,
// loopback HTTP services and the command-line entry point with its exit
// statuses.
//
// The core adapter (cmd/interop) is RunServer and RunClient: the server is
// a scripted AHP backend that validates each hooks/intercept request,
// records a receipt, and replies with the scenario's scripted response
// unchanged, over HTTP (loopback, port 0, with a control endpoint and an
// atomic readiness file) or over stdio (one JSON-RPC envelope per line on
// stdout, diagnostics on stderr only). The client is a synthetic host: it
// sends each scenario's request through the SDK, validates and settles the
// response under the interop README's synthetic-host semantics, and writes
// the report.
package interop

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses of the adapter contract.
const (
	// ExitOK is success.
	ExitOK = 0
	// ExitFailed is an applicable scenario that failed, or a broken run.
	ExitFailed = 1
	// ExitUsage is a usage or configuration error.
	ExitUsage = 2
	// ExitUnsupported is an unsupported authentication or transport
	// combination (servers only).
	ExitUnsupported = 3
)

// Stdio is a command's standard streams. Stdin is opened lazily, only by
// roles that read it (a stdio server).
type Stdio struct {
	Stdin  func() io.ReadCloser
	Stdout io.Writer
	Stderr io.Writer
}

// OSStdio returns the process's standard streams, with standard input from
// StdinForServer.
func OSStdio() Stdio {
	return Stdio{Stdin: StdinForServer, Stdout: os.Stdout, Stderr: os.Stderr}
}

// RoleFunc runs one adapter role with the absolute path of its JSON
// configuration until it is done or ctx ends (SIGINT or SIGTERM). Its error
// decides the exit status (ExitCode).
type RoleFunc func(ctx context.Context, configPath string, stdio Stdio, log *slog.Logger) error

// Command runs one role of an adapter command: it parses args (exactly
// --config PATH), builds the stderr logger tagged with the role, cancels
// the context on SIGINT and SIGTERM, runs fn and maps its error to the exit
// status. name is the command's name in the usage line.
func Command(name, role string, args []string, stdio Stdio, fn RoleFunc) int {
	usage := "usage: " + name + " --config PATH"
	if role != "" {
		usage = "usage: " + name + " " + role + " --config PATH"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	cfgPath := fs.String("config", "", "absolute path of the JSON configuration")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *cfgPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stdio.Stderr, usage)
		return ExitUsage
	}
	if role == "" {
		role = name
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, nil)).With("adapter", "go", "role", role)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := fn(ctx, *cfgPath, stdio, log)
	code := ExitCode(err)
	switch code {
	case ExitOK:
	case ExitUsage:
		log.Error("configuration error", "error", err)
	case ExitUnsupported:
		log.Error("unsupported", "error", err)
	default:
		log.Error("failed", "error", err)
	}
	return code
}

// ExitCode maps a role's error to the exit status: nil is ExitOK, ErrUsage
// ExitUsage, ErrUnsupported ExitUnsupported, anything else ExitFailed.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, ErrUnsupported):
		return ExitUnsupported
	default:
		return ExitFailed
	}
}

// Run is the core adapter's entry point (cmd/interop): args are
// "server|client --config PATH".
func Run(args []string, stdio Stdio) int {
	if len(args) < 1 || (args[0] != "server" && args[0] != "client") {
		fmt.Fprintln(stdio.Stderr, "usage: interop server|client --config PATH")
		return ExitUsage
	}
	switch args[0] {
	case "server":
		return Command("interop", "server", args[1:], stdio, ServerRole)
	default:
		return Command("interop", "client", args[1:], stdio, ClientRole)
	}
}

// ServerRole is the core scripted server as a RoleFunc.
func ServerRole(ctx context.Context, path string, stdio Stdio, log *slog.Logger) error {
	var cfg ServerConfig
	if err := LoadConfig(path, &cfg); err != nil {
		return err
	}
	var in io.Reader
	if cfg.Transport == TransportStdio && stdio.Stdin != nil {
		in = stdio.Stdin()
	}
	return RunServer(ctx, &cfg, in, stdio.Stdout, log)
}

// ClientRole is the core client as a RoleFunc.
func ClientRole(ctx context.Context, path string, _ Stdio, log *slog.Logger) error {
	var cfg ClientConfig
	if err := LoadConfig(path, &cfg); err != nil {
		return err
	}
	return RunClient(ctx, &cfg, log)
}
