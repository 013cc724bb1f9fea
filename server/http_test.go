package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

func TestHTTPBinding(t *testing.T) {
	rec := &recorder{}
	h := fixtureHandler(rec, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := interceptBase(t)

	t.Run("method", func(t *testing.T) {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodPatch} {
			req, err := http.NewRequest(m, srv.URL, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
			require.Equal(t, "POST", resp.Header.Get("Allow"))
			require.Empty(t, data)
		}
	})

	t.Run("content type", func(t *testing.T) {
		for ct, want := range map[string]int{
			"application/json":                    http.StatusOK,
			"application/json; charset=utf-8":     http.StatusOK,
			"application/json;charset=UTF-8":      http.StatusOK,
			"Application/JSON":                    http.StatusOK,
			"application/json; charset=latin1":    http.StatusUnsupportedMediaType,
			"text/plain":                          http.StatusUnsupportedMediaType,
			"application/x-www-form-urlencoded":   http.StatusUnsupportedMediaType,
			"application/jsonrequest":             http.StatusUnsupportedMediaType,
			"application/json-seq":                http.StatusUnsupportedMediaType,
			"":                                    http.StatusUnsupportedMediaType,
			"application/json; charset=utf-8; x=": http.StatusUnsupportedMediaType, // malformed parameter
		} {
			_, status := post(t, srv.URL, ct, body)
			require.Equal(t, want, status, "Content-Type %q", ct)
		}
		// No Content-Type header at all.
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	})

	t.Run("size limit", func(t *testing.T) {
		small := &server.Handler{Intercept: h.Intercept, MaxBodyBytes: 1024}
		ssrv := httptest.NewServer(small)
		defer ssrv.Close()
		big := bytes.Repeat([]byte(" "), 2048)
		// Declared length over the limit.
		_, status := post(t, ssrv.URL, "application/json", big)
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
		// Unknown length (chunked) over the limit.
		req, err := http.NewRequest(http.MethodPost, ssrv.URL, io.MultiReader(bytes.NewReader(big)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = -1 // unknown: sent chunked
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		// At the limit: read, then a parse error.
		raw, status := post(t, ssrv.URL, "application/json", big[:1024])
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, jsonrpc.CodeParseError, decodeReply(t, raw).code())
		// The default limit is 4 MiB.
		huge := bytes.Repeat([]byte(" "), server.DefaultMaxBodyBytes+1)
		_, status = post(t, srv.URL, "application/json", huge)
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
	})

	t.Run("empty body", func(t *testing.T) {
		raw, status := post(t, srv.URL, "application/json", nil)
		require.Equal(t, http.StatusOK, status)
		r := decodeReply(t, raw)
		require.Equal(t, jsonrpc.CodeParseError, r.code())
		require.Equal(t, "null", string(r.ID))
	})

	t.Run("body shorter than its Content-Length", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		_, err = conn.Write(append([]byte(head), body[:len(body)/2]...))
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a truncated body is never dispatched")
	})

	t.Run("response headers", func(t *testing.T) {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.Equal(t, int64(len(data)), resp.ContentLength)
		require.False(t, strings.Contains(string(data), "\n"), "one compact object")
	})

	t.Run("concurrent requests", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"deny"`)) {
					t.Errorf("status %d body %s", resp.StatusCode, data)
				}
			})
		}
		wg.Wait()
	})
}

func TestHTTPNilHandler(t *testing.T) {
	var h *server.Handler
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
}
