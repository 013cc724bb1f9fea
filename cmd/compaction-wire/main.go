// Command compaction-wire is the Go SDK's adapter for the protocol's
// canonical compaction wire matrix (interop/COMPACTION.md):
//
//	compaction-wire SCHEMA STORE SUBS.json server              # prints {"endpoint": URL}; tokens in AHP_COMPACTION_TOKENS
//	compaction-wire SCHEMA STORE SUBS.json stdio SUBSCRIPTION  # one subscription on stdin/stdout
//	compaction-wire host                                       # reads cases on stdin, prints {name, result, downstream, trace}
//
// See package internal/interop/compaction.
package main

import (
	"os"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/interop/compaction"
)

func main() {
	os.Exit(compaction.WireMain(os.Args[1:], interop.OSStdio()))
}
