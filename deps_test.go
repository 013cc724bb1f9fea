package agenthooks_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulePath is the import path of the module rooted here.
const modulePath = "github.com/agenthooks/agenthooks-go"

// generationTime lists the packages that may depend on jsonschema/v6: it
// compiles the canonical schemas when code is generated. Every other
// package of the module (tests aside) is linked into programs, where
// linking v6 alone costs some 23M instructions of package initialization
// in every process.
var generationTime = map[string]bool{
	"github.com/agenthooks/agenthooks-go/cmd/ahp-codegen":             true,
	"github.com/agenthooks/agenthooks-go/internal/schemaprog/compile": true,
}

// isJSONSchema reports whether an import path is jsonschema (any major
// version).
func isJSONSchema(p string) bool {
	return strings.HasPrefix(p, "github.com/santhosh-tekuri/jsonschema")
}

// TestProductionPackagesDoNotLinkJSONSchemaV6 lists every package of the
// module with its dependencies (go list, which leaves test files out) and
// fails for a package outside generationTime that depends on
// jsonschema/v6. go list sees only the files built for this platform, so
// the non-test files of every platform and build tag are also scanned for
// a direct import (jsonSchemaImporters).
func TestProductionPackagesDoNotLinkJSONSchemaV6(t *testing.T) {
	// go test puts its own toolchain first on PATH; runtime.GOROOT is
	// empty in a -trimpath build, and skipping then would pass falsely.
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the dependencies")
	// go test caches a passing result by the files the test opens or
	// stats, not by what the go command it runs reads: the scan below
	// reads every Go file of the module, so that any edit reruns the test.
	direct, err := jsonSchemaImporters(".")
	require.NoError(t, err)
	require.Empty(t, direct, "production files import jsonschema (on some platform or build tag)")

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
			if isJSONSchema(dep) {
				offenders = append(offenders, fields[0])
				break
			}
		}
	}
	require.Greater(t, listed, 20, "go list listed too few packages")
	require.Empty(t, offenders, "production packages depend on jsonschema/v6")
}

// jsonSchemaImporters returns the non-test Go files under root (a module
// root), whatever their build constraints, that import jsonschema directly
// and belong to a package outside generationTime. Directories the go
// command ignores (testdata, and names starting with "." or "_") are
// skipped.
func jsonSchemaImporters(root string) ([]string, error) {
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := modulePath
		if rel != "." {
			pkg = path.Join(modulePath, filepath.ToSlash(rel))
		}
		if generationTime[pkg] {
			return nil
		}
		for _, imp := range f.Imports {
			if ip, err := strconv.Unquote(imp.Path.Value); err == nil && isJSONSchema(ip) {
				found = append(found, filepath.ToSlash(p))
				break
			}
		}
		return nil
	})
	sort.Strings(found)
	return found, err
}

// TestJSONSchemaImportersSeesEveryPlatform holds the direct-import scan to
// files that go list leaves out on this platform: build-constrained files
// count, test files and generation-time packages do not.
func TestJSONSchemaImportersSeesEveryPlatform(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	const v6 = "import _ \"github.com/santhosh-tekuri/jsonschema/v6\"\n"
	write("a/a_windows.go", "package a\n\n"+v6)
	write("b/b.go", "//go:build ignore\n\npackage b\n\nimport (\n\t\"fmt\"\n\tjs \"github.com/santhosh-tekuri/jsonschema/v5\"\n)\n")
	write("c/c_test.go", "package c\n\n"+v6)
	write("c/c.go", "package c\n")
	write("cmd/ahp-codegen/main.go", "package main\n\n"+v6)
	write("d/testdata/x.go", "package x\n\n"+v6)
	write("root.go", "package agenthooks\n\n"+v6)
	got, err := jsonSchemaImporters(root)
	require.NoError(t, err)
	var rel []string
	for _, p := range got {
		r, err := filepath.Rel(root, filepath.FromSlash(p))
		require.NoError(t, err)
		rel = append(rel, filepath.ToSlash(r))
	}
	require.Equal(t, []string{"a/a_windows.go", "b/b.go", "root.go"}, rel)
}
