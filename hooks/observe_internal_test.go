package hooks

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// TestObserveEncodeFailureDiagnosed: an observation whose view of the
// settled event cannot be encoded is recorded as a diagnostic of its own
// (protocol_rejection at send, reason encode) instead of being dropped
// silently, and the observations of other views are still delivered. The
// settled event here carries a native value that is not JSON, which only
// the includeNative subscription's view holds.
func TestObserveEncodeFailureDiagnosed(t *testing.T) {
	var mu sync.Mutex
	var got []string
	observer := func(id string) transport.Transport {
		return transport.NewInProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, id)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}), transport.InProcessOptions{})
	}
	reg := []byte(`{"protocolVersion":"draft","hooks":[
		{"id":"com.example.native","transport":{"type":"http","url":"http://127.0.0.1:1/x"},"subscriptions":[{"events":["tool.before"],"mode":"observe","content":{"default":"body"},"includeNative":true}]},
		{"id":"com.example.plain","transport":{"type":"http","url":"http://127.0.0.1:1/x"},"subscriptions":[{"events":["tool.before"],"mode":"observe","content":{"default":"body"}}]}]}`)
	h, err := New(reg, Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]Grant{gen.EventToolBefore: Intercept().Deny()},
		Transports:   map[string]transport.Transport{"com.example.native": observer("com.example.native"), "com.example.plain": observer("com.example.plain")}})
	require.NoError(t, err)
	defer h.Close()
	ev, err := gen.ParseEvent([]byte(`{"id":"evt-1","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{},"origin":"native"},"call":{"id":"call-1"},"path":"native","native":{}}`))
	require.NoError(t, err)
	ev.ToolBefore.Native = json.RawMessage(`{not json`)
	_, err = gen.EncodeEvent(ev)
	require.Error(t, err, "the event cannot be encoded")
	entry := h.events[gen.EventToolBefore]
	require.Len(t, entry.observers, 2)
	c := &call{h: h, ctx: context.Background(), entry: entry, base: ev, cur: ev}
	c.observe(entry.observers, nil)
	require.Equal(t, []string{"com.example.plain"}, got)
	require.Equal(t, []Diagnostic{{Code: transport.CodeProtocolRejection, BackendID: "com.example.native", Mode: gen.ModeObserve, Stage: transport.StageSend, Reason: "encode"}}, c.diagnostics())
}
