// Command hosthttp is the host's share of the HTTP round trip: h.ToolBefore
// N times (after one warm-up call) against a raw loopback backend that
// drains the body and writes roundtrip.Response, the backend of
// BenchmarkScaleHTTP. Beside httphost raw (a raw http.Client posting the
// same bytes to the same kind of handler), the difference of their
// instruction counts per call is what the host does beyond a raw client.
// It prints the process's allocations per call of the N calls on stdout.
//
//	hosthttp N
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"

	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hosthttp N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "hosthttp: bad N")
		os.Exit(2)
	}
	if err := run(n); err != nil {
		fmt.Fprintln(os.Stderr, "hosthttp:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	resp := []byte(roundtrip.Response)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	}))
	defer srv.Close()
	h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
	if err != nil {
		return err
	}
	defer h.Close()
	ctx := context.Background()
	if err := roundtrip.Call(ctx, h); err != nil { // warm-up
		return err
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if err := roundtrip.Call(ctx, h); err != nil {
			return err
		}
	}
	runtime.ReadMemStats(&after)
	if n > 0 {
		fmt.Printf("%.1f allocs %.0f B per call\n", float64(after.Mallocs-before.Mallocs)/float64(n),
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	}
	return nil
}
