package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// TestErrorReplyBytes: errorReply's assembled responses are byte for byte
// what jsonrpc.AppendErrorResponse encodes, for every code the dispatcher
// answers with (and one it does not) and every kind of id.
func TestErrorReplyBytes(t *testing.T) {
	codes := []int{
		jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound,
		jsonrpc.CodeInvalidParams, jsonrpc.CodeInternalError, jsonrpc.CodeUnsupportedProtocolVersion,
		jsonrpc.CodeUnsupportedEvent, jsonrpc.CodeBackendUnavailable, jsonrpc.CodeBackendInternalError,
		-32050,
	}
	require.Len(t, errorTails(), len(codes)-1)
	ids := []jsonrpc.ID{{}, jsonrpc.NullID(), jsonrpc.StringID("evt-1"), jsonrpc.StringID("a\"b\\c\u2028"), jsonrpc.IntID(-7), jsonrpc.IntID(0)}
	for _, code := range codes {
		for _, id := range ids {
			e := jsonrpc.NewError(code)
			if code == jsonrpc.CodeUnsupportedProtocolVersion {
				e.Data = supportedVersions
			}
			want := jsonrpc.AppendErrorResponse(nil, id, e)
			got := errorReply(id, code)
			require.Equal(t, outReply, got.out)
			require.Equal(t, string(want), string(got.body), "code %d id %s", code, id)
			if _, known := errorTails()[code]; known {
				require.Equal(t, len(got.body), cap(got.body), "one exact allocation")
			}
		}
	}
}
