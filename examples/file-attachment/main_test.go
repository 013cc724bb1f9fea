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

// TestExample runs the example end to end: no open of the file while no
// receiver selects its body (its cleanup runs all the same), one open and
// one upload when the vision reviewer does, and the bytes read from the
// Result after Hooks.Close without another open.
func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	require.NoError(t, run(ctx, &out))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 5, out.String())
	require.Equal(t, "turn.start: permission=none opens=0 removed=true uploads=0", lines[0])
	require.Equal(t, `model.request.before: permission=none messages=["reviewed a 64x48 png screenshot"] opens=1 uploads=1`, lines[1])
	require.Regexp(t, `^after Hooks.Close: read ahp:attachment:shot \(in event=true\): [0-9]+ bytes, same as the file=true, opens=1$`, lines[2])
	require.Equal(t, "after Result.Close: removed=true", lines[3])
	require.Equal(t, "receivers saw: guard=metadata log=omitted,omitted vision=body", lines[4])
}
