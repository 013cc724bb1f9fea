package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// TestSuiteDispatch: the commands run the config's suite; lifecycle is the
// default, another registered suite gets the config, an unknown suite
// fails with a usage error (it never passes or skips).
func TestSuiteDispatch(t *testing.T) {
	errOther := errors.New("other suite ran")
	own := func(context.Context, string, interop.Stdio, *slog.Logger) error { return nil }
	other := func(context.Context, string, interop.Stdio, *slog.Logger) error { return errOther }
	role := dispatch(own, Suites{SuiteCatalogue: other})
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	dir := t.TempDir()
	for _, tc := range []struct {
		config string
		want   error
		usage  bool
	}{
		{config: `{"transport":"http"}`},
		{config: `{"suite":"lifecycle"}`},
		{config: `{"suite":"catalogue"}`, want: errOther},
		{config: `{"suite":"bogus"}`, usage: true},
		{config: `not json`, usage: true},
	} {
		path := filepath.Join(dir, "c.json")
		require.NoError(t, os.WriteFile(path, []byte(tc.config), 0o600))
		err := role(context.Background(), path, interop.Stdio{}, log)
		switch {
		case tc.usage:
			require.ErrorIs(t, err, interop.ErrUsage, tc.config)
			require.Equal(t, interop.ExitUsage, interop.ExitCode(err))
		case tc.want != nil:
			require.ErrorIs(t, err, tc.want, tc.config)
		default:
			require.NoError(t, err, tc.config)
		}
	}
}

// TestParseRejects: a scenario file with an unknown op, an unknown
// request, a chain subscription without a failure policy or a repeated id
// is refused whole, before anything runs.
func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown op":        `{"version":1,"scenarios":[{"id":"a","requests":{},"responses":{},"steps":[{"op":"teleport"}],"expected":{}}]}`,
		"unknown request":   `{"version":1,"scenarios":[{"id":"a","requests":{},"responses":{},"steps":[{"op":"begin","request":"x"}],"expected":{}}]}`,
		"no policy":         `{"version":1,"scenarios":[{"id":"a","chain":{"subscriptions":[{"name":"s","mode":"intercept"}]},"requests":{},"responses":{},"steps":[],"expected":{}}]}`,
		"repeated id":       `{"version":1,"scenarios":[{"id":"a","requests":{},"responses":{},"steps":[],"expected":{}},{"id":"a","requests":{},"responses":{},"steps":[],"expected":{}}]}`,
		"version":           `{"version":2,"scenarios":[]}`,
		"no expected":       `{"version":1,"scenarios":[{"id":"a","requests":{},"responses":{},"steps":[]}]}`,
		"unknown transport": `{"version":1,"scenarios":[{"id":"a","transports":["pigeon"],"requests":{},"responses":{},"steps":[],"expected":{}}]}`,
	} {
		_, err := Parse([]byte(doc))
		require.ErrorIs(t, err, ErrFixture, name)
	}
}
