package server_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// withID is the fixture intercept request with request and event id id.
func withID(t *testing.T, id string) []byte {
	return mutate(t, interceptBase(t), func(m map[string]any) {
		m["id"] = id
		m["params"].(map[string]any)["event"].(map[string]any)["id"] = id
	})
}

// barrier releases its waiters once n have arrived, then resets.
type barrier struct {
	mu      sync.Mutex
	n, in   int
	release chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, release: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	ch := b.release
	b.in++
	if b.in == b.n {
		b.in, b.release = 0, make(chan struct{})
		close(ch)
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return fmt.Errorf("only part of a wave of %d was dispatched concurrently", b.n)
	}
}

// TestStdioWavesReuseIdleGoroutines: waves of pipelined requests, each of
// which is only answered once the whole wave is being dispatched at once,
// are all answered exactly once with their own ids, whether the wave is
// served by goroutines left idle by the previous one or by new ones; at the
// end of input ServeStdio returns with every goroutine it started ended,
// idle ones included.
func TestStdioWavesReuseIdleGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const width, waves = 4, 5
	b := newBarrier(width)
	h := &server.Handler{MaxConcurrency: width,
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{}, b.wait(ctx)
		}}
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer outR.Close()
	done := make(chan error, 1)
	go func() {
		done <- server.ServeStdio(context.Background(), inR, outW, h)
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	for w := range waves {
		var frames [][]byte
		var want []string
		for i := range width {
			id := fmt.Sprintf("evt-%d-%d", w, i)
			frames = append(frames, withID(t, id))
			want = append(want, `"`+id+`" ok`)
		}
		_, err := inW.Write(lines(frames...))
		require.NoError(t, err)
		var got []string
		for range width {
			require.True(t, sc.Scan())
			r := decodeReply(t, sc.Bytes())
			got = append(got, string(r.ID)+" "+jsonrpcCode(r.code()))
		}
		sort.Strings(got)
		require.Equal(t, want, got, "wave %d", w)
	}
	require.NoError(t, inW.Close())
	require.NoError(t, <-done)
	require.False(t, sc.Scan(), "nothing after the answers")
}

// TestStdioCancelWithIdleGoroutines: when ctx ends while goroutines that
// served a wave are idle, ServeStdio returns ctx.Err() with all of them
// ended.
func TestStdioCancelWithIdleGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const width = 4
	b := newBarrier(width)
	h := &server.Handler{MaxConcurrency: width,
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{}, b.wait(ctx)
		}}
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer inW.Close()
	defer outR.Close()
	defer outW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.ServeStdio(ctx, inR, outW, h) }()
	var frames [][]byte
	for i := range width {
		frames = append(frames, withID(t, fmt.Sprintf("evt-%d", i)))
	}
	_, err = inW.Write(lines(frames...))
	require.NoError(t, err)
	sc := bufio.NewScanner(outR)
	for range width {
		require.True(t, sc.Scan())
		require.Equal(t, "ok", jsonrpcCode(decodeReply(t, sc.Bytes()).code()))
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
