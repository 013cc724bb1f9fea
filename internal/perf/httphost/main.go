// Command httphost is the HTTP round trip that internal/perf/callgrind.sh
// measures, host and backend in one process over loopback, in one of two
// modes:
//
//	httphost sdk N  h.ToolBefore N times against server.Handler (default
//	                settings) behind an httptest server
//	httphost raw N  a raw http.Client (a clone of http.DefaultTransport)
//	                posting the bytes the SDK sends for the same call N
//	                times to a handler that drains the body and writes
//	                roundtrip.Response
//
// Both make one warm-up call first and print the process's allocations per
// call of the N calls on stdout.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: httphost sdk|raw N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "httphost: bad N")
		os.Exit(2)
	}
	var call func() error
	var done func()
	switch os.Args[1] {
	case "sdk":
		call, done, err = sdk()
	case "raw":
		call, done, err = raw()
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "httphost:", err)
		os.Exit(1)
	}
	defer done()
	if err := call(); err != nil { // warm-up
		fmt.Fprintln(os.Stderr, "httphost:", err)
		os.Exit(1)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if err := call(); err != nil {
			fmt.Fprintln(os.Stderr, "httphost:", err)
			os.Exit(1)
		}
	}
	runtime.ReadMemStats(&after)
	if n > 0 {
		fmt.Printf("%.1f allocs %.0f B per call\n", float64(after.Mallocs-before.Mallocs)/float64(n),
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	}
}

func sdk() (func() error, func(), error) {
	srv := httptest.NewServer(&server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{}, nil
	}})
	h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	ctx := context.Background()
	return func() error { return roundtrip.Call(ctx, h) }, func() { _ = h.Close(); srv.Close() }, nil
}

func raw() (func() error, func(), error) {
	body, err := roundtrip.Request(context.Background())
	if err != nil {
		return nil, nil, err
	}
	resp := []byte(roundtrip.Response)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	}))
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	call := func() error {
		res, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil && len(data) == 0 {
			err = errors.New("empty answer")
		}
		return err
	}
	return call, func() { client.CloseIdleConnections(); srv.Close() }, nil
}
