package main

import (
	"context"
	"fmt"
	"os"
	"strings"
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

// TestExample runs the example end to end over its loopback backend: the
// backend's merge is rejected without the original request and settles
// with it, no default is injected, and the published exchange validates.
func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	require.NoError(t, run(ctx, &out))
	require.Equal(t, "request: permission=none diagnostics=0\n"+
		"without the original request: diagnostics=[protocol_rejection context_unavailable] answer="+userAnswer+"\n"+
		`with the original request: diagnostics=0 answer={"action":"accept","content":{"email":"ada@example.com","plan":"pro"}}`+"\n"+
		"published exchange: mode=form action=accept request=body result=body\n", out.String())
}
