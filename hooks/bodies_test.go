package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// keepingTransport keeps every body it is given (and a copy at the time)
// and answers an interception with the canonical no-effect response.
type keepingTransport struct {
	mu     sync.Mutex
	id     string
	bodies [][]byte
	copies [][]byte
	reply  func(req *gen.InterceptRequest) []byte
}

func (c *keepingTransport) keep(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, b)
	c.copies = append(c.copies, bytes.Clone(b))
}

func (c *keepingTransport) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	c.keep(msg.Body)
	req, err := gen.ParseInterceptRequest(msg.Body)
	if err != nil {
		return nil, err
	}
	if c.reply != nil {
		return c.reply(req), nil
	}
	return gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(req.ID),
		Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{}}})
}

func (c *keepingTransport) Notify(ctx context.Context, msg transport.Message) error {
	c.keep(msg.Body)
	return nil
}

func (c *keepingTransport) Close() error { return nil }

// withID returns a deep copy of ev with the given id.
func withID(t *testing.T, ev *gen.Event, id string) *gen.Event {
	t.Helper()
	b, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	cp, err := gen.ParseEvent(b)
	require.NoError(t, err)
	reflect.ValueOf(cp.Value()).Elem().FieldByName("ID").SetString(id)
	return cp
}

// checkCanonicalBody requires b to be the canonical encoding of the request or
// notification it carries, with the JSON-RPC id wantID for a request.
func checkCanonicalBody(t *testing.T, b []byte, wantID string, what string) (intercept bool, event []byte) {
	t.Helper()
	if req, err := gen.ParseInterceptRequest(b); err == nil {
		again, err := gen.EncodeInterceptRequest(req)
		require.NoError(t, err)
		require.Equal(t, string(again), string(b), "%s: intercept body not canonical", what)
		id, ok := req.ID.AsString()
		require.True(t, ok, what)
		require.Equal(t, wantID, id, what)
		return true, mustEncode(t, &req.Params.Event)
	}
	n, err := gen.ParseObserveNotification(b)
	require.NoError(t, err, "%s: %s", what, b)
	again, err := gen.EncodeObserveNotification(n)
	require.NoError(t, err)
	require.Equal(t, string(again), string(b), "%s: notification not canonical", what)
	return false, mustEncode(t, &n.Params.Event)
}

// TestBodiesCanonicalAllEvents: for every one of the 32 events and ids
// that do and do not need escapes, short and long (beyond the room's bound
// and beyond maxFramedRoom), every body handed to a transport (one or two
// interceptors, observers, observe-only) is the canonical encoding of its
// message, carries the event id, the event as built, and is not written
// after it was handed over.
func TestBodiesCanonicalAllEvents(t *testing.T) {
	samples := sampleEvents(t)
	grants := plainGrants()
	ids := []string{
		"evt-plain",
		"", // refused by the schema: no body
		"e",
		`evt"q`,
		`evt\b`,
		"evt-\u00e9",
		"evt-\u2028",
		"evt<&>",
		"evt\x7f",
		strings.Repeat("a", 1024),
		strings.Repeat("b", 1025),
		strings.Repeat("c", 70<<10),
		strings.Repeat("\"", 40<<10), // escaped head over maxFramedRoom
	}
	for _, layout := range []string{"one", "two", "observe-only", "observe-grant", "projected"} {
		for _, info := range gen.Events() {
			ev, ok := samples[info.Name]
			require.True(t, ok, info.Name)
			t.Run(layout+"/"+string(info.Name), func(t *testing.T) {
				trs := map[string]transport.Transport{}
				var backends []string
				var caps []*keepingTransport
				add := func(id string, sub string) {
					ct := &keepingTransport{id: id}
					caps = append(caps, ct)
					trs[id] = ct
					backends = append(backends, backendJSON(id, httpTransport("http://127.0.0.1:9/x"), sub))
				}
				switch layout {
				case "one", "observe-grant":
					add("com.example.i1", interceptSub(`"*"`, 5000, "fail-closed"))
					add("com.example.o1", observeSub(`"*"`))
				case "two":
					add("com.example.i1", interceptSub(`"*"`, 5000, "fail-closed"))
					add("com.example.i2", interceptSub(`"*"`, 5000, "fail-closed"))
					add("com.example.o1", observeSub(`"*"`))
					add("com.example.o2", observeSub(`"*"`))
				case "observe-only":
					add("com.example.o1", observeSub(`"*"`))
				case "projected":
					meta := func(sub string) string { return strings.Replace(sub, `"default":"body"`, `"default":"metadata"`, 1) }
					omit := func(sub string) string { return strings.Replace(sub, `"default":"body"`, `"default":"omit"`, 1) }
					add("com.example.i1", meta(interceptSub(`"*"`, 5000, "fail-closed")))
					add("com.example.i2", interceptSub(`"*"`, 5000, "fail-closed"))
					add("com.example.i3", omit(interceptSub(`"*"`, 5000, "fail-closed")))
					add("com.example.o1", meta(observeSub(`"*"`)))
					add("com.example.o2", observeSub(`"*"`))
					add("com.example.o3", omit(observeSub(`"*"`)))
				}
				require.NotEmpty(t, caps)
				h, err := hooks.New(registration(backends...), hooks.Config{Source: "urn:test:harness", Capabilities: grants, Transports: trs})
				require.NoError(t, err)
				defer h.Close()
				for _, id := range ids {
					in := withID(t, ev, id)
					var opts []hooks.CallOption
					if layout == "observe-grant" {
						opts = append(opts, hooks.WithCapabilities(hooks.Observe()))
					}
					want := mustEncode(t, in)
					res, err := h.Dispatch(context.Background(), in, opts...)
					if err != nil {
						// Ids the schema refuses are refused for every layout alike.
						t.Logf("id len %d: %v", len(id), err)
						continue
					}
					require.NotNil(t, res)
					_ = want
				}
				require.NoError(t, h.Close())
				for _, ct := range caps {
					for i, b := range ct.bodies {
						what := fmt.Sprintf("%s body %d", ct.id, i)
						require.Equal(t, string(ct.copies[i]), string(b), "%s written after it was handed over", what)
						var p struct {
							Params struct {
								Event struct {
									ID string `json:"id"`
								} `json:"event"`
							} `json:"params"`
						}
						require.NoError(t, json.Unmarshal(b, &p))
						checkCanonicalBody(t, b, p.Params.Event.ID, what)
					}
				}
			})
		}
	}
}

// TestModifiedChainBodies: after a modification, each later body
// (encoded for it, or copied from the encoding held in the previous body) is
// canonical, carries the modified event and the id, for ids short and long
// (beyond maxFramedRoom, with and without escapes), with initial states of
// every shape; an observer gets the effective event.
func TestModifiedChainBodies(t *testing.T) {
	ids := []string{"evt-plain", `evt"q`, strings.Repeat("c", 70<<10), strings.Repeat("\"", 40<<10)}
	initials := map[string]hooks.Initial{
		"none":      {},
		"allowed":   hooks.InitialState(gen.PermissionAllow),
		"candidate": hooks.InitialState(gen.PermissionNone).WithCandidate(json.RawMessage(`{"cached":true,"pad":"`+strings.Repeat("x", 200)+`"}`), nil),
	}
	for name, initial := range initials {
		for _, id := range ids {
			t.Run(fmt.Sprintf("%s/%d", name, len(id)), func(t *testing.T) {
				first := &keepingTransport{id: "com.example.i1", reply: func(req *gen.InterceptRequest) []byte {
					b, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(req.ID),
						Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{
							{ModifyInput: &gen.ModifyInputEffect{Operation: gen.EffectOperationMerge, Target: "input", Value: json.RawMessage(`{"by":"first"}`)}},
						}}})
					require.NoError(t, err)
					return b
				}}
				all := []*keepingTransport{first, {id: "com.example.i2"}, {id: "com.example.i3"}, {id: "com.example.o1"}, {id: "com.example.o2"}}
				h := toolBeforeChain(t, all)
				defer h.Close()
				res, err := h.ToolBefore(context.Background(), toolInput(), hooks.WithEventID(id), hooks.WithInitialState(initial))
				require.NoError(t, err)
				require.Empty(t, res.Diagnostics)
				effective := mustEncode(t, res.Event())
				require.NoError(t, h.Close())
				for i, ct := range all {
					require.Len(t, ct.bodies, 1, ct.id)
					b := ct.bodies[0]
					require.Equal(t, string(ct.copies[0]), string(b), "%s written after it was handed over", ct.id)
					intercept, ev := checkCanonicalBody(t, b, id, ct.id)
					require.Equal(t, i < 3, intercept)
					if i == 0 {
						require.NotEqual(t, string(effective), string(ev))
					} else {
						require.Equal(t, string(effective), string(ev), ct.id)
					}
					for _, other := range all[:i] {
						if len(other.bodies) > 0 && !sameSlice(other.bodies[0], b) {
							require.False(t, overlap(other.bodies[0], b), "%s and %s share memory", other.id, ct.id)
						}
					}
				}
			})
		}
	}
}

// appendingTransport is a line-oriented transport of a host's own: it
// frames each notification as msg.Body with a trailing LF, with the
// append idiom, and records the line it wrote. Both observers append before
// either checks its line (a barrier), as concurrent Notify calls may.
type appendingTransport struct {
	id      string
	suffix  byte
	barrier *sync.WaitGroup
	line    []byte
	cap     int
	len     int
}

func (a *appendingTransport) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	return nil, fmt.Errorf("no interception expected")
}

func (a *appendingTransport) Notify(ctx context.Context, msg transport.Message) error {
	a.len, a.cap = len(msg.Body), cap(msg.Body)
	line := append(msg.Body, a.suffix) // does not modify msg.Body's bytes
	a.barrier.Done()
	a.barrier.Wait()
	a.line = bytes.Clone(line)
	return nil
}

func (a *appendingTransport) Close() error { return nil }

// TestSharedNotificationHasNoSpareCapacity: one view's notification body
// goes to all of its observers, each Notify in a goroutine of its own. When
// that body is built in the room start left for an intercept request (an
// interceptable event with an intercept grant that no interceptor
// subscribes to), it keeps the room's spare capacity behind it: two
// transports that append to msg.Body (without modifying its bytes) write
// into the same memory concurrently (a data race under -race), and one
// observer's frame ends with the other's byte.
func TestSharedNotificationHasNoSpareCapacity(t *testing.T) {
	var barrier sync.WaitGroup
	barrier.Add(2)
	a := &appendingTransport{id: "com.example.oa", suffix: 'A', barrier: &barrier}
	b := &appendingTransport{id: "com.example.ob", suffix: 'B', barrier: &barrier}
	h, err := hooks.New(registration(
		backendJSON(a.id, httpTransport("http://127.0.0.1:9/x"), observeSub(`"tool.before"`)),
		backendJSON(b.id, httpTransport("http://127.0.0.1:9/x"), observeSub(`"tool.before"`)),
	), hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: toolGrant()},
		Transports:   map[string]transport.Transport{a.id: a, b.id: b}})
	require.NoError(t, err)
	defer h.Close()
	_, err = h.ToolBefore(context.Background(), toolInput())
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.Equal(t, byte('A'), a.line[len(a.line)-1], "observer A's frame")
	require.Equal(t, byte('B'), b.line[len(b.line)-1], "observer B's frame")
	require.Equal(t, a.len, a.cap, "a shared notification body has spare capacity")
}

// TestInvocationBodies: an Invocation begun from a canonical request
// whose id differs from the event id (with and without escapes, long) and
// one begun from a typed event: every request body carries the request id,
// is canonical, and after the first's modification carries the effective
// event; the observation too.
func TestInvocationBodies(t *testing.T) {
	for _, reqID := range []string{"", "req-1", `req"1`, strings.Repeat("r", 70<<10)} {
		t.Run(fmt.Sprintf("%d", len(reqID)), func(t *testing.T) {
			merge := func(req *gen.InterceptRequest) []byte {
				b, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{ID: gen.JSONRPCResponseID(req.ID),
					Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{
						{ModifyInput: &gen.ModifyInputEffect{Operation: gen.EffectOperationMerge, Target: "input", Value: json.RawMessage(`{"by":"first"}`)}},
					}}})
				require.NoError(t, err)
				return b
			}
			all := []*keepingTransport{{id: "com.example.i1", reply: merge}, {id: "com.example.i2"}, {id: "com.example.i3"}, {id: "com.example.o1"}}
			h := toolBeforeChain(t, all)
			defer h.Close()
			ev := &gen.Event{ToolBefore: &gen.ToolBeforeEvent{ID: "evt-1", Source: "urn:test:harness", Type: string(gen.EventToolBefore), Time: "2026-09-15T12:00:00Z",
				Tool: gen.ExecutionEventTool{Name: "read_file", Input: json.RawMessage(`{"path":"/etc/hosts"}`), Origin: gen.ExecutionEventToolOriginNative}, Call: gen.Call{ID: "call-1"}, Path: "native"}}
			wantID := "evt-1"
			var inv *hooks.Invocation
			var err error
			if reqID == "" {
				inv, err = h.Begin(context.Background(), ev)
			} else {
				wantID = reqID
				ev.ToolBefore.ID = reqID // the schema requires the request id to be the event id
				body, err2 := gen.EncodeInterceptRequest(&gen.InterceptRequest{ID: gen.JSONRPCIDFromString(reqID), Params: gen.InterceptRequestParams{
					ProtocolVersion: gen.ProtocolVersion, Event: *ev, Capabilities: toolGrant().Capabilities()}})
				require.NoError(t, err2)
				inv, err = h.BeginRequest(context.Background(), body)
			}
			require.NoError(t, err)
			require.NoError(t, inv.Acquire(context.Background()))
			res, err := inv.Accept(context.Background())
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			effective := mustEncode(t, res.Event())
			require.NoError(t, h.Close())
			for i, ct := range all {
				require.Len(t, ct.bodies, 1, ct.id)
				require.Equal(t, string(ct.copies[0]), string(ct.bodies[0]), ct.id)
				_, got := checkCanonicalBody(t, ct.bodies[0], wantID, ct.id)
				if i > 0 {
					require.Equal(t, string(effective), string(got), ct.id)
				}
			}
		})
	}
}

// toolBeforeChain is a host whose tool.before goes to each of all in
// order: interceptors, and observers for the ids containing ".o".
func toolBeforeChain(t *testing.T, all []*keepingTransport) *hooks.Hooks {
	t.Helper()
	trs := map[string]transport.Transport{}
	var backends []string
	for _, ct := range all {
		trs[ct.id] = ct
		sub := interceptSub(`"tool.before"`, 5000, "fail-closed")
		if strings.Contains(ct.id, ".o") {
			sub = observeSub(`"tool.before"`)
		}
		backends = append(backends, backendJSON(ct.id, httpTransport("http://127.0.0.1:9/x"), sub))
	}
	h, err := hooks.New(registration(backends...), hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: toolGrant()}, Transports: trs})
	require.NoError(t, err)
	return h
}
