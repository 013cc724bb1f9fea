// Command file-attachment is a harness that attaches a screenshot file to
// the model's input without reading it unless a receiver selects its
// bytes, on real loopback HTTP:
//
//   - the attachment is lazy: content.Lazy with a loader that opens the
//     file (each open is counted) and a cleanup that removes it, so the
//     attachment owns the file;
//
//   - call 1 (turn.start): the guard selects images as metadata and the
//     logger omits content. Neither needs the bytes: the file is never
//     opened, and Result.Close still runs the cleanup;
//
//   - call 2 (model.request.before): the vision reviewer selects images as
//     body and has an upload endpoint: the file is opened once, uploaded to
//     the reviewer's receiver, and the reviewer decodes the image it
//     resolves from its own {"ref"};
//
//   - the Result keeps the attachment: after Hooks.Close the host reads the
//     same bytes from it (without opening the file again), then releases it
//     with Result.Close, which removes the file.
//
//     go run ./examples/file-attachment
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "file-attachment:", err)
		os.Exit(1)
	}
}

// screenshot writes a small PNG to a new file in dir.
func screenshot(dir string) (string, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{R: uint8(x * 4), G: uint8(y * 5), B: 128, A: 255})
		}
	}
	f, err := os.CreateTemp(dir, "screenshot-*.png")
	if err != nil {
		return "", err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// fileAttachment is a lazy attachment that owns the file at path: it opens
// it on the first read, and removes it when it is closed.
type fileAttachment struct {
	path    string
	opens   atomic.Int32
	removed atomic.Bool
	a       *content.Attachment
}

func newFileAttachment(path string) (*fileAttachment, error) {
	f := &fileAttachment{path: path}
	a, err := content.Lazy("image/png", func(ctx context.Context) (io.ReadCloser, error) {
		f.opens.Add(1)
		return os.Open(path)
	}, func(ctx context.Context) error {
		f.removed.Store(true)
		return os.Remove(path)
	}, content.WithMaxBytes(1<<20))
	if err != nil {
		return nil, err
	}
	f.a = a
	return f, nil
}

// items is the model input: a user message with the screenshot as its
// attachment part "shot", whose bytes come from WithAttachment.
func items() []gen.ModelVisibleItem {
	return []gen.ModelVisibleItem{{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{
		{TextBodyPart: &gen.TextBodyPart{ID: "m1-text", Text: "Why is this button misaligned?"}},
		{AttachmentBodyPart: &gen.AttachmentBodyPart{ID: "shot", MediaType: "image/png"}},
	}}}
}

// seen records the attachment arms each backend received.
type seen struct {
	mu   sync.Mutex
	arms map[string][]string
}

func (s *seen) add(backend string, items []gen.ModelVisibleItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range items {
		for _, p := range m.Parts {
			switch {
			case p.AttachmentBodyPart != nil:
				s.arms[backend] = append(s.arms[backend], "body")
			case p.AttachmentMetadataPart != nil:
				s.arms[backend] = append(s.arms[backend], "metadata")
			case p.AttachmentOmittedPart != nil:
				s.arms[backend] = append(s.arms[backend], "omitted")
			case p.AttachmentGapPart != nil:
				s.arms[backend] = append(s.arms[backend], "gap")
			}
		}
	}
}

func (s *seen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range []string{"guard", "log", "vision"} {
		out = append(out, b+"="+strings.Join(s.arms[b], ","))
	}
	return strings.Join(out, " ")
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "ahp-file-attachment")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	got := &seen{arms: map[string][]string{}}
	// The vision reviewer's upload receiver and its storage (in memory: an
	// example; a real receiver uses durable storage of its own).
	store := &server.MemoryStorage{}
	receiver := &server.UploadReceiver{Storage: store, Authorize: func(*http.Request) (string, error) {
		return "vision", nil // anonymous uploads, explicitly authorized into one scope
	}}
	if err := receiver.Validate(); err != nil {
		return err
	}
	guard := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		got.add("guard", req.Params.Event.TurnStart.Items)
		return server.InterceptResult{}, nil
	}}
	logger := &server.Handler{Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
		switch ev := &n.Params.Event; {
		case ev.TurnStart != nil:
			got.add("log", ev.TurnStart.Items)
		case ev.ModelRequestBefore != nil:
			got.add("log", ev.ModelRequestBefore.Items)
		}
		return nil
	}}
	vision := &server.Handler{Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
		ev := req.Params.Event.ModelRequestBefore
		got.add("vision", ev.Items)
		for _, m := range ev.Items {
			for _, p := range m.Parts {
				if p.AttachmentBodyPart == nil {
					continue
				}
				rc, _, err := receiver.Open(ctx, "vision", p.AttachmentBodyPart.Body.Ref)
				if err != nil {
					return server.InterceptResult{}, err
				}
				cfg, format, err := image.DecodeConfig(rc)
				_ = rc.Close()
				if err != nil {
					return server.InterceptResult{}, err
				}
				return server.InterceptResult{Effects: []gen.Effect{server.Message(fmt.Sprintf("reviewed a %dx%d %s screenshot", cfg.Width, cfg.Height, format))}}, nil
			}
		}
		return server.InterceptResult{}, errors.New("vision: no image")
	}}
	mux := http.NewServeMux()
	for path, h := range map[string]*server.Handler{"/ahp/guard": guard, "/ahp/log": logger, "/ahp/vision": vision} {
		if err := h.Validate(); err != nil {
			return err
		}
		mux.Handle(path, h)
	}
	mux.Handle("/upload", receiver)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
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
	    "id": "com.example.guard",
	    "transport": {"type": "http", "url": "` + base + `/ahp/guard"},
	    "subscriptions": [{
	      "events": ["turn.start"], "mode": "intercept", "timeoutMs": 5000, "failurePolicy": "fail-closed",
	      "content": {"default": "body", "images": "metadata"}
	    }]
	  }, {
	    "id": "com.example.log",
	    "transport": {"type": "http", "url": "` + base + `/ahp/log"},
	    "subscriptions": [{"events": ["turn.start", "model.request.before"], "mode": "observe", "content": {"default": "omit"}}]
	  }, {
	    "id": "com.example.vision",
	    "transport": {"type": "http", "url": "` + base + `/ahp/vision"},
	    "subscriptions": [{
	      "events": ["model.request.before"], "mode": "intercept", "timeoutMs": 5000, "failurePolicy": "fail-closed",
	      "content": {"default": "metadata", "images": "body"},
	      "upload": {"endpoint": "` + base + `/upload", "timeoutMs": 5000, "maxBytes": 1048576}
	    }]
	  }]
	}`)
	h, err := hooks.New(registration, hooks.Config{
		Source: "urn:example:file-attachment",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventTurnStart:          hooks.Intercept().Deny(),
			gen.EventModelRequestBefore: hooks.Intercept().Deny().Message(),
		},
		AllowLoopbackHTTPUploads: true, // plain http on loopback: an explicit local setup
	})
	if err != nil {
		return err
	}
	defer h.Close()

	// Call 1: nobody selects the image's body. The file is never opened;
	// closing the Result runs the cleanup all the same.
	path, err := screenshot(dir)
	if err != nil {
		return err
	}
	first, err := newFileAttachment(path)
	if err != nil {
		return err
	}
	res, err := h.TurnStart(ctx, hooks.TurnStartInput{Turn: gen.ExecutionEventTurn{ID: "turn-1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser, Items: items()},
		hooks.WithAttachment("shot", first.a))
	if err != nil {
		return err // the call has closed the attachment
	}
	if err := res.Close(); err != nil {
		return err
	}
	_, statErr := os.Stat(path)
	fmt.Fprintf(out, "turn.start: permission=%s opens=%d removed=%t uploads=%d\n", res.Permission, first.opens.Load(), first.removed.Load() && errors.Is(statErr, os.ErrNotExist), store.Len())

	// Call 2: the vision reviewer selects the image's body: one open, one
	// upload, and the reviewer decodes what it resolves from its ref.
	path, err = screenshot(dir)
	if err != nil {
		return err
	}
	original, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	second, err := newFileAttachment(path)
	if err != nil {
		return err
	}
	res, err = h.ModelRequestBefore(ctx, hooks.ModelRequestBeforeInput{Items: items(),
		Model:   gen.ExecutionEventModel{ID: "vision-model", Provider: "example"},
		Attempt: gen.ExecutionEventAttempt{ID: "attempt-1", Number: "1"},
		Params:  json.RawMessage(`{"temperature":0}`)},
		hooks.WithAttachment("shot", second.a))
	if err != nil {
		return err
	}
	defer res.Close()
	fmt.Fprintf(out, "model.request.before: permission=%s messages=%q opens=%d uploads=%d\n", res.Permission, res.Messages, second.opens.Load(), store.Len())

	// After the harness is closed the Result still holds the attachment.
	if err := h.Close(); err != nil {
		return err
	}
	part, _ := res.Attachments().Lookup("shot")
	snap, err := res.Attachments().Read(ctx, "shot")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "after Hooks.Close: read %s (in event=%t): %d bytes, same as the file=%t, opens=%d\n",
		part.Ref, part.InEvent, snap.Size(), bytes.Equal(snap.Bytes(), original), second.opens.Load())
	if err := res.Close(); err != nil {
		return err
	}
	_, statErr = os.Stat(path)
	fmt.Fprintf(out, "after Result.Close: removed=%t\n", second.removed.Load() && errors.Is(statErr, os.ErrNotExist))
	fmt.Fprintf(out, "receivers saw: %s\n", got)
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 0 {
		return errors.New("a screenshot file was left behind")
	}
	return nil
}
