// Package lifecycle is the lifecycle adapter of the protocol's
// cross-language lifecycle matrix (interop/LIFECYCLE.md), behind
// cmd/lifecycle-server and cmd/lifecycle-client: a scripted receiver that
// holds intercepts until released, with a control endpoint, receipts and a
// content upload receiver built on package server, and a client that drives
// each scenario through the public hooks API (Begin, Acquire, Accept,
// Cancel, Dispatch) with real attachments and uploads. The config's suite
// selects the role; "catalogue" is served by package catalogue.
package lifecycle

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// Suites maps the config's suite to the role that runs it. The lifecycle
// suite is this package's; others (catalogue) are added by the commands,
// so that their packages may build on this one.
type Suites map[string]interop.RoleFunc

// suiteOf reads the config's suite; empty means lifecycle.
func suiteOf(path string) (string, error) {
	var head struct {
		Suite string `json:"suite"`
	}
	if err := interop.LoadConfig(path, &head); err != nil {
		return "", err
	}
	if head.Suite == "" {
		return SuiteLifecycle, nil
	}
	return head.Suite, nil
}

// dispatch runs the role of the config's suite; an unknown suite fails
// (exit status 2), it never passes or skips.
func dispatch(own interop.RoleFunc, others Suites) interop.RoleFunc {
	return func(ctx context.Context, path string, stdio interop.Stdio, log *slog.Logger) error {
		suite, err := suiteOf(path)
		if err != nil {
			return err
		}
		if suite == SuiteLifecycle {
			return own(ctx, path, stdio, log)
		}
		if fn := others[suite]; fn != nil {
			return fn(ctx, path, stdio, log.With("suite", suite))
		}
		return fmt.Errorf("%w: unknown suite %q", interop.ErrUsage, suite)
	}
}

// ServerMain is cmd/lifecycle-server: "--config PATH", the suite chosen by
// the config.
func ServerMain(args []string, stdio interop.Stdio, others Suites) int {
	return interop.Command("lifecycle-server", "", args, stdio, dispatch(ServerRole, others))
}

// ClientMain is cmd/lifecycle-client.
func ClientMain(args []string, stdio interop.Stdio, others Suites) int {
	return interop.Command("lifecycle-client", "", args, stdio, dispatch(ClientRole, others))
}

// ServerRole runs the lifecycle suite's server.
func ServerRole(ctx context.Context, path string, stdio interop.Stdio, log *slog.Logger) error {
	var cfg ServerConfig
	if err := interop.LoadConfig(path, &cfg); err != nil {
		return err
	}
	var in io.Reader
	if cfg.Transport == interop.TransportStdio && stdio.Stdin != nil {
		in = stdio.Stdin()
	}
	return RunServer(ctx, &cfg, in, stdio.Stdout, log)
}

// ClientRole runs the lifecycle suite's client.
func ClientRole(ctx context.Context, path string, _ interop.Stdio, log *slog.Logger) error {
	var cfg ClientConfig
	if err := interop.LoadConfig(path, &cfg); err != nil {
		return err
	}
	return RunClient(ctx, &cfg, log)
}
