package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// Defaults of StdioOptions.
const (
	// DefaultCloseGrace is how long Close waits for a persistent child to
	// exit after its stdin is closed before killing it.
	DefaultCloseGrace = 2 * time.Second
	// DefaultMaxMalformed is how many consecutive malformed frames a
	// persistent child may emit before it is terminated (it is restarted
	// on next use).
	DefaultMaxMalformed = 3
	// DefaultMaxStderrBytes bounds what is forwarded from one child's
	// stderr to StdioOptions.Stderr; the rest is drained and dropped.
	DefaultMaxStderrBytes = 64 << 10
)

// StdioOptions configures a stdio transport.
type StdioOptions struct {
	// BackendID is the registration id of the backend.
	BackendID string
	// Command is the executable, run directly without a shell.
	Command string
	// Args are its arguments.
	Args []string
	// Dir is its working directory; empty means the current one.
	Dir string
	// Lifecycle is persistent (one child reused) or per_event (one child
	// per message).
	Lifecycle gen.StdioTransportLifecycle
	// Env is the child's complete environment. Nil means a minimal one
	// holding only PATH: the harness's own variables (and the secrets they
	// may hold) are not inherited.
	Env []string
	// Stderr receives the child's stderr, at most MaxStderrBytes per child;
	// the rest is drained. Nil discards it. It is never parsed as protocol.
	// The children of one Stdio write it one at a time; a writer shared
	// with other transports must be safe for concurrent use.
	Stderr io.Writer
	// MaxStderrBytes bounds forwarded stderr; <= 0 means
	// DefaultMaxStderrBytes.
	MaxStderrBytes int64
	// MaxFrameBytes bounds one stdout frame; <= 0 means
	// DefaultMaxResponseBytes.
	MaxFrameBytes int
	// CloseGrace bounds the graceful wait in Close; <= 0 means
	// DefaultCloseGrace.
	CloseGrace time.Duration
	// MaxMalformed is the consecutive malformed-frame limit of a persistent
	// child; <= 0 means DefaultMaxMalformed.
	MaxMalformed int
}

// Stdio is the stdio binding over owned child processes.
type Stdio struct {
	opts StdioOptions

	mu      sync.Mutex
	closed  bool
	child   *child   // persistent only
	retired []*child // replaced persistent children whose stdout is still open
	live    map[*exec.Cmd]struct{}
	wg      sync.WaitGroup // per-event children and persistent reapers
	sem     chan struct{}  // one outstanding request per persistent child

	stderrMu sync.Mutex // one write at a time to opts.Stderr, from any child
}

// NewStdio returns a stdio transport. It starts nothing: a persistent child
// is launched on first use and relaunched after it exits.
//
// On Unix each child runs in a process group of its own, so that a kill
// (a cancelled delivery, Close) also reaches the processes it started,
// and so that processes it leaves behind when it exits do not keep its
// pipes open; a terminal's interrupt reaches the host, not the children.
func NewStdio(opts StdioOptions) *Stdio {
	if opts.MaxStderrBytes <= 0 {
		opts.MaxStderrBytes = DefaultMaxStderrBytes
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxResponseBytes
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = DefaultCloseGrace
	}
	if opts.MaxMalformed <= 0 {
		opts.MaxMalformed = DefaultMaxMalformed
	}
	if opts.Env == nil {
		opts.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	return &Stdio{opts: opts, live: map[*exec.Cmd]struct{}{}, sem: make(chan struct{}, 1)}
}

// proc is one started child and the harness's ends of its pipes. All three
// of the child's standard files are pipes created here (stderr is
// /dev/null when StdioOptions.Stderr is nil), so that cmd.Wait returns as
// soon as the child exits, whatever processes it started still hold them.
type proc struct {
	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	stderr  *os.File      // nil: not forwarded
	drained chan struct{} // closed when the stderr drain has ended
}

// launch starts the child in a process group of its own. The caller holds
// t.mu when it must not race Close.
func (t *Stdio) launch() (*proc, error) {
	cmd := exec.Command(t.opts.Command, t.opts.Args...)
	cmd.Dir = t.opts.Dir
	cmd.Env = append([]string(nil), t.opts.Env...)
	ownGroup(cmd)
	var parent, child []*os.File // our ends and the child's
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	// pipe returns our end of a new pipe and sets *theirs to the child's;
	// out says which end is the child's write end.
	pipe := func(theirs **os.File, out bool) (*os.File, bool) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, false
		}
		ours, their := w, r
		if out {
			ours, their = r, w
		}
		parent, child = append(parent, ours), append(child, their)
		*theirs = their
		return ours, true
	}
	var childIn, childOut, childErr *os.File
	p := &proc{cmd: cmd}
	var ok bool
	if p.stdin, ok = pipe(&childIn, false); ok {
		p.stdout, ok = pipe(&childOut, true)
	}
	if ok && t.opts.Stderr != nil {
		p.stderr, ok = pipe(&childErr, true)
	}
	if ok {
		cmd.Stdin, cmd.Stdout = childIn, childOut
		if childErr != nil {
			cmd.Stderr = childErr
		}
		ok = cmd.Start() == nil
	}
	closeAll(child)
	if !ok {
		closeAll(parent)
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	if p.stderr != nil {
		p.drained = make(chan struct{})
		w := &boundedWriter{mu: &t.stderrMu, w: t.opts.Stderr, left: t.opts.MaxStderrBytes}
		go func() {
			defer close(p.drained)
			_, _ = io.Copy(w, p.stderr)
		}()
	}
	return p, nil
}

// wait reaps the child, then kills what is left of its process group (the
// processes it started and left behind, which would hold its pipes open)
// and ends the stderr drain, at the latest after grace. It returns
// cmd.Wait's error.
func (p *proc) wait(grace time.Duration) error {
	err := p.cmd.Wait()
	killGroup(p.cmd.Process)
	if p.stderr != nil {
		_ = p.stderr.SetReadDeadline(time.Now().Add(grace))
		<-p.drained
		_ = p.stderr.Close()
	}
	return err
}

// Exchange implements Transport.
func (t *Stdio) Exchange(ctx context.Context, msg Message) ([]byte, error) {
	if t.opts.Lifecycle == gen.StdioTransportLifecyclePerEvent {
		return t.perEvent(ctx, msg, true)
	}
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxFail(ctx, StageSend)
	}
	defer func() { <-t.sem }()
	c, err := t.persistent(true)
	if err != nil {
		return nil, err
	}
	return c.exchange(ctx, msg)
}

// Notify implements Transport.
func (t *Stdio) Notify(ctx context.Context, msg Message) error {
	if t.opts.Lifecycle == gen.StdioTransportLifecyclePerEvent {
		_, err := t.perEvent(ctx, msg, false)
		return err
	}
	c, err := t.persistent(false)
	if err != nil {
		return err
	}
	return c.notify(ctx, msg.Body)
}

// Close implements Transport: it closes a persistent child's stdin, waits
// up to CloseGrace for it to exit, kills it otherwise, kills running
// per-event children, and reaps them all.
func (t *Stdio) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.wg.Wait()
		return nil
	}
	t.closed = true
	c := t.child
	retired := t.retired
	t.retired = nil
	for cmd := range t.live {
		killGroup(cmd.Process)
	}
	t.mu.Unlock()
	if c != nil {
		c.stop(t.opts.CloseGrace)
		c.release()
	}
	for _, r := range retired {
		r.release()
	}
	t.wg.Wait()
	return nil
}

// persistent returns the running child, launching one if needed. exclusive
// means that the caller holds t.sem, so that no one is reading the stdout of
// a child that has been replaced: it can be closed.
func (t *Stdio) persistent(exclusive bool) (*child, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if c := t.child; c != nil && c.gone() {
		t.retired = append(t.retired, c) // relaunched below
		t.child = nil
	}
	if len(t.retired) > 0 && !exclusive {
		// Notify does not hold t.sem; if no Exchange does either, nothing
		// reads the retired children's stdout.
		select {
		case t.sem <- struct{}{}:
			exclusive = true
			defer func() { <-t.sem }()
		default:
		}
	}
	if exclusive && len(t.retired) > 0 {
		for _, r := range t.retired {
			r.release()
		}
		t.retired = nil
	}
	if t.child != nil {
		return t.child, nil
	}
	p, err := t.launch()
	if err != nil {
		return nil, err
	}
	c := &child{
		proc:         p,
		grace:        t.opts.CloseGrace,
		w:            jsonrpc.NewFrameWriter(p.stdin),
		fr:           jsonrpc.NewFrameReader(p.stdout, t.opts.MaxFrameBytes),
		done:         make(chan struct{}),
		fired:        make(chan struct{}, 1),
		maxMalformed: t.opts.MaxMalformed,
	}
	c.interrupt = c.cancelExchange
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		c.reap()
	}()
	t.child = c
	return c, nil
}

// child is one persistent backend process.
//
// Its stdout has no reader goroutine: the Exchange holding Stdio.sem reads
// frames itself until it finds its response, so that the response goes
// from the pipe to the caller without changing goroutines. Cancellation
// interrupts that read with a read deadline.
type child struct {
	*proc
	grace        time.Duration
	w            *jsonrpc.FrameWriter
	done         chan struct{} // closed once the process is reaped
	exitCode     int           // set before done is closed
	killed       atomic.Bool
	maxMalformed int

	// Used only by the Exchange holding Stdio.sem.
	fr        *jsonrpc.FrameReader
	abandoned []jsonrpc.ID // recent ids whose late responses are dropped
	malformed int          // consecutive malformed frames

	writing   atomic.Bool   // the Exchange is writing its request
	interrupt func()        // cancelExchange, bound once
	fired     chan struct{} // receives when interrupt has run

	releaseOnce sync.Once
}

const maxAbandoned = 64

// exchange writes a request and reads frames until its response.
func (c *child) exchange(ctx context.Context, msg Message) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, ctxFail(ctx, StageSend)
	}
	// writing is set before the interrupt can run: an interrupt that finds
	// it clear only sets a read deadline, which does not unblock a write.
	c.writing.Store(true)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.interrupt)
		defer func() {
			if !stop() {
				<-c.fired // interrupt ran: undo its deadline
				_ = c.stdout.SetReadDeadline(time.Time{})
			}
		}()
	}
	err := c.w.WriteFrame(msg.Body)
	c.writing.Store(false)
	if err != nil {
		return nil, c.writeFailed(ctx, err)
	}
	return c.receive(ctx, msg.ID)
}

// cancelExchange runs when the ctx of an Exchange ends. A request being
// written (to a child that stopped reading) cannot be withdrawn: the child
// is killed, which unblocks the write. A read is interrupted with a read
// deadline in the past, and the child is kept.
func (c *child) cancelExchange() {
	if c.writing.Load() {
		c.kill()
	}
	_ = c.stdout.SetReadDeadline(time.Unix(1, 0))
	c.fired <- struct{}{}
}

// receive reads frames until the response to id. A late response to an
// abandoned request is skipped; anything else fails the request.
func (c *child) receive(ctx context.Context, id jsonrpc.ID) ([]byte, error) {
	for {
		frame, err := c.fr.Next()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				c.abandon(id)
				return nil, ctxFail(ctx, StageReceive)
			case errors.Is(err, jsonrpc.ErrFrameTooLarge), errors.Is(err, jsonrpc.ErrEmptyFrame),
				errors.Is(err, jsonrpc.ErrCRLF), errors.Is(err, jsonrpc.ErrUnterminatedFrame):
				return nil, c.bad(id, "frame")
			}
			// End of stdout or a read error: the child exited, or closed
			// its stdout and can never answer.
			return nil, c.ended(ctx, StageReceive)
		}
		env, err := jsonrpc.Classify(frame)
		if err != nil || (env.Kind != jsonrpc.KindResponse && env.Kind != jsonrpc.KindErrorResponse) {
			return nil, c.bad(id, "not_response")
		}
		switch {
		case env.ID.Equal(id):
			c.malformed = 0
			return frame, nil
		case c.isAbandoned(env.ID):
			// A late reply to an abandoned request.
		default:
			return nil, c.bad(id, "id_mismatch")
		}
	}
}

// notify writes a notification. Notifications do not take Stdio.sem; if ctx
// ends while the write is blocked (a child that stopped reading) the child
// is killed, which unblocks it.
func (c *child) notify(ctx context.Context, body []byte) error {
	if ctx.Err() != nil {
		return ctxFail(ctx, StageSend)
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.kill)
		defer stop()
	}
	if err := c.w.WriteFrame(body); err != nil {
		return c.writeFailed(ctx, err)
	}
	return nil
}

// writeFailed classifies a failed write. A child whose stdin is broken is
// killed (if it has not exited already) and its exit status reported.
func (c *child) writeFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxFail(ctx, StageSend)
	}
	if errors.Is(err, jsonrpc.ErrNewlineInFrame) || errors.Is(err, jsonrpc.ErrEmptyFrame) {
		return fail(CodeTransport, StageSend, "frame", ErrMalformed)
	}
	return c.ended(ctx, StageSend)
}

// ended kills a child whose pipes are broken (a no-op once it has exited),
// waits until it is reaped, and reports its exit.
func (c *child) ended(ctx context.Context, stage Stage) error {
	c.kill()
	select {
	case <-c.done:
		return exitFail(stage, c.exitCode)
	case <-ctx.Done():
		return ctxFail(ctx, stage)
	}
}

// bad records malformed output, which fails the request waiting for id; a
// child that keeps emitting malformed output is terminated.
func (c *child) bad(id jsonrpc.ID, reason string) error {
	c.malformed++
	c.abandon(id)
	if c.malformed >= c.maxMalformed {
		c.kill()
	}
	return fail(CodeProtocolRejection, StageReceive, reason, ErrMalformed)
}

func (c *child) abandon(id jsonrpc.ID) {
	if len(c.abandoned) == maxAbandoned {
		c.abandoned = c.abandoned[1:]
	}
	c.abandoned = append(c.abandoned, id)
}

func (c *child) isAbandoned(id jsonrpc.ID) bool {
	for _, a := range c.abandoned {
		if a.Equal(id) {
			return true
		}
	}
	return false
}

// kill kills the process (a no-op once it has exited); the next use
// launches a new child without waiting for this one to be reaped.
func (c *child) kill() {
	c.killed.Store(true)
	killGroup(c.cmd.Process)
}

// gone reports whether the child has exited or been killed.
func (c *child) gone() bool {
	if c.killed.Load() {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// reap waits for the process to exit and records its status.
func (c *child) reap() {
	_ = c.proc.wait(c.grace)
	_ = c.stdin.Close() // a write to a child that exited fails at once
	if c.cmd.ProcessState != nil {
		c.exitCode = c.cmd.ProcessState.ExitCode()
	}
	close(c.done)
}

// release closes the harness's end of stdout. It is called once no
// Exchange can be reading it, or at Close.
func (c *child) release() {
	c.releaseOnce.Do(func() { _ = c.stdout.Close() })
}

// stop closes stdin, waits up to grace for the child to exit, then kills it
// and waits until it is reaped.
func (c *child) stop(grace time.Duration) {
	_ = c.stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-c.done:
		return
	case <-timer.C:
	}
	c.kill()
	<-c.done
}

func exitFail(stage Stage, code int) *Error {
	e := fail(CodeTransport, stage, "process_exit", ErrExited)
	e.Status = code
	return e
}

// perEvent runs one child for one message: write it, close stdin, read at
// most one response (requests only), wait for exit. The child is always
// reaped before perEvent returns; if ctx ends first, its process group is
// killed. Once the child has exited, stdout is read for at most CloseGrace
// more: processes it left behind are killed with its group, and where that
// cannot reach them they cannot hold the exchange open.
func (t *Stdio) perEvent(ctx context.Context, msg Message, request bool) ([]byte, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		t.mu.Unlock()
		return nil, ctxFail(ctx, StageSend)
	}
	p, err := t.launch()
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	cmd := p.cmd
	t.live[cmd] = struct{}{}
	t.wg.Add(1)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.live, cmd)
		t.mu.Unlock()
		t.wg.Done()
	}()
	defer p.stdout.Close()

	// The read deadline of stdout: in the past once ctx ended, CloseGrace
	// after the exit otherwise, whichever is set first.
	var dlMu sync.Mutex
	deadlineSet := false
	setDeadline := func(at time.Time) {
		dlMu.Lock()
		defer dlMu.Unlock()
		if !deadlineSet {
			deadlineSet = true
			_ = p.stdout.SetReadDeadline(at)
		}
	}
	reaped := make(chan struct{})
	var waitErr error
	go func() {
		defer close(reaped)
		waitErr = p.wait(t.opts.CloseGrace)
		setDeadline(time.Now().Add(t.opts.CloseGrace))
	}()
	stop := context.AfterFunc(ctx, func() {
		killGroup(cmd.Process)
		setDeadline(time.Unix(1, 0))
	})
	defer stop()

	werr := jsonrpc.NewFrameWriter(p.stdin).WriteFrame(msg.Body)
	_ = p.stdin.Close()

	var frame []byte
	var protoErr *Error
	if request {
		fr := jsonrpc.NewFrameReader(p.stdout, t.opts.MaxFrameBytes)
		f, err := fr.Next()
		switch {
		case err == nil:
			frame = f
			// Nothing may follow the response. Output still open CloseGrace
			// after the exit (a process that escaped the group) is not
			// held against the child.
			if _, err := fr.Next(); !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				protoErr = fail(CodeProtocolRejection, StageReceive, "extra_output", ErrMalformed)
			}
		case errors.Is(err, io.EOF), errors.Is(err, os.ErrDeadlineExceeded):
			protoErr = fail(CodeProtocolRejection, StageReceive, "missing_response", ErrMalformed)
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			protoErr = fail(CodeCapacity, StageReceive, "too_large", ErrTooLarge)
		default:
			protoErr = fail(CodeProtocolRejection, StageReceive, "frame", ErrMalformed)
		}
	}
	// Discard the rest of stdout so the child can exit, then reap it.
	_, _ = io.Copy(io.Discard, p.stdout)
	<-reaped
	if ctx.Err() != nil {
		return nil, ctxFail(ctx, StageReceive)
	}
	if waitErr != nil {
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			return nil, exitFail(StageReceive, ee.ExitCode())
		}
		return nil, fail(CodeTransport, StageReceive, "process_exit", ErrExited)
	}
	if werr != nil && errors.Is(werr, jsonrpc.ErrNewlineInFrame) {
		return nil, fail(CodeTransport, StageSend, "frame", ErrMalformed)
	}
	if protoErr != nil {
		return nil, protoErr
	}
	return frame, nil
}

// boundedWriter forwards at most left bytes and silently drops the rest, so
// the child's stderr pipe is always drained.
type boundedWriter struct {
	mu   *sync.Mutex // shared by the children of one Stdio
	w    io.Writer
	left int64
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left > 0 {
		q := p
		if int64(len(q)) > b.left {
			q = q[:b.left]
		}
		b.left -= int64(len(q))
		_, _ = b.w.Write(q)
	}
	return len(p), nil
}
