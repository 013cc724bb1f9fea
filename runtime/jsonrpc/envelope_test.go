package jsonrpc

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

const fixtureDir = "../../testdata/fixtures/draft"

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		kind    Kind
		id      string // expected ID text ("<absent>" for none)
		method  string
		params  string
		result  string
		errRaw  string
		wantErr error
	}{
		// Valid envelopes.
		{name: "request string id", in: `{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":{"x":1}}`,
			kind: KindRequest, id: `"a"`, method: MethodIntercept, params: `{"x":1}`},
		{name: "request int id", in: `{"jsonrpc":"2.0","id":7,"method":"m","params":[1,2]}`,
			kind: KindRequest, id: `7`, method: "m", params: `[1,2]`},
		{name: "request negative id", in: `{"jsonrpc":"2.0","id":-3,"method":"m"}`,
			kind: KindRequest, id: `-3`, method: "m"},
		{name: "request big id", in: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`,
			kind: KindRequest, id: `123456789012345678901234567890`, method: "m"},
		{name: "request escaped id kept verbatim", in: `{"jsonrpc":"2.0","id":"\u0061\/b","method":"m"}`,
			kind: KindRequest, id: `"\u0061\/b"`, method: "m"},
		{name: "member order and whitespace", in: " \r\n\t{ \"params\" : { } , \"method\" :\"hooks/capabilities\",\"id\": 0 ,\"jsonrpc\":\"2.0\" } \n",
			kind: KindRequest, id: `0`, method: MethodCapabilities, params: `{ }`},
		{name: "escaped member names", in: `{"\u006asonrpc":"2.0","\u0069d":1,"m\u0065thod":"hooks\/observe"}`,
			kind: KindRequest, id: `1`, method: MethodObserve},
		{name: "escaped version", in: `{"jsonrpc":"\u0032.0","method":"m"}`,
			kind: KindNotification, id: "<absent>", method: "m"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`,
			kind: KindNotification, id: "<absent>", method: MethodObserve, params: `{}`},
		{name: "notification unknown members ignored", in: `{"jsonrpc":"2.0","method":"m","x":1,"y":{"id":2,"z":{"id":3}}}`,
			kind: KindNotification, id: "<absent>", method: "m"},
		{name: "success response", in: `{"jsonrpc":"2.0","id":"a","result":{"ok":true}}`,
			kind: KindResponse, id: `"a"`, result: `{"ok":true}`},
		{name: "success response null result", in: `{"jsonrpc":"2.0","id":1,"result":null}`,
			kind: KindResponse, id: `1`, result: `null`},
		{name: "success response null id", in: `{"jsonrpc":"2.0","id":null,"result":1}`,
			kind: KindResponse, id: `null`, result: `1`},
		{name: "error response", in: `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope","data":[1]}}`,
			kind: KindErrorResponse, id: `"a"`, errRaw: `{"code":-32601,"message":"nope","data":[1]}`},
		{name: "error response null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			kind: KindErrorResponse, id: `null`, errRaw: `{"code":-32700,"message":"Parse error"}`},
		{name: "error response unknown error member", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"","extra":true}}`,
			kind: KindErrorResponse, id: `1`, errRaw: `{"code":1,"message":"","extra":true}`},

		// Parse errors (JSON syntax or UTF-8), which win over envelope errors.
		{name: "empty", in: ``, wantErr: ErrParse},
		{name: "whitespace", in: " \n", wantErr: ErrParse},
		{name: "garbage", in: `hello`, wantErr: ErrParse},
		{name: "truncated", in: `{"jsonrpc":"2.0","id":1`, wantErr: ErrParse},
		{name: "trailing comma", in: `{"jsonrpc":"2.0","method":"m",}`, wantErr: ErrParse},
		{name: "two values", in: `{"jsonrpc":"2.0","method":"m"} {}`, wantErr: ErrParse},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","method":"m"}x`, wantErr: ErrParse},
		{name: "bad version and bad syntax", in: `{"jsonrpc":"1.0","method":"m",`, wantErr: ErrParse},
		{name: "invalid utf8 in string", in: "{\"jsonrpc\":\"2.0\",\"method\":\"m\xff\"}", wantErr: ErrParse},
		{name: "invalid utf8 in params", in: "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"a\":\"\xc3\"}}", wantErr: ErrParse},
		{name: "raw control char", in: "{\"jsonrpc\":\"2.0\",\"method\":\"a\nb\"}", wantErr: ErrParse},
		{name: "bad escape", in: `{"jsonrpc":"2.0","method":"\x"}`, wantErr: ErrParse},
		{name: "bom", in: "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", wantErr: ErrParse},
		{name: "leading zero", in: `{"jsonrpc":"2.0","id":01,"method":"m"}`, wantErr: ErrParse},
		{name: "nan", in: `{"jsonrpc":"2.0","id":NaN,"method":"m"}`, wantErr: ErrParse},
		{name: "single quotes", in: `{'jsonrpc':'2.0'}`, wantErr: ErrParse},
		{name: "too deep", in: `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, wantErr: ErrParse},

		// Envelope errors.
		{name: "batch", in: `[{"jsonrpc":"2.0","method":"m"}]`, wantErr: ErrBatch},
		{name: "empty batch", in: `[]`, wantErr: ErrBatch},
		{name: "string", in: `"x"`, wantErr: ErrNotObject},
		{name: "number", in: `1`, wantErr: ErrNotObject},
		{name: "null", in: `null`, wantErr: ErrNotObject},
		{name: "empty object", in: `{}`, wantErr: ErrVersion},
		{name: "no version", in: `{"id":1,"method":"m"}`, wantErr: ErrVersion, id: `1`},
		{name: "version 1.0", in: `{"jsonrpc":"1.0","id":1,"method":"m"}`, wantErr: ErrVersion, id: `1`},
		{name: "version number", in: `{"jsonrpc":2.0,"method":"m"}`, wantErr: ErrVersion},
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, wantErr: ErrDuplicateMember},
		{name: "duplicate id via escape", in: `{"jsonrpc":"2.0","id":1,"\u0069d":1,"method":"m"}`, wantErr: ErrDuplicateMember},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","method":"a","method":"b"}`, wantErr: ErrDuplicateMember},
		{name: "duplicate jsonrpc", in: `{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}`, wantErr: ErrDuplicateMember},
		{name: "duplicate unknown", in: `{"jsonrpc":"2.0","method":"m","x":1,"x":2}`, wantErr: ErrDuplicateMember},
		{name: "duplicate result", in: `{"jsonrpc":"2.0","id":1,"result":1,"result":2}`, wantErr: ErrDuplicateMember, id: `1`},
		{name: "duplicate in unknown member", in: `{"jsonrpc":"2.0","method":"m","x":1,"y":{"id":2,"id":3}}`, wantErr: ErrDuplicateMember},
		{name: "duplicate in params", in: `{"jsonrpc":"2.0","id":"a","method":"m","params":{"event":{"type":"deny","type":"allow"}}}`,
			wantErr: ErrDuplicateMember, id: `"a"`},
		{name: "duplicate deep in result", in: `{"jsonrpc":"2.0","id":"a","result":{"effects":[{"type":"deny"}],"effects":[{"type":"allow"}]}}`,
			wantErr: ErrDuplicateMember, id: `"a"`},
		{name: "duplicate escaped in result", in: `{"jsonrpc":"2.0","id":"a","result":{"e":[{"type":"deny","\u0074ype":"allow"}]}}`,
			wantErr: ErrDuplicateMember, id: `"a"`},
		{name: "duplicate in error data", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"","data":{"a":1,"a":1}}}`, wantErr: ErrDuplicateMember, id: `1`},
		{name: "duplicate in error object", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":""}}`, wantErr: ErrDuplicateMember, id: `1`},
		{name: "id float", in: `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id float integral", in: `{"jsonrpc":"2.0","id":1.0,"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id exponent", in: `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id bool", in: `{"jsonrpc":"2.0","id":true,"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id object", in: `{"jsonrpc":"2.0","id":{},"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id array", in: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, wantErr: ErrInvalidID},
		{name: "id empty string", in: `{"jsonrpc":"2.0","id":"","method":"m"}`, wantErr: ErrInvalidID},
		{name: "request null id", in: `{"jsonrpc":"2.0","id":null,"method":"m"}`, wantErr: ErrInvalidID, id: `null`},
		{name: "response id float", in: `{"jsonrpc":"2.0","id":2.5,"result":{}}`, wantErr: ErrInvalidID},
		{name: "method number", in: `{"jsonrpc":"2.0","id":1,"method":1}`, wantErr: ErrInvalidMethod, id: `1`},
		{name: "method null", in: `{"jsonrpc":"2.0","method":null}`, wantErr: ErrInvalidMethod},
		{name: "method empty", in: `{"jsonrpc":"2.0","method":""}`, wantErr: ErrInvalidMethod},
		{name: "params string", in: `{"jsonrpc":"2.0","method":"m","params":"x"}`, wantErr: ErrInvalidParamsType},
		{name: "params null", in: `{"jsonrpc":"2.0","method":"m","params":null}`, wantErr: ErrInvalidParamsType},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, wantErr: ErrResultAndError, id: `1`},
		{name: "method and result", in: `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, wantErr: ErrMixedMembers, id: `1`},
		{name: "params and error", in: `{"jsonrpc":"2.0","id":1,"params":{},"error":{"code":1,"message":"x"}}`, wantErr: ErrMixedMembers, id: `1`},
		{name: "params without method", in: `{"jsonrpc":"2.0","id":1,"params":{}}`, wantErr: ErrMissingMember, id: `1`},
		{name: "version only", in: `{"jsonrpc":"2.0"}`, wantErr: ErrMissingMember},
		{name: "id only", in: `{"jsonrpc":"2.0","id":1}`, wantErr: ErrMissingMember, id: `1`},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{}}`, wantErr: ErrMissingMember},
		{name: "error not object", in: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error missing code", in: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error missing message", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error code float", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error code string", in: `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error code overflow", in: `{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999,"message":"x"}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error message number", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "error member case matters", in: `{"jsonrpc":"2.0","id":1,"error":{"CODE":1,"message":"x"}}`, wantErr: ErrInvalidErrorObject, id: `1`},
		{name: "member name case matters", in: `{"jsonrpc":"2.0","ID":1,"method":"m"}`,
			kind: KindNotification, id: "<absent>", method: "m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Classify([]byte(tc.in))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, KindInvalid, env.Kind)
				if errors.Is(tc.wantErr, ErrInvalidRequest) {
					require.ErrorIs(t, err, ErrInvalidRequest)
					require.NotErrorIs(t, err, ErrParse)
				} else {
					require.NotErrorIs(t, err, ErrInvalidRequest)
				}
				wantID := tc.id
				if wantID == "" {
					wantID = "<absent>"
				}
				require.Equal(t, wantID, env.ID.String(), "id recovered from an invalid envelope")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.kind, env.Kind)
			require.Equal(t, tc.id, env.ID.String())
			require.Equal(t, tc.method, env.Method)
			require.Equal(t, tc.params, string(env.Params))
			require.Equal(t, tc.result, string(env.Result))
			require.Equal(t, tc.errRaw, string(env.Error))
		})
	}
}

func TestClassifyDepthLimit(t *testing.T) {
	// maxDepth-1 nested arrays inside the envelope object is exactly the
	// encoding/json limit.
	deep := `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	require.True(t, json.Valid([]byte(deep)))
	_, err := Classify([]byte(deep))
	require.NoError(t, err)

	tooDeep := `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`
	require.False(t, json.Valid([]byte(tooDeep)))
	_, err = Classify([]byte(tooDeep))
	require.ErrorIs(t, err, ErrParse)
}

func TestDecodeError(t *testing.T) {
	env, err := Classify([]byte(`{"jsonrpc":"2.0","id":"x","error":{"message":"Unsupported \"v\"","code":-32001,"data":{"supported":["draft"]}}}`))
	require.NoError(t, err)
	require.Equal(t, KindErrorResponse, env.Kind)
	e, err := env.DecodeError()
	require.NoError(t, err)
	require.Equal(t, CodeUnsupportedProtocolVersion, e.Code)
	require.Equal(t, `Unsupported "v"`, e.Message)
	require.JSONEq(t, `{"supported":["draft"]}`, string(e.Data))
	require.NotContains(t, e.Error(), "Unsupported \"v\"")
	require.NotContains(t, e.Error(), "draft")

	var none Envelope
	_, err = none.DecodeError()
	require.ErrorIs(t, err, ErrInvalidErrorObject)
	bad := Envelope{Error: json.RawMessage(`{"code":1`)}
	_, err = bad.DecodeError()
	require.ErrorIs(t, err, ErrInvalidErrorObject)
}

// oracleKind derives the kind of a valid envelope with encoding/json, as an
// independent check of Classify on the fixtures.
func oracleKind(t *testing.T, data []byte) Kind {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	_, hasID := m["id"]
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	switch {
	case hasMethod && hasID:
		return KindRequest
	case hasMethod:
		return KindNotification
	case hasResult:
		return KindResponse
	default:
		return KindErrorResponse
	}
}

func TestClassifyHTTPFixtures(t *testing.T) {
	// Fixtures whose envelope itself is invalid; all other fixtures are
	// envelope-valid (their invalidity, if any, is in params or result).
	invalidEnvelope := map[string]error{
		"error-response-result.invalid.json": ErrResultAndError,
	}
	files, err := filepath.Glob(filepath.Join(fixtureDir, "http", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			env, err := Classify(data)
			if want, ok := invalidEnvelope[name]; ok {
				require.ErrorIs(t, err, want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, oracleKind(t, data), env.Kind)

			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &m))
			if raw, ok := m["id"]; ok {
				require.Equal(t, string(raw), env.ID.String(), "exact id text")
			} else {
				require.True(t, env.ID.IsZero())
			}
			if raw, ok := m["params"]; ok {
				require.JSONEq(t, string(raw), string(env.Params))
			}
			if raw, ok := m["result"]; ok {
				require.JSONEq(t, string(raw), string(env.Result))
			}
			if env.Kind == KindErrorResponse {
				_, err := env.DecodeError()
				require.NoError(t, err)
			}
		})
	}

	// Spot checks.
	data, err := os.ReadFile(filepath.Join(fixtureDir, "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	env, err := Classify(data)
	require.NoError(t, err)
	require.Equal(t, KindRequest, env.Kind)
	require.Equal(t, MethodIntercept, env.Method)
	require.True(t, env.ID.Equal(StringID("evt_http_001")))

	data, err = os.ReadFile(filepath.Join(fixtureDir, "http", "error-response.valid.json"))
	require.NoError(t, err)
	env, err = Classify(data)
	require.NoError(t, err)
	require.Equal(t, KindErrorResponse, env.Kind)

	data, err = os.ReadFile(filepath.Join(fixtureDir, "http", "observe-with-id.invalid.json"))
	require.NoError(t, err)
	env, err = Classify(data)
	require.NoError(t, err, "a hooks/observe with an id is a valid JSON-RPC request; the method layer rejects it")
	require.Equal(t, KindRequest, env.Kind)
	require.Equal(t, MethodObserve, env.Method)
}

func TestClassifyStdioFixtures(t *testing.T) {
	tests := []struct {
		file string
		kind Kind
	}{
		{file: "intercept-request.valid.jsonl", kind: KindRequest},
		{file: "no-effect-response.valid.jsonl", kind: KindResponse},
		{file: "deny-response.valid.jsonl", kind: KindResponse},
		// Envelope-valid; its invalidity is two deny effects.
		{file: "deny-response-multiple.invalid.jsonl", kind: KindResponse},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(fixtureDir, "stdio", tc.file))
			require.NoError(t, err)
			defer f.Close()
			fr := NewFrameReader(f, 0)
			frame, err := fr.Next()
			require.NoError(t, err)
			env, err := Classify(frame)
			require.NoError(t, err)
			require.Equal(t, tc.kind, env.Kind)
			require.Equal(t, `"evt_stdio_001"`, env.ID.String())
			_, err = fr.Next()
			require.ErrorIs(t, err, io.EOF)
		})
	}

	t.Run("intercept-request-multiline.invalid.jsonl", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(fixtureDir, "stdio", "intercept-request-multiline.invalid.jsonl"))
		require.NoError(t, err)
		// As a whole document it is a valid envelope (fine for HTTP)...
		env, err := Classify(data)
		require.NoError(t, err)
		require.Equal(t, KindRequest, env.Kind)
		// ...but stdio framing splits it into lines, none of which is a
		// message.
		fr := NewFrameReader(strings.NewReader(string(data)), 0)
		lines := 0
		for {
			frame, err := fr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			lines++
			_, err = Classify(frame)
			// Mostly parse errors; a line such as `"/repo"` is JSON
			// but not an object.
			require.Error(t, err, "line %d: %q", lines, frame)
			if lines == 1 {
				require.ErrorIs(t, err, ErrParse)
			}
		}
		require.Equal(t, strings.Count(string(data), "\n"), lines)
	})
}

// TestClassifyLargeMessages checks that Classify finds a repeated name at
// the end of an object of thousands of members, deep down, and after one
// of those a syntax error still wins.
func TestClassifyLargeMessages(t *testing.T) {
	for _, c := range []struct {
		name, value string
		wantErr     error
	}{
		{"large object", hostile.Object(50000), nil},
		{"large object with a repeat at the end", hostile.ObjectDup(50000), ErrDuplicateMember},
		{"large array", hostile.Array(50000), nil},
		{"deep", hostile.Deep(5000, hostile.Object(100)), nil},
		{"deep with a repeat", hostile.Deep(5000, hostile.ObjectDup(100)), ErrDuplicateMember},
		{"many large objects with the same names", "[" + strings.Repeat(hostile.Object(100)+",", 500) + "1]", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := []byte(`{"jsonrpc":"2.0","id":"a","method":"m","params":{"v":` + c.value + `}}`)
			env, err := Classify(msg)
			if c.wantErr == nil {
				require.NoError(t, err)
				require.Equal(t, KindRequest, env.Kind)
				return
			}
			require.ErrorIs(t, err, c.wantErr)
			require.Equal(t, `"a"`, env.ID.String())
			_, err = Classify(append(msg[:len(msg)-1:len(msg)-1], ',', '}'))
			require.ErrorIs(t, err, ErrParse)
		})
	}
}
