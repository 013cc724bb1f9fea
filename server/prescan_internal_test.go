package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// memberHead is the reference reading of readHead: one jsonrpc.Member call
// per member.
func memberHead(params []byte) paramsHead {
	var p paramsHead
	p.version, p.hasVersion = jsonrpc.Member(params, "protocolVersion")
	p.event, p.hasEvent = jsonrpc.Member(params, "event")
	if p.hasEvent {
		p.typ, p.hasType = jsonrpc.Member(p.event, "type")
	}
	return p
}

// headParams are params objects, each the params of a message that
// jsonrpc.Classify accepts.
var headParams = []string{
	`{}`,
	` { } `,
	`[]`,
	`[1,{"event":{"type":"tool.before"}}]`,
	`{"protocolVersion":"draft","event":{"id":"e","type":"tool.before","tool":{"name":"x","input":{"type":"nested"}}},"capabilities":{"effects":["deny"]}}`,
	"{\n\t\"protocolVersion\" : \"draft\" ,\r\n \"event\" : { \"type\" : \"tool.after\" , \"n\" : -1.5e+3 } \n}\n",
	`{"protocolVersion":"v2","event":{"type":"tool.before"}}`,
	`{"protocolVersion":1,"event":{"type":2}}`,
	`{"protocolVersion":null,"event":null}`,
	`{"event":"tool.before"}`,
	`{"event":["type","tool.before"]}`,
	`{"event":{}}`,
	`{"x":{"event":{"type":"hidden"}},"event":{"y":{"type":"deep"},"type":"top"}}`,
	`{"s":"} { ] [ , : \" \\ \\\" \u0022","event":{"type":"tool.before","t":"\"type\":\"x\""}}`,
	`{"event":{"type":"tool.\u0062efore"}}`,
	`{"event":{"type":"tool.before\\"}}`,
	`{"event":{"typ\u0065":"escaped name"}}`,
	`{"\u0065vent":{"type":"escaped top name"}}`,
	`{"protocol\u0056ersion":"draft"}`,
	`{"event":{"type":true,"b":false,"n":null,"z":0,"a":[[],{},[{}]]}}`,
	`{"event":{"type":"é ünïcödé ☃ 😀"}}`,
	`{"event":{"type":""}}`,
}

// dupParams repeat a member name that readHead reads; Classify rejects
// such a message before the dispatcher reads anything.
var dupParams = []string{
	`{"event":{"type":"a"},"event":{"id":"only"}}`,
	`{"event":{"id":"only"},"event":{"type":"b"}}`,
	`{"event":{"type":"a","type":"b"}}`,
	`{"protocolVersion":"x","protocolVersion":"draft"}`,
}

func TestReadHeadDuplicatesRejectedFirst(t *testing.T) {
	for _, params := range dupParams {
		_, err := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`))
		require.ErrorIs(t, err, jsonrpc.ErrDuplicateMember, params)
	}
}

func TestReadHeadMatchesMember(t *testing.T) {
	for _, params := range headParams {
		t.Run(params, func(t *testing.T) {
			msg := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`
			env, err := jsonrpc.Classify([]byte(msg))
			require.NoError(t, err)
			require.Equal(t, memberHead(env.Params), readHead(env.Params))
		})
	}
}

// FuzzReadHead checks readHead against one jsonrpc.Member call per member on
// the params of every message that jsonrpc.Classify accepts.
func FuzzReadHead(f *testing.F) {
	for _, p := range append(headParams, dupParams...) {
		f.Add([]byte(p))
	}
	for _, v := range hostile.Values() {
		f.Add([]byte(`{"protocolVersion":"draft","x":` + v + `,"event":` + v + `}`))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		msg := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`), params...), '}')
		env, err := jsonrpc.Classify(msg)
		if err != nil || env.Params == nil {
			return
		}
		require.Equal(t, memberHead(env.Params), readHead(env.Params))
	})
}

func BenchmarkReadHead(b *testing.B) {
	env, err := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":"evt-bench","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt-bench","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts"},"origin":"native"},"call":{"id":"call-1"},"path":"native"},"capabilities":{"effects":["deny","allow"]},"state":{"permission":"none","candidate":null}}}`))
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		read func([]byte) paramsHead
	}{{"members", readHead}, {"member", memberHead}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p := bc.read(env.Params)
				if p.unsupportedVersion() {
					b.Fatal("unsupported version")
				}
				if _, ok := p.eventName(); !ok {
					b.Fatal("no event type")
				}
			}
		})
	}
}

// TestEventNameCatalogue checks the premise of eventName's lookup: every
// catalogue name is its own JSON string token, without escapes.
func TestEventNameCatalogue(t *testing.T) {
	for _, info := range gen.Events() {
		tok := []byte(`"` + string(info.Name) + `"`)
		s, ok := jsonrpc.StringValue(tok)
		require.True(t, ok, info.Name)
		require.Equal(t, string(info.Name), s)
		require.Equal(t, string(tok), jsonrpc.StringID(string(info.Name)).String(), "no escapes")
		name, ok := eventName(tok)
		require.True(t, ok)
		require.Equal(t, info.Name, name)
	}
	name, ok := eventName([]byte(`"tool.\u0062efore"`))
	require.True(t, ok)
	require.Equal(t, gen.EventToolBefore, name)
	name, ok = eventName([]byte(`"unknown.event"`))
	require.True(t, ok)
	require.Equal(t, gen.EventName("unknown.event"), name)
	_, ok = eventName([]byte(`1`))
	require.False(t, ok)
}
