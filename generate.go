// Package agenthooks is the root of agenthooks-go, the Go SDK of the Agent
// Hooks Protocol (AHP). Hosts use package hooks; hook backends use package
// server; package gen holds the typed protocol model generated from the
// canonical JSON Schemas in schemas/.
//
// Regenerate the model with go generate ./... and verify it with
// go run ./cmd/ahp-codegen -check.
package agenthooks

//go:generate go run ./cmd/ahp-codegen
