// Command interop is the Go SDK's adapter for the Agent Hooks Protocol core
// cross-language interop matrix (agent-hooks-protocol/interop/CONTRACT.md).
//
// Usage:
//
//	interop server --config SERVER_CONFIG.json
//	interop client --config CLIENT_CONFIG.json
//
// The server is a scripted AHP backend; the client is the interop README's
// synthetic host, built on the SDK's hooks package. Exit status: 0 success;
// 1 an applicable scenario failed or the run broke; 2 usage or
// configuration error; 3 (server only) unsupported authentication or
// transport combination. The implementation is internal/interop.
package main

import (
	"os"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

func main() {
	os.Exit(interop.Run(os.Args[1:], interop.OSStdio()))
}
