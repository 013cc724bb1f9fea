package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFastPathInterceptRequest compares, on the intercept request
// fixture, Validate with the fast path, the same validation with v6 only,
// and the raw baselines: parsing onto a tape alone, the fast check of a
// parsed tape alone, decoding into a tree (what v6 needs) and
// json.Unmarshal into a map.
func BenchmarkFastPathInterceptRequest(b *testing.B) {
	doc, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	if err != nil {
		b.Fatal(err)
	}
	const ref = "intercept-request.schema.json"
	v, err := newValidator(true)
	if err != nil {
		b.Fatal(err)
	}
	key, sch, err := v.schema(ref)
	if err != nil {
		b.Fatal(err)
	}
	fast := v.fastSchema(key)
	tp := new(tape)
	if !tp.parse(doc) || !fast.validTape(tp) {
		b.Fatal("fast path does not accept the fixture")
	}

	b.Run("Validate/fastpath", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(ref, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Validate/v6only", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			value, derr := decode(doc)
			if derr != nil {
				b.Fatal(derr)
			}
			if err := check(key, sch, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if !tp.parse(doc) {
				b.Fatal("parse failed")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, derr := decode(doc); derr != nil {
				b.Fatal(derr)
			}
		}
	})
	b.Run("fastcheck", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !fast.validTape(tp) {
				b.Fatal("rejected")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(doc, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
