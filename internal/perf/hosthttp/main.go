// Command hosthttp is the HTTP scale comparison of BenchmarkScaleHTTP in a
// form whose instructions callgrind can count: N calls (after one warm-up
// call) from C concurrent callers (default 1) against a raw loopback
// backend that drains the body and writes roundtrip.Response, either
//
//	hosthttp sdk N [C]  through h.ToolBefore with the client the host owns
//	hosthttp raw N [C]  through a raw net/http client with a pool of 64
//	                    posting the bytes the host sends for the same call
//
// Both sides share the backend's code, so the difference of their counts
// per call is what the host does beyond a raw client. It prints the
// process's allocations per call of the N calls on stdout.
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
	"sync"
	"sync/atomic"

	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
)

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: hosthttp sdk|raw N [C]")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	c := 1
	if err == nil && len(os.Args) == 4 {
		c, err = strconv.Atoi(os.Args[3])
	}
	if err != nil || n < 0 || c < 1 {
		fmt.Fprintln(os.Stderr, "hosthttp: bad N or C")
		os.Exit(2)
	}
	if err := run(os.Args[1], n, c); err != nil {
		fmt.Fprintln(os.Stderr, "hosthttp:", err)
		os.Exit(1)
	}
}

func run(mode string, n, c int) error {
	resp := []byte(roundtrip.Response)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	}))
	defer srv.Close()
	ctx := context.Background()
	var call func() error
	switch mode {
	case "sdk":
		h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
		if err != nil {
			return err
		}
		defer h.Close()
		call = func() error { return roundtrip.Call(ctx, h) }
	case "raw":
		body, err := roundtrip.Request(ctx)
		if err != nil {
			return err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 64, 64
		client := &http.Client{Transport: tr}
		defer client.CloseIdleConnections()
		call = func() error {
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
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	if err := call(); err != nil { // warm-up
		return err
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := call(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return *err
	}
	runtime.ReadMemStats(&after)
	if n > 0 {
		fmt.Printf("%.1f allocs %.0f B per call\n", float64(after.Mallocs-before.Mallocs)/float64(n),
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	}
	return nil
}
