package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/internal/boundedread"
)

// ServeHTTP implements http.Handler for the AHP HTTP binding
// (base/transports/http.md, AHP-HTTP-001): one JSON-RPC object per POST,
// answered with at most one JSON-RPC response. See the package
// documentation for the status codes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h == nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	// r.Header.Get of a canonical key, without canonicalizing it.
	contentType := ""
	if v := r.Header["Content-Type"]; len(v) > 0 {
		contentType = v[0]
	}
	if !isJSONContentType(contentType) {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	limit := h.maxBody()
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	body, pooled, err := readBody(w, r, limit)
	if err != nil {
		putBody(pooled)
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}

	res := h.dispatch(r.Context(), body)
	// Nothing the dispatcher returns or hands on aliases the message: the
	// callbacks get decoded copies, replies and log attributes are built
	// from their own memory.
	putBody(pooled)
	switch res.out {
	case outReply:
		// What Header.Set does with its canonical key. The reply carries
		// no other header of ours: Cache-Control: no-store would repeat
		// what HTTP already says of a POST response without explicit
		// freshness and Content-Location (not stored; RFC 9110, section
		// 9.3.3), and X-Content-Type-Options: nosniff guards responses that
		// a browser loads as a script or style, which is never a POST
		// answer (a GET gets 405 without a body). Each header costs the
		// two sides of a round trip about 3.7k instructions to write,
		// parse and store. UploadReceiver's receipts keep both.
		hdr := w.Header()
		hdr["Content-Type"] = []string{"application/json"}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(res.body)
	case outAccepted:
		w.WriteHeader(http.StatusNoContent)
	case outFailed:
		w.WriteHeader(http.StatusInternalServerError)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// isJSONContentType reports whether a request Content-Type is
// application/json; a charset parameter, if any, must be utf-8 (AHP-RPC-001).
func isJSONContentType(v string) bool {
	if v == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// firstReadBytes is the most a request body buffer starts with, whatever
// Content-Length declares; from there it doubles as bytes arrive, up to the
// declared length plus one or the limit plus one. A smaller body gets one
// buffer of exactly its declared length plus one (the hot path); a client
// that declares 4 MiB and sends nothing holds 16 KiB, not 4 MiB.
const firstReadBytes = 16 << 10

// firstReadUnknown is the first buffer of a body of unknown length
// (chunked), as bytes.Buffer's MinRead.
const firstReadUnknown = 512

// readBody reads the request body, at most limit bytes, into a buffer that
// grows with the bytes received (see [firstReadBytes]). A body declared
// shorter than firstReadBytes is read into a buffer of bodyPool, returned
// as pooled too, which the caller gives back with putBody once nothing
// uses the body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, pooled *[]byte, err error) {
	if n := r.ContentLength; n >= 0 && n < limit {
		// Reading n+1 <= limit bytes never reaches the limit, so the
		// MaxBytesReader of the general case would only pass the reads
		// through and close the body.
		defer r.Body.Close()
		if n < firstReadBytes {
			return readPooled(r.Body, n)
		}
		body, err = readDeclared(r.Body, n)
		return body, nil, err
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	defer rd.Close()
	if n := r.ContentLength; n >= 0 && n <= limit {
		body, err = readDeclared(rd, n)
		return body, nil, err
	}
	// Unknown length: the MaxBytesReader reports a body over the limit.
	b, err := boundedread.ReadAtMost(rd, boundedread.PlusOne(limit), firstReadUnknown)
	if err == nil && int64(len(b)) > limit {
		err = &http.MaxBytesError{Limit: limit}
	}
	if err != nil {
		return nil, nil, err
	}
	return b, nil, nil
}

// bodyPool holds the buffers of request bodies declared shorter than
// firstReadBytes, as *[]byte: most requests are, and their buffer is
// garbage as soon as the message is dispatched.
var bodyPool sync.Pool

// readPooled is readDeclared (n < firstReadBytes) into a buffer of
// bodyPool, which it returns as pooled, also on failure.
func readPooled(rd io.Reader, n int64) (body []byte, pooled *[]byte, err error) {
	bp, _ := bodyPool.Get().(*[]byte)
	if bp == nil || int64(cap(*bp)) <= n {
		// A buffer of a smaller body is left to the collector; this one
		// takes the larger size from now on.
		b := make([]byte, n+1)
		bp = &b
	}
	buf := (*bp)[:n+1]
	got := 0
	for got < len(buf) {
		m, rerr := rd.Read(buf[got:])
		got += m
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, bp, rerr
		}
	}
	switch {
	case int64(got) > n:
		return nil, bp, errors.New("server: body longer than Content-Length")
	case int64(got) < n:
		return nil, bp, io.ErrUnexpectedEOF
	}
	return buf[:n], bp, nil
}

// putBody gives a buffer of readBody back to bodyPool; nil is ignored.
func putBody(bp *[]byte) {
	if bp != nil {
		bodyPool.Put(bp)
	}
}

// readDeclared reads a body of declared length n, up to n+1 bytes to see the
// end of the body.
func readDeclared(rd io.Reader, n int64) ([]byte, error) {
	buf, err := boundedread.ReadAtMost(rd, boundedread.PlusOne(n), firstReadBytes)
	switch got := int64(len(buf)); {
	case err != nil:
		return nil, err
	case got > n: // more than declared: net/http reports the mismatch
		return nil, errors.New("server: body longer than Content-Length")
	case got < n: // net/http reports io.ErrUnexpectedEOF itself
		return nil, io.ErrUnexpectedEOF
	}
	return buf, nil
}
