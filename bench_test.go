package agenthooks_test

import (
	"encoding/json"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// largestValidRequest returns the largest valid intercept request fixture.
func largestValidRequest(b *testing.B) []byte {
	b.Helper()
	cases, err := fixtures.Load()
	if err != nil {
		b.Fatal(err)
	}
	var best []byte
	for _, c := range cases {
		if c.SchemaFile() != "intercept-request.schema.json" || !c.ExpectedValid || c.Binding != "http-json" {
			continue
		}
		data, err := c.Read()
		if err != nil {
			b.Fatal(err)
		}
		if len(data) > len(best) {
			best = data
		}
	}
	if best == nil {
		b.Fatal("no valid intercept request fixture")
	}
	return best
}

// BenchmarkParse compares gen.ParseInterceptRequest (canonical validation +
// lossless decode), its two stages, and the encoders, each beside a baseline
// on the same bytes.
func BenchmarkParse(b *testing.B) {
	data := largestValidRequest(b)
	// Compile the schemas before timing: that happens once per process.
	if _, err := gen.ParseInterceptRequest(data); err != nil {
		b.Fatal(err)
	}
	b.Run("gen.ParseInterceptRequest", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := gen.ParseInterceptRequest(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stage=validate", func(b *testing.B) {
		v := validate.Default()
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := v.Validate("intercept-request.schema.json", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stage=decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var req gen.InterceptRequest
			if err := req.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=json.Unmarshal-map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	data := largestValidRequest(b)
	req, err := gen.ParseInterceptRequest(data)
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	b.Run("gen.EncodeInterceptRequest", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := gen.EncodeInterceptRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=json.Marshal-map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
