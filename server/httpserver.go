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

// DefaultMaxHeaderBytes is the MaxHeaderBytes that [NewHTTPServer] sets:
// the request line and headers of one request, 64 KiB (net/http's own
// default is 1 MiB). An AHP request needs far less, a bearer token
// included; a request whose headers exceed it is answered 431 before the
// Handler runs. net/http reads up to 4 KiB beyond it before refusing, so a
// request's header buffer is bounded by about 68 KiB plus the parsed
// header map.
const DefaultMaxHeaderBytes = 64 << 10

// NewHTTPServer returns an *http.Server for addr and h with
// [DefaultReadHeaderTimeout], [DefaultReadTimeout], [DefaultWriteTimeout],
// [DefaultIdleTimeout] and [DefaultMaxHeaderBytes] set; the other fields are
// net/http's defaults. It
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
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}
