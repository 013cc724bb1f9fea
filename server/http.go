package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

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
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	limit := h.maxBody()
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}

	res := h.dispatch(r.Context(), body)
	switch res.out {
	case outReply:
		// What Header.Set does with these canonical keys, with the three
		// values in one allocation. Each value slice has its own capacity
		// of one, so appending to one of them leaves the others alone.
		vals := &[3]string{"application/json", "nosniff", "no-store"}
		hdr := w.Header()
		hdr["Content-Type"] = vals[0:1:1]
		hdr["X-Content-Type-Options"] = vals[1:2:2]
		hdr["Cache-Control"] = vals[2:3:3]
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
// grows with the bytes received (see [firstReadBytes]).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n < limit {
		// Reading n+1 <= limit bytes never reaches the limit, so the
		// MaxBytesReader of the general case would only pass the reads
		// through and close the body.
		defer r.Body.Close()
		return readDeclared(r.Body, n)
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	defer rd.Close()
	if n := r.ContentLength; n >= 0 && n <= limit {
		return readDeclared(rd, n)
	}
	// Unknown length: the MaxBytesReader reports a body over the limit.
	b, err := boundedread.ReadAtMost(rd, boundedread.PlusOne(limit), firstReadUnknown)
	if err == nil && int64(len(b)) > limit {
		err = &http.MaxBytesError{Limit: limit}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
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
