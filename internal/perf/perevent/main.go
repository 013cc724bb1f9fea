// Command perevent is a per_event stdio backend built on package server:
// it answers the one request on stdin with no effects and exits.
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
