package framebatch_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/agenthooks/agenthooks-go/internal/framebatch"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRefusesBadFrames(t *testing.T) {
	w := framebatch.New(io.Discard)
	require.ErrorIs(t, w.WriteFrame(nil), jsonrpc.ErrEmptyFrame)
	require.ErrorIs(t, w.WriteFrame([]byte("{\"a\":\n1}")), jsonrpc.ErrNewlineInFrame)
	require.ErrorIs(t, w.WriteFrame([]byte("{\"a\":\r1}")), jsonrpc.ErrNewlineInFrame)
	require.NoError(t, w.WriteFrame([]byte("{}")))
}

// The frames of one goroutine keep their order; concurrent goroutines'
// frames never interleave.
func TestOrderPerGoroutine(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	w := framebatch.New(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }))
	const goroutines, frames = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range frames {
				require.NoError(t, w.WriteFrame(fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i)))
			}
		}()
	}
	wg.Wait()
	next := make([]int, goroutines)
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var g, i int
		_, err := fmt.Sscanf(sc.Text(), `{"g":%d,"i":%d}`, &g, &i)
		require.NoError(t, err, sc.Text())
		require.Equal(t, next[g], i)
		next[g]++
		n++
	}
	require.Equal(t, goroutines*frames, n)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A failed or short write fails its frames and every later one; frames
// written before it succeeded.
func TestWriteErrorEndsTheStream(t *testing.T) {
	broken := errors.New("broken pipe")
	for name, write := range map[string]func([]byte) (int, error){
		"error": func([]byte) (int, error) { return 0, broken },
		"short": func(p []byte) (int, error) { return len(p) / 2, nil },
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			w := framebatch.New(writerFunc(func(p []byte) (int, error) {
				calls++
				if calls == 1 {
					return len(p), nil
				}
				return write(p)
			}))
			require.NoError(t, w.WriteFrame([]byte(`{}`)))
			err := w.WriteFrame([]byte(`{}`))
			require.Error(t, err)
			if name == "error" {
				require.ErrorIs(t, err, broken)
			} else {
				require.ErrorIs(t, err, io.ErrShortWrite)
			}
			require.Equal(t, err, w.WriteFrame([]byte(`{}`)))
			require.Equal(t, 2, calls)
		})
	}
}
