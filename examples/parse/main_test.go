package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunFromAnyDirectory: the sample is embedded, so the command works
// whatever the working directory, and it explains the size difference.
func TestRunFromAnyDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	require.NoError(t, run(&out, ""))
	require.Contains(t, out.String(), "event:         tool.before (id evt_http_001)")
	require.Contains(t, out.String(), "re-encoded:    460 bytes; the input is 711 bytes, 460 without insignificant whitespace")
	require.Contains(t, out.String(), "every member and value is kept")
}

// TestRunFileWithEscapes: escapes in protocol strings are written as the
// characters, which the output says.
func TestRunFileWithEscapes(t *testing.T) {
	data := strings.Replace(string(sample), `"write_file"`, `"write\u005ffile"`, 1)
	file := filepath.Join(t.TempDir(), "req.json")
	require.NoError(t, os.WriteFile(file, []byte(data), 0o600))
	var out bytes.Buffer
	require.NoError(t, run(&out, file))
	require.Contains(t, out.String(), "tool:          write_file")
	require.Contains(t, out.String(), `an escape such as \u005f`)
	require.Error(t, run(&out, filepath.Join(t.TempDir(), "absent.json")))
}
