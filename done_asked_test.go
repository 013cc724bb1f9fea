package agenthooks_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// doneCounter is a cancelable context that counts the calls to Done, as
// net/http's request context creates its channel at the first.
type doneCounter struct {
	context.Context
	dones atomic.Int32
}

func (c *doneCounter) Done() <-chan struct{} {
	c.dones.Add(1)
	return c.Context.Done()
}

// TestParseDocDoesNotAskForDone checks that parsing a short request the way
// the server does (Scan, then ParseInterceptRequestDoc) with a cancelable
// context never asks it for its Done channel.
func TestParseDocDoesNotAskForDone(t *testing.T) {
	data, err := os.ReadFile("testdata/fixtures/draft/http/intercept-request.valid.json")
	require.NoError(t, err)
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &doneCounter{Context: live}
	d := validate.Scan(ctx, data)
	defer d.Release()
	_, err = gen.ParseInterceptRequestDoc(ctx, d)
	require.NoError(t, err)
	_, err = gen.ParseInterceptRequestContext(ctx, data)
	require.NoError(t, err)
	require.Zero(t, ctx.dones.Load())
}
