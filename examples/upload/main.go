// Command upload is a harness that hands a binary report to an archiving
// backend through the content upload binding, on real loopback HTTP:
//
//   - the report is streamed: content.FromStream over a pipe that a
//     producer goroutine writes. The SDK reads the stream once, and only
//     because a receiver selects the attachment's body;
//
//   - a metadata receiver (the auditor) sees the attachment part's media
//     type but no reference, and never causes a read: the first call, which
//     only the auditor matches, releases the stream unread;
//
//   - the upload has its own credential: the subscription's upload binding
//     names its own tokenEnv, and the event endpoint and the upload
//     receiver each accept only their own token (neither ever sees the
//     other's);
//
//   - the receiver (server.UploadReceiver) verifies size and SHA-256
//     through EOF before it commits the bytes to storage the application
//     owns (examples/internal/fsstore, in a temporary directory here) and
//     answers with a receipt, which the SDK checks against the bytes it
//     sent before the event carries the receiver's {"ref"}; the archiver
//     then resolves that ref in its scope and checks the stored bytes
//     against the receipt;
//
//   - the Result keeps the attachment: the host reads the same bytes after
//     Hooks.Close, then releases them with Result.Close.
//
//     go run ./examples/upload
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/examples/internal/fsstore"
	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/server"
)

// The environment variables the registration's tokenEnv bindings name. In
// production the deployment sets them; main fills unset ones with random
// values so that the example runs on its own.
const (
	eventTokenEnv  = "AHP_EXAMPLE_EVENT_TOKEN"  // the event endpoints' bearer token
	uploadTokenEnv = "AHP_EXAMPLE_UPLOAD_TOKEN" // the upload endpoint's bearer token
)

// uploadScope is the receiver's authorization scope for the upload token's
// principal. The archiver maps its authenticated event sender to the same
// scope to resolve references: refs are never authorization claims.
const uploadScope = "archive-uploads"

func main() {
	for _, name := range []string{eventTokenEnv, uploadTokenEnv} {
		if os.Getenv(name) == "" {
			_ = os.Setenv(name, randomToken())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := run(ctx, os.Stdout, os.LookupEnv, nil); err != nil {
		fmt.Fprintln(os.Stderr, "upload:", err)
		os.Exit(1)
	}
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// summary is what the endpoints saw.
type summary struct {
	mu         sync.Mutex
	eventAuth  []string // the Authorization of every event request
	uploadAuth []string // the Authorization of every upload request
	audit      []string // the attachment arms the auditor saw
	archived   []string // what the archiver resolved
}

func (s *summary) add(list *[]string, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, v)
}

// report returns the binary report: a PDF header and 256 KiB of
// deterministic bytes.
func report() []byte {
	r := mrand.NewChaCha8([32]byte{'a', 'h', 'p'})
	data := make([]byte, 256<<10)
	_, _ = r.Read(data)
	return append([]byte("%PDF-1.7\n"), data...)
}

// stream is a report streamed through a pipe by a producer goroutine.
type stream struct {
	a        *content.Attachment
	read     atomic.Int64 // bytes the SDK read
	produced sync.WaitGroup
}

type countingReader struct {
	r io.ReadCloser
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c countingReader) Close() error { return c.r.Close() }

func newStream(data []byte) (*stream, error) {
	pr, pw := io.Pipe()
	s := &stream{}
	s.produced.Add(1)
	go func() {
		defer s.produced.Done()
		_, err := pw.Write(data) // fails with io.ErrClosedPipe if the stream is released unread
		_ = pw.CloseWithError(err)
	}()
	a, err := content.FromStream("application/pdf", countingReader{pr, &s.read}, content.WithMaxBytes(1<<20))
	if err != nil {
		_ = pr.Close()
		s.produced.Wait()
		return nil, err
	}
	s.a = a
	return s, nil
}

// withToken serves h to requests that carry exactly "Bearer " + token,
// recording every Authorization it gets.
func withToken(token string, seen func(string), h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		seen(authz)
		if len(r.Header.Values("Authorization")) != 1 || subtle.ConstantTimeCompare([]byte(authz), []byte("Bearer "+token)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// attachmentParts returns the attachment parts of messages.
func attachmentParts(items []gen.ModelVisibleItem) []gen.ContentItem {
	var out []gen.ContentItem
	for _, m := range items {
		for _, p := range m.Parts {
			if p.AttachmentBodyPart != nil || p.AttachmentMetadataPart != nil || p.AttachmentGapPart != nil || p.AttachmentOmittedPart != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// prompt is a user message with the report as its attachment part
// "report", whose bytes come from WithAttachment.
func prompt() []gen.ModelVisibleItem {
	return []gen.ModelVisibleItem{{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{
		{TextBodyPart: &gen.TextBodyPart{ID: "m1-text", Text: "Quarterly report attached."}},
		{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "report", MediaType: "application/pdf"}},
	}}}
}

func run(ctx context.Context, out io.Writer, env func(string) (string, bool), logger *slog.Logger) (*summary, error) {
	eventToken, ok1 := env(eventTokenEnv)
	uploadToken, ok2 := env(uploadTokenEnv)
	if !ok1 || !ok2 || eventToken == "" || uploadToken == "" {
		return nil, errors.New("set " + eventTokenEnv + " and " + uploadTokenEnv)
	}
	sum := &summary{}

	// The receiver application's storage: a directory it owns.
	dir, err := os.MkdirTemp("", "ahp-upload-example")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := fsstore.New(dir)
	if err != nil {
		return nil, err
	}
	receiver := &server.UploadReceiver{Storage: store, Logger: logger, Authorize: func(r *http.Request) (string, error) {
		// The scope comes from the verified credential (checked by
		// withToken), never from event ids or refs.
		return uploadScope, nil
	}}
	if err := receiver.Validate(); err != nil {
		return nil, err
	}

	// The archiver resolves its own reference and checks the stored bytes
	// against the receipt the receiver committed with them.
	archive := &server.Handler{Logger: logger, Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		ev := req.Params.Event.ContextCompactBefore
		if ev == nil {
			return server.InterceptResult{}, errors.New("archive: not context.compact.before")
		}
		for _, p := range attachmentParts(ev.Items) {
			if p.AttachmentBodyPart == nil {
				return server.InterceptResult{}, errors.New("archive: an attachment without its body")
			}
			rc, receipt, err := receiver.Open(ctx, uploadScope, p.AttachmentBodyPart.Body.Ref)
			if err != nil {
				return server.InterceptResult{}, err
			}
			data, err := io.ReadAll(rc) // fails with server.ErrCorrupt if the stored bytes changed
			_ = rc.Close()
			if err != nil {
				return server.InterceptResult{}, err
			}
			digest := sha256.Sum256(data)
			verified := int64(len(data)) == receipt.Size && hex.EncodeToString(digest[:]) == receipt.SHA256
			sum.add(&sum.archived, fmt.Sprintf("%s %d bytes, receipt verified=%t", p.AttachmentBodyPart.MediaType, len(data), verified))
		}
		return server.InterceptResult{}, nil
	}}
	// The auditor records which arm of each attachment part it got.
	audit := &server.Handler{Logger: logger, Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
		var items []gen.ModelVisibleItem
		switch ev := &n.Params.Event; {
		case ev.TurnStart != nil:
			items = ev.TurnStart.Items
		case ev.ContextCompactBefore != nil:
			items = ev.ContextCompactBefore.Items
		}
		for _, p := range attachmentParts(items) {
			switch {
			case p.AttachmentMetadataPart != nil:
				sum.add(&sum.audit, n.Params.Event.Type()+": metadata "+p.AttachmentMetadataPart.MediaType)
			default:
				sum.add(&sum.audit, n.Params.Event.Type()+": not metadata")
			}
		}
		return nil
	}}
	for _, h := range []*server.Handler{archive, audit} {
		if err := h.Validate(); err != nil {
			return nil, err
		}
	}
	seenEvent := func(a string) { sum.add(&sum.eventAuth, a) }
	mux := http.NewServeMux()
	mux.Handle("/ahp/archive", withToken(eventToken, seenEvent, archive))
	mux.Handle("/ahp/audit", withToken(eventToken, seenEvent, audit))
	mux.Handle("/upload", withToken(uploadToken, func(a string) { sum.add(&sum.uploadAuth, a) }, receiver))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := server.NewHTTPServer(ln.Addr().String(), mux)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Shutdown(context.Background())
		<-served
	}()
	base := "http://" + ln.Addr().String()

	registration := []byte(`{
	  "protocolVersion": "draft",
	  "hooks": [{
	    "id": "com.example.archive",
	    "transport": {"type": "http", "url": "` + base + `/ahp/archive"},
	    "authentication": {"type": "bearer", "tokenEnv": "` + eventTokenEnv + `"},
	    "subscriptions": [{
	      "events": ["context.compact.before"], "mode": "intercept",
	      "timeoutMs": 5000, "failurePolicy": "fail-closed",
	      "content": {"default": "body"},
	      "upload": {"endpoint": "` + base + `/upload", "timeoutMs": 5000, "maxBytes": 1048576,
	        "auth": {"type": "bearer", "tokenEnv": "` + uploadTokenEnv + `"}}
	    }]
	  }, {
	    "id": "com.example.audit",
	    "transport": {"type": "http", "url": "` + base + `/ahp/audit"},
	    "authentication": {"type": "bearer", "tokenEnv": "` + eventTokenEnv + `"},
	    "subscriptions": [{
	      "events": ["turn.start", "context.compact.before"], "mode": "observe",
	      "content": {"default": "metadata"}
	    }]
	  }]
	}`)
	h, err := hooks.New(registration, hooks.Config{
		Source: "urn:example:upload",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventTurnStart:            hooks.Observe(),
			gen.EventContextCompactBefore: hooks.Intercept().Deny(),
		},
		AuthProvider:             auth.EnvironmentProvider{LookupEnv: env},
		AllowLoopbackHTTPUploads: true, // the upload endpoint is plain http on loopback: an explicit local setup
		Logger:                   logger,
	})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	data := report()
	digest := sha256.Sum256(data)

	// Call 1: only the auditor (metadata) matches turn.start. The stream is
	// never read; closing the Result releases it unread, and the producer
	// sees the pipe closed.
	s1, err := newStream(data)
	if err != nil {
		return nil, err
	}
	res, err := h.TurnStart(ctx, hooks.TurnStartInput{Turn: gen.ExecutionEventTurn{ID: "turn-1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser, Items: prompt()},
		hooks.WithAttachment("report", s1.a))
	if err != nil {
		s1.produced.Wait() // the call closed the stream
		return nil, err
	}
	if err := res.Close(); err != nil {
		return nil, err
	}
	s1.produced.Wait()
	fmt.Fprintf(out, "turn.start: diagnostics=%d, stream bytes read=%d\n", len(res.Diagnostics), s1.read.Load())

	// Call 2: the archiver selects the body: the stream is read once, the
	// bytes are uploaded with the upload token and the receipt is checked,
	// then the archiver gets its own {"ref"}.
	s2, err := newStream(data)
	if err != nil {
		return nil, err
	}
	res, err = h.ContextCompactBefore(ctx, hooks.ContextCompactBeforeInput{Trigger: gen.ExecutionEventContextCompactBeforeTriggerAuto, Items: prompt(),
		Instructions: gen.TextParts{{Body: &gen.TextBodyPart{ID: "instr", Text: "Keep the decisions."}}}},
		hooks.WithAttachment("report", s2.a))
	if err != nil {
		s2.produced.Wait()
		return nil, err
	}
	defer s2.produced.Wait()
	defer res.Close()
	fmt.Fprintf(out, "context.compact.before: permission=%s diagnostics=%d, stream bytes read=%d of %d\n", res.Permission, len(res.Diagnostics), s2.read.Load(), len(data))
	if res.Permission != gen.PermissionNone || len(res.Diagnostics) != 0 {
		return sum, errors.New("the archiver did not get the report")
	}

	// The Result keeps the attachment after the harness is gone.
	if err := h.Close(); err != nil {
		return nil, err
	}
	snap, err := res.Attachments().Read(ctx, "report")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "result after Close: %d bytes, sha256 matches=%t, ref in the result=%s\n", snap.Size(), snap.SHA256() == hex.EncodeToString(digest[:]), res.Attachments().All()[0].Ref)

	sum.mu.Lock()
	defer sum.mu.Unlock()
	fmt.Fprintf(out, "archive: %s\n", strings.Join(sum.archived, "; "))
	fmt.Fprintf(out, "audit: %s\n", strings.Join(sum.audit, "; "))
	fmt.Fprintf(out, "credentials: event requests=%d all with the event token=%t, uploads=%d all with the upload token=%t\n",
		len(sum.eventAuth), all(sum.eventAuth, "Bearer "+eventToken), len(sum.uploadAuth), all(sum.uploadAuth, "Bearer "+uploadToken))
	committed, _ := filepath.Glob(filepath.Join(dir, "scopes", "*", "*.json"))
	staging, _ := filepath.Glob(filepath.Join(dir, "staging", "*"))
	fmt.Fprintf(out, "storage (the application's directory): committed=%d staging=%d\n", len(committed), len(staging))
	return sum, nil
}

// all reports whether every value is want (and there is one).
func all(values []string, want string) bool {
	for _, v := range values {
		if v != want {
			return false
		}
	}
	return len(values) > 0
}
