package compaction

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// usage is cmd/compaction's usage line.
const usage = "usage: compaction server | stdio | client   (client reads {transport, requests, endpoint, token | command} on stdin)"

// Main is cmd/compaction: "server" prints {"endpoint"} and serves
// compaction/run over loopback HTTP behind the AHP_COMPACTION_TOKEN bearer
// token until SIGINT or SIGTERM; "stdio" serves NDJSON on stdin/stdout
// until stdin ends; "client" reads a ClientInput on stdin and prints the
// replies. It returns the exit status (interop.ExitCode).
func Main(args []string, stdio interop.Stdio) int {
	if len(args) != 1 {
		fmt.Fprintln(stdio.Stderr, usage)
		return interop.ExitUsage
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, nil)).With("adapter", "go", "role", "compaction "+args[0])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "server":
		err = Server(ctx, stdio.Stdout, log)
	case "stdio":
		err = Stdio(ctx, stdin(stdio), stdio.Stdout)
	case "client":
		err = Client(ctx, stdin(stdio), stdio.Stdout)
	default:
		fmt.Fprintln(stdio.Stderr, usage)
		return interop.ExitUsage
	}
	return exit(log, err)
}

// exit logs err (its text is ours, never a peer's) and maps it to the
// exit status.
func exit(log *slog.Logger, err error) int {
	code := interop.ExitCode(err)
	if err != nil {
		log.Error("failed", "error", err)
	}
	return code
}

// stdin opens the command's standard input.
func stdin(s interop.Stdio) io.Reader {
	if s.Stdin == nil {
		return eofReader{}
	}
	return s.Stdin()
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
