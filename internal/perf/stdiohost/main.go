// Command stdiohost is the host of the stdio round trip that
// internal/perf/callgrind.sh measures, in one of two modes:
//
//	stdiohost sdk CHILD N    h.ToolBefore N times over a persistent stdio
//	                         backend running CHILD (internal/perf/perevent:
//	                         server.ServeStdio with default settings)
//	stdiohost floor CHILD N  write the bytes the SDK sends for the same call
//	                         to CHILD (internal/perf/floorchild) as one line
//	                         N times, reading each answer line
//
// Both make one warm-up call first (the child's start, first-use work) and
// print the host's allocations per call of the N calls on stdout. In sdk
// mode a fourth argument C makes the N calls from C concurrent callers
// (distinct event ids), pipelined on the one child: callgrind.sh compares
// the instructions per call of 64 callers with those of one.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/perf/roundtrip"
)

func main() {
	if len(os.Args) != 4 && (len(os.Args) != 5 || os.Args[1] != "sdk") {
		fmt.Fprintln(os.Stderr, "usage: stdiohost sdk|floor CHILD N, stdiohost sdk CHILD N CALLERS")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[3])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "stdiohost: bad N")
		os.Exit(2)
	}
	callers := 1
	if len(os.Args) == 5 {
		if callers, err = strconv.Atoi(os.Args[4]); err != nil || callers < 1 {
			fmt.Fprintln(os.Stderr, "stdiohost: bad CALLERS")
			os.Exit(2)
		}
	}
	var call func() error
	var h *hooks.Hooks
	var done func()
	switch os.Args[1] {
	case "sdk":
		h, err = sdk(os.Args[2])
		if err == nil {
			ctx := context.Background()
			call, done = func() error { return roundtrip.Call(ctx, h) }, func() { _ = h.Close() }
		}
	case "floor":
		call, done, err = floor(os.Args[2])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdiohost:", err)
		os.Exit(1)
	}
	defer done()
	if err := call(); err != nil { // warm-up
		fmt.Fprintln(os.Stderr, "stdiohost:", err)
		os.Exit(1)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if callers == 1 {
		for range n {
			if err := call(); err != nil {
				fmt.Fprintln(os.Stderr, "stdiohost:", err)
				os.Exit(1)
			}
		}
	} else if err := concurrent(h, n, callers); err != nil {
		fmt.Fprintln(os.Stderr, "stdiohost:", err)
		os.Exit(1)
	}
	runtime.ReadMemStats(&after)
	if n > 0 {
		fmt.Printf("%.1f allocs %.0f B per call\n", float64(after.Mallocs-before.Mallocs)/float64(n),
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	}
}

// concurrent makes n calls on h from callers goroutines, with distinct
// event ids.
func concurrent(h *hooks.Hooks, n, callers int) error {
	ctx := context.Background()
	var next atomic.Int64
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := roundtrip.CallInput(ctx, h, roundtrip.InputID("evt-"+strconv.FormatInt(i, 10))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func sdk(child string) (*hooks.Hooks, error) {
	// The child inherits the environment (GODEBUG, GOGC), as the floor's
	// does; the SDK's default is PATH alone. Close waits for it to exit
	// (under valgrind, with its counts) instead of killing it after the
	// default grace.
	cfg := roundtrip.Config()
	cfg.StdioEnv = os.Environ()
	cfg.StdioCloseGrace = time.Minute
	return hooks.New(roundtrip.Registration(roundtrip.StdioTransport(child)), cfg)
}

func floor(child string) (func() error, func(), error) {
	req, err := roundtrip.Request(context.Background())
	if err != nil {
		return nil, nil, err
	}
	line := append(req, '\n')
	cmd := exec.Command(child)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	r := bufio.NewReaderSize(stdout, 64<<10)
	call := func() error {
		if _, err := stdin.Write(line); err != nil {
			return err
		}
		_, err := r.ReadSlice('\n')
		return err
	}
	return call, func() { _ = stdin.Close(); _ = cmd.Wait() }, nil
}
