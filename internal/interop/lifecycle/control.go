package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/server"
)

// maxControlBody bounds a control request body.
const maxControlBody = 1 << 16

// decodeControl reads a small JSON control body into v.
func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, maxControlBody)).Decode(v); err != nil {
		http.Error(w, "body must be a JSON object", http.StatusBadRequest)
		return false
	}
	return true
}

var okBody = []byte(`{"ok":true}`)

// controlHandler is the loopback test-control endpoint (LIFECYCLE.md,
// "Fixtures / control"): POST /wait, /release, /mark, /wait-observed,
// /shutdown; GET /receipts, /health. /release {id} is sticky (every
// arrival of id, retries included); this adapter's optional count
// releases only the first count arrivals, so that the later interceptors
// of a chain (the same id, serially) can be held. Waits are bounded by holdLimit and
// by the server's life; a wait that gives up answers 504.
func (s *lcServer) controlHandler(stop func()) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		interop.WriteJSON(w, http.StatusOK, []byte(`{"ready":true}`))
	})
	mux.HandleFunc("GET /receipts", func(w http.ResponseWriter, _ *http.Request) {
		body, err := json.Marshal(s.st.snapshot())
		if err != nil {
			http.Error(w, "", http.StatusInternalServerError)
			return
		}
		interop.WriteJSON(w, http.StatusOK, body)
	})
	wait := func(w http.ResponseWriter, r *http.Request, n int, match func(*Receipt) bool) {
		ctx, cancel := context.WithTimeout(s.ctx, holdLimit)
		defer cancel()
		stopReq := context.AfterFunc(r.Context(), cancel)
		defer stopReq()
		if err := s.st.wait(ctx, n, match); err != nil {
			http.Error(w, "wait gave up", http.StatusGatewayTimeout)
			return
		}
		interop.WriteJSON(w, http.StatusOK, okBody)
	}
	mux.HandleFunc("POST /wait", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ID    string `json:"id"`
			Count int    `json:"count"`
		}
		if !decodeControl(w, r, &in) || in.ID == "" {
			return
		}
		wait(w, r, max(in.Count, 1), func(e *Receipt) bool { return e.Kind == KindReceived && e.ID == in.ID })
	})
	mux.HandleFunc("POST /wait-observed", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			EventID string `json:"eventId"`
			Count   int    `json:"count"`
		}
		if !decodeControl(w, r, &in) || in.EventID == "" {
			return
		}
		wait(w, r, max(in.Count, 1), func(e *Receipt) bool { return e.Kind == KindObserved && e.EventID == in.EventID })
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ID    string `json:"id"`
			Count int    `json:"count"`
		}
		if !decodeControl(w, r, &in) || in.ID == "" {
			return
		}
		s.st.release(in.ID, in.Count)
		interop.WriteJSON(w, http.StatusOK, okBody)
	})
	mux.HandleFunc("POST /mark", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Scenario string `json:"scenario"`
			Kind     string `json:"kind"`
			ID       string `json:"id"`
		}
		if !decodeControl(w, r, &in) {
			return
		}
		if !markKinds[in.Kind] || in.ID == "" {
			http.Error(w, "unknown mark", http.StatusBadRequest)
			return
		}
		s.st.add(Receipt{Kind: in.Kind, ID: in.ID, Scenario: in.Scenario})
		interop.WriteJSON(w, http.StatusOK, okBody)
	})
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		interop.WriteJSON(w, http.StatusOK, okBody)
		stop()
	})
	return mux
}

// bufferedWriter holds the upload receiver's answer until its receipt is
// recorded, so that the receipt precedes anything the uploader does next.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// uploadHandler is the content receiver at /upload (content-upload.md),
// recording one upload receipt per request: the receiver's verified
// {ref, size, sha256} for a 201, the declared framing and the actual status
// otherwise. The subscription is the scope the credential was authorized
// for (null when it was not).
func (s *lcServer) uploadHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		rec := &bufferedWriter{header: http.Header{}}
		s.uploads.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		e := Receipt{Kind: KindUpload, Status: rec.status}
		if rec.status == http.StatusCreated {
			var rc struct {
				Ref    string `json:"ref"`
				Size   int64  `json:"size"`
				SHA256 string `json:"sha256"`
			}
			if err := json.Unmarshal(rec.body.Bytes(), &rc); err == nil {
				e.Ref, e.Size, e.SHA256 = &rc.Ref, rc.Size, rc.SHA256
			}
		} else {
			e.Size, _ = strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64)
			e.SHA256 = r.Header.Get(server.UploadSHA256Header)
		}
		if rec.status != http.StatusUnauthorized && s.scope != "" {
			scope := s.scope
			e.Subscription = &scope
		}
		s.st.add(e)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
	return mux
}
