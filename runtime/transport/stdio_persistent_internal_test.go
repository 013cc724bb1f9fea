package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/stretchr/testify/require"
)

// TestStdioCancelAfterWriteKeepsChild: a context that ends once its
// notification or request has been fully written, before the delivery has
// returned, leaves the shared persistent child alone: the next exchange is
// served by the same process, without a relaunch. (Only a write still in
// progress is ended by killing the child.)
func TestStdioCancelAfterWriteKeepsChild(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	request := func(id string) Message {
		return Message{ID: jsonrpc.StringID(id), Method: jsonrpc.MethodIntercept,
			Body: []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{}}`)}
	}
	note := Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}
	tests := []struct {
		name        string
		maxInFlight int
		send        func(ctx context.Context, s *Stdio) error
		wantErr     bool // a request whose caller gave up ends with ctx's error
	}{
		{"notify", 1, func(ctx context.Context, s *Stdio) error { return s.Notify(ctx, note) }, false},
		{"notify/multiplexed", 4, func(ctx context.Context, s *Stdio) error { return s.Notify(ctx, note) }, false},
		{"exchange", 1, func(ctx context.Context, s *Stdio) error { _, err := s.Exchange(ctx, request("b")); return err }, true},
		{"exchange/multiplexed", 4, func(ctx context.Context, s *Stdio) error { _, err := s.Exchange(ctx, request("b")); return err }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStdio(StdioOptions{Command: exe, Args: []string{"-child", "echo"}, MaxInFlight: tc.maxInFlight, RelaunchBackoff: -1})
			defer func() { require.NoError(t, s.Close()) }()
			servedBy := func(id string) int {
				t.Helper()
				out, err := s.Exchange(context.Background(), request(id))
				require.NoError(t, err)
				var resp struct {
					Result struct{ PID int } `json:"result"`
				}
				require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
				return resp.Result.PID
			}
			pid := servedBy("a")
			s.mu.Lock()
			c := s.child
			require.Equal(t, c.cmd.Process.Pid, pid)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.afterWrite = cancel // ctx ends between the write and the delivery's return
			s.mu.Unlock()

			err := tc.send(ctx, s)
			if tc.wantErr {
				var te *Error
				require.ErrorAs(t, err, &te)
				require.Equal(t, CodeCancelled, te.Code, "%v", err)
			} else {
				require.NoError(t, err)
			}
			s.mu.Lock()
			c.afterWrite = nil
			s.mu.Unlock()

			require.Equal(t, pid, servedBy("c"), "the child was replaced")
			s.mu.Lock()
			defer s.mu.Unlock()
			require.Same(t, c, s.child, "the child was relaunched")
			require.False(t, c.gone(), fmt.Sprintf("child %d was killed", pid))
		})
	}
}

// TestStdioQueuedWriteCanceled: while the write of one request is blocked
// (the child does not read), a request or notification queued behind it is
// armed: when its context ends, the child is killed, which ends both, each
// with its own failure.
func TestStdioQueuedWriteCanceled(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	big := Message{ID: jsonrpc.StringID("big"), Method: jsonrpc.MethodIntercept,
		Body: []byte(`{"jsonrpc":"2.0","id":"big","method":"hooks/intercept","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)}
	small := Message{ID: jsonrpc.StringID("small"), Method: jsonrpc.MethodIntercept,
		Body: []byte(`{"jsonrpc":"2.0","id":"small","method":"hooks/intercept","params":{}}`)}
	note := Message{Method: jsonrpc.MethodObserve, Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}
	tests := []struct {
		name    string
		waiting int // messages registered once the queued one is
		send    func(ctx context.Context, s *Stdio) error
	}{
		{"request", 2, func(ctx context.Context, s *Stdio) error { _, err := s.Exchange(ctx, small); return err }},
		{"notification", 2, func(ctx context.Context, s *Stdio) error { return s.Notify(ctx, note) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStdio(StdioOptions{Command: exe, Args: []string{"-child", "deaf"}, MaxInFlight: 4, RelaunchBackoff: -1})
			defer func() { require.NoError(t, s.Close()) }()
			s.mu.Lock()
			c, err := s.persistent()
			require.NoError(t, err)
			blocked := make(chan struct{})
			c.afterBlocked = sync.OnceFunc(func() { close(blocked) })
			s.mu.Unlock()

			bigErr := make(chan error, 1)
			go func() {
				_, err := s.Exchange(context.Background(), big)
				bigErr <- err
			}()
			<-blocked // the big request fills the pipe and waits for room

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			queuedErr := make(chan error, 1)
			go func() { queuedErr <- tc.send(ctx, s) }()
			for { // until the queued message is registered (and armed)
				c.mu.Lock()
				n := len(c.pending) + len(c.notifying)
				c.mu.Unlock()
				if n == tc.waiting {
					break
				}
				runtime.Gosched()
			}
			cancel()
			var te *Error
			err = <-queuedErr
			require.ErrorAs(t, err, &te)
			require.Equal(t, CodeCancelled, te.Code, "%v", err)
			require.Equal(t, StageSend, te.Stage, "%v", err)
			err = <-bigErr // the child was killed: the blocked write failed
			require.ErrorAs(t, err, &te)
			require.Equal(t, CodeTransport, te.Code, "%v", err)
			require.True(t, c.gone())
		})
	}
}
