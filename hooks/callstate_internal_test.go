package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// continuingTransport answers a turn.finish.before request with a continue
// (consuming one continuation) and everything else with the canonical
// no-effect answer; it keeps every request body it was given.
type continuingTransport struct {
	mu     sync.Mutex
	bodies map[string][]byte
}

func (r *continuingTransport) Exchange(_ context.Context, m transport.Message) ([]byte, error) {
	r.mu.Lock()
	r.bodies[m.ID.String()] = m.Body
	r.mu.Unlock()
	req, err := gen.ParseInterceptRequest(m.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(req.Params.Event.ID(), "evt-fail") {
		return nil, &transport.Error{Code: transport.CodeTransport, Stage: transport.StageSend, Reason: "refused"}
	}
	if req.Params.Event.TurnFinishBefore != nil {
		res := gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: []gen.Effect{server.ContinueFlow("again")}}
		b, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return []byte(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":` + string(b) + `}`), nil
	}
	return []byte(noEffectPrefix + m.ID.String() + noEffectSuffix), nil
}
func (*continuingTransport) Notify(context.Context, transport.Message) error { return nil }
func (*continuingTransport) Close() error                                    { return nil }

// TestSharedCallStateUnderConcurrency: concurrent calls and
// Invocations of every shape the call state distinguishes (no options,
// WithCapabilities narrowing, WithContinuations and an event's own
// continuationCount narrowing a counted grant, one shared WithInitialState
// option with a candidate, Begin, BeginRequest from a body an earlier
// call sent) leave the entries' configured capabilities and their shared
// encodings as configured, and each call advertises its own allowance on
// the wire (under -race a write into a shared value among them is
// reported).
func TestSharedCallStateUnderConcurrency(t *testing.T) {
	reg := []byte(`{"protocolVersion":"draft","hooks":[{"id":"com.example.rev","transport":{"type":"http","url":"http://127.0.0.1:1/x"},
		"subscriptions":[{"events":["tool.before","turn.finish.before"],"mode":"intercept","timeoutMs":5000,"failurePolicy":"fail-open","content":{"default":"body"}}]}]}`)
	tr := &continuingTransport{bodies: map[string][]byte{}}
	h, err := New(reg, Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]Grant{
			gen.EventToolBefore:       Intercept().Deny().Allow().Return().ModifyInput(Replace, Merge),
			gen.EventTurnFinishBefore: Intercept().Stop().Continue(3),
		},
		Transports: map[string]transport.Transport{"com.example.rev": tr}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })

	snapshot := func() map[gen.EventName][2]string {
		out := map[gen.EventName][2]string{}
		for _, name := range []gen.EventName{gen.EventToolBefore, gen.EventTurnFinishBefore} {
			e := h.events[name]
			enc, err := e.caps.MarshalJSON()
			require.NoError(t, err)
			out[name] = [2]string{string(enc), string(e.capsJSON)}
		}
		return out
	}
	before := snapshot()

	// A request body to begin from, sent by a call of its own.
	tool := ToolBeforeInput{Name: "read_file", Input: map[string]any{"path": "/etc/hosts"}, Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
	seed := tool
	seed.ID = "evt-seed"
	_, err = h.ToolBefore(t.Context(), seed)
	require.NoError(t, err)
	tr.mu.Lock()
	seedBody := tr.bodies[`"evt-seed"`]
	tr.mu.Unlock()
	require.NotEmpty(t, seedBody)

	shared := WithInitialState(InitialState(gen.PermissionAllow).WithCandidate(json.RawMessage(`{"ok":true}`), nil))
	const rounds = 6
	var wg sync.WaitGroup
	errs := make(chan error, rounds*8)
	turn := func(id string, count string, opts ...CallOption) func() error {
		return func() error {
			res, err := h.TurnFinishBefore(t.Context(), TurnFinishBeforeInput{ID: id, Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"},
				Outcome: gen.OutcomeCompleted, ContinuationCount: json.Number(count)}, opts...)
			if err != nil {
				return err
			}
			if res.Flow != gen.FlowStateContinue {
				return fmt.Errorf("%s: flow %q, diagnostics %+v", id, res.Flow, res.Diagnostics)
			}
			return nil
		}
	}
	for i := range rounds {
		jobs := []func() error{
			func() error {
				in := tool
				in.ID = fmt.Sprintf("evt-plain-%d", i)
				_, err := h.ToolBefore(t.Context(), in)
				return err
			},
			func() error {
				in := tool
				in.ID = fmt.Sprintf("evt-narrow-%d", i)
				_, err := h.ToolBefore(t.Context(), in, WithCapabilities(Intercept().Deny()))
				return err
			},
			func() error {
				in := tool
				in.ID = fmt.Sprintf("evt-state-%d", i)
				res, err := h.ToolBefore(t.Context(), in, shared)
				if err == nil && res.Permission != gen.PermissionAllow {
					err = fmt.Errorf("permission %q", res.Permission)
				}
				return err
			},
			turn(fmt.Sprintf("evt-turn0-%d", i), "0"),
			turn(fmt.Sprintf("evt-turn1-%d", i), "1"),
			turn(fmt.Sprintf("evt-turnopt-%d", i), "0", WithContinuations(2)),
			func() error {
				in := tool
				in.ID = fmt.Sprintf("evt-begin-%d", i)
				ev, err := gen.ParseEvent([]byte(fmt.Sprintf(`{"id":"evt-begin-%d","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","tool":{"name":"read_file","input":{},"origin":"native"},"call":{"id":"call-1"},"path":"native"}`, i)))
				if err != nil {
					return err
				}
				inv, err := h.Begin(t.Context(), ev, shared)
				if err != nil {
					return err
				}
				if err := inv.Acquire(t.Context()); err != nil {
					inv.Cancel()
					return err
				}
				if _, ok := inv.Response(); !ok {
					inv.Cancel()
					return fmt.Errorf("no response")
				}
				_, err = inv.Accept(t.Context())
				return err
			},
			func() error {
				in := tool
				in.ID = fmt.Sprintf("evt-fail-%d", i)
				opts := []CallOption{}
				if i%2 == 0 {
					opts = append(opts, shared)
				}
				res, err := h.ToolBefore(t.Context(), in, opts...)
				if err != nil {
					return err
				}
				if len(res.Diagnostics) != 1 || res.Diagnostics[0].Reason != "refused" {
					return fmt.Errorf("%s: diagnostics %+v", in.ID, res.Diagnostics)
				}
				res.Diagnostics[0].Reason = "changed by the caller"
				return nil
			},
			func() error {
				inv, err := h.BeginRequest(t.Context(), seedBody)
				if err != nil {
					return err
				}
				if err := inv.Acquire(t.Context()); err != nil {
					inv.Cancel()
					return err
				}
				_, err = inv.Accept(t.Context())
				return err
			},
		}
		for _, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := job(); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, before, snapshot(), "the configured capabilities and their encodings are unchanged")

	remaining := func(id string) string {
		tr.mu.Lock()
		body := tr.bodies[`"`+id+`"`]
		tr.mu.Unlock()
		req, err := gen.ParseInterceptRequest(body)
		require.NoError(t, err, id)
		f := req.Params.Capabilities.Flow
		require.NotNil(t, f, id)
		require.NotNil(t, f.RemainingContinuations, id)
		return string(*f.RemainingContinuations)
	}
	for i := range rounds {
		require.Equal(t, "3", remaining(fmt.Sprintf("evt-turn0-%d", i)))
		require.Equal(t, "2", remaining(fmt.Sprintf("evt-turn1-%d", i)))
		require.Equal(t, "1", remaining(fmt.Sprintf("evt-turnopt-%d", i)))
		tr.mu.Lock()
		narrow, plain := tr.bodies[fmt.Sprintf(`"evt-narrow-%d"`, i)], tr.bodies[fmt.Sprintf(`"evt-plain-%d"`, i)]
		tr.mu.Unlock()
		nreq, err := gen.ParseInterceptRequest(narrow)
		require.NoError(t, err)
		require.Equal(t, []gen.EffectFamily{gen.EffectFamilyDeny}, nreq.Params.Capabilities.Effects)
		preq, err := gen.ParseInterceptRequest(plain)
		require.NoError(t, err)
		enc, err := preq.Params.Capabilities.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, before[gen.EventToolBefore][1], string(enc))
	}
}
