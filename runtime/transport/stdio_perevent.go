package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// perEvent runs one child for one message: write it, close stdin, read at
// most one response (requests only), wait for exit. At most MaxChildren run
// at once; a message waits for a slot within its ctx. The child is always
// reaped before perEvent returns; if ctx ends first, its process group is
// killed. The exchange completes when the child has exited and what it
// wrote before exiting has been read, whatever processes it left behind.
func (t *Stdio) perEvent(ctx context.Context, msg Message, request bool) ([]byte, error) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxFail(ctx, StageSend)
	case <-t.closing:
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	defer func() { <-t.slots }()
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
	defer p.stdout.f.Close()

	reaped := make(chan struct{})
	var waitErr error
	go func() {
		defer close(reaped)
		waitErr = p.wait()
	}()
	stop := context.AfterFunc(ctx, func() {
		killGroup(cmd.Process)
		p.stdout.interrupt()
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
			// Nothing may follow the response.
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
