// Package catalogue is the catalogue suite of the lifecycle adapter
// commands (interop/LIFECYCLE.md, "Catalogue adapter extension"):
// cmd/lifecycle-server and cmd/lifecycle-client run ServerRole and
// ClientRole for a config with suite "catalogue".
//
// The server is the SDK's server.Handler (discovery from a manifest that
// offers observe for every execution and lineage event, canonical
// validation of observations) behind a classifier that records one receipt
// per message: discovery {request, response}, observed {eventId, event,
// message} or rejected {errorKind, message}. The client performs the one
// discovery, sends notify steps through hooks.Hooks.Dispatch, rawNotify
// steps unchanged over the same transport, and evaluates register steps
// with hooks.New against the discovered manifest.
package catalogue

import (
	"context"
	"io"
	"log/slog"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// Suite is the config's suite value of this package.
const Suite = "catalogue"

// ServerRole runs the catalogue suite's server.
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

// ClientRole runs the catalogue suite's client.
func ClientRole(ctx context.Context, path string, _ interop.Stdio, log *slog.Logger) error {
	var cfg ClientConfig
	if err := interop.LoadConfig(path, &cfg); err != nil {
		return err
	}
	return RunClient(ctx, &cfg, log)
}
