package server

import (
	"net/http"
	"time"
)

// The timeouts that [NewHTTPServer] sets. Each bounds how long a peer can
// hold a connection, its goroutine and its buffers without making progress.
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, headers and body
	// (up to [Handler.MaxBodyBytes]).
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds a request from the end of its headers to
	// the end of its response: reading the body, the callback and writing
	// the answer. A callback that needs longer than this (less the time to
	// read the body) needs a longer WriteTimeout.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds how long a keep-alive connection waits for
	// its next request.
	DefaultIdleTimeout = 2 * time.Minute
)

// NewHTTPServer returns an *http.Server for addr and h with
// [DefaultReadHeaderTimeout], [DefaultReadTimeout], [DefaultWriteTimeout] and
// [DefaultIdleTimeout] set; the other fields are net/http's defaults. It
// does not listen: call ListenAndServe (or Serve with a listener of your
// own) and Shutdown. Change any field before serving; a zero timeout means
// none, which is what http.ListenAndServe and a bare http.Server give and
// what a backend reachable by untrusted clients should not use (see the
// package documentation).
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		WriteTimeout:      DefaultWriteTimeout,
		IdleTimeout:       DefaultIdleTimeout,
	}
}
