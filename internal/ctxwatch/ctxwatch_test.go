package ctxwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// ownAfterFunc is a context that registers functions itself.
type ownAfterFunc struct {
	context.Context
	fs []func()
}

func (c *ownAfterFunc) AfterFunc(f func()) func() bool {
	c.fs = append(c.fs, f)
	return func() bool { return true }
}

// TestAfterFunc: a context's own AfterFunc method gets f; any other
// context gets context.AfterFunc's, which runs f once the context ends and
// not after stop.
func TestAfterFunc(t *testing.T) {
	own := &ownAfterFunc{Context: context.Background()}
	ran := false
	stop := AfterFunc(own, func() { ran = true })
	require.Len(t, own.fs, 1)
	own.fs[0]()
	require.True(t, ran)
	require.True(t, stop())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	AfterFunc(ctx, func() { close(done) })
	stopped := make(chan struct{}, 1)
	stop = AfterFunc(ctx, func() { stopped <- struct{}{} })
	require.True(t, stop())
	cancel()
	<-done
	require.Empty(t, stopped)
}
