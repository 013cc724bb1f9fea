package server

import (
	"strings"
	"testing"
)

// TestClassifyDocAgreesOnEdgeCases: classification from the tokens agrees
// with jsonrpc.Classify on names equal only after unescaping (nested and
// top level), ids of every JSON type and spelling, a BOM, a NUL after the
// value, surrogate pairs and lone surrogates, repeats inside params, result
// and error, huge numbers, and nesting at the depth limit and beyond it.
func TestClassifyDocAgreesOnEdgeCases(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"\u0061":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"\/":1,"/":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","\u006dethod":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[{"a":1},{"a":2}]}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"m"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"1","method":"m"}`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`,
		`{"jsonrpc":"2.0","id":{},"method":"m"}`,
		"\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\x00",
		"\t\r\n {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n",
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud83d\ude00"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud83d"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"\ud83d\ude00":1,"😀":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":{"a":1,"a":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x","code":2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x","data":{"q":1,"q":2}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"q":1,"q":2}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"q":1,"q":2},"id":2}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1e400}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"d":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999) + `}`,
	} {
		t.Run("", func(t *testing.T) { checkClassifyDoc(t, []byte(s)) })
	}
}
