package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// interceptMsg is a tool.before request whose strings, raw tool input and
// unknown members all carry tag, so that two messages of equal length
// differ in every value a callback may keep.
func interceptMsg(tag string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"evt-` + tag + `","method":"hooks/intercept","params":{"protocolVersion":"draft",` +
		`"event":{"id":"evt-` + tag + `","source":"https://h.example/` + tag + `","type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"session":{"id":"s-` + tag + `"},"tool":{"name":"w-` + tag + `","kind":"file_write","input":{"path":"p-` + tag + `","esc":"\u00e9-` + tag + `","n":1.50` + `},"origin":"native"},` +
		`"call":{"id":"c-` + tag + `"},"path":"x-` + tag + `"},` +
		`"capabilities":{"effects":["deny"]}}}`)
}

// TestCallbackRetainsRequestAcrossRequests: a callback that keeps the
// request it was given (strings, raw JSON, unknown members) sees it
// unchanged after later requests reuse the server's buffers and tapes.
func TestCallbackRetainsRequestAcrossRequests(t *testing.T) {
	var mu sync.Mutex
	var kept []*gen.InterceptRequest
	var snaps [][]byte
	h := &server.Handler{
		InterceptEvents: []gen.EventName{"tool.before"},
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			b, err := json.Marshal(req)
			if err != nil {
				return server.InterceptResult{}, err
			}
			mu.Lock()
			kept = append(kept, req)
			snaps = append(snaps, b)
			mu.Unlock()
			return server.InterceptResult{Effects: []gen.Effect{server.Deny("no")}}, nil
		},
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tags := []string{"AAAA", "BBBB", "CCCC", "DDDD", "EEEE", "FFFF", "GGGG", "HHHH"}
	for _, tag := range tags {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(interceptMsg(tag)))
		require.NoError(t, err)
		var body bytes.Buffer
		_, err = body.ReadFrom(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, body.String())
		require.NotContains(t, body.String(), `"error"`, body.String())
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, kept, len(tags))
	for i, req := range kept {
		b, err := json.Marshal(req)
		require.NoError(t, err)
		require.Equal(t, string(snaps[i]), string(b))
		require.True(t, strings.Contains(string(b), tags[i]))
		require.False(t, strings.Contains(string(b), tags[(i+1)%len(tags)]))
	}
}
