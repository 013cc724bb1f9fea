package validate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// BenchmarkScanCheckDoc measures what a backend spends on validating the
// small tool.before intercept request: Scan, CheckDoc of the scanned
// document, both together, both on the same request written compactly
// (as the SDK's host sends it), and the baselines of the same run:
// json.Valid and json.Unmarshal into a map of the same bytes.
func BenchmarkScanCheckDoc(b *testing.B) {
	v := newValidator(b)
	pretty := readFixture(b, "fixtures/draft/http/intercept-request.valid.json")
	var buf bytes.Buffer
	if err := json.Compact(&buf, pretty); err != nil {
		b.Fatal(err)
	}
	compact := buf.Bytes()
	const ref = "intercept-request.schema.json"
	ctx := context.Background()
	both := func(doc []byte) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				d := validate.Scan(ctx, doc)
				if err := v.CheckDoc(ctx, ref, d); err != nil {
					b.Fatal(err)
				}
				d.Release()
			}
		}
	}
	b.Run("Scan", func(b *testing.B) {
		b.SetBytes(int64(len(pretty)))
		b.ReportAllocs()
		for b.Loop() {
			validate.Scan(ctx, pretty).Release()
		}
	})
	b.Run("CheckDoc", func(b *testing.B) {
		d := validate.Scan(ctx, pretty)
		defer d.Release()
		b.ReportAllocs()
		for b.Loop() {
			if err := v.CheckDoc(ctx, ref, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Scan+CheckDoc", both(pretty))
	b.Run("Scan+CheckDoc/compact", both(compact))
	b.Run("baseline/json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(pretty)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(pretty) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("baseline/json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(pretty)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(pretty, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
