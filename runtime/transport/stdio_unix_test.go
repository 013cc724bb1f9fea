//go:build unix

package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// unixChild runs the child modes that need Unix facilities; it reports
// false for a mode it does not know. Modes:
//
//	gate    before answering a request, wait until the FIFO named by
//	        AHP_TEST_GATE has no writer left (the test holds the gate)
//	escape  on the first request, start a sleeper in a session of its own
//	        (setsid, so outside the child's process group) that keeps the
//	        child's stdout and stderr and the write end of the FIFO named by
//	        AHP_TEST_WATCH; answer every request like echo
func unixChild(mode string) (int, bool) {
	switch mode {
	case "gate", "escape":
	default:
		return 0, false
	}
	fmt.Fprintf(os.Stderr, "start %d\n", os.Getpid())
	sc := bufio.NewScanner(os.Stdin)
	first := true
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil || env.Kind != jsonrpc.KindRequest {
			continue
		}
		switch {
		case mode == "escape" && first:
			if !escape() {
				return 9, true
			}
		case mode == "gate":
			g, err := os.OpenFile(os.Getenv("AHP_TEST_GATE"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return 9, true
			}
			_, _ = io.Copy(io.Discard, g) // EOF once no one holds the gate
			_ = g.Close()
		}
		first = false
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"pid":%d}}`+"\n", env.ID, os.Getpid())
	}
	return 0, true
}

func escape() bool {
	watch, err := os.OpenFile(os.Getenv("AHP_TEST_WATCH"), os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	defer watch.Close()
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	cmd := exec.Command(exe, "-child", "sleeper")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{watch}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd.Start() == nil
}

// fifo makes a named pipe in a temporary directory.
func fifo(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	return path
}

// TestStdioPerEventMaxChildren: at most MaxChildren per_event children run
// at once; a further message waits for a slot within its deadline, and
// launches nothing if the deadline ends first.
func TestStdioPerEventMaxChildren(t *testing.T) {
	gate := fifo(t, "gate")
	hold, err := os.OpenFile(gate, os.O_RDWR, 0) // the gate is shut while the test holds it
	require.NoError(t, err)
	defer hold.Close()
	starts := make(chan struct{}, 16)
	s := stdioWith(t, "gate", transport.StdioOptions{Lifecycle: gen.StdioTransportLifecyclePerEvent, MaxChildren: 2,
		Env: []string{"PATH=" + os.Getenv("PATH"), "AHP_TEST_GATE=" + gate}, Stderr: signalWriter{"start ", starts}})
	errs := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		go func() {
			_, err := s.Exchange(context.Background(), req(id))
			errs <- err
		}()
	}
	<-starts
	<-starts // both children run, held at the gate
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Exchange(ctx, req("c"))
	requireFail(t, err, transport.CodeDeadlineExceeded, transport.StageSend, "deadline")
	require.Empty(t, starts, "the third message launched no child")
	require.NoError(t, hold.Close()) // open the gate
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	_, err = exchange(t, s, context.Background(), "d")
	require.NoError(t, err, "the slots were given back")
}

// TestStdioEscapedDescendant: a child answers while a process it started
// in a session of its own (outside its process group) holds its stdout and
// stderr. The exchange completes when the child is done with it (per_event:
// at its exit), and Close when the child has exited, not after the grace;
// on Linux the escaped process is killed.
func TestStdioEscapedDescendant(t *testing.T) {
	tests := []struct {
		name   string
		lc     gen.StdioTransportLifecycle
		stderr io.Writer // nil: the escaped process holds stdout only
	}{
		{"per_event", gen.StdioTransportLifecyclePerEvent, &syncBuffer{}},
		{"persistent", gen.StdioTransportLifecyclePersistent, &syncBuffer{}},
		{"persistent stdout only", gen.StdioTransportLifecyclePersistent, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := fifo(t, "watch")
			watch, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			require.NoError(t, err)
			defer watch.Close()
			s := stdioWith(t, "escape", transport.StdioOptions{Lifecycle: tc.lc, CloseGrace: time.Hour, Stderr: tc.stderr,
				Env: []string{"PATH=" + os.Getenv("PATH"), "AHP_TEST_WATCH=" + path}})
			err = returnsWithin(t, 10*time.Second, func() error {
				_, err := s.Exchange(context.Background(), req("x"))
				return err
			})
			require.NoError(t, err)
			require.NoError(t, returnsWithin(t, 10*time.Second, s.Close))
			if runtime.GOOS != "linux" {
				return
			}
			// The escaped process held the watch FIFO's only write end.
			err = returnsWithin(t, 10*time.Second, func() error {
				_, err := io.Copy(io.Discard, watch) // EOF once it is gone
				return err
			})
			require.NoError(t, err)
		})
	}
}
