package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// firstReadBody signals arrived on its first Read: by then the Handler has
// chosen the buffer it reads into.
type firstReadBody struct {
	io.ReadCloser
	once    sync.Once
	arrived func()
}

func (b *firstReadBody) Read(p []byte) (int, error) {
	b.once.Do(b.arrived)
	return b.ReadCloser.Read(p)
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestHTTPMemoryFollowsReceivedBytes: connections that declare a body just
// under the limit and send only their headers cost memory for the bytes
// they sent, not for the length they declared. Each request's Handler is
// blocked reading its body (the barrier is the first Read of every body)
// when the heap is measured.
func TestHTTPMemoryFollowsReceivedBytes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const conns = 100
	declared := int64(server.DefaultMaxBodyBytes - 1)

	var reading sync.WaitGroup
	reading.Add(conns)
	h := &server.Handler{Intercept: noEffectHandler().Intercept}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &firstReadBody{ReadCloser: r.Body, arrived: reading.Done}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	before := heapInUse()
	open := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", declared)
	for range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		open = append(open, c)
		_, err = io.WriteString(c, head)
		require.NoError(t, err)
	}
	reading.Wait()
	after := heapInUse()
	growth := int64(after) - int64(before)
	t.Logf("heap for %d header-only requests declaring %d bytes: %d KiB (%d KiB each)", conns, declared, growth>>10, growth/conns>>10)
	require.Less(t, growth, conns*declared/32, "heap grows with the bytes received, not with Content-Length")

	// The requests are still served once their bodies arrive: each gets
	// its answer (a parse error for a body of spaces).
	body := bytes.Repeat([]byte(" "), int(declared))
	var wg sync.WaitGroup
	for _, c := range open[:2] {
		wg.Go(func() {
			_, _ = c.Write(body)
		})
	}
	for _, c := range open[:2] {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, jsonrpc.CodeParseError, decodeReply(t, raw).code())
	}
	wg.Wait()
	for _, c := range open {
		_ = c.Close()
	}
	open = nil
	srv.Close()
}

// TestHTTPBodySizes: a request padded to sizes around the first buffer and
// around the limit is answered intact up to the limit and is 413 beyond it,
// with a declared length and chunked.
func TestHTTPBodySizes(t *testing.T) {
	const limit = 100_000
	h := noEffectHandler()
	h.MaxBodyBytes = limit
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, size := range []int{len(hotpathRequest), 16<<10 - 1, 16 << 10, 16<<10 + 1, 32<<10 + 3, limit - 1, limit, limit + 1, 3 * limit} {
		body := append([]byte(hotpathRequest), bytes.Repeat([]byte(" "), size-len(hotpathRequest))...)
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/chunked=%v", size, chunked), func(t *testing.T) {
				var rd io.Reader = bytes.NewReader(body)
				if chunked {
					rd = io.MultiReader(rd) // unknown length: sent chunked
				}
				req, err := http.NewRequest(http.MethodPost, srv.URL, rd)
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				if size > limit {
					require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
					return
				}
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Equal(t, hotpathResponse, string(raw))
			})
		}
	}
}

// TestNewHTTPServer: the server has the documented timeouts and serves the
// Handler until Shutdown.
func TestNewHTTPServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := server.NewHTTPServer(ln.Addr().String(), noEffectHandler())
	require.Equal(t, ln.Addr().String(), srv.Addr)
	require.Equal(t, server.DefaultReadHeaderTimeout, srv.ReadHeaderTimeout)
	require.Equal(t, server.DefaultReadTimeout, srv.ReadTimeout)
	require.Equal(t, server.DefaultWriteTimeout, srv.WriteTimeout)
	require.Equal(t, server.DefaultIdleTimeout, srv.IdleTimeout)
	for _, d := range []time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout} {
		require.Positive(t, d)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	resp, err := client.Post("http://"+srv.Addr, "application/json", strings.NewReader(hotpathRequest))
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, hotpathResponse, string(raw))
	client.CloseIdleConnections()

	require.NoError(t, srv.Shutdown(context.Background()))
	require.ErrorIs(t, <-served, http.ErrServerClosed)
}

// TestHTTPUnboundedLimit: a MaxBodyBytes of math.MaxInt64 serves bodies of
// declared and unknown length; limit+1 does not overflow.
func TestHTTPUnboundedLimit(t *testing.T) {
	h := noEffectHandler()
	h.MaxBodyBytes = math.MaxInt64
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, rd := range []io.Reader{strings.NewReader(hotpathRequest), io.MultiReader(strings.NewReader(hotpathRequest))} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, hotpathResponse, string(raw))
	}
}

// TestNewHTTPServerHeaderLimit: the server bounds a request's headers at
// DefaultMaxHeaderBytes, far below net/http's 1 MiB default: a request
// whose headers exceed it is refused with 431 before the Handler runs, one
// within it is served.
func TestNewHTTPServerHeaderLimit(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := server.NewHTTPServer(ln.Addr().String(), noEffectHandler())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		require.NoError(t, srv.Shutdown(context.Background()))
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	}()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	cases := []struct {
		name   string
		header int // bytes of one extra header's value
		status int
	}{
		{name: "within", header: server.DefaultMaxHeaderBytes / 2, status: http.StatusOK},
		{name: "over", header: 2 * server.DefaultMaxHeaderBytes, status: http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "http://"+srv.Addr, strings.NewReader(hotpathRequest))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Pad", strings.Repeat("p", tc.header))
			resp, err := client.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
		})
	}
	require.Equal(t, server.DefaultMaxHeaderBytes, srv.MaxHeaderBytes)
}
