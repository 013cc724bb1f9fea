// Command servehttp runs server.Handler.ServeHTTP n times (first argument)
// on one request body read from stdin, after one warm-up call, so that
// callgrind runs of different n give the instructions per request.
package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(1)
	}
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}}
	for range n + 1 {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}
