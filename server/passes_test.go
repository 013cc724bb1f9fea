package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

// largeInput is a tool input of about 64 KiB: a file write of a 32 KiB
// text and 400 small line records, the shape of a large valid request.
func largeInput() string {
	var b strings.Builder
	b.WriteString(`{"path":"notes/big.txt","content":"`)
	b.WriteString(strings.Repeat("All work and no play. ", 32<<10/22))
	b.WriteString(`","lines":[`)
	for i := range 400 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"n":` + strconv.Itoa(i) + `,"text":"line of the file, number ` + strconv.Itoa(i) + `","flags":[true,false,null]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkLargeRequestPasses dispatches a valid intercept request of
// about 64 KiB answered with a deny (so the grants are snapshot for
// admission) beside baselines of one scan of the same bytes: json.Valid,
// validate.Scan (the one tokenization the dispatch makes) and
// validate.UniqueMembers (one pass for repeated names). The ratio of ns/op of
// "ServeHTTP" to a baseline's is how many times the dispatch goes over the
// bytes' worth of work.
func BenchmarkLargeRequestPasses(b *testing.B) {
	body := withInput(b, largeInput())
	benchmarkPasses(b, body)
}

// largeMessages is a model.request.before intercept request of about 68
// KiB: 48 user messages of 1.3 KiB of text each, the shape of a large
// request whose target is a message list.
func largeMessages(b *testing.B) []byte {
	text := strings.Repeat("All work and no play. ", 60)
	return mutate(b, interceptBase(b), func(m map[string]any) {
		items := make([]any, 48)
		for i := range items {
			id := strconv.Itoa(i)
			items[i] = map[string]any{"id": "m" + id, "role": "user", "parts": []any{map[string]any{
				"id": "p" + id, "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text}}}
		}
		params(m)["event"] = map[string]any{
			"id": event(m)["id"], "source": "urn:test:harness", "time": "2026-09-15T12:00:00Z", "type": "model.request.before",
			"model": map[string]any{"id": "m", "provider": "p"}, "attempt": map[string]any{"id": "a1", "number": 1},
			"params": map[string]any{}, "items": items,
		}
	})
}

// BenchmarkLargeMessagesRequestPasses is BenchmarkLargeRequestPasses of
// largeMessages: a message-list target, which settlement encodes only for
// an effect that modifies it.
func BenchmarkLargeMessagesRequestPasses(b *testing.B) {
	benchmarkPasses(b, largeMessages(b))
}

// benchmarkPasses runs the cases of BenchmarkLargeRequestPasses on body.
func benchmarkPasses(b *testing.B, body []byte) {
	if len(body) < 60<<10 || len(body) > 72<<10 {
		b.Fatalf("body is %d bytes", len(body))
	}
	h := &server.Handler{Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
		return server.InterceptResult{Effects: []gen.Effect{server.Deny("blocked")}}, nil
	}}
	serveOnce(b, h, body)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"ServeHTTP", func() { serveOnce(b, h, body) }},
		{"ParseInterceptRequestContext", func() {
			if _, err := gen.ParseInterceptRequestContext(context.Background(), body); err != nil {
				b.Fatal(err)
			}
		}},
		{"baseline=json.Valid", func() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}},
		{"baseline=validate.Scan", func() {
			d := validate.Scan(context.Background(), body)
			if !d.Tokens() {
				b.Fatal("no tokens")
			}
			d.Release()
		}},
		{"baseline=validate.UniqueMembers", func() {
			if err := validate.UniqueMembers(body); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				c.f()
			}
		})
	}
}
