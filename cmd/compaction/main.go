// Command compaction is the Go SDK's adapter for the protocol's
// host-orchestration compaction matrix (interop/COMPACTION.md):
//
//	compaction server   # prints {"endpoint": URL}; bearer AHP_COMPACTION_TOKEN
//	compaction stdio    # NDJSON JSON-RPC on stdin/stdout
//	compaction client   # reads {transport, requests, endpoint, token | command}, prints the replies
//
// The receivers serve the test-only method compaction/run through the
// public hooks.Compactor; see package internal/interop/compaction.
package main

import (
	"os"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/interop/compaction"
)

func main() {
	os.Exit(compaction.Main(os.Args[1:], interop.OSStdio()))
}
