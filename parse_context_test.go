package agenthooks_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// lookCtx is a context whose deadline passes at a given look: its first
// `after` calls of Err report nil; the next one and every later one report
// context.DeadlineExceeded and close Done. It counts every call, so a test
// sees how often, and until when, a parse looked at its deadline.
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

// largeAnswer is a valid intercept answer of about 4 MiB: an input
// replacement of 250k members.
func largeAnswer() []byte {
	return []byte(`{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[` +
		`{"type":"modify","target":"input","operation":"replace","value":` + hostile.Object(250000) + `}]}}`)
}

// TestParseContextStopsInsideDecode: the typed decode of a valid 4 MiB
// answer looks at its context regularly (hundreds of times, not only
// before and after), and when the deadline passes in the middle of it the
// parse ends at the next look with an error that wraps the context's
// error, is not a validation failure, and returns no value.
func TestParseContextStopsInsideDecode(t *testing.T) {
	raw := largeAnswer()
	require.Greater(t, len(raw), 4<<20-200<<10)

	free := newLookCtx(1 << 30)
	resp, err := gen.ParseInterceptResponseContext(free, raw)
	require.NoError(t, err)
	require.Len(t, resp.Result.Effects, 1)
	total := free.count()
	// 250k members are a quarter of a million values: one look per
	// thousand at least.
	require.GreaterOrEqual(t, total, 200, "the decode looks at its context as it goes")

	for _, after := range []int{total / 4, total / 2, total - 10} {
		ctx := newLookCtx(after)
		resp, err := gen.ParseInterceptResponseContext(ctx, raw)
		require.Nil(t, resp)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, gen.ErrInvalid)
		var pe *gen.ParseError
		require.False(t, errors.As(err, &pe), "a stopped parse is not a *ParseError")
		require.Equal(t, after+1, ctx.count(), "the parse ends at its first look past the deadline")
	}
}

// TestParseContextEndedBefore: a context that ended before the parse
// starts makes it return its error at once, for any document, valid or
// not; nothing is decoded.
func TestParseContextEndedBefore(t *testing.T) {
	for _, doc := range [][]byte{largeAnswer(), []byte(`{}`), []byte(`not json`)} {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		resp, err := gen.ParseInterceptResponseContext(ctx, doc)
		require.Nil(t, resp)
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, gen.ErrInvalid)

		ended := newLookCtx(0)
		_, err = gen.ParseInterceptResponseContext(ended, doc)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.LessOrEqual(t, ended.count(), 2, "the parse looks once and gives up")
	}
}

// TestParseContextDuplicateMembers: without the separate pass for repeated
// member names that UnmarshalJSON makes, Parse...Context still rejects a
// repeat at any depth and any size (its validation finds them), as
// ParseInterceptResponse and UnmarshalJSON do.
func TestParseContextDuplicateMembers(t *testing.T) {
	answer := func(value string) string {
		return `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[` +
			`{"type":"modify","target":"input","operation":"replace","value":` + value + `}]}}`
	}
	for _, c := range []struct {
		name, doc string
	}{
		{"envelope", `{"jsonrpc":"2.0","id":"evt-1","id":"evt-2","result":{"protocolVersion":"draft","effects":[]}}`},
		{"result", `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"no"}],"effects":[{"type":"allow"}]}}`},
		{"effect", `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"deny","type":"allow"}]}}`},
		{"value", answer(`{"a":1,"a":2}`)},
		{"escaped name", answer(`{"a":1,"\u0061":2}`)},
		{"deep value", answer(hostile.Deep(600, `{"x":1,"x":2}`))},
		{"deep arrays", answer(`{"v":` + hostile.DeepArrays(2000, `{"x":1,"x":2}`) + `}`)},
		{"lone surrogate", answer(`{"s":"\ud800","a":1,"a":2}`)},
		{"end of a large value", answer(hostile.ObjectDup(100000))},
		{"unknown member", `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[],"x":{"k":1,"k":2}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := []byte(c.doc)
			require.True(t, hostile.HasDuplicate(doc), "the case repeats a name")
			resp, err := gen.ParseInterceptResponseContext(t.Context(), doc)
			require.Nil(t, resp)
			require.ErrorIs(t, err, gen.ErrInvalid)
			require.ErrorIs(t, err, validate.ErrDuplicateMember)
			_, err = gen.ParseInterceptResponse(doc)
			require.ErrorIs(t, err, validate.ErrDuplicateMember)
			var v gen.InterceptResponse
			require.ErrorIs(t, v.UnmarshalJSON(doc), gen.ErrInvalid)
		})
	}
}

// TestParseContextAgreesWithParse: on the valid and invalid documents of
// the fixtures, and on a large valid one, Parse...Context accepts what
// Parse accepts and decodes it to the same value.
func TestParseContextAgreesWithParse(t *testing.T) {
	docs := [][]byte{largeAnswer()}
	for _, s := range decodeSeeds(t) {
		docs = append(docs, s)
	}
	accepted := 0
	for _, doc := range docs {
		want, werr := gen.ParseInterceptResponse(doc)
		got, gerr := gen.ParseInterceptResponseContext(t.Context(), doc)
		if len(doc) <= 16<<10 {
			require.Equal(t, werr == nil, gerr == nil, "%s", truncate(doc))
		} else if gerr == nil {
			require.NoError(t, werr)
		}
		if werr != nil || gerr != nil {
			continue
		}
		accepted++
		a, err := gen.EncodeInterceptResponse(want)
		require.NoError(t, err)
		b, err := gen.EncodeInterceptResponse(got)
		require.NoError(t, err)
		require.Equal(t, string(a), string(b))
	}
	require.Positive(t, accepted)
}

func truncate(doc []byte) string {
	s := string(doc)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
