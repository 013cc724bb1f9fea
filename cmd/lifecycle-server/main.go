// Command lifecycle-server is the Go SDK's lifecycle and catalogue server
// for the Agent Hooks Protocol's cross-language lifecycle matrix
// (agent-hooks-protocol/interop/LIFECYCLE.md): lifecycle-server --config
// PATH. The config's suite selects "lifecycle" (the default; package
// internal/interop/lifecycle) or "catalogue" (internal/interop/catalogue).
package main

import (
	"os"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/interop/catalogue"
	"github.com/agenthooks/agenthooks-go/internal/interop/lifecycle"
)

func main() {
	os.Exit(lifecycle.ServerMain(os.Args[1:], interop.OSStdio(), lifecycle.Suites{lifecycle.SuiteCatalogue: catalogue.ServerRole}))
}
