package agenthooks_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// retentionRequest is a valid intercept request whose tool input is a
// large value of its own: what a short string kept from the decoded
// request must not keep alive.
var retentionRequest = []byte(`{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"e1",` +
	`"source":"https://h.example/","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s"},` +
	`"tool":{"name":"w","input":{"s":"` + strings.Repeat("x", 64<<10) + `"},"origin":"native"},"call":{"id":"c"},"path":"x"},` +
	`"capabilities":{"effects":["deny"]},"state":{"permission":"none","candidate":null}}}`)

// decodeAndKeep decodes retentionRequest with decode and returns two short
// strings of the result (the first values decoded, which share the
// decoding's first chunk) and a weak pointer to its tool input.
func decodeAndKeep(t *testing.T, decode func([]byte) (*gen.InterceptRequest, error)) (string, gen.JSONRPCID, weak.Pointer[byte]) {
	t.Helper()
	v, err := decode(retentionRequest)
	require.NoError(t, err)
	input := v.Params.Event.ToolBefore.Tool.Input
	require.Greater(t, len(input), 64<<10)
	return v.Params.Event.ID(), v.ID, weak.Make(&input[0])
}

// TestKeptStringDoesNotRetainDocument: a short string kept from a decoded
// document keeps alive at most its chunk, not the rest of the document,
// whichever way the document was decoded.
func TestKeptStringDoesNotRetainDocument(t *testing.T) {
	for _, tc := range []struct {
		name   string
		decode func([]byte) (*gen.InterceptRequest, error)
	}{
		{"Parse", gen.ParseInterceptRequest},
		{"ParseContext", func(b []byte) (*gen.InterceptRequest, error) {
			return gen.ParseInterceptRequestContext(context.Background(), b)
		}},
		{"ParseDoc", func(b []byte) (*gen.InterceptRequest, error) {
			doc := validate.Scan(context.Background(), b)
			defer doc.Release()
			return gen.ParseInterceptRequestDoc(context.Background(), doc)
		}},
		{"DecodeAt", func(b []byte) (*gen.InterceptRequest, error) {
			doc := validate.Scan(context.Background(), b)
			defer doc.Release()
			v := new(gen.InterceptRequest)
			return v, gen.DecodeAt(doc, 0, v)
		}},
		{"UnmarshalJSON", func(b []byte) (*gen.InterceptRequest, error) {
			v := new(gen.InterceptRequest)
			return v, json.Unmarshal(b, v)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, rpcID, input := decodeAndKeep(t, tc.decode)
			runtime.GC()
			runtime.GC()
			require.Nil(t, input.Value(), "the tool input is still reachable from the kept strings")
			require.Equal(t, "e1", id)
			require.JSONEq(t, `"e1"`, string(rpcID))
			runtime.KeepAlive(id)
			runtime.KeepAlive(rpcID)
		})
	}
}
