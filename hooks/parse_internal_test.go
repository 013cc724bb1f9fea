package hooks

import (
	"context"
	"testing"

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
		// A repeated name is found by the envelope scan, which comes
		// before the first look at the deadline: rejected either way.
		{answer(hostile.ObjectDup(100000)), transport.CodeProtocolRejection},
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
