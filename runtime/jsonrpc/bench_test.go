package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func benchmarkInput(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "http", "intercept-request.valid.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkClassify(b *testing.B) {
	data := benchmarkInput(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := Classify(data)
		if err != nil || env.Kind != KindRequest {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONUnmarshalMap(b *testing.B) {
	data := benchmarkInput(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	id := StringID("evt_http_001")
	result := []byte(`{"protocolVersion":"draft","effects":[{"type":"deny","reason":"Force pushes are prohibited."}]}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], id, result)
	}
}
