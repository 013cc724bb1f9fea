package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// classifySeeds are messages for the classification differential: every
// fixture message, envelope errors of each kind, repeated names at the top
// and inside members, and large and deep messages.
func classifySeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var seeds [][]byte
	for _, pattern := range []string{"http/*.json", "stdio/*.jsonl"} {
		files, err := filepath.Glob(filepath.Join(fixtures.Root(), "fixtures", "draft", pattern))
		require.NoError(tb, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(tb, err)
			seeds = append(seeds, data)
			for line := range bytes.SplitSeq(data, []byte("\n")) {
				if len(line) > 0 {
					seeds = append(seeds, line)
				}
			}
		}
	}
	for _, s := range []string{
		``, `{}`, `[]`, `[1]`, `null`, `"x"`, `1`, `{"jsonrpc":"2.0"}`, ` {"jsonrpc" : "2.0" , "id" : 1 , "method" : "m" } `,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":3}`,
		`{"jsonrpc":"2.0","id":"\u0061","method":"hooks\/observe"}`,
		`{"jsonrpc":"2.0","id":-0,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":[]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1.5,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"x":1,"x":2,"method":"m"}`,
		`{"jsonrpc":"2.0","i\u0064":1,"id":2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`,
		`{"jsonrpc":"1.0","id":1,"method":"m","params":{"a":1,"a":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":1,"b":2}},"id":3}`,
		`{"x":{"b":1,"b":2},"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":"h\u006fok"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`,
		`{"jsonrpc":"2.0","params":{}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","result":1}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
		`{"a":[[[[{"b":"\ud800"}]]]],"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m"} x`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + hostile.Object(3000) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + hostile.ObjectDup(3000) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"d":` + hostile.Deep(9998, "1") + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"d":` + hostile.Deep(9999, "1") + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"d":` + hostile.DeepArrays(10001, "1") + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat(`\"\u00e9`, 1000) + `"}}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkClassifyDoc: for a message whose scan has tokens, classifyDoc gives
// jsonrpc.Classify's envelope and error; a message without tokens is
// classified by jsonrpc.Classify itself.
func checkClassifyDoc(t *testing.T, msg []byte) {
	d := validate.Scan(context.Background(), msg)
	defer d.Release()
	want, werr := jsonrpc.Classify(msg)
	if !d.Tokens() {
		return
	}
	got, err := classifyDoc(d)
	if errors.Is(werr, jsonrpc.ErrParse) {
		t.Fatalf("Classify: %v, but the scan has tokens", werr)
	}
	if !errors.Is(err, werr) || (err == nil) != (werr == nil) {
		t.Fatalf("classifyDoc: %v; Classify: %v", err, werr)
	}
	if got.Kind != want.Kind || got.ID.String() != want.ID.String() || got.Method != want.Method ||
		!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) || !bytes.Equal(got.Error, want.Error) {
		t.Fatalf("classifyDoc: %+v; Classify: %+v", got, want)
	}
	if err == nil && got.Params != nil {
		p, ok := d.Member(0, "params")
		require.True(t, ok)
		rq := &request{env: got, doc: d}
		require.Equal(t, p, rq.paramsAt())
		require.Equal(t, readHead(got.Params), rq.head())
		require.Equal(t, checkVersion(got.Params), rq.unsupportedVersion())
	}
}

// TestClassifyDocAgrees: the envelope classified from the tokens of one
// scan is jsonrpc.Classify's, for every seed.
func TestClassifyDocAgrees(t *testing.T) {
	tokens := 0
	for _, s := range classifySeeds(t) {
		checkClassifyDoc(t, s)
		d := validate.Scan(context.Background(), s)
		if d.Tokens() {
			tokens++
		}
		d.Release()
	}
	require.Greater(t, tokens, 40)
}

func FuzzClassifyDoc(f *testing.F) {
	for _, s := range classifySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkClassifyDoc)
}
