package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestValidationDetailsLoggedWhenShown: a Logger that shows the records of
// invalid messages (Debug for requests, Warn for notifications) gets the
// pointer and keyword of the violation; one above that level gets no
// record, and the request is answered the same.
func TestValidationDetailsLoggedWhenShown(t *testing.T) {
	badKind := strings.Replace(string(interceptBase(t)), `"kind":"file_write"`, `"kind":7`, 1)
	observe := string(compact(t, readFixture(t, "http/observe-tool-before.valid.json")))
	require.Contains(t, observe, `"type":"tool.before"`)
	badObserve := strings.Replace(observe, `"time":"`, `"time":"x`, 1)
	require.NotEqual(t, observe, badObserve)
	for _, c := range []struct {
		name   string
		msg    string
		level  slog.Level
		logged bool
		status int
	}{
		{"request at Debug", badKind, slog.LevelDebug, true, http.StatusOK},
		{"request at Info", badKind, slog.LevelInfo, false, http.StatusOK},
		{"notification at Warn", badObserve, slog.LevelWarn, true, http.StatusBadRequest},
		{"notification at Error", badObserve, slog.LevelError, false, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out syncBuffer
			h := invalidOnlyHandler(t, slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: c.level})))
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.msg))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, c.status, rec.Code)
			if c.status == http.StatusOK {
				require.Contains(t, rec.Body.String(), `"code":-32602`)
			}
			if !c.logged {
				require.Empty(t, out.String())
				return
			}
			require.Contains(t, out.String(), "pointer=")
			require.NotContains(t, out.String(), "pointer=\"\"")
			require.NotContains(t, out.String(), "keyword=schema")
		})
	}
}

// raisedLevel is a slog.Handler whose level an operator lowers (a
// slog.LevelVar, from before to after) while the first message is being
// dispatched: its first Enabled check answers with the level before the
// change, every later one with the level after it. It keeps the records it
// handles.
type raisedLevel struct {
	mu            sync.Mutex
	before, after slog.Level
	checked       bool
	level         slog.LevelVar
	records       []slog.Record
}

func (h *raisedLevel) Enabled(_ context.Context, l slog.Level) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.checked {
		h.checked = true
		h.level.Set(h.before)
		defer h.level.Set(h.after) // the operator's change
	}
	return l >= h.level.Level()
}

func (h *raisedLevel) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

func (h *raisedLevel) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *raisedLevel) WithGroup(string) slog.Handler      { return h }

// TestValidationDetailsWhenTheLevelChanges: a Logger whose level goes down
// to the one that shows invalid messages (Debug for requests, Warn for
// notifications) while a small invalid message is validated for its
// verdict alone gets no record that pretends its violation could not be
// located (keyword "schema", no pointer); the next message is logged with
// the pointer and keyword of its violation.
func TestValidationDetailsWhenTheLevelChanges(t *testing.T) {
	badKind := strings.Replace(string(interceptBase(t)), `"kind":"file_write"`, `"kind":7`, 1)
	observe := string(compact(t, readFixture(t, "http/observe-tool-before.valid.json")))
	badObserve := strings.Replace(observe, `"time":"`, `"time":"x`, 1)
	require.NotEqual(t, observe, badObserve)
	for _, c := range []struct {
		name, msg, record string
		before, after     slog.Level
		status            int
	}{
		{"request", badKind, "ahp server: request failed validation", slog.LevelInfo, slog.LevelDebug, http.StatusOK},
		{"notification", badObserve, "ahp server: notification dropped", slog.LevelError, slog.LevelWarn, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := &raisedLevel{before: c.before, after: c.after}
			h := invalidOnlyHandler(t, slog.New(logs))
			for range 2 {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.msg))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				require.Equal(t, c.status, rec.Code)
			}
			logs.mu.Lock()
			defer logs.mu.Unlock()
			var details []map[string]string
			for _, r := range logs.records {
				if r.Message != c.record {
					continue
				}
				attrs := map[string]string{}
				r.Attrs(func(a slog.Attr) bool {
					attrs[a.Key] = a.Value.String()
					return true
				})
				details = append(details, attrs)
			}
			require.Len(t, details, 1, "records: %v", details)
			require.NotEmpty(t, details[0]["pointer"])
			require.NotEqual(t, "schema", details[0]["keyword"])
		})
	}
}

// invalidOnlyHandler is a handler logging to logger that fails the test if
// a request or notification reaches its callbacks: it is given only
// invalid messages.
func invalidOnlyHandler(t *testing.T, logger *slog.Logger) *server.Handler {
	return &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			t.Error("invalid request reached Intercept")
			return server.InterceptResult{}, nil
		},
		Observe: func(context.Context, *gen.ObserveNotification) error {
			t.Error("invalid notification reached Observe")
			return nil
		},
		Logger: logger,
	}
}
