package interop

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLayering pins the import rules: the core client settles through the
// public harness (hooks), not runtime/settle; hooks never imports server;
// no runtime package imports hooks.
func TestLayering(t *testing.T) {
	deps := func(t *testing.T, format string, pkgs ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list", "-f", format}, pkgs...)...)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		require.NoError(t, err)
		return strings.Fields(string(out))
	}
	const mod = "github.com/agenthooks/agenthooks-go/"
	imports := deps(t, `{{join .Imports " "}}`, "./internal/interop")
	require.NotContains(t, imports, mod+"runtime/settle", "the core interop client settles through hooks")
	require.Contains(t, imports, mod+"hooks")
	require.NotContains(t, deps(t, `{{join .Deps " "}}`, "./hooks"), mod+"server", "hooks must not import server")
	for _, d := range deps(t, `{{join .Deps " "}}`, "./runtime/...") {
		require.NotEqual(t, mod+"hooks", d, "runtime never imports hooks")
	}
}
