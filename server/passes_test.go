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
