package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendEncoders(t *testing.T) {
	weirdID := mustID(t, `"\u0065vt"`)
	tests := []struct {
		name string
		got  []byte
		want string
		kind Kind
	}{
		{name: "request", got: AppendRequest(nil, StringID("a"), MethodIntercept, []byte(`{"x":1}`)),
			want: `{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":{"x":1}}`, kind: KindRequest},
		{name: "request int id no params", got: AppendRequest(nil, IntID(-3), "m", nil),
			want: `{"jsonrpc":"2.0","id":-3,"method":"m"}`, kind: KindRequest},
		{name: "request multiline params compacted", got: AppendRequest(nil, IntID(1), "m", []byte("{\n  \"a\": [1,\r\n 2]\n}\n")),
			want: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2]}}`, kind: KindRequest},
		{name: "request whitespace params omitted", got: AppendRequest(nil, IntID(1), "m", []byte(" \n")),
			want: `{"jsonrpc":"2.0","id":1,"method":"m"}`, kind: KindRequest},
		{name: "request method escaped", got: AppendRequest(nil, IntID(1), "a\"\n", nil),
			want: `{"jsonrpc":"2.0","id":1,"method":"a\"\n"}`, kind: KindRequest},
		{name: "notification", got: AppendNotification(nil, MethodObserve, []byte(`{}`)),
			want: `{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`, kind: KindNotification},
		{name: "notification no params", got: AppendNotification(nil, "m", nil),
			want: `{"jsonrpc":"2.0","method":"m"}`, kind: KindNotification},
		{name: "response echoes exact id", got: AppendResponse(nil, weirdID, []byte(`{"effects":[]}`)),
			want: `{"jsonrpc":"2.0","id":"\u0065vt","result":{"effects":[]}}`, kind: KindResponse},
		{name: "response absent id and result", got: AppendResponse(nil, ID{}, nil),
			want: `{"jsonrpc":"2.0","id":null,"result":null}`, kind: KindResponse},
		{name: "response multiline result", got: AppendResponse(nil, IntID(2), []byte("[\n1\n]")),
			want: `{"jsonrpc":"2.0","id":2,"result":[1]}`, kind: KindResponse},
		{name: "error response", got: AppendErrorResponse(nil, StringID("e"), &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported AHP protocol version", Data: json.RawMessage("{\n\"supported\": [\"draft\"]}")}),
			want: `{"jsonrpc":"2.0","id":"e","error":{"code":-32001,"message":"Unsupported AHP protocol version","data":{"supported":["draft"]}}}`, kind: KindErrorResponse},
		{name: "error response nil error", got: AppendErrorResponse(nil, NullID(), nil),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`, kind: KindErrorResponse},
		{name: "error response empty message", got: AppendErrorResponse(nil, IntID(1), &Error{Code: CodeMethodNotFound}),
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, kind: KindErrorResponse},
		{name: "error response unknown code", got: AppendErrorResponse(nil, IntID(1), &Error{Code: 7}),
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":7,"message":"Error"}}`, kind: KindErrorResponse},
		{name: "appends to dst", got: AppendNotification([]byte("prefix:"), "m", nil),
			want: `prefix:{"jsonrpc":"2.0","method":"m"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, string(tc.got))
			require.NotContains(t, string(tc.got), "\n")
			if tc.kind == KindInvalid {
				return
			}
			env, err := Classify(tc.got)
			require.NoError(t, err)
			require.Equal(t, tc.kind, env.Kind)
		})
	}
}

func TestAppendInvalidRawStaysOnOneLine(t *testing.T) {
	got := AppendResponse(nil, IntID(1), []byte("{\"a\":\n"))
	require.NotContains(t, string(got), "\n")
	require.NotContains(t, string(got), "\r")
	_, err := Classify(got)
	require.ErrorIs(t, err, ErrParse)
}

func TestAppendRoundTripID(t *testing.T) {
	for _, text := range []string{`"evt_1"`, `"\u00e9"`, `"a\/b"`, `0`, `-0`, `-17`, `123456789012345678901234567890`} {
		t.Run(text, func(t *testing.T) {
			req := AppendRequest(nil, mustID(t, text), MethodIntercept, []byte(`{}`))
			env, err := Classify(req)
			require.NoError(t, err)
			resp := AppendResponse(nil, env.ID, []byte(`{}`))
			got, err := Classify(resp)
			require.NoError(t, err)
			require.Equal(t, text, got.ID.String(), "response must echo the id byte for byte")
			require.True(t, bytes.Contains(resp, []byte(`"id":`+text+`,`)))
		})
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "\x00\x01\x1f\x7f", "\t\n\r\b\f", "é中😀", "\u2028\u2029", "bad\xff\xfeutf8", "<&>"} {
		got := appendString(nil, s)
		require.True(t, json.Valid(got), "%q", got)
		var back string
		require.NoError(t, json.Unmarshal(got, &back))
		want, err := json.Marshal(s)
		require.NoError(t, err)
		var wantBack string
		require.NoError(t, json.Unmarshal(want, &wantBack))
		require.Equal(t, wantBack, back)
	}
}

func TestErrorType(t *testing.T) {
	tests := []struct {
		code int
		text string
	}{
		{CodeParseError, "Parse error"},
		{CodeInvalidRequest, "Invalid Request"},
		{CodeMethodNotFound, "Method not found"},
		{CodeInvalidParams, "Invalid params"},
		{CodeInternalError, "Internal error"},
		{CodeUnsupportedProtocolVersion, "Unsupported protocol version"},
		{CodeUnsupportedEvent, "Unsupported event"},
		{CodeBackendUnavailable, "Backend unavailable"},
		{CodeBackendInternalError, "Backend internal error"},
		{-32050, "Server error"},
		{-32000, "Server error"},
		{-32100, ""},
		{0, ""},
		{42, ""},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			require.Equal(t, tc.text, CodeText(tc.code))
			e := &Error{Code: tc.code, Message: "secret token abc123", Data: json.RawMessage(`{"password":"hunter2"}`)}
			msg := e.Error()
			require.Contains(t, msg, fmt.Sprint(tc.code))
			require.NotContains(t, msg, "secret")
			require.NotContains(t, msg, "hunter2")
			if tc.text != "" {
				require.Contains(t, msg, tc.text)
			}
		})
	}
	// Code values are fixed by JSON-RPC 2.0 and base/errors.md.
	require.Equal(t, -32700, CodeParseError)
	require.Equal(t, -32600, CodeInvalidRequest)
	require.Equal(t, -32601, CodeMethodNotFound)
	require.Equal(t, -32602, CodeInvalidParams)
	require.Equal(t, -32603, CodeInternalError)
	require.Equal(t, -32001, CodeUnsupportedProtocolVersion)
	require.Equal(t, -32002, CodeUnsupportedEvent)
	require.Equal(t, -32003, CodeBackendUnavailable)
	require.Equal(t, -32004, CodeBackendInternalError)
	require.Equal(t, "hooks/intercept", MethodIntercept)
	require.Equal(t, "hooks/observe", MethodObserve)
	require.Equal(t, "hooks/capabilities", MethodCapabilities)

	var nilErr *Error
	require.NotPanics(t, func() { _ = nilErr.Error() })

	wrapped := fmt.Errorf("call: %w", &Error{Code: CodeMethodNotFound, Message: "x"})
	require.ErrorIs(t, wrapped, NewError(CodeMethodNotFound))
	require.NotErrorIs(t, wrapped, NewError(CodeInvalidParams))
}

func TestAsError(t *testing.T) {
	remote := &Error{Code: CodeBackendUnavailable, Message: "m"}
	tests := []struct {
		name string
		err  error
		code int
	}{
		{"parse", fmt.Errorf("x: %w", ErrParse), CodeParseError},
		{"invalid", ErrDuplicateMember, CodeInvalidRequest},
		{"batch", ErrBatch, CodeInvalidRequest},
		{"rpc error", fmt.Errorf("x: %w", remote), CodeBackendUnavailable},
		{"other", errors.New("db password=hunter2"), CodeInternalError},
		{"nil", nil, CodeInternalError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := AsError(tc.err)
			require.Equal(t, tc.code, e.Code)
			require.NotContains(t, e.Message, "hunter2")
		})
	}
	_, err := Classify([]byte(`{`))
	require.Equal(t, CodeParseError, AsError(err).Code)
	_, err = Classify([]byte(`[]`))
	require.Equal(t, CodeInvalidRequest, AsError(err).Code)
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		KindInvalid: "invalid", KindRequest: "request", KindNotification: "notification",
		KindResponse: "response", KindErrorResponse: "error response", Kind(99): "invalid",
	} {
		require.Equal(t, want, k.String())
	}
}
