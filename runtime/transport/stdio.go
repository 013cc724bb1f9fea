package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
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

	mu     sync.Mutex
	closed bool
	child  *child // persistent only
	live   map[*exec.Cmd]struct{}
	wg     sync.WaitGroup // per-event children
	sem    chan struct{}  // one outstanding request per persistent child
}

// NewStdio returns a stdio transport. It starts nothing: a persistent child
// is launched on first use and relaunched after it exits.
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

func (t *Stdio) command() *exec.Cmd {
	cmd := exec.Command(t.opts.Command, t.opts.Args...)
	cmd.Dir = t.opts.Dir
	cmd.Env = append([]string(nil), t.opts.Env...)
	if t.opts.Stderr != nil {
		cmd.Stderr = &boundedWriter{w: t.opts.Stderr, left: t.opts.MaxStderrBytes}
	}
	cmd.WaitDelay = t.opts.CloseGrace
	return cmd
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
	c, err := t.persistent()
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
	c, err := t.persistent()
	if err != nil {
		return err
	}
	return c.write(ctx, msg.Body)
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
	for cmd := range t.live {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	t.mu.Unlock()
	if c != nil {
		c.stop(t.opts.CloseGrace)
	}
	t.wg.Wait()
	return nil
}

// persistent returns the running child, launching one if needed.
func (t *Stdio) persistent() (*child, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if t.child != nil {
		select {
		case <-t.child.done:
			t.child = nil // exited: relaunch
		default:
			return t.child, nil
		}
	}
	cmd := t.command()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	if err := cmd.Start(); err != nil {
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	c := &child{cmd: cmd, stdin: stdin, w: jsonrpc.NewFrameWriter(stdin), done: make(chan struct{}), maxMalformed: t.opts.MaxMalformed}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		c.read(jsonrpc.NewFrameReader(stdout, t.opts.MaxFrameBytes))
	}()
	t.child = c
	return c, nil
}

// result is what a persistent child's reader hands to the waiting request.
type result struct {
	data []byte
	err  error
}

type pending struct {
	id jsonrpc.ID
	ch chan result
}

// child is one persistent backend process.
type child struct {
	cmd          *exec.Cmd
	stdin        io.WriteCloser
	w            *jsonrpc.FrameWriter
	done         chan struct{} // closed once the process is reaped
	maxMalformed int

	mu        sync.Mutex
	pending   *pending
	abandoned []jsonrpc.ID // recent ids whose late responses are dropped
	malformed int
	exited    bool
	exitCode  int
}

const maxAbandoned = 64

func (c *child) exchange(ctx context.Context, msg Message) ([]byte, error) {
	p := &pending{id: msg.ID, ch: make(chan result, 1)}
	c.mu.Lock()
	if c.exited {
		c.mu.Unlock()
		return nil, exitFail(StageSend, c.exitCode)
	}
	c.pending = p
	c.mu.Unlock()
	if err := c.write(ctx, msg.Body); err != nil {
		c.mu.Lock()
		if c.pending == p {
			c.pending = nil
		}
		c.mu.Unlock()
		return nil, err
	}
	select {
	case r := <-p.ch:
		return r.data, r.err
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending == p {
			c.pending = nil
			c.abandon(p.id)
		}
		c.mu.Unlock()
		return nil, ctxFail(ctx, StageReceive)
	}
}

// write writes one frame; if ctx ends while the write is blocked (a child
// that stopped reading) the child is killed, which unblocks it.
func (c *child) write(ctx context.Context, body []byte) error {
	if err := ctx.Err(); err != nil {
		return ctxFail(ctx, StageSend)
	}
	stop := context.AfterFunc(ctx, c.kill)
	err := c.w.WriteFrame(body)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return ctxFail(ctx, StageSend)
		}
		if errors.Is(err, jsonrpc.ErrNewlineInFrame) || errors.Is(err, jsonrpc.ErrEmptyFrame) {
			return fail(CodeTransport, StageSend, "frame", ErrMalformed)
		}
		c.mu.Lock()
		code := c.exitCode
		c.mu.Unlock()
		return exitFail(StageSend, code)
	}
	return nil
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

func (c *child) kill() {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
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

// read routes stdout frames to the waiting request until the child's stdout
// ends, then reaps the child.
func (c *child) read(fr *jsonrpc.FrameReader) {
	for {
		frame, err := fr.Next()
		if err != nil {
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) || errors.Is(err, jsonrpc.ErrEmptyFrame) || errors.Is(err, jsonrpc.ErrCRLF) {
				c.bad("frame", err)
				continue
			}
			if errors.Is(err, jsonrpc.ErrUnterminatedFrame) {
				c.bad("frame", err)
			}
			break
		}
		env, err := jsonrpc.Classify(frame)
		if err != nil || (env.Kind != jsonrpc.KindResponse && env.Kind != jsonrpc.KindErrorResponse) {
			c.bad("not_response", ErrMalformed)
			continue
		}
		c.mu.Lock()
		switch {
		case c.pending != nil && env.ID.Equal(c.pending.id):
			c.pending.ch <- result{data: frame}
			c.pending = nil
			c.malformed = 0
			c.mu.Unlock()
		case c.isAbandoned(env.ID):
			c.mu.Unlock() // a late reply to an abandoned request
		default:
			c.mu.Unlock()
			c.bad("id_mismatch", ErrMalformed)
		}
	}
	// Drain anything left so the child never blocks on a full pipe, then reap.
	_ = c.cmd.Wait()
	c.mu.Lock()
	c.exited = true
	if c.cmd.ProcessState != nil {
		c.exitCode = c.cmd.ProcessState.ExitCode()
	}
	if c.pending != nil {
		c.pending.ch <- result{err: exitFail(StageReceive, c.exitCode)}
		c.pending = nil
	}
	c.mu.Unlock()
	close(c.done)
}

// bad records malformed output: the waiting request (if any) fails, and a
// child that keeps emitting malformed output is terminated.
func (c *child) bad(reason string, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.malformed++
	if c.pending != nil {
		c.pending.ch <- result{err: fail(CodeProtocolRejection, StageReceive, reason, ErrMalformed)}
		c.abandon(c.pending.id)
		c.pending = nil
	}
	if c.malformed >= c.maxMalformed {
		c.kill()
	}
}

func exitFail(stage Stage, code int) *Error {
	e := fail(CodeTransport, stage, "process_exit", ErrExited)
	e.Status = code
	return e
}

// perEvent runs one child for one message: write it, close stdin, read at
// most one response (requests only), wait for exit. The child is always
// reaped before perEvent returns; if ctx ends first it is killed.
func (t *Stdio) perEvent(ctx context.Context, msg Message, request bool) ([]byte, error) {
	cmd := t.command()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		t.mu.Unlock()
		return nil, ctxFail(ctx, StageSend)
	}
	if err := cmd.Start(); err != nil {
		t.mu.Unlock()
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	t.live[cmd] = struct{}{}
	t.wg.Add(1)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.live, cmd)
		t.mu.Unlock()
		t.wg.Done()
	}()
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()

	fw := jsonrpc.NewFrameWriter(stdin)
	werr := fw.WriteFrame(msg.Body)
	_ = stdin.Close()

	var frame []byte
	var protoErr *Error
	if request {
		fr := jsonrpc.NewFrameReader(stdout, t.opts.MaxFrameBytes)
		f, err := fr.Next()
		switch {
		case err == nil:
			frame = f
			if _, err := fr.Next(); !errors.Is(err, io.EOF) {
				protoErr = fail(CodeProtocolRejection, StageReceive, "extra_output", ErrMalformed)
			}
		case errors.Is(err, io.EOF):
			protoErr = fail(CodeProtocolRejection, StageReceive, "missing_response", ErrMalformed)
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			protoErr = fail(CodeCapacity, StageReceive, "too_large", ErrTooLarge)
		default:
			protoErr = fail(CodeProtocolRejection, StageReceive, "frame", ErrMalformed)
		}
	}
	// Discard the rest of stdout so the child can exit, then reap it.
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
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
	mu   sync.Mutex
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
