// Command ahp-codegen generates the agenthooks-go typed model, lossless
// codecs and event catalogue from the canonical AHP JSON Schemas, and writes
// the provenance lock that records which schemas and which generator
// produced them.
//
// Usage (from the repository root, as go generate runs it):
//
//	go run ./cmd/ahp-codegen                 # regenerate gen/ and the lock
//	go run ./cmd/ahp-codegen -check          # verify, write nothing; exit 1 on drift
//
// Flags: -schemas DIR (default schemas), -out DIR (default gen), -lock FILE
// (default ahp-codegen.lock.json), -check.
package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// generatorName and generatorVersion identify this generator in the lock.
const (
	generatorName    = "ahp-codegen"
	generatorVersion = "0.1.0"
	genPackage       = "github.com/agenthooks/agenthooks-go/gen"
)

// ownSources embeds the generator's own source so that its identity hash
// does not depend on the working directory.
//
//go:embed *.go support.go.tmpl codec_test.go.tmpl
var ownSources embed.FS

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fl := flag.NewFlagSet("ahp-codegen", flag.ContinueOnError)
	schemaDir := fl.String("schemas", "schemas", "directory holding the canonical schema documents and manifest.json")
	outDir := fl.String("out", "gen", "output directory of the generated package")
	lockPath := fl.String("lock", "ahp-codegen.lock.json", "provenance lock file")
	check := fl.Bool("check", false, "regenerate in memory and compare with the files on disk and the lock; write nothing")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	outputs, err := generate(*schemaDir, *outDir, *lockPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ahp-codegen:", err)
		return 1
	}
	if *check {
		diffs := compare(outputs, *outDir)
		for _, d := range diffs {
			fmt.Fprintln(os.Stderr, "ahp-codegen: out of date:", d)
		}
		if len(diffs) > 0 {
			fmt.Fprintln(os.Stderr, "ahp-codegen: run `go generate ./...` and commit the result")
			return 1
		}
		fmt.Println("ahp-codegen: generated code and lock are up to date")
		return 0
	}
	if err := write(outputs, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "ahp-codegen:", err)
		return 1
	}
	return 0
}

// extraRenderer renders one generated file outside package gen.
type extraRenderer struct {
	path   string // relative to the module root
	render func(*model) ([]byte, error)
}

// extraRenderers lists the generated files of other packages. Each renderer
// lives in its own file of this command (hooks.go, content.go, effects.go).
var extraRenderers = []extraRenderer{
	{path: "hooks/events_gen.go", render: renderHooksEvents},
	{path: "hooks/content_gen.go", render: renderHooksContent},
	{path: "server/effects_gen.go", render: renderServerEffects},
}

// output is one generated file.
type output struct {
	Path string // slash path relative to the working directory
	Data []byte
	Lock bool // the lock itself
}

// generate builds every output in memory.
func generate(schemaDir, outDir, lockPath string) ([]output, error) {
	set, err := loadSchemaSet(schemaDir)
	if err != nil {
		return nil, err
	}
	files, m, err := buildPackage(set)
	if err != nil {
		return nil, err
	}
	vfiles, err := renderValidation(set)
	if err != nil {
		return nil, err
	}
	for name, data := range vfiles {
		files[name] = data
	}
	var outs []output
	names := sortedKeys(files)
	for _, name := range names {
		outs = append(outs, output{Path: path.Join(filepath.ToSlash(outDir), name), Data: files[name]})
	}
	// Files generated into other packages, relative to the module root
	// (the parent of the gen output directory).
	root := path.Dir(filepath.ToSlash(outDir))
	for _, r := range extraRenderers {
		data, err := r.render(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.path, err)
		}
		if data != nil {
			outs = append(outs, output{Path: path.Join(root, r.path), Data: data})
		}
	}
	lock, err := buildLock(set, schemaDir, outs)
	if err != nil {
		return nil, err
	}
	outs = append(outs, output{Path: filepath.ToSlash(lockPath), Data: lock, Lock: true})
	return outs, nil
}

// compare reports each file whose disk content differs from the generated
// one, each stale generated file on disk, and each lock entry that disagrees.
func compare(outs []output, outDir string) []string {
	var diffs []string
	want := map[string]bool{}
	for _, o := range outs {
		want[o.Path] = true
		disk, err := os.ReadFile(filepath.FromSlash(o.Path))
		if err != nil {
			diffs = append(diffs, o.Path+" (missing)")
			continue
		}
		if !bytes.Equal(disk, o.Data) {
			if o.Lock {
				diffs = append(diffs, lockDiffs(disk, o.Data)...)
			} else {
				diffs = append(diffs, o.Path)
			}
		}
	}
	entries, _ := os.ReadDir(outDir)
	for _, e := range entries {
		p := path.Join(filepath.ToSlash(outDir), e.Name())
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") && !want[p] {
			diffs = append(diffs, p+" (not generated; stale)")
		}
	}
	sort.Strings(diffs)
	return diffs
}

// lockDiffs names what differs between the lock on disk and the expected one.
func lockDiffs(disk, want []byte) []string {
	var a, b lockFile
	if json.Unmarshal(disk, &a) != nil || json.Unmarshal(want, &b) != nil {
		return []string{"ahp-codegen.lock.json"}
	}
	var out []string
	index := func(es []lockEntry) map[string]string {
		m := map[string]string{}
		for _, e := range es {
			m[e.Path] = e.SHA256
		}
		return m
	}
	for _, pair := range []struct {
		what       string
		disk, want []lockEntry
	}{{"schema", a.Documents, b.Documents}, {"output", a.Outputs, b.Outputs}} {
		dm, wm := index(pair.disk), index(pair.want)
		for p, h := range wm {
			if dm[p] != h {
				out = append(out, fmt.Sprintf("lock: %s %s sha256 differs", pair.what, p))
			}
		}
		for p := range dm {
			if _, ok := wm[p]; !ok {
				out = append(out, fmt.Sprintf("lock: %s %s no longer exists", pair.what, p))
			}
		}
	}
	if a.Generator != b.Generator {
		out = append(out, "lock: generator identity differs (cmd/ahp-codegen changed)")
	}
	if len(out) == 0 {
		out = append(out, "ahp-codegen.lock.json")
	}
	return out
}

func write(outs []output, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, o := range outs {
		keep[o.Path] = true
		if err := os.MkdirAll(filepath.Dir(filepath.FromSlash(o.Path)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.FromSlash(o.Path), o.Data, 0o644); err != nil {
			return err
		}
	}
	// Remove generated files that are no longer produced.
	entries, err := os.ReadDir(outDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(filepath.ToSlash(outDir), e.Name())
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") && !keep[p] {
			data, err := os.ReadFile(filepath.FromSlash(p))
			if err == nil && bytes.Contains(data, []byte(genHeader)) {
				if err := os.Remove(filepath.FromSlash(p)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

type lockEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

type lockGenerator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

type lockFile struct {
	SourceRepository string        `json:"sourceRepository"`
	SourceCommit     string        `json:"sourceCommit"`
	ObtainedVia      string        `json:"obtainedVia"`
	SchemaRevision   string        `json:"schemaRevision"`
	ProtocolVersion  string        `json:"protocolVersion"`
	Generator        lockGenerator `json:"generator"`
	Documents        []lockEntry   `json:"documents"`
	Outputs          []lockEntry   `json:"outputs"`
}

// Provenance of the bundled schemas (see the snapshot's PROVENANCE.md).
const (
	sourceRepository = "agenthooksprotocol/agent-hooks-protocol"
	sourceCommit     = "53038e590e0b1d78c6608367c2a77089bb421c2b"
	obtainedVia      = "agenthooksprotocol/python-sdk src/agenthooksprotocol/schemas.json at commit 53038e590e0b1d78c6608367c2a77089bb421c2b, split one document per file (json.dumps(doc, indent=2, ensure_ascii=False) + newline); newer than protocol commit 2b5da5809b9b638d4c368e39818ee8f3c19263dc"
)

func buildLock(set *schemaSet, schemaDir string, outs []output) ([]byte, error) {
	lf := lockFile{
		SourceRepository: sourceRepository,
		SourceCommit:     sourceCommit,
		ObtainedVia:      obtainedVia,
		SchemaRevision:   set.Manifest.get("snapshotVersion").str,
		ProtocolVersion:  set.Manifest.get("protocolVersion").str,
		Generator:        lockGenerator{Name: generatorName, Version: generatorVersion},
	}
	h, err := generatorHash()
	if err != nil {
		return nil, err
	}
	lf.Generator.SHA256 = h
	dir := filepath.ToSlash(schemaDir)
	for _, name := range append(append([]string{}, set.Files...), "manifest.json") {
		data := set.ManifestRaw
		if d := set.Docs[name]; d != nil {
			data = d.Bytes
		}
		lf.Documents = append(lf.Documents, lockEntry{Path: path.Join(dir, name), SHA256: sha256Hex(data)})
	}
	for _, o := range outs {
		lf.Outputs = append(lf.Outputs, lockEntry{Path: o.Path, SHA256: sha256Hex(o.Data)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(lf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// generatorHash is the sha256 over the generator's own source files, each
// as its name, a NUL byte, its content, in name order.
func generatorHash() (string, error) {
	var names []string
	err := fs.WalkDir(ownSources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, "_test.go") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	var all bytes.Buffer
	for _, n := range names {
		data, err := ownSources.ReadFile(n)
		if err != nil {
			return "", err
		}
		all.WriteString(n)
		all.WriteByte(0)
		all.Write(data)
	}
	if all.Len() == 0 {
		return "", errors.New("generator sources are not embedded")
	}
	return sha256Hex(all.Bytes()), nil
}
