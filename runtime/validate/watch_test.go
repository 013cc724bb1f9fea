package validate_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
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

// TestContextDoneAskedOnlyWhenLookedAt checks that Scan, CheckDoc and
// Check ask a context for its Done channel only when they look at it
// (every thousand or so values or visits): never for a short message, and
// still in time to stop a long one once the context has ended.
func TestContextDoneAskedOnlyWhenLookedAt(t *testing.T) {
	v := validate.Default()
	const ref = "intercept-request.schema.json"
	small := []byte(interceptRequest(`{"a":1}`))
	large := []byte(interceptRequest(hostile.Object(100000)))

	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	for _, doc := range [][]byte{small, large} {
		ctx := &doneCounter{Context: live}
		d := validate.Scan(ctx, doc)
		require.False(t, d.Stopped())
		require.NoError(t, v.CheckDoc(ctx, ref, d))
		d.Release()
		require.NoError(t, v.Check(ctx, ref, doc))
		if len(doc) == len(small) {
			require.Zero(t, ctx.dones.Load(), "Done asked for a short message")
		} else {
			require.NotZero(t, ctx.dones.Load(), "a long message never looked at its context")
		}
	}

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := &doneCounter{Context: ended}
	d := validate.Scan(ctx, large)
	require.True(t, d.Stopped(), "an ended context did not stop the scan of a long message")
	d.Release()
	d = validate.Scan(ctx, small)
	require.False(t, d.Stopped(), "a short message is scanned to its end")
	require.ErrorIs(t, v.CheckDoc(ctx, ref, d), context.Canceled)
	d.Release()
}

// TestParseDocDoesNotAskForDone checks that parsing a short request the way
// the server does (Scan, then gen.ParseInterceptRequestDoc) and
// gen.ParseInterceptRequestContext never ask a cancelable context for its
// Done channel.
func TestParseDocDoesNotAskForDone(t *testing.T) {
	data, err := os.ReadFile("../../testdata/fixtures/draft/http/intercept-request.valid.json")
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
