package agenthooks_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// generationTime lists the packages that may depend on jsonschema/v6: it
// compiles the canonical schemas when code is generated. Every other
// package of the module (tests aside) is linked into programs, where
// linking v6 alone costs some 23M instructions of package initialization
// in every process.
var generationTime = map[string]bool{
	"github.com/agenthooks/agenthooks-go/cmd/ahp-codegen":             true,
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile": true,
}

// TestProductionPackagesDoNotLinkJSONSchemaV6 lists every package of the
// module with its dependencies (go list, which leaves test files out) and
// fails for a package outside generationTime that depends on
// jsonschema/v6.
func TestProductionPackagesDoNotLinkJSONSchemaV6(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("go toolchain not available: %v", err)
	}
	// go test caches a passing result by the files the test opens or
	// stats, not by what the go command it runs reads: stat every Go file
	// of the module so that any edit reruns the test.
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	}))
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	out, err := cmd.Output()
	require.NoError(t, err)
	var offenders []string
	listed := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		listed++
		if generationTime[fields[0]] {
			continue
		}
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, "github.com/santhosh-tekuri/jsonschema") {
				offenders = append(offenders, fields[0])
				break
			}
		}
	}
	require.Greater(t, listed, 20, "go list listed too few packages")
	require.Empty(t, offenders, "production packages depend on jsonschema/v6")
}
