// Package catalogue is the catalogue suite of the lifecycle adapter
// commands (interop/LIFECYCLE.md, "Catalogue adapter extension"):
// cmd/lifecycle-server and cmd/lifecycle-client run ServerRole and
// ClientRole for a config with suite "catalogue".
package catalogue

import (
	"context"
	"errors"
	"log/slog"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// ErrNotImplemented is the error of the roles until the suite is written:
// the run fails, it never passes or skips.
var ErrNotImplemented = errors.New("catalogue suite: not implemented")

// ServerRole runs the catalogue suite's server.
func ServerRole(ctx context.Context, path string, stdio interop.Stdio, log *slog.Logger) error {
	return ErrNotImplemented
}

// ClientRole runs the catalogue suite's client.
func ClientRole(ctx context.Context, path string, stdio interop.Stdio, log *slog.Logger) error {
	return ErrNotImplemented
}
