package hooks

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/stretchr/testify/require"
)

// TestInterceptBodyMatchesGeneratedEncoder: the spliced request body is
// byte for byte what gen.EncodeInterceptRequest produces, with a known
// event encoding, with one it makes in the body, and built in the room
// start leaves around the encoding (bodyRoom), for initial states that fill the state object
// differently and ids with and without escapes. A body built in the room
// takes it: the next is a new buffer, and the encoding is never written.
func TestInterceptBodyMatchesGeneratedEncoder(t *testing.T) {
	escaped, err := gen.ParseEvent([]byte(`{"id":"evt-\u00e9\"1","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts","n":1.50},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`))
	require.NoError(t, err)
	plain, err := gen.ParseEvent([]byte(`{"id":"evt_0123456789abcdef","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts","n":1.50},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`))
	require.NoError(t, err)
	caps := Intercept().Deny().Allow().ModifyInput(Replace).capabilities(0)
	capsJSON, err := caps.MarshalJSON()
	require.NoError(t, err)
	info, ok := gen.LookupEvent(gen.EventToolBefore)
	require.True(t, ok)
	entry := &eventEntry{info: info, intercept: true, caps: caps, capsJSON: capsJSON}
	for _, ev := range []*gen.Event{escaped, plain} {
		for name, initial := range map[string]settle.Initial{
			"empty":     {},
			"allowed":   {Permission: gen.PermissionAllow},
			"continued": {Permission: gen.PermissionDeny, Flow: gen.FlowStateContinue},
			"candidate": {Candidate: settle.Candidate{Present: true, Value: []byte(`{"cached":true}`)}},
		} {
			t.Run(ev.ID()+"/"+name, func(t *testing.T) {
				occ, err := settle.New(ev, initial)
				require.NoError(t, err)
				want, err := gen.EncodeInterceptRequest(&gen.InterceptRequest{
					ID: gen.JSONRPCIDFromString(ev.ID()),
					Params: gen.InterceptRequestParams{
						ProtocolVersion: gen.ProtocolVersion,
						Event:           *ev,
						Capabilities:    caps,
						State:           occ.RequestState(),
					},
				})
				require.NoError(t, err)
				encoded, err := gen.EncodeEvent(ev)
				require.NoError(t, err)
				for _, known := range [][]byte{nil, encoded} {
					c := &call{caps: &caps, capsJSON: new([]byte), occ: occ, stateContent: initial.Candidate.Present}
					got, enc, err := c.interceptBody(ev.ID(), ev, known, c.caps, c.capsJSON, nil)
					require.NoError(t, err)
					require.Equal(t, string(want), string(got))
					require.Equal(t, string(encoded), string(enc))
					if known == nil {
						// Encoded where the body holds it, and read only.
						require.Same(t, &got[strings.Index(string(want), `"event":`)+len(`"event":`)], &enc[0])
						require.Equal(t, len(enc), cap(enc))
					} else {
						require.Same(t, &known[0], &enc[0])
					}
					// Allocated once: at its size, or with the room left for a
					// state appended in place.
					require.LessOrEqual(t, len(got), cap(got))
					require.LessOrEqual(t, cap(got)-len(got), stateRoom)
					if c.stateContent {
						require.Equal(t, len(got), cap(got))
					}
					_, err = gen.ParseInterceptRequest(got)
					require.NoError(t, err)
				}

				// In the room start leaves.
				head, tail := bodyRoom(entry, &callOptions{}, ev, nil)
				require.Equal(t, plainID(ev.ID()), head > 0)
				framed, err := gen.EncodeEventFramed(ev, head, tail)
				require.NoError(t, err)
				c := &call{caps: &caps, occ: occ, stateContent: initial.Candidate.Present, capsJSON: &capsJSON, curJSON: framed[head:len(framed):len(framed)]}
				if head > 0 {
					c.room = framed
				}
				got, _, err := c.interceptBody(ev.ID(), ev, c.curJSON, c.caps, c.capsJSON, nil)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got))
				if head > 0 && !c.stateContent {
					// The state without content fits stateRoom: in the room,
					// around the encoding, which is where it was.
					require.Nil(t, c.room)
					require.Same(t, &framed[head], &got[strings.Index(string(want), `"event":`)+len(`"event":`)])
				}
				require.Equal(t, string(encoded), string(c.curJSON))
				again, _, err := c.interceptBody(ev.ID(), ev, c.curJSON, c.caps, c.capsJSON, nil)
				require.NoError(t, err)
				require.Equal(t, string(want), string(again))
				require.NotSame(t, unsafe.SliceData(got), unsafe.SliceData(again))
				require.False(t, sharesMemory(got, again) || sharesMemory(framed, again), "a later body is a buffer of its own")
				require.Equal(t, string(want), string(got))
			})
		}
	}
}

// TestBodyRoom: start leaves room around the encoding only for a call
// expected to build a request body from it, for the id's head and the
// configured capabilities.
func TestBodyRoom(t *testing.T) {
	info, ok := gen.LookupEvent(gen.EventToolBefore)
	require.True(t, ok)
	capsJSON := []byte(`{"effects":["deny"]}`)
	intercepted := &eventEntry{info: info, intercept: true, capsJSON: capsJSON}
	event := func(id string) *gen.Event {
		return &gen.Event{ToolBefore: &gen.ToolBeforeEvent{ID: id, Type: string(gen.EventToolBefore)}}
	}
	observe, intercept := Observe(), Intercept().Deny()
	headFor := func(id string) int { return len(bodyHead) + len(id) + 2 + len(bodyParams) + len(bodyEvent) }
	tail := len(bodyCaps) + len(capsJSON) + len(bodyState) + stateRoom + len(bodyTail)
	for name, tc := range map[string]struct {
		e          *eventEntry
		o          callOptions
		id         string
		req        *beginRequest
		head, tail int
	}{
		"intercepted":                 {e: intercepted, id: "evt_1", head: headFor("evt_1"), tail: tail},
		"narrowed grant":              {e: intercepted, o: callOptions{grant: &intercept}, id: "evt_1", head: headFor("evt_1"), tail: tail},
		"longest id":                  {e: intercepted, id: strings.Repeat("a", maxRoomID), head: headFor(strings.Repeat("a", maxRoomID)), tail: tail},
		"neither":                     {e: &eventEntry{info: info, capsJSON: capsJSON}, id: "evt_1"},
		"observed only":               {e: &eventEntry{info: info, capsJSON: capsJSON, observers: []*subscription{{}}}, id: "evt\"1", head: len(observeHead), tail: len(observeTail)},
		"observe grant, interceptors": {e: &eventEntry{info: info, intercept: true, capsJSON: capsJSON, interceptors: []*subscription{{}}}, o: callOptions{grant: &observe}, id: "evt_1", head: len(observeHead), tail: len(observeTail)},
		"observed, not interceptable": {e: &eventEntry{info: mustEvent(t, gen.EventTurnEnd), intercept: true, capsJSON: capsJSON, observers: []*subscription{{}}}, id: "evt_1", head: len(observeHead), tail: len(observeTail)},
		"observe grant":               {e: intercepted, o: callOptions{grant: &observe}, id: "evt_1"},
		"canonical request":           {e: intercepted, id: "evt_1", req: &beginRequest{}},
		"id with escapes":             {e: intercepted, id: "evt\"1"},
		"id over maxRoomID":           {e: intercepted, id: strings.Repeat("a", maxRoomID+1)},
		"not interceptable":           {e: &eventEntry{info: mustEvent(t, gen.EventTurnEnd), intercept: true, capsJSON: capsJSON}, id: "evt_1"},
	} {
		head, tail := bodyRoom(tc.e, &tc.o, event(tc.id), tc.req)
		require.Equal(t, [2]int{tc.head, tc.tail}, [2]int{head, tail}, name)
	}
}

func mustEvent(t *testing.T, name gen.EventName) gen.EventInfo {
	t.Helper()
	info, ok := gen.LookupEvent(name)
	require.True(t, ok)
	return info
}

// TestObserveBodyMatchesGeneratedEncoder: the notification body is byte for
// byte what gen.EncodeObserveNotification produces: built in the call's
// room (which it then takes), copied from the call's encoding, or for
// another view encoded; the call's encoding is never written.
func TestObserveBodyMatchesGeneratedEncoder(t *testing.T) {
	ev, err := gen.ParseEvent([]byte(`{"id":"evt-\u00e9\"1","source":"urn:test:harness","type":"tool.after","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{"path":"/etc/hosts","n":1.50},"origin":"native"},"call":{"id":"call-1"},"path":"native","items":[],"outcome":"ok","execution":{"status":"executed"},"zExtra":[1,2]}`))
	require.NoError(t, err)
	want, err := gen.EncodeObserveNotification(&gen.ObserveNotification{Params: gen.ObserveNotificationParams{ProtocolVersion: gen.ProtocolVersion, Event: *ev}})
	require.NoError(t, err)
	encoded, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	at := strings.Index(string(want), `"event":`) + len(`"event":`)

	entry := &eventEntry{info: mustEvent(t, gen.EventToolAfter), observers: []*subscription{{}}}
	head, tail := bodyRoom(entry, &callOptions{}, ev, nil)
	framed, err := gen.EncodeEventFramed(ev, head, tail)
	require.NoError(t, err)
	c := &call{cur: ev, curJSON: framed[head:len(framed):len(framed)], room: framed}

	got, err := c.observeBody(ev, false) // not in the room: copied
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	require.False(t, sharesMemory(got, framed))
	require.NotNil(t, c.room)

	inRoom, err := c.observeBody(ev, true)
	require.NoError(t, err)
	require.Equal(t, string(want), string(inRoom))
	require.Same(t, &framed[head], &inRoom[at])
	require.Nil(t, c.room)
	require.Equal(t, string(encoded), string(c.curJSON))

	again, err := c.observeBody(ev, true) // the room is taken
	require.NoError(t, err)
	require.Equal(t, string(want), string(again))
	require.False(t, sharesMemory(again, framed))

	other := *ev // another view: encoded
	view, err := c.observeBody(&other, true)
	require.NoError(t, err)
	require.Equal(t, string(want), string(view))
	require.False(t, sharesMemory(view, framed))
	require.Equal(t, string(want), string(inRoom))
}

// sharesMemory reports whether a and b (through their capacities) share a
// byte of memory.
func sharesMemory(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(cap(b)) && pb < pa+uintptr(cap(a))
}

// TestNoEffectAnswerShortcut: decodeIntercept's shortcut is taken for the
// canonical no-effect answer and gives what the full path gives; every
// other spelling, id or content goes through the full path.
func TestNoEffectAnswerShortcut(t *testing.T) {
	canonical := func(id string) []byte {
		b, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(gen.JSONRPCIDFromString(id)),
			Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}})
		require.NoError(t, err)
		return b
	}
	for _, id := range []string{"evt-1", "evt_0123456789abcdef", "x", "a b/c:d@e", "evt-\u00e9", "evt-\"q\"", "evt-\\", "evt-<&>", "evt-\u2028"} {
		raw := canonical(id)
		full, ferr := decodeInterceptFull(t.Context(), raw, id)
		require.Nil(t, ferr, "id %q", id)
		got, err := decodeIntercept(t.Context(), raw, id)
		require.Nil(t, err)
		require.Equal(t, full, got, "id %q", id)
		if isNoEffectAnswer(raw, id) {
			require.Equal(t, gen.ProtocolVersion, got.ProtocolVersion)
			require.NotNil(t, got.Effects)
			require.Empty(t, got.Effects)
		}
	}
	require.True(t, isNoEffectAnswer(canonical("evt-1"), "evt-1"), "the common answer takes the shortcut")
	require.True(t, isNoEffectAnswer([]byte(`{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}`), "evt-1"))
	for name, raw := range map[string]string{
		"other id":       `{"jsonrpc":"2.0","id":"evt-2","result":{"protocolVersion":"draft","effects":[]}}`,
		"numeric id":     `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"draft","effects":[]}}`,
		"escaped id":     `{"jsonrpc":"2.0","id":"evt\u002d1","result":{"protocolVersion":"draft","effects":[]}}`,
		"spaces":         `{"jsonrpc": "2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}`,
		"effects":        `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[{"type":"allow"}]}}`,
		"extension":      `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[],"extensions":{}}}`,
		"trailing bytes": `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft","effects":[]}}x`,
		"no effects":     `{"jsonrpc":"2.0","id":"evt-1","result":{"protocolVersion":"draft"}}`,
		"error":          `{"jsonrpc":"2.0","id":"evt-1","error":{"code":-32603,"message":"x"}}`,
	} {
		require.False(t, isNoEffectAnswer([]byte(raw), "evt-1"), name)
	}
	require.False(t, isNoEffectAnswer([]byte(`{"jsonrpc":"2.0","id":"","result":{"protocolVersion":"draft","effects":[]}}`), ""), "an empty id is never ours")
}
