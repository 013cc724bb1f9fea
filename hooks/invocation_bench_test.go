package hooks_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// noTransportHooks is BenchmarkToolBeforeNoTransport's harness: a
// transport that answers at once, so only the harness's own work counts.
func noTransportHooks(b *testing.B) *hooks.Hooks {
	reg := registration(backendJSON("com.example.bench", httpTransport("http://127.0.0.1:1"), interceptSub(`"tool.before"`, 5000, "fail-closed")))
	h, err := hooks.New(reg, hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
		Transports:   map[string]transport.Transport{"com.example.bench": cannedTransport{[]byte(benchResponse)}}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = h.Close() })
	return h
}

// benchEvent is the canonical event of benchRequest.
func benchEvent(b *testing.B) *gen.Event {
	req, err := gen.ParseInterceptRequest(benchRequest(b))
	require.NoError(b, err)
	return &req.Params.Event
}

// BenchmarkDispatchNoTransport is the typed low-level dispatch of the
// canonical event; its baseline is BenchmarkToolBeforeNoTransport (the
// named method building the same event).
func BenchmarkDispatchNoTransport(b *testing.B) {
	h := noTransportHooks(b)
	ev := benchEvent(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := h.Dispatch(ctx, ev)
		if err != nil || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkInvocationNoTransport is the same occurrence step by step
// (Begin, Acquire, Accept), against the same baselines.
func BenchmarkInvocationNoTransport(b *testing.B) {
	h := noTransportHooks(b)
	ev := benchEvent(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		inv, err := h.Begin(ctx, ev)
		if err != nil {
			b.Fatal(err)
		}
		if err := inv.Acquire(ctx); err != nil {
			b.Fatal(err)
		}
		res, err := inv.Accept(ctx)
		if err != nil || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkBeginRequestReceive is a host with its own transport: the
// canonical request begun as given, the response handed in.
func BenchmarkBeginRequestReceive(b *testing.B) {
	h := noTransportHooks(b)
	req := benchRequest(b)
	resp := []byte(benchResponse)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		inv, err := h.BeginRequest(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := inv.Receive(resp); err != nil {
			b.Fatal(err)
		}
		res, err := inv.Accept(ctx)
		if err != nil || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
