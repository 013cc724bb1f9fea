package content_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/content"
)

// A lazy attachment uploaded to two subscriptions: the loader runs once,
// each subscription gets its own verified reference, and the event carries
// only {ref}.
func ExampleUploader_UploadAll() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"ref":"img%s","size":%d,"sha256":"%x"}`, r.URL.Path, n, h.Sum(nil))
	}))
	defer receiver.Close()

	opens := 0
	a, err := content.Lazy("image/png", func(context.Context) (io.ReadCloser, error) {
		opens++
		return io.NopCloser(strings.NewReader("\x89PNG...")), nil
	}, nil)
	if err != nil {
		panic(err)
	}
	defer a.Close() // the creator owns the attachment

	// The receiver of this example is a plain http loopback server: an
	// explicitly configured loopback test.
	u, err := content.NewUploader(content.UploaderConfig{AllowLoopbackHTTP: true})
	if err != nil {
		panic(err)
	}
	defer u.CloseIdleConnections()
	upload := func(path string, sub int) content.Job {
		return content.Job{Attachment: a, Destination: content.Destination{
			BackendID: "policy", SubscriptionIndex: sub,
			Upload: gen.ContentUpload{Endpoint: receiver.URL + path, TimeoutMs: "5000", MaxBytes: "1048576"},
		}}
	}
	var cache content.Cache
	for _, o := range u.UploadAll(context.Background(), &cache, []content.Job{upload("/a", 0), upload("/b", 1)}) {
		if o.Err != nil {
			panic(o.Err)
		}
		body, _ := o.Confirmation.Reference.MarshalJSON()
		sum := sha256.Sum256([]byte("\x89PNG..."))
		fmt.Println(string(body), o.Confirmation.Receipt.SHA256 == hex.EncodeToString(sum[:]))
	}
	fmt.Println("loader calls:", opens, "cached:", cache.Len())
	// Output:
	// {"ref":"img/a"} true
	// {"ref":"img/b"} true
	// loader calls: 1 cached: 2
}
