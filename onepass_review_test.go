package agenthooks_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
)

// endsAfter is a context that can end (Done is not nil) and whose Err
// reports it ended from its n+1st call on: a deadline that passes right
// after validation, in the middle of decoding.
type endsAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
	done  chan struct{}
}

func (c *endsAfter) Done() <-chan struct{} { return c.done }
func (c *endsAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.DeadlineExceeded
	}
	return nil
}

// TestOnePassDecodeStopsAtDeadline: a context that ends after validation
// stops the decoding of the tokens of a large request, whether the bulk is
// raw JSON kept verbatim or members decoded one by one.
func TestOnePassDecodeStopsAtDeadline(t *testing.T) {
	var input strings.Builder
	input.WriteString("{")
	for i := range 50000 {
		if i > 0 {
			input.WriteString(",")
		}
		input.WriteString(`"k` + strconv.Itoa(i) + `":[1,2]`)
	}
	input.WriteString("}")
	msg := `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft",` +
		`"event":{"id":"e1","source":"https://h.example/","type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"session":{"id":"s"},"tool":{"name":"w","kind":"file_write","input":` + input.String() + `,"origin":"native"},` +
		`"call":{"id":"c"},"path":"x"},"capabilities":{"effects":["deny"]}}}`
	_, err := gen.ParseInterceptRequestContext(context.Background(), []byte(msg))
	require.NoError(t, err)
	ctx := &endsAfter{Context: context.Background(), n: 1, done: make(chan struct{})}
	_, err = gen.ParseInterceptRequestContext(ctx, []byte(msg))
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}
