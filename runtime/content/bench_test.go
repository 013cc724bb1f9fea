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
	"sort"
	"testing"
	"time"

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

// rawPost is the baseline: the digest computed, the bytes posted with the
// upload framing, the response read.
func rawPost(tb testing.TB, client *http.Client, url string, data []byte) {
	sum := sha256.Sum256(data)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("AHP-Content-SHA256", hex.EncodeToString(sum[:]))
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || len(body) == 0 {
		tb.Fatal("upload failed")
	}
}

// ownedUpload is the package's path: a new owned attachment (one copy),
// hashed once, posted from its snapshot, the receipt verified.
func ownedUpload(tb testing.TB, u *content.Uploader, d content.Destination, data []byte) {
	a, err := content.FromBytes("application/octet-stream", data)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := u.Upload(context.Background(), a, d); err != nil {
		tb.Fatal(err)
	}
	_ = a.Close()
}

func newBenchClient() (*http.Client, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: tr}, tr
}

// BenchmarkUpload4MiB compares a 4 MiB upload through the package (a new
// owned attachment per upload: copy, hash once, POST from the snapshot,
// verify the receipt) with the floor: a raw net/http POST of the same bytes
// with the digest computed and the response read (raw), and the same floor
// posting a fresh copy of the bytes (raw-copy). alloc/size is the bytes
// allocated per upload over the attachment size.
func BenchmarkUpload4MiB(b *testing.B) {
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	srv := benchReceiver()
	defer srv.Close()
	b.Run("raw", func(b *testing.B) {
		client, tr := newBenchClient()
		defer tr.CloseIdleConnections()
		rawPost(b, client, srv.URL+"/upload", data) // warm: the connection is open
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ResetTimer()
		for range b.N {
			rawPost(b, client, srv.URL+"/upload", data)
		}
		b.StopTimer()
		reportAllocRatio(b, &ms, len(data))
	})

	// The same baseline posting a fresh copy of the bytes each time: the
	// copy an owned attachment makes by contract (FromBytes never keeps the
	// caller's slice), and nothing else of the package.
	b.Run("raw-copy", func(b *testing.B) {
		client, tr := newBenchClient()
		defer tr.CloseIdleConnections()
		rawPost(b, client, srv.URL+"/upload", data)
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ResetTimer()
		for range b.N {
			rawPost(b, client, srv.URL+"/upload", bytes.Clone(data))
		}
		b.StopTimer()
		reportAllocRatio(b, &ms, len(data))
	})

	b.Run("content", func(b *testing.B) {
		client, tr := newBenchClient()
		defer tr.CloseIdleConnections()
		u, err := content.NewUploader(content.UploaderConfig{HTTPClient: client, AllowLoopbackHTTP: true})
		if err != nil {
			b.Fatal(err)
		}
		d := dest(srv.URL + "/upload")
		ownedUpload(b, u, d, data) // warm: the connection is open, the receipt schema compiled
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ResetTimer()
		for range b.N {
			ownedUpload(b, u, d, data)
		}
		b.StopTimer()
		reportAllocRatio(b, &ms, len(data))
	})
}

// BenchmarkUpload4MiBAdopt is the package's path for a buffer the caller
// hands over (Adopt: no copy), beside the same raw baseline.
func BenchmarkUpload4MiBAdopt(b *testing.B) {
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	srv := benchReceiver()
	defer srv.Close()
	client, tr := newBenchClient()
	defer tr.CloseIdleConnections()
	u, err := content.NewUploader(content.UploaderConfig{HTTPClient: client, AllowLoopbackHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	d := dest(srv.URL + "/upload")
	upload := func() {
		a, err := content.Adopt("application/octet-stream", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := u.Upload(context.Background(), a, d); err != nil {
			b.Fatal(err)
		}
		_ = a.Close()
	}
	upload()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ResetTimer()
	for range b.N {
		upload()
	}
	b.StopTimer()
	reportAllocRatio(b, &ms, len(data))
}

// BenchmarkUpload4MiBInterleaved runs the baseline and the package's upload
// alternately, one each per iteration over the same connection pool and
// server, and reports the median of the per-iteration ratios
// (content/raw): on a shared machine whose load moves between two
// consecutive benchmarks this is the steadier comparison.
func BenchmarkUpload4MiBInterleaved(b *testing.B) {
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	srv := benchReceiver()
	defer srv.Close()
	client, tr := newBenchClient()
	defer tr.CloseIdleConnections()
	u, err := content.NewUploader(content.UploaderConfig{HTTPClient: client, AllowLoopbackHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	d := dest(srv.URL + "/upload")
	rawPost(b, client, srv.URL+"/upload", data)
	ownedUpload(b, u, d, data)
	ratios := make([]float64, 0, b.N)
	var rawTotal, contentTotal time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		rawPost(b, client, srv.URL+"/upload", data)
		t1 := time.Now()
		ownedUpload(b, u, d, data)
		t2 := time.Now()
		rawTotal += t1.Sub(t0)
		contentTotal += t2.Sub(t1)
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(float64(rawTotal.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(contentTotal.Nanoseconds())/float64(b.N), "content-ns/op")
}
