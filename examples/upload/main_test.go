package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
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

// TestExample runs the example end to end: the stream is not read for the
// metadata auditor, read once for the archiver, uploaded with the upload
// token only, verified and committed to the application's directory, and
// read from the Result after the harness is closed; neither token reaches
// the other endpoint, the output or the logs.
func TestExample(t *testing.T) {
	const eventToken = "CANARY-event-token-7c21"
	const uploadToken = "CANARY-upload-token-e9d4"
	env := map[string]string{eventTokenEnv: eventToken, uploadTokenEnv: uploadToken}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	var logs lockedBuffer
	sum, err := run(ctx, &out, func(name string) (string, bool) { v, ok := env[name]; return v, ok },
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, err, logs.String())
	size := len(report())
	require.Equal(t, "turn.start: diagnostics=0, stream bytes read=0\n"+
		fmt.Sprintf("context.compact.before: permission=none diagnostics=0, stream bytes read=%d of %d\n", size, size)+
		fmt.Sprintf("result after Close: %d bytes, sha256 matches=true, ref in the result=ahp:attachment:report\n", size)+
		fmt.Sprintf("archive: application/pdf %d bytes, receipt verified=true\n", size)+
		"audit: turn.start: metadata application/pdf; context.compact.before: metadata application/pdf\n"+
		"credentials: event requests=3 all with the event token=true, uploads=1 all with the upload token=true\n"+
		"storage (the application's directory): committed=1 staging=0\n", out.String())

	require.Equal(t, []string{"Bearer " + eventToken, "Bearer " + eventToken, "Bearer " + eventToken}, sum.eventAuth)
	require.Equal(t, []string{"Bearer " + uploadToken}, sum.uploadAuth)
	for _, s := range []string{out.String(), logs.String()} {
		require.NotContains(t, s, eventToken)
		require.NotContains(t, s, uploadToken)
	}
}

// TestMissingToken: without the tokens the example refuses to start.
func TestMissingToken(t *testing.T) {
	_, err := run(context.Background(), &strings.Builder{}, func(string) (string, bool) { return "", false }, nil)
	require.ErrorContains(t, err, uploadTokenEnv)
}
