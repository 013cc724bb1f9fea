package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestErrorsMatchSentinels: the errors of the package's exported API match
// its documented sentinels (configuration and admission errors matched
// none).
func TestErrorsMatchSentinels(t *testing.T) {
	ok := func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}
	sentinels := []error{server.ErrInvalidConfig, server.ErrNotAdmitted, server.ErrUnavailable, server.ErrUnauthenticated,
		server.ErrForbidden, server.ErrTooLarge, server.ErrNotFound, server.ErrCorrupt}
	req := parseRequest(t, toolBefore(t, denyOnly))
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"nil Handler", (*server.Handler)(nil).Validate(), server.ErrInvalidConfig},
		{"empty Handler", (&server.Handler{}).Validate(), server.ErrInvalidConfig},
		{"several problems", (&server.Handler{Intercept: ok, MaxBodyBytes: -1, MaxConcurrency: -1}).Validate(), server.ErrInvalidConfig},
		{"unknown event", (&server.Handler{Intercept: ok, InterceptEvents: []gen.EventName{"nope"}}).Validate(), server.ErrInvalidConfig},
		{"ServeStdio: invalid Handler", server.ServeStdio(context.Background(), strings.NewReader(""), &strings.Builder{}, &server.Handler{}), server.ErrInvalidConfig},
		{"ServeStdio: nil reader", server.ServeStdio(context.Background(), nil, &strings.Builder{}, &server.Handler{Intercept: ok}), server.ErrInvalidConfig},
		{"nil UploadReceiver", (*server.UploadReceiver)(nil).Validate(), server.ErrInvalidConfig},
		{"empty UploadReceiver", (&server.UploadReceiver{}).Validate(), server.ErrInvalidConfig},
		{"Open without Storage", func() error { _, _, err := (&server.UploadReceiver{}).Open(context.Background(), "s", "r"); return err }(), server.ErrInvalidConfig},
		{"Open unknown ref", func() error {
			_, _, err := (&server.UploadReceiver{Storage: &server.MemoryStorage{}}).Open(context.Background(), "s", "r")
			return err
		}(), server.ErrNotFound},
		{"Admit: nil request", server.Admit(nil, server.InterceptResult{}), server.ErrNotAdmitted},
		{"Admit: not granted", server.Admit(req, server.InterceptResult{Effects: []gen.Effect{server.Allow()}}), server.ErrNotAdmitted},
		{"Admit: unencodable value", server.Admit(req, server.InterceptResult{Effects: []gen.Effect{server.Return(make(chan int))}}), server.ErrNotAdmitted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			require.ErrorIs(t, c.err, c.want)
			for _, s := range sentinels {
				if s != c.want {
					require.False(t, errors.Is(c.err, s), "%v also matches %v", c.err, s)
				}
			}
		})
	}
}
