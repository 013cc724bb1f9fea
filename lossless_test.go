package agenthooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
)

const requestWithExtras = `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","zExtra":{"b":1,"a":[1.50,1e2]},"aExtra":null,` +
	`"params":{"protocolVersion":"draft","xParam":-0.0,` +
	`"event":{"id":"evt_1","source":"https://host.example/agent","type":"tool.before","time":"2026-01-02T03:04:05Z",` +
	`"call":{"id":"c1"},"path":"/tools/shell","tool":{"name":"shell","kind":"shell","input":{"command":"ls","n":10.0,"nested":{"z":null,"a":true}},"origin":"native"},` +
	`"unknownEventMember":{"deep":[{"x":"y"}]}},` +
	`"capabilities":{"effects":["deny","modify"],"modify":{"input":{"replace":true,"merge":false}}},` +
	`"state":{"permission":"none","candidate":null}}}`

// TestLosslessRoundTrip: unknown members at every level are kept and
// re-emitted in their original order after the known members; numbers keep
// their exact text; null stays null and absent stays absent.
func TestLosslessRoundTrip(t *testing.T) {
	req, err := gen.ParseInterceptRequest([]byte(requestWithExtras))
	require.NoError(t, err)
	require.Equal(t, []string{"zExtra", "aExtra"}, []string{req.Unknown[0].Name, req.Unknown[1].Name})
	require.JSONEq(t, `{"b":1,"a":[1.50,1e2]}`, string(req.Unknown[0].Value))
	require.NotNil(t, req.Params.State)
	require.False(t, req.Params.State.Candidate.Valid, "candidate is JSON null")
	require.Nil(t, req.Params.State.Flow, "absent flow stays absent")
	require.NotNil(t, req.Params.Event.ToolBefore)
	require.Equal(t, "evt_1", req.Params.Event.ID())

	out, err := gen.EncodeInterceptRequest(req)
	require.NoError(t, err)
	s := string(out)
	for _, exact := range []string{`1.50`, `1e2`, `-0.0`, `10.0`, `"candidate":null`, `"unknownEventMember":{"deep":[{"x":"y"}]}`} {
		require.Contains(t, s, exact)
	}
	require.NotContains(t, s, `"flow"`)
	require.Less(t, strings.Index(s, `"params"`), strings.Index(s, `"zExtra"`), "unknown members follow the known ones")
	require.Less(t, strings.Index(s, `"zExtra"`), strings.Index(s, `"aExtra"`), "unknown members keep their order")

	again, err := gen.ParseInterceptRequest(out)
	require.NoError(t, err)
	out2, err := gen.EncodeInterceptRequest(again)
	require.NoError(t, err)
	require.Equal(t, s, string(out2))

	// encoding/json sees the same bytes through MarshalJSON.
	viaStd, err := json.Marshal(req)
	require.NoError(t, err)
	require.JSONEq(t, s, string(viaStd))
}

func TestAbsentNullZeroStayDistinct(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		check     func(t *testing.T, st *gen.InterceptState)
	}{
		{"null candidate", `{"permission":"none","candidate":null}`, func(t *testing.T, st *gen.InterceptState) {
			require.False(t, st.Candidate.Valid)
		}},
		{"candidate with null value", `{"permission":"allow","candidate":{"value":null}}`, func(t *testing.T, st *gen.InterceptState) {
			require.True(t, st.Candidate.Valid)
			require.Equal(t, "null", string(st.Candidate.Value.Value))
		}},
		{"candidate with zero value", `{"permission":"allow","candidate":{"value":0}}`, func(t *testing.T, st *gen.InterceptState) {
			require.Equal(t, "0", string(st.Candidate.Value.Value))
		}},
		{"empty instructions", `{"permission":"none","candidate":null,"instructions":[]}`, func(t *testing.T, st *gen.InterceptState) {
			require.NotNil(t, st.Instructions)
			require.Empty(t, st.Instructions)
		}},
		{"absent instructions", `{"permission":"none","candidate":null}`, func(t *testing.T, st *gen.InterceptState) {
			require.Nil(t, st.Instructions)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st gen.InterceptState
			require.NoError(t, json.Unmarshal([]byte(tc.doc), &st))
			tc.check(t, &st)
			out, err := json.Marshal(st)
			require.NoError(t, err)
			require.JSONEq(t, tc.doc, string(out))
		})
	}
}

// TestParseErrorCarriesPointerNotValue: a rejected document yields a
// *gen.ParseError naming pointer and keyword, never the offending value.
func TestParseErrorCarriesPointerNotValue(t *testing.T) {
	const canary = "SECRET-CANARY-7f3a"
	for _, tc := range []struct {
		name, doc, pointer string
	}{
		{"bad source uri", strings.Replace(requestWithExtras, `https://host.example/agent`, canary+" not a uri", 1), "/params/event/source"},
		{"bad protocol version", strings.Replace(requestWithExtras, `"protocolVersion":"draft"`, `"protocolVersion":"`+canary+`"`, 1), "/params/protocolVersion"},
		{"id mismatch", strings.Replace(requestWithExtras, `"id":"evt_1","method"`, `"id":"`+canary+`","method"`, 1), "/id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen.ParseInterceptRequest([]byte(tc.doc))
			require.Error(t, err)
			var pe *gen.ParseError
			require.True(t, errors.As(err, &pe))
			require.True(t, errors.Is(err, gen.ErrInvalid))
			require.Equal(t, tc.pointer, pe.Pointer)
			require.NotEmpty(t, pe.Keyword)
			require.NotContains(t, err.Error(), canary)
		})
	}
}

func TestEventCatalogue(t *testing.T) {
	events := gen.Events()
	require.Len(t, events, 32)
	intercept := 0
	for _, e := range events {
		info, ok := gen.LookupEvent(e.Name)
		require.True(t, ok)
		require.Equal(t, e.Name, info.Name)
		require.NotEmpty(t, info.PayloadType)
		if info.Interceptable() {
			intercept++
			require.NotEmpty(t, info.CapabilitySchema, e.Name)
			require.NotEmpty(t, info.EffectFamilies, e.Name)
		}
	}
	require.Equal(t, 19, intercept)
	tb, _ := gen.LookupEvent(gen.EventToolBefore)
	require.Equal(t, "ToolBefore", tb.GoName)
	require.Equal(t, "ToolBeforeEvent", tb.PayloadType)
	require.Equal(t, []gen.ModifyTarget{gen.ModifyTargetInput}, tb.ModifyTargets)
	require.Contains(t, tb.EffectFamilies, gen.EffectFamily("return"))
	// The catalogue is detached: mutating a copy changes nothing.
	tb.EffectFamilies[0] = "mutated"
	again, _ := gen.LookupEvent(gen.EventToolBefore)
	require.NotEqual(t, gen.EffectFamily("mutated"), again.EffectFamilies[0])
}

// TestEscapedMemberNames: member names are matched after unescaping, both
// for known members and for a union's discriminator, and unknown names keep
// their decoded text even after the input buffer is reused.
func TestEscapedMemberNames(t *testing.T) {
	doc := []byte(`{"\u0069d":"evt_1","source":"urn:x","\u0074ype":"tool.b\u0065fore","time":"2026-01-02T03:04:05Z",` +
		`"call":{"id":"c1"},"path":"native","tool":{"name":"shell","input":{},"origin":"native"},"x\u00e9tra":1,"plain":2}`)
	var ev gen.Event
	require.NoError(t, ev.UnmarshalJSON(doc))
	require.NotNil(t, ev.ToolBefore)
	require.Equal(t, "evt_1", ev.ID())
	require.Equal(t, gen.EventToolBefore, gen.EventName(ev.Type()))
	for i := range doc { // the decoded value must not alias the input
		doc[i] = 'X'
	}
	require.Len(t, ev.ToolBefore.Unknown, 2)
	require.Equal(t, "xétra", ev.ToolBefore.Unknown[0].Name)
	require.Equal(t, "plain", ev.ToolBefore.Unknown[1].Name)
	require.Equal(t, "urn:x", ev.ToolBefore.Source)
}

// TestEncodeNilIsInvalid: encoding a nil root is an error matching
// gen.ErrInvalid that names the function, never a panic.
func TestEncodeNilIsInvalid(t *testing.T) {
	for name, encode := range map[string]func() ([]byte, error){
		"EncodeInterceptRequest":  func() ([]byte, error) { return gen.EncodeInterceptRequest(nil) },
		"EncodeInterceptResponse": func() ([]byte, error) { return gen.EncodeInterceptResponse(nil) },
		"EncodeEvent":             func() ([]byte, error) { return gen.EncodeEvent(nil) },
		"EncodeEventFramed":       func() ([]byte, error) { return gen.EncodeEventFramed(nil, 8, 8) },
	} {
		out, err := encode()
		require.Nil(t, out, name)
		require.ErrorIs(t, err, gen.ErrInvalid, name)
		require.ErrorContains(t, err, name)
	}
}

// TestEncodeEventFramed: the framed encoding is EncodeEvent's bytes behind
// head zero bytes, with room for tail more; a negative head or tail is
// zero, one over 1 MiB an error, never a panic.
func TestEncodeEventFramed(t *testing.T) {
	req, err := gen.ParseInterceptRequest([]byte(requestWithExtras))
	require.NoError(t, err)
	ev := &req.Params.Event
	want, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	for _, tc := range []struct{ head, tail, wantHead int }{
		{0, 0, 0}, {1, 0, 1}, {0, 1, 0}, {47, 93, 47}, {-5, -5, 0}, {1 << 20, 1 << 20, 1 << 20},
	} {
		out, err := gen.EncodeEventFramed(ev, tc.head, tc.tail)
		require.NoError(t, err)
		require.Len(t, out, tc.wantHead+len(want))
		require.Equal(t, make([]byte, tc.wantHead), out[:tc.wantHead], "head %d", tc.head)
		require.Equal(t, string(want), string(out[tc.wantHead:]))
		require.GreaterOrEqual(t, cap(out)-len(out), max(tc.tail, 0))
	}
	for _, tc := range [][2]int{{1<<20 + 1, 0}, {0, 1<<20 + 1}, {int(^uint(0) >> 1), 1}} {
		out, err := gen.EncodeEventFramed(ev, tc[0], tc[1])
		require.Nil(t, out)
		require.ErrorIs(t, err, gen.ErrInvalid)
	}
	// An event the encoder rejects is an error, as for EncodeEvent.
	_, err = gen.EncodeEventFramed(&gen.Event{}, 8, 8)
	require.ErrorIs(t, err, gen.ErrInvalid)
}
