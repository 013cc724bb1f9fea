// Command perevent is a per_event stdio backend built on package server:
// it answers every request on stdin with no effects until the end of stdin
// (one, per_event; the stdio round trip of callgrind.sh runs it as a
// persistent child).
package main

import (
	"context"
	"os"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	if err := server.ServeStdio(context.Background(), os.Stdin, os.Stdout, h); err != nil {
		os.Exit(1)
	}
}
