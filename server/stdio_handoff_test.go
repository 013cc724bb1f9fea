package server_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestStdioHandoffWhenDispatchBlocks: a message read with nothing else
// waiting is dispatched inline, but a callback that blocks does not stop
// the next message from being read. The first request's callback returns
// only once the second has been dispatched, and the second is written only
// after the first callback started, so neither can ride in the same read.
func TestStdioHandoffWhenDispatchBlocks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	firstStarted, secondDispatched := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	h := &server.Handler{
		Intercept: func(ctx context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			if calls.Add(1) == 1 {
				close(firstStarted)
				select {
				case <-secondDispatched:
					return server.InterceptResult{}, nil
				case <-time.After(10 * time.Second):
					return server.InterceptResult{}, errors.New("the second message was not read while the first was dispatched")
				}
			}
			close(secondDispatched)
			return server.InterceptResult{}, nil
		},
	}
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
	_, err = inW.Write(lines(interceptBase(t)))
	require.NoError(t, err)
	<-firstStarted
	_, err = inW.Write(lines(interceptBase(t)))
	require.NoError(t, err)
	sc := bufio.NewScanner(outR)
	for range 2 {
		require.True(t, sc.Scan())
		require.Equal(t, "ok", jsonrpcCode(decodeReply(t, sc.Bytes()).code()), "%s", sc.Bytes())
	}
	require.NoError(t, inW.Close())
	require.NoError(t, <-done)
}
