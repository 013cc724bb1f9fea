package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepliesAgreeWhateverTheLogLevel: the dispatcher validates a message
// for its verdict only when its Logger would not show where a message is
// invalid (no Logger, or one above Debug; above Warn for notifications).
// For every seed of the byte-path comparison (the fixture corpus, envelope
// errors, hostile and mutated requests) and every kind of handler, the
// outcome, the reply bytes and the callback arguments are the same with no
// Logger, with one at Error and with one at Debug.
func TestRepliesAgreeWhateverTheLogLevel(t *testing.T) {
	var s seen
	handlers := bytePathHandlers(t, &s)
	logger := func(level slog.Level) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))
	}
	ctx := context.Background()
	for _, msg := range bytePathSeeds(t) {
		for name, h := range handlers {
			s.take()
			want := h.dispatch(ctx, msg)
			wantCalls := s.take()
			for _, level := range []slog.Level{slog.LevelError, slog.LevelWarn, slog.LevelDebug} {
				hl := *h
				hl.Logger = logger(level)
				got := hl.dispatch(ctx, msg)
				gotCalls := s.take()
				require.Equal(t, want.out, got.out, "handler %s, log level %s: outcome of %.200q", name, level, msg)
				require.Equal(t, string(want.body), string(got.body), "handler %s, log level %s: reply to %.200q", name, level, msg)
				require.Equal(t, wantCalls, gotCalls, "handler %s, log level %s: callback arguments for %.200q", name, level, msg)
			}
		}
	}
}
