package perf_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
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

// variant is one side of an interleaved scale benchmark.
type variant struct {
	name    string
	callers int
	call    func(i int64) error
}

// interleave runs rounds of callsPerRound calls of each variant in turn (b.N
// rounds), so that a machine whose load changes moves every variant alike,
// and reports for each the median over the rounds of its calls/s and of the
// CPU time of this process and the stdio backend per call (cpu-us) and
// cores busy (CPU time / elapsed), and the median ratio of the first
// variant's calls/s to the second's within a round ("x").
func interleave(b *testing.B, callsPerRound int, vs ...variant) {
	b.Helper()
	rate := make([][]float64, len(vs))
	cpu := make([][]float64, len(vs))
	cores := make([][]float64, len(vs))
	var ratio []float64
	b.ReportAllocs()
	for b.Loop() {
		for j, v := range vs {
			c0, ok := cpuTime()
			start := time.Now()
			if err := callers(v.callers, int64(callsPerRound), v.call); err != nil {
				b.Fatal(err)
			}
			el := time.Since(start)
			rate[j] = append(rate[j], float64(callsPerRound)/el.Seconds())
			if c1, ok1 := cpuTime(); ok && ok1 {
				cpu[j] = append(cpu[j], float64((c1-c0).Microseconds())/float64(callsPerRound))
				cores[j] = append(cores[j], float64(c1-c0)/float64(el))
			}
		}
		ratio = append(ratio, rate[0][len(rate[0])-1]/rate[1][len(rate[1])-1])
	}
	for j, v := range vs {
		b.ReportMetric(median(rate[j]), "calls/s-"+v.name)
		if len(cpu[j]) > 0 {
			b.ReportMetric(median(cpu[j]), "cpu-us/call-"+v.name)
			b.ReportMetric(median(cores[j]), "cores-"+v.name)
		}
	}
	b.Logf("calls/s per round: %s %.0f, %s %.0f; ratio %.2f", vs[0].name, rate[0], vs[1].name, rate[1], ratio)
	b.ReportMetric(median(ratio), "x")
	b.ReportMetric(0, "ns/op")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// callers makes n calls from c goroutines; call gets a number unique
// within the process.
func callers(c int, n int64, call func(i int64) error) error {
	var done atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Add(1) <= n {
				if err := call(callSeq.Add(1)); err != nil {
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
	return nil
}

// callSeq numbers the calls of the interleaved benchmarks (distinct event
// ids on one stdio backend).
var callSeq atomic.Int64

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

// BenchmarkScaleStdioInterleaved is BenchmarkScaleStdio in alternating
// rounds of 2000 calls on one backend (use -benchtime Nx for N rounds):
// "x" is the median ratio of 64 callers' calls/s to one caller's, and the
// cpu-us and cores metrics tell a saturated machine (the same CPU per call,
// fewer cores) from a slower path.
func BenchmarkScaleStdioInterleaved(b *testing.B) {
	h := stdioHooks(b)
	ctx := context.Background()
	require.NoError(b, roundtrip.Call(ctx, h))
	call := func(i int64) error {
		return roundtrip.CallInput(ctx, h, roundtrip.InputID("evt-"+strconv.FormatInt(i, 10)))
	}
	interleave(b, 2000, variant{"64", 64, call}, variant{"1", 1, call})
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

// BenchmarkScaleHTTPInterleaved is BenchmarkScaleHTTP in alternating rounds
// of 4000 calls from 64 callers (use -benchtime Nx for N rounds): "x" is the
// median ratio of the SDK-owned client's calls/s to the raw pool of 64's.
func BenchmarkScaleHTTPInterleaved(b *testing.B) {
	const n = 64
	srv := httptest.NewServer(rawBackend())
	defer srv.Close()
	h, err := roundtrip.New(roundtrip.HTTPTransport(srv.URL))
	require.NoError(b, err)
	defer h.Close()
	ctx := context.Background()
	require.NoError(b, roundtrip.Call(ctx, h))
	body, err := roundtrip.Request(ctx)
	require.NoError(b, err)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = n, n
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
	interleave(b, 4000, variant{"sdk", n, func(int64) error { return roundtrip.Call(ctx, h) }}, variant{"raw", n, post})
}
