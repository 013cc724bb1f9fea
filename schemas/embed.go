// Package schemas embeds the canonical Agent Hooks Protocol JSON Schemas,
// byte-exact copies of the protocol's draft documents, and their manifest.
//
// The files are the input of cmd/ahp-codegen and of runtime/validate; nothing
// in this package may change them.
package schemas

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.json
var files embed.FS

// BaseURI is the common prefix of every document's $id.
const BaseURI = "https://agenthooksprotocol.org/schemas/draft/"

// FS returns the embedded schema documents and manifest.json as a read-only
// file system rooted at the schema directory.
func FS() fs.FS { return files }

// Documents returns the file names of the canonical schema documents (every
// embedded JSON file except manifest.json), sorted.
func Documents() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".json") && n != "manifest.json" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Read returns a copy of the named embedded document's bytes.
func Read(name string) ([]byte, error) {
	return files.ReadFile(name)
}
