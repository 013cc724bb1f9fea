package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// readDeadliner is implemented by readers whose blocked Read can be
// interrupted: *os.File for pipes and other pollable files, net.Conn.
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// ServeStdio serves h on the AHP stdio binding (base/transports/stdio.md,
// AHP-STDIO-001): it reads one JSON-RPC message per LF-terminated line from
// r, in order, and writes each response as one compact line to w. Nothing
// else is ever written to w; diagnostics go to h.Logger, which must not
// write to w.
//
// Messages are dispatched concurrently, at most h.MaxConcurrency at a time;
// responses are written whole, one line each, in completion order, and the
// harness correlates them by id. A line that is not a message (malformed
// JSON, longer than h.MaxBodyBytes, terminated by CRLF, or a final line
// without LF) is answered with a -32700 parse error with id null, and
// serving continues with the next line. Empty lines are ignored.
// Notifications are never answered.
//
// ServeStdio returns nil at the end of r, after every message read has been
// answered; this serves both the persistent and the process-per-event
// lifecycles. It returns ctx.Err() when ctx ends: callbacks in flight see
// their context canceled and are waited for. A read error or a write error
// (the harness went away) ends serving and is returned wrapped.
//
// Every goroutine ServeStdio starts has ended when it returns, with one
// exception: when ctx ends while a Read on r is blocked and r cannot be
// interrupted (it has no SetReadDeadline method, or it returns an error such
// as os.ErrNoDeadline for a blocking stdin), the goroutine reading r stays
// blocked until that Read returns and then exits without touching w. Pipes
// from os.Pipe and network connections are interrupted; ServeStdio then
// clears the deadline it set.
func ServeStdio(ctx context.Context, r io.Reader, w io.Writer, h *Handler) error {
	if r == nil || w == nil {
		return errors.New("server: ServeStdio: nil reader or writer")
	}
	if err := h.Validate(); err != nil {
		return fmt.Errorf("server: ServeStdio: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	fw := jsonrpc.NewFrameWriter(w)
	fr := jsonrpc.NewFrameReader(r, h.maxFrame())

	type frame struct {
		data []byte
		err  error
	}
	frames := make(chan frame)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			data, err := fr.Next()
			select {
			case frames <- frame{data: data, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil && terminalReadError(err) {
				return
			}
		}
	}()

	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, h.maxConcurrency())
	)
	write := func(b []byte) {
		if err := fw.WriteFrame(b); err != nil {
			cancel(fmt.Errorf("server: stdio: %w", err))
		}
	}
	parseError := jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError))

	var readErr error
loop:
	for {
		var f frame
		select {
		case <-ctx.Done():
			break loop
		case f = <-frames:
		}
		malformed := false
		switch {
		case f.err == nil:
		case errors.Is(f.err, io.EOF):
			break loop
		case errors.Is(f.err, jsonrpc.ErrEmptyFrame):
			continue
		case errors.Is(f.err, jsonrpc.ErrFrameTooLarge),
			errors.Is(f.err, jsonrpc.ErrCRLF),
			errors.Is(f.err, jsonrpc.ErrUnterminatedFrame):
			h.logAttrs(ctx, slog.LevelDebug, "ahp server: malformed stdio line", slog.String("reason", f.err.Error()),
				slog.Int("code", jsonrpc.CodeParseError))
			malformed = true
		default:
			readErr = fmt.Errorf("server: stdio: %w", f.err)
			break loop
		}
		// Malformed lines take a slot too, so that with MaxConcurrency 1
		// every answer follows input order.
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		wg.Add(1)
		go func(msg []byte) {
			defer wg.Done()
			defer func() { <-sem }()
			if malformed {
				write(parseError)
				return
			}
			if res := h.dispatch(ctx, msg); res.out == outReply {
				write(res.body)
			}
		}(f.data)
	}
	wg.Wait()
	cancel(nil) // the reader stops at its next frame

	// Join the reader. One still blocked in Read is interrupted with a read
	// deadline in the past where r allows it; otherwise it is left to exit
	// when that Read returns.
	select {
	case <-readerDone:
	default:
		if dl, ok := r.(readDeadliner); ok && dl.SetReadDeadline(time.Unix(1, 0)) == nil {
			<-readerDone
			_ = dl.SetReadDeadline(time.Time{})
		}
	}

	switch {
	case readErr != nil:
		return readErr
	case parent.Err() != nil:
		return parent.Err()
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// terminalReadError reports whether a FrameReader error ends the stream.
func terminalReadError(err error) bool {
	switch {
	case errors.Is(err, jsonrpc.ErrEmptyFrame),
		errors.Is(err, jsonrpc.ErrFrameTooLarge),
		errors.Is(err, jsonrpc.ErrCRLF),
		errors.Is(err, jsonrpc.ErrUnterminatedFrame):
		return false
	}
	return true
}
