// Command ahp-interop is the Go SDK's adapter for the Agent Hooks Protocol
// cross-language interop matrix (agent-hooks-protocol/interop/CONTRACT.md).
//
// Usage:
//
//	ahp-interop server --config SERVER_CONFIG.json
//	ahp-interop client --config CLIENT_CONFIG.json
//
// The server is a scripted AHP backend: it validates each hooks/intercept
// request, records a receipt, and replies with the scenario's scripted
// response unchanged, over HTTP (loopback, port 0, with a control endpoint
// and an atomic readiness file) or over stdio (one JSON-RPC envelope per
// line on stdout, diagnostics on stderr only).
//
// The client is a synthetic host: it sends each scenario's request through
// the SDK's transports (HTTP, or an owned stdio child started from
// serverCommand), validates the response with the generated codecs and the
// canonical schemas, settles it with runtime/settle under the interop
// README's synthetic-host semantics, and writes the report.
//
// Exit status: 0 success; 1 an applicable scenario failed or the run broke;
// 2 usage or configuration error; 3 (server only) unsupported
// authentication or transport combination.
package main

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

func main() {
	os.Exit(run(os.Args[1:], stdinForServer, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitUnsupported = 3
)

// run executes one role and returns the process exit status. openStdin is
// called only by the stdio server.
func run(args []string, openStdin func() io.ReadCloser, stdout, stderr io.Writer) int {
	if len(args) < 1 || (args[0] != "server" && args[0] != "client") {
		fmt.Fprintln(stderr, "usage: ahp-interop server|client --config PATH")
		return exitUsage
	}
	role := args[0]
	fs := flag.NewFlagSet("ahp-interop "+role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "absolute path of the JSON configuration")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *cfgPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ahp-interop server|client --config PATH")
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("adapter", "go", "role", role)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch role {
	case "server":
		var cfg serverConfig
		if err = loadConfig(*cfgPath, &cfg); err == nil {
			var in io.Reader
			if cfg.Transport == transportStdio {
				in = openStdin()
			}
			err = runServer(ctx, &cfg, in, stdout, log)
		}
	case "client":
		var cfg clientConfig
		if err = loadConfig(*cfgPath, &cfg); err == nil {
			err = runClient(ctx, &cfg, log)
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		log.Error("configuration error", "error", err)
		return exitUsage
	case errors.Is(err, errUnsupported):
		log.Error("unsupported", "error", err)
		return exitUnsupported
	default:
		log.Error("failed", "error", err)
		return exitFailed
	}
}
