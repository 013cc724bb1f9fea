package compaction

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// wireUsage is cmd/compaction-wire's usage line.
const wireUsage = "usage: compaction-wire SCHEMA STORE SUBS.json server | SCHEMA STORE SUBS.json stdio SUBSCRIPTION | host"

// WireMain is cmd/compaction-wire: "SCHEMA STORE SUBS.json server" prints
// {"endpoint"} and serves the subscriptions of SUBS.json at POST
// /hooks/intercept over loopback HTTP (bearer tokens from
// AHP_COMPACTION_TOKENS) until SIGINT or SIGTERM, appending
// {subscription, request, response} lines to STORE/receipts.jsonl;
// "SCHEMA STORE SUBS.json stdio SUBSCRIPTION" serves one subscription on
// stdin/stdout; "host" reads a HostCase (or an array) on stdin and prints
// {name, result, downstream, trace}. It returns the exit status.
func WireMain(args []string, stdio interop.Stdio) int {
	role := ""
	switch {
	case len(args) == 1 && args[0] == "host":
		role = "host"
	case len(args) == 4 && args[3] == "server":
		role = "server"
	case len(args) == 5 && args[3] == "stdio":
		role = "stdio"
	default:
		fmt.Fprintln(stdio.Stderr, wireUsage)
		return interop.ExitUsage
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, nil)).With("adapter", "go", "role", "compaction-wire "+role)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch role {
	case "host":
		err = WireHost(ctx, stdin(stdio), stdio.Stdout, log)
	case "server":
		err = WireServer(ctx, args[0], args[1], args[2], stdio.Stdout, log)
	case "stdio":
		err = WireStdio(ctx, args[0], args[1], args[2], args[4], stdin(stdio), stdio.Stdout, log)
	}
	return exit(log, err)
}
