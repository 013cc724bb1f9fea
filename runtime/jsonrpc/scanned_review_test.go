package jsonrpc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// TestClassifyScannedEmptyValue: a member without a value (the caller
// broke ClassifyScanned's contract) is a parse error, not a panic.
func TestClassifyScannedEmptyValue(t *testing.T) {
	for _, name := range []string{"jsonrpc", "id", "method", "params", "result", "error", "x"} {
		require.NotPanics(t, func() {
			_, err := jsonrpc.ClassifyScanned([]byte(`{}`), []jsonrpc.TopMember{{Name: []byte(name)}})
			require.ErrorIs(t, err, jsonrpc.ErrParse, name)
		}, name)
	}
}
