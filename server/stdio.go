package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/internal/framebatch"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// stdioHandoffGrace is how long a message read with no other frame waiting
// is dispatched before reading passes to another goroutine.
const stdioHandoffGrace = 50 * time.Microsecond

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
// harness correlates them by id. A message is dispatched by the goroutine
// that read it: reading passes to a new goroutine at once when another
// frame is already waiting, and otherwise only if the dispatch is still
// running after a short grace (stdioHandoffGrace), so that sequential calls
// are served without a goroutine per message while a callback that blocks
// never stops the next message from being read. With MaxConcurrency 1 they are dispatched
// and answered one after the other in input order. While MaxConcurrency
// messages are being dispatched, r is not read. A line that is not a message
// (malformed JSON, longer than h.MaxBodyBytes, terminated by CRLF, or a final
// line without LF) is answered with a -32700 parse error with id null, and
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
		return fmt.Errorf("%w: ServeStdio: nil reader or writer", ErrInvalidConfig)
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

	s := &stdioServer{
		ctx:        ctx,
		cancel:     cancel,
		h:          h,
		fr:         jsonrpc.NewFrameReader(r, h.maxFrame()),
		fw:         framebatch.New(w),
		max:        h.maxConcurrency(),
		parseError: jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError)),
		finished:   make(chan struct{}),
		quit:       make(chan struct{}),
		reading:    true,
	}
	s.wake = make(chan struct{}, s.max)
	s.cond.L = &s.mu
	go s.work()

	select {
	case <-s.finished:
	case <-ctx.Done():
	}

	// Stop, interrupt a goroutine blocked reading r where r allows it, and
	// wait for the goroutines still dispatching (and for the reader, if it
	// was interrupted). An uninterruptible reader is left to exit when its
	// Read returns.
	s.mu.Lock()
	s.stopLocked()
	dl, interruptible := r.(readDeadliner)
	interrupted := false
	if s.reading && interruptible && dl.SetReadDeadline(time.Unix(1, 0)) == nil {
		interrupted = true
	}
	for s.busy > 0 || s.idle > 0 || (interrupted && s.reading) {
		s.cond.Wait()
	}
	readErr := s.readErr
	s.mu.Unlock()
	if interrupted {
		_ = dl.SetReadDeadline(time.Time{})
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

// stdioServer is the state of one ServeStdio call.
//
// The goroutine that reads a frame also dispatches it and writes its answer,
// so that no message crosses goroutines: having read a frame and taken a
// dispatch slot, it hands the reader over to another goroutine if a slot is
// left and another frame is already buffered; if none is, it dispatches
// with the reader free and a timer that hands it over after
// stdioHandoffGrace. Without a free slot, the first goroutine that finishes
// dispatching takes the reader back, as does a goroutine whose inline
// dispatch ended before the timer. With MaxConcurrency 1 a single
// goroutine reads, dispatches and answers every message in turn.
//
// A goroutine that finishes dispatching while another holds the reader
// stays, idle, until the reader is handed to it or serving stops, so that
// hand-overs under load wake a goroutine whose stack has already grown to
// what dispatching takes instead of starting a new one each time; there are
// at most MaxConcurrency of them. Answers are written through a
// framebatch.Writer: those finished while another is being written go out
// together in one write, made by the goroutine writing, and their own
// goroutines go on at once.
type stdioServer struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	h          *Handler
	fr         *jsonrpc.FrameReader // used only by the goroutine holding the reader
	fw         *framebatch.Writer   // coalesces the answers of concurrent dispatches
	wake       chan struct{}        // hands the reader to an idle goroutine; capacity max
	quit       chan struct{}        // closed when serving stops: idle goroutines exit
	max        int
	parseError []byte

	mu       sync.Mutex
	cond     sync.Cond // signalled, once stopped, when busy or reading change
	reading  bool      // a goroutine holds the reader
	busy     int       // goroutines dispatching a message (slots taken)
	idle     int       // goroutines waiting on wake or quit
	stopped  bool      // no frame is read or dispatched any more
	readErr  error
	finished chan struct{} // closed when stopped, idle and no longer reading
	closed   bool          // finished is closed
}

// work runs a goroutine that starts out holding the reader.
func (s *stdioServer) work() {
	var handoff *time.Timer // hands the reader over during a long inline dispatch
	fired := make(chan struct{}, 1)
	for {
		data, err := s.fr.Next()
		s.mu.Lock()
		if s.stopped || s.ctx.Err() != nil {
			// Serving ended while this frame was being read: it is
			// dropped.
			s.stopLocked()
			s.reading = false
			s.settle()
			s.mu.Unlock()
			return
		}
		malformed := false
		switch {
		case err == nil:
		case errors.Is(err, jsonrpc.ErrEmptyFrame):
			s.mu.Unlock()
			continue
		case errors.Is(err, jsonrpc.ErrFrameTooLarge),
			errors.Is(err, jsonrpc.ErrCRLF),
			errors.Is(err, jsonrpc.ErrUnterminatedFrame):
			// Malformed lines take a slot too, so that with
			// MaxConcurrency 1 every answer follows input order.
			malformed = true
		default:
			if !errors.Is(err, io.EOF) {
				s.readErr = fmt.Errorf("server: stdio: %w", err)
			}
			s.stopLocked()
			s.reading = false
			s.settle()
			s.mu.Unlock()
			return
		}
		s.busy++
		deferred := false
		switch {
		case s.busy >= s.max:
			s.reading = false // taken back when a slot frees
		case s.fr.Buffered() > 0:
			s.passReader() // another frame is waiting: another goroutine reads it
		default:
			// Nothing else is waiting: dispatch inline, and hand the
			// reader over only if the dispatch takes a while.
			s.reading = false
			deferred = true
		}
		s.mu.Unlock()
		if deferred {
			if handoff == nil {
				handoff = time.AfterFunc(stdioHandoffGrace, func() {
					s.handOff()
					fired <- struct{}{}
				})
			} else {
				handoff.Reset(stdioHandoffGrace)
			}
		}

		if malformed {
			s.h.logAttrs(s.ctx, slog.LevelDebug, "ahp server: malformed stdio line", slog.String("reason", err.Error()),
				slog.Int("code", jsonrpc.CodeParseError))
			s.write(s.parseError)
		} else if res := s.h.dispatch(s.ctx, data); res.out == outReply {
			s.write(res.body)
		}
		if deferred && !handoff.Stop() {
			<-fired // the hand-over ran or is running: let it end first
		}

		s.mu.Lock()
		s.busy--
		if s.stopped || s.ctx.Err() != nil {
			s.settle()
			s.mu.Unlock()
			return
		}
		if !s.reading {
			s.reading = true // take the reader back
			s.mu.Unlock()
			continue
		}
		// Another goroutine reads: wait until the reader is handed over
		// to this one, or serving stops.
		s.idle++
		s.mu.Unlock()
		select {
		case <-s.wake: // passReader counted this goroutine out of idle
			continue
		case <-s.quit:
		}
		s.mu.Lock()
		select {
		case <-s.wake:
			// Handed the reader as serving stopped: nobody reads.
			s.reading = false
		default:
			s.idle--
		}
		s.settle()
		s.mu.Unlock()
		return
	}
}

// passReader gives the reader to an idle goroutine, or to a new one if none
// is idle. s.mu is held, serving has not stopped, and the caller holds the
// reader, which it gives up.
func (s *stdioServer) passReader() {
	s.reading = true
	if s.idle > 0 {
		s.idle--
		s.wake <- struct{}{} // never blocks: at most max goroutines are idle
		return
	}
	go s.work()
}

// stopLocked stops serving: no frame is read or dispatched any more, and
// idle goroutines exit. s.mu is held.
func (s *stdioServer) stopLocked() {
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
}

// handOff starts a goroutine holding the reader while a message read with
// nothing else waiting is still being dispatched, unless another goroutine
// reads already or serving has stopped.
func (s *stdioServer) handOff() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reading || s.stopped || s.ctx.Err() != nil || s.busy >= s.max {
		return
	}
	s.passReader()
}

// settle wakes ServeStdio once serving has stopped and the state it waits
// for may have been reached. s.mu is held.
func (s *stdioServer) settle() {
	if !s.stopped {
		return
	}
	s.cond.Broadcast()
	if s.busy == 0 && s.idle == 0 && !s.reading && !s.closed {
		s.closed = true
		close(s.finished)
	}
}

// write writes one answer, or queues it behind the write in progress,
// whose goroutine writes it before it goes on: an answer finished while
// another is being written costs its goroutine no wait and no wake-up. A
// write error ends serving.
func (s *stdioServer) write(b []byte) {
	if _, err := s.fw.Send(b); err != nil {
		s.cancel(fmt.Errorf("server: stdio: %w", err))
	}
}
