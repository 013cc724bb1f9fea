package agenthooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
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

// BenchmarkParseLargeAnswer compares, on a valid 4 MiB intercept answer
// (an input replacement of 250k members), the host's answer path before
// (validate.Check, then UnmarshalJSON, which scans the document once more
// for repeated names) and after (gen.ParseInterceptResponseContext: the
// same check, then the decode alone, observing the context), beside its
// stages and a raw baseline on the same bytes.
func BenchmarkParseLargeAnswer(b *testing.B) {
	data := largeAnswer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // a context that can end, as the host's
	defer cancel()
	if _, err := gen.ParseInterceptResponseContext(ctx, data); err != nil {
		b.Fatal(err)
	}
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("gen.ParseInterceptResponseContext", func() error {
		_, err := gen.ParseInterceptResponseContext(ctx, data)
		return err
	})
	run("before=Check+UnmarshalJSON", func() error {
		if err := validate.Default().Check(ctx, "intercept-response.schema.json", data); err != nil {
			return err
		}
		var resp gen.InterceptResponse
		return resp.UnmarshalJSON(data)
	})
	run("stage=Check", func() error { return validate.Default().Check(ctx, "intercept-response.schema.json", data) })
	run("stage=UniqueMembers", func() error { return validate.UniqueMembers(data) })
	run("baseline=json.Valid", func() error {
		if !json.Valid(data) {
			return errors.New("invalid")
		}
		return nil
	})
}

// BenchmarkDecodeToolBeforeRequest measures decoding the request of the
// HTTP and stdio round trips (internal/perf/roundtrip: a native tool.before
// with the deny and allow grants), beside an encoding/json baseline on the
// same bytes: what package server does with it (validate.Scan, then
// gen.ParseInterceptRequestDoc, which validates and decodes the tokens), the
// decoding of the tokens alone (gen.DecodeAt) and of the bytes alone
// (UnmarshalJSON).
func BenchmarkDecodeToolBeforeRequest(b *testing.B) {
	ctx := context.Background()
	data, err := roundtrip.Request(ctx)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, f func() error) {
		if err := f(); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("Scan+ParseInterceptRequestDoc", func() error {
		doc := validate.Scan(ctx, data)
		defer doc.Release()
		_, err := gen.ParseInterceptRequestDoc(ctx, doc)
		return err
	})
	doc := validate.Scan(ctx, data)
	defer doc.Release()
	run("stage=DecodeAt", func() error {
		var req gen.InterceptRequest
		return gen.DecodeAt(doc, 0, &req)
	})
	run("stage=UnmarshalJSON", func() error {
		var req gen.InterceptRequest
		return req.UnmarshalJSON(data)
	})
	run("baseline=json.Unmarshal-map", func() error {
		var m map[string]any
		return json.Unmarshal(data, &m)
	})
}

// BenchmarkEncodeToolBeforeEvent measures gen.EncodeEvent on the event of
// the round-trip request (what the host encodes for every call), beside
// json.Marshal of the same event decoded into a map.
func BenchmarkEncodeToolBeforeEvent(b *testing.B) {
	data, err := roundtrip.Request(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	req, err := gen.ParseInterceptRequest(data)
	if err != nil {
		b.Fatal(err)
	}
	ev := &req.Params.Event
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	evMap := m["params"].(map[string]any)["event"]
	b.Run("gen.EncodeEvent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := gen.EncodeEvent(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=json.Marshal-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(evMap); err != nil {
				b.Fatal(err)
			}
		}
	})
}
