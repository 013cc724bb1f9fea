package hooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// compactionHooks builds a one-subscription harness for boundary at url
// with content selection sel.
func compactionHooks(t *testing.T, url string, b gen.EventName, sel string, subs int) *hooks.Hooks {
	t.Helper()
	sub := strings.Replace(interceptSub(`"`+string(b)+`"`, 20000, "fail-open"), `"default":"body"`, `"default":"`+sel+`"`, 1)
	var all []string
	for range subs {
		all = append(all, sub)
	}
	g := hooks.Intercept().Message()
	if b == before {
		g = g.Deny().Return().ModifyInstructions(hooks.Replace)
	} else {
		g = g.ModifySummary(hooks.Replace)
	}
	h, err := hooks.New(registration(backendJSON("com.example.compaction", httpTransport(url), all...)),
		hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{b: g}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	return h
}

// TestDeliverCompaction: a backend over loopback HTTP returns a summary
// before compaction; a second backend sees that candidate in its request
// state; a host-owned after hook redacts it; a metadata receiver gets no
// text; a response the harness rejects is traced with its reason; a
// harness with two subscriptions fails the callback.
func TestDeliverCompaction(t *testing.T) {
	var mu sync.Mutex
	var sawCandidate bool
	var metaRequests []string
	supplier := httptest.NewServer(&server.Handler{Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		e := server.ReturnText(gen.TextParts{{Body: &gen.TextBodyPart{ID: "sum", Text: "The key is sk-123 and work is done."}}})
		return server.InterceptResult{Effects: []gen.Effect{server.Message("summary supplied"), e}}, nil
	}})
	defer supplier.Close()
	checker := httptest.NewServer(&server.Handler{Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		mu.Lock()
		defer mu.Unlock()
		sawCandidate = req.Params.State != nil && req.Params.State.Candidate.Valid
		return server.InterceptResult{}, nil
	}})
	defer checker.Close()
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			body.Write(buf[:n])
			if err != nil {
				break
			}
		}
		mu.Lock()
		metaRequests = append(metaRequests, body.String())
		mu.Unlock()
		env, _ := jsonrpc.Classify([]byte(body.String()))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jsonrpc.AppendResponse(nil, env.ID, []byte(`{"protocolVersion":"draft","effects":[]}`)))
	}))
	defer meta.Close()
	crossed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<16)
		n, _ := r.Body.Read(buf)
		env, _ := jsonrpc.Classify(buf[:n])
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jsonrpc.AppendResponse(nil, env.ID, []byte(`{"protocolVersion":"draft","effects":[{"type":"modify","target":"instructions","operation":"replace","value":[]}]}`)))
	}))
	defer crossed.Close()

	redact := func(_ context.Context, s hooks.CompactionSnapshot) ([]gen.Effect, error) {
		sum := s.Event.ContextCompactAfter.Summary
		out := make(gen.TextParts, len(sum))
		for i, p := range sum {
			b := *p.Body
			b.Text = strings.ReplaceAll(b.Text, "sk-123", "[redacted]")
			out[i] = gen.TextPart{Body: &b}
		}
		return []gen.Effect{server.ReplaceText(gen.ModifyTextEffectTargetSummary, out)}, nil
	}
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{
		{Supplier: "supplier", Boundary: before, Callback: hooks.DeliverCompaction(compactionHooks(t, supplier.URL, before, "body", 1), before)},
		{Supplier: "checker", Boundary: before, Callback: hooks.DeliverCompaction(compactionHooks(t, checker.URL, before, "body", 1), before)},
		{Supplier: "two", Boundary: before, Callback: hooks.DeliverCompaction(compactionHooks(t, checker.URL, before, "body", 2), before)},
		{Supplier: "meta", Boundary: after, Callback: hooks.DeliverCompaction(compactionHooks(t, meta.URL, after, "metadata", 1), after)},
		{Supplier: "redact", Boundary: after, Callback: redact},
		{Supplier: "crossed", Boundary: after, Callback: hooks.DeliverCompaction(compactionHooks(t, crossed.URL, after, "body", 1), after)},
	}})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Run(ctxTimeout(t, 60*time.Second), input())
	require.NoError(t, err)

	require.True(t, res.Applied)
	require.False(t, res.Generated)
	require.Equal(t, "supplier", res.Provenance.Supplier)
	require.Equal(t, "The key is [redacted] and work is done.", parts(res.Summary))
	require.Equal(t, []hooks.CompactionMessage{{Boundary: before, Supplier: "supplier", Text: "summary supplied"}}, res.Messages)
	var trace []string
	for _, s := range res.Trace {
		trace = append(trace, s.Supplier+":"+string(s.Outcome)+":"+s.Reason)
	}
	require.Equal(t, []string{"supplier:accepted:", "checker:accepted:", "two:failed:callback_error", "meta:accepted:", "redact:accepted:", "crossed:rejected:boundary_forbidden"}, trace)
	mu.Lock()
	defer mu.Unlock()
	require.True(t, sawCandidate, "the next subscription's request state carries the supplied summary")
	require.Len(t, metaRequests, 1)
	require.NotContains(t, metaRequests[0], "sk-123")
	require.NotContains(t, metaRequests[0], `"text":`)
	var req struct {
		ID     string `json:"id"`
		Params struct {
			Event struct {
				ID        string          `json:"id"`
				Execution json.RawMessage `json:"execution"`
			} `json:"event"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(metaRequests[0]), &req))
	require.Equal(t, "evt-after", req.Params.Event.ID, "the snapshot's event id is delivered")
	require.JSONEq(t, `{"status":"skipped","reason":"supplied_result"}`, string(req.Params.Event.Execution))
}
