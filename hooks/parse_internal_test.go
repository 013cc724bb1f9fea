package hooks

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// TestDecodeInterceptObservesDeadline: reading an answer stops at the
// delivery's deadline with a deadline failure, whatever the answer holds,
// instead of finishing the parse first; with time left the same answer is
// read, and repeated member names are rejected.
func TestDecodeInterceptObservesDeadline(t *testing.T) {
	const id = "evt-1"
	answer := func(value string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"protocolVersion":"draft","effects":[` +
			`{"type":"modify","target":"input","operation":"replace","value":` + value + `}]}}`)
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range []struct {
		raw  []byte
		code transport.Code
	}{
		{answer(hostile.Object(100000)), transport.CodeDeadlineExceeded},
		{answer(`{"a":1}`), transport.CodeDeadlineExceeded},
		{[]byte(`{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"allow"}],"x":` +
			hostile.Object(100000) + `}}`), transport.CodeDeadlineExceeded},
		// The envelope scan observes the deadline too: past it, even an
		// answer with a repeated name is a deadline failure.
		{answer(hostile.ObjectDup(100000)), transport.CodeDeadlineExceeded},
	} {
		_, te := decodeIntercept(ended, c.raw, id)
		require.Equal(t, c.code, te.Code)
		require.Equal(t, transport.StageReceive, te.Stage)
	}

	res, te := decodeIntercept(t.Context(), answer(hostile.Object(100000)), id)
	require.Nil(t, te)
	require.Len(t, res.Effects, 1)
	_, te = decodeIntercept(t.Context(), answer(hostile.ObjectDup(100000)), id)
	require.Equal(t, transport.CodeProtocolRejection, te.Code)
	require.Equal(t, "invalid_envelope", te.Reason)
}

// TestDecodeInterceptLargeAnswerStopsAtDeadline: a 4 MB answer whose
// deadline ends while it is being read is a deadline failure, whichever
// pass it was in. The deadline is a fraction of the fastest of three full
// parses, so that it falls inside the parse however loaded the machine is:
// a slow parse only meets its deadline sooner, and one full parse slowed
// once (a collection, a preemption) does not set a deadline that a later,
// faster parse beats.
func TestDecodeInterceptLargeAnswerStopsAtDeadline(t *testing.T) {
	const id = "evt-1"
	raw := []byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"protocolVersion":"draft","effects":[` +
		`{"type":"modify","target":"input","operation":"replace","value":` + hostile.Object(250000) + `}]}}`)
	var full time.Duration
	for i := range 3 {
		start := time.Now()
		_, te := decodeInterceptFull(t.Context(), raw, id)
		require.Nil(t, te)
		if d := time.Since(start); i == 0 || d < full {
			full = d
		}
	}
	for _, frac := range []int{10, 30} {
		ctx, cancel := context.WithTimeout(t.Context(), full*time.Duration(frac)/100)
		_, te := decodeInterceptFull(ctx, raw, id)
		cancel()
		require.NotNil(t, te)
		require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
		require.Equal(t, transport.StageReceive, te.Stage)
	}
}

// lookCtx is a context whose deadline passes at a given look: its first
// `after` calls of Err report nil, the later ones DeadlineExceeded (and
// Done closes then). It counts the calls: how often, and until when, the
// answer's handling looked at its deadline.
type lookCtx struct {
	context.Context
	mu    sync.Mutex
	after int
	looks int
	done  chan struct{}
	once  sync.Once
}

func newLookCtx(after int) *lookCtx {
	return &lookCtx{Context: context.Background(), after: after, done: make(chan struct{})}
}

func (c *lookCtx) Done() <-chan struct{} { return c.done }

func (c *lookCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.looks++
	if c.looks <= c.after {
		return nil
	}
	c.once.Do(func() { close(c.done) })
	return context.DeadlineExceeded
}

func (c *lookCtx) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.looks
}

// TestDecodeInterceptDecodeObservesDeadline: the whole handling of a valid
// 4 MiB answer, typed decode included, looks at the delivery's deadline as
// it goes (hundreds of times, not a few times between passes). A deadline
// that passes at any of those looks, in the middle of the decode too, is a
// deadline failure at once: no more than one further look.
func TestDecodeInterceptDecodeObservesDeadline(t *testing.T) {
	const id = "evt-1"
	raw := []byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"protocolVersion":"draft","effects":[` +
		`{"type":"modify","target":"input","operation":"replace","value":` + hostile.Object(250000) + `}]}}`)
	free := newLookCtx(1 << 30)
	res, te := decodeInterceptFull(free, raw, id)
	require.Nil(t, te)
	require.Len(t, res.Effects, 1)
	total := free.count()
	require.GreaterOrEqual(t, total, 200, "the answer's handling looks at its deadline as it goes")
	for _, after := range []int{0, 1, 2, total / 4, total / 2, total - 3} {
		ctx := newLookCtx(after)
		res, te := decodeInterceptFull(ctx, raw, id)
		require.Nil(t, res)
		require.NotNil(t, te)
		require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
		require.Equal(t, transport.StageReceive, te.Stage)
		require.LessOrEqual(t, ctx.count(), after+2, "no work after the look that saw the deadline")
	}
}
