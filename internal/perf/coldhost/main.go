// Command coldhost measures what a host allocates from process start
// through the first hooks.New and the first call (against a loopback
// backend answering a constant response, so that the backend's share is
// negligible): it prints the bytes and allocations counted by the runtime,
// package initialisation included.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
)

const response = `{"jsonrpc":"2.0","id":"evt-cold","result":{"protocolVersion":"draft","effects":[]}}`

func main() {
	var init runtime.MemStats
	runtime.ReadMemStats(&init)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, response)
	}))
	defer srv.Close()
	reg := []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.cold","transport":{"type":"http","url":"` + srv.URL + `"},
	  "subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":5000,"failurePolicy":"fail-closed","content":{"default":"body"}}]}]}`)
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := h.ToolBefore(context.Background(), hooks.ToolBeforeInput{ID: "evt-cold", Name: "read_file",
		Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"})
	if err != nil || res == nil || len(res.Diagnostics) != 0 {
		fmt.Fprintln(os.Stderr, "call:", err, res)
		os.Exit(1)
	}
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	_ = h.Close()
	fmt.Printf("init: %d B in %d allocations\n", init.TotalAlloc, init.Mallocs)
	fmt.Printf("start to first call: %d B (%.2f MiB) in %d allocations\n", end.TotalAlloc, float64(end.TotalAlloc)/(1<<20), end.Mallocs)
}
