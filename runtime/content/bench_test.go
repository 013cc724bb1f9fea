package content_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/content"
)

// benchReceiver hashes the body as it arrives and answers a receipt: the
// same server for both benchmarks.
func benchReceiver() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"ref":"bench","size":%d,"sha256":"%s"}`, n, hex.EncodeToString(h.Sum(nil)))
	}))
}

// reportAllocRatio reports the bytes allocated per operation relative to
// the attachment size (1.0 = one copy of the attachment).
func reportAllocRatio(b *testing.B, before *runtime.MemStats, size int) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "alloc/size")
}

// BenchmarkUpload4MiB compares a 4 MiB upload through the package (a new
// owned attachment per upload: copy, hash once, POST from the snapshot,
// verify the receipt) with the floor: a raw net/http POST of the same bytes
// with the digest computed and the response read.
func BenchmarkUpload4MiB(b *testing.B) {
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	srv := benchReceiver()
	defer srv.Close()
	newClient := func() (*http.Client, *http.Transport) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		return &http.Client{Transport: tr}, tr
	}

	b.Run("raw", func(b *testing.B) {
		client, tr := newClient()
		defer tr.CloseIdleConnections()
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ResetTimer()
		for range b.N {
			sum := sha256.Sum256(data)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/upload", bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/octet-stream")
			req.Header.Set("AHP-Content-SHA256", hex.EncodeToString(sum[:]))
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusCreated || len(body) == 0 {
				b.Fatal("upload failed")
			}
		}
		b.StopTimer()
		reportAllocRatio(b, &ms, len(data))
	})

	b.Run("content", func(b *testing.B) {
		client, tr := newClient()
		defer tr.CloseIdleConnections()
		u, err := content.NewUploader(content.UploaderConfig{HTTPClient: client})
		if err != nil {
			b.Fatal(err)
		}
		d := dest(srv.URL + "/upload")
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ResetTimer()
		for range b.N {
			a, err := content.FromBytes("application/octet-stream", data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := u.Upload(context.Background(), a, d); err != nil {
				b.Fatal(err)
			}
			_ = a.Close()
		}
		b.StopTimer()
		reportAllocRatio(b, &ms, len(data))
	})
}
