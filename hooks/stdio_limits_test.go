package hooks_test

import (
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// TestStdioCloseGrace: Config.StdioCloseGrace bounds how long Close lets a
// persistent backend that is still working on an abandoned request finish.
// The backend here would work for an hour; with the default grace Close
// takes 2 s, with a grace of 1 ms it kills the backend at once.
func TestStdioCloseGrace(t *testing.T) {
	reg := registration(backendJSON("com.example.stuck", backendCmd(t, "stuck", "persistent"), interceptSub(`"tool.before"`, 200, "fail-open")))
	cfg := baseConfig()
	cfg.StdioCloseGrace = time.Millisecond
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
	require.NoError(t, err)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, transport.CodeDeadlineExceeded, res.Diagnostics[0].Code, "the backend got the request and works on")
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	// Far below the default grace, far above what a kill and a reap take.
	timer := time.NewTimer(transport.DefaultCloseGrace / 2)
	defer timer.Stop()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-timer.C:
		t.Fatal("Close waited for the default grace")
	}
}

// TestStdioRelaunchBackoffConfig: a persistent backend that crashes without
// answering is not relaunched during Config.StdioRelaunchBackoff; its
// deliveries fail at once under their failure policy.
func TestStdioRelaunchBackoffConfig(t *testing.T) {
	reg := registration(backendJSON("com.example.crash", backendCmd(t, "crash", "persistent"), interceptSub(`"tool.before"`, 10000, "fail-closed")))
	cfg := baseConfig()
	cfg.StdioRelaunchBackoff = time.Hour
	h, err := hooks.New(reg, cfg)
	require.NoError(t, err)
	defer h.Close()
	for _, reason := range []string{"process_exit", "relaunch_backoff", "relaunch_backoff"} {
		res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
		require.NoError(t, err)
		require.Len(t, res.Diagnostics, 1)
		require.Equal(t, transport.CodeTransport, res.Diagnostics[0].Code)
		require.Equal(t, reason, res.Diagnostics[0].Reason)
		require.Equal(t, hooks.SyntheticDenialReason, res.DenyReason())
	}
}
