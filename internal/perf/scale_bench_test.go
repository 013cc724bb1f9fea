package perf_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "-perf-stdio-child" {
		// The persistent stdio backend of the scale benchmarks:
		// server.ServeStdio with default settings.
		h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{}, nil
		}}
		if err := server.ServeStdio(context.Background(), os.Stdin, os.Stdout, h); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// scaleCallers are the concurrent callers of the scale benchmarks, beside
// the one caller of the baseline.
var scaleCallers = []int{1, 64}

// runCallers runs b.N calls from callers goroutines and reports calls/s.
// call gets the number of the call (0 to b.N-1).
func runCallers(b *testing.B, callers int, call func(i int64) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	n := int64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				if err := call(i); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// stdioHooks is a host with one persistent stdio backend: this test
// binary serving server.ServeStdio with default settings.
func stdioHooks(tb testing.TB) *hooks.Hooks {
	exe, err := os.Executable()
	require.NoError(tb, err)
	h, err := roundtrip.New(roundtrip.StdioTransport(exe, "-perf-stdio-child"))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = h.Close() })
	return h
}

// BenchmarkScaleStdio: calls/s of 64 concurrent callers on one persistent
// stdio backend (the host's default StdioMaxInFlight, the backend's default
// MaxConcurrency) beside one caller, in the same run (target: 64 callers
// reach >= 2x the calls/s of one).
func BenchmarkScaleStdio(b *testing.B) {
	for _, callers := range scaleCallers {
		b.Run("callers="+strconv.Itoa(callers), func(b *testing.B) {
			h := stdioHooks(b)
			ctx := context.Background()
			require.NoError(b, roundtrip.Call(ctx, h)) // the child's start
			runCallers(b, callers, func(i int64) error {
				return roundtrip.CallInput(ctx, h, roundtrip.InputID("evt-"+strconv.FormatInt(i, 10)))
			})
		})
	}
}

// rawBackend drains the body and writes roundtrip.Response.
func rawBackend() http.Handler {
	resp := []byte(roundtrip.Response)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	})
}

// BenchmarkScaleHTTP: calls/s of 64 concurrent callers through the host
// with the client it owns (the default pool) beside a raw net/http client
// with a pool of 64 posting the bytes the host sends for the same call, both
// to the same loopback backend writing roundtrip.Response (target: sdk >=
// 0.85x raw).
func BenchmarkScaleHTTP(b *testing.B) {
	const callers = 64
	b.Run("client=sdk", func(b *testing.B) {
		srv := httptest.NewServer(rawBackend())
		defer srv.Close()
		h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
		require.NoError(b, err)
		defer h.Close()
		ctx := context.Background()
		require.NoError(b, roundtrip.Call(ctx, h))
		runCallers(b, callers, func(int64) error { return roundtrip.Call(ctx, h) })
	})
	b.Run("client=raw", func(b *testing.B) {
		srv := httptest.NewServer(rawBackend())
		defer srv.Close()
		body, err := roundtrip.Request(context.Background())
		require.NoError(b, err)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = callers
		tr.MaxIdleConns = callers
		client := &http.Client{Transport: tr}
		defer client.CloseIdleConnections()
		post := func(int64) error {
			res, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return err
		}
		require.NoError(b, post(0))
		runCallers(b, callers, post)
	})
}
