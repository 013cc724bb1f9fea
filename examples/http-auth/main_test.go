package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestExample runs the example end to end over loopback HTTPS with mutual
// TLS: one token for the first call, a Bearer 401 after the key rotation
// answered by exactly one replay of the same bytes with a second token,
// the upload authorized by its own tokenEnv token, and no secret in the
// output or the logs.
func TestExample(t *testing.T) {
	const clientSecret = "CANARY-client-secret-2a7e"
	const uploadToken = "CANARY-upload-token-f41c"
	t.Setenv(clientSecretEnv, clientSecret)
	t.Setenv(uploadTokenEnv, uploadToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	var logs lockedBuffer
	sum, err := run(ctx, &out, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, err, logs.String())
	require.Equal(t, "call 1: permission=allow diagnostics=0 tokens issued=1\n"+
		"call 2: permission=deny diagnostics=0 tokens issued=2 refused then replayed=1\n"+
		"upload: verified receipt=true stored bytes match=true\n", out.String())

	require.Equal(t, 2, sum.grants)
	require.Len(t, sum.events, 3, "call 1; call 2 refused; call 2 replayed once")
	require.Equal(t, []int{http.StatusOK, http.StatusUnauthorized, http.StatusOK}, []int{sum.events[0].status, sum.events[1].status, sum.events[2].status})
	require.Equal(t, sum.events[0].authz, sum.events[1].authz, "the cached token, refused after the rotation")
	require.NotEqual(t, sum.events[1].authz, sum.events[2].authz, "the replay carries a fresh token")
	require.Equal(t, sum.events[1].body, sum.events[2].body, "the replay is the same bytes, so the same JSON-RPC id")
	require.Equal(t, []string{"Bearer " + uploadToken}, sum.uploads, "the upload carries its own credential")

	secrets := []string{clientSecret, uploadToken}
	for _, e := range sum.events {
		require.True(t, strings.HasPrefix(e.authz, "Bearer ey"), "an OAuth access token")
		require.NotContains(t, e.authz, uploadToken, "the upload token never reaches the event endpoint")
		secrets = append(secrets, strings.TrimPrefix(e.authz, "Bearer "))
	}
	for _, s := range secrets {
		require.NotContains(t, out.String(), s)
		require.NotContains(t, logs.String(), s)
	}
}
