// Command elicitation is the Go SDK's adapter for the Agent Hooks Protocol
// offline MCP elicitation matrix (agent-hooks-protocol/interop/ELICITATION.md).
//
// Usage:
//
//	elicitation server SCHEMA authenticated:SENDER
//	elicitation client < PLAN.json
//	elicitation check  < CASES.json
//
// The server prints {"endpoint": URL} and serves /upload (bearer
// AHP_ELICITATION_UPLOAD_TOKEN), /hooks/intercept and /receipts (bearer
// AHP_ELICITATION_TOKEN) on loopback until SIGINT or SIGTERM. The client
// runs a plan of steps and prints [{status, body}]; check reports the
// atomic application of effect lists. Exit status: 0 success, 1 failure,
// 2 usage or configuration error. The implementation is
// internal/interop/elicitation.
package main

import (
	"os"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/interop/elicitation"
)

func main() {
	os.Exit(elicitation.Run(os.Args[1:], interop.OSStdio(), os.Getenv))
}
