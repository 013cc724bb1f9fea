package settle_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// gen random values for the property test.
type rng struct{ *rand.Rand }

func (r rng) pick(xs ...string) string { return xs[r.IntN(len(xs))] }

func (r rng) chance(p float64) bool { return r.Float64() < p }

// jsonValue is a small random JSON value, including null, false and zero.
func (r rng) jsonValue() string {
	return r.pick(`null`, `false`, `0`, `1`, `1.0`, `"x"`, `""`, `[1,2]`, `{"n":1}`, `{"n":{"m":[true]}}`)
}

// object is a small random JSON object over a few keys.
func (r rng) object() string {
	keys := []string{"path", "content", "a", "b", "mode"}
	var parts []string
	for _, k := range keys {
		if r.chance(0.4) {
			parts = append(parts, fmt.Sprintf("%q:%s", k, r.jsonValue()))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (r rng) messages(role string) string {
	n := r.IntN(3)
	var ms []string
	for range n {
		id := fmt.Sprintf("m%d", r.IntN(1000))
		ms = append(ms, message(id, role, r.pick("a", "b", "c")))
	}
	return "[" + strings.Join(ms, ",") + "]"
}

func (r rng) textParts() string {
	n := r.IntN(3)
	var ps []string
	for range n {
		ps = append(ps, textPart(fmt.Sprintf("t%d", r.IntN(1000)), r.pick("keep", "drop", "names")))
	}
	return "[" + strings.Join(ps, ",") + "]"
}

// effect draws one effect admissible at the boundary under fullGrant.
func (r rng) effect(name gen.EventName) string {
	op := r.pick("replace", "merge")
	inject := fmt.Sprintf(`{"type":"inject","target":"context","operation":"append","deliverAt":%q,"value":%s}`, r.pick("now", "next_turn"), r.messages("system"))
	msg := fmt.Sprintf(`{"type":"message","text":%q}`, r.pick("m1", "m2", ""))
	stop := `{"type":"flow","operation":"stop","reason":"` + r.pick("s1", "s2") + `"}`
	deny := `{"type":"deny","reason":"d"}`
	switch name {
	case gen.EventToolBefore:
		return r.pick(msg, `{"type":"allow"}`, `{"type":"ask"}`, inject,
			`{"type":"modify","target":"input","operation":"`+op+`","value":`+r.object()+`}`,
			`{"type":"modify","target":"input","operation":"merge","value":`+r.object()+`}`,
			`{"type":"return","value":`+r.jsonValue()+`}`,
			r.pick(stop, deny, msg, msg))
	case gen.EventTurnFinishBefore:
		cont := `{"type":"flow","operation":"continue"}`
		if r.chance(0.7) {
			cont = `{"type":"flow","operation":"continue","instruction":"` + r.pick("again", "check tests") + `"}`
		}
		return r.pick(msg, cont, `{"type":"modify","target":"response","operation":"`+op+`","value":`+r.messages("assistant")+`}`, r.pick(stop, msg))
	case gen.EventUserMessageInbound:
		return r.pick(msg, `{"type":"modify","target":"prompt","operation":"`+op+`","value":`+r.messages("user")+`}`, r.pick(deny, msg, msg))
	case gen.EventContextCompactBefore:
		return r.pick(msg, inject, `{"type":"modify","target":"instructions","operation":"`+op+`","value":`+r.textParts()+`}`,
			`{"type":"return","value":`+r.textParts()+`}`, r.pick(deny, msg, msg))
	case gen.EventModelRequestBefore:
		return r.pick(msg, inject, `{"type":"modify","target":"request","operation":"`+op+`","value":`+r.messages(r.pick("user", "assistant"))+`}`,
			`{"type":"return","value":`+r.messages("assistant")+`}`, r.pick(stop, deny, msg))
	case gen.EventUserElicitationResult:
		return r.pick(msg, `{"type":"modify","target":"content","operation":"`+op+`","value":{"answer":"`+r.pick("a", "b")+`"}}`,
			`{"type":"modify","target":"content","operation":"merge","value":{"count":`+r.pick("0", "7")+`}}`)
	}
	return msg
}

// response draws a response of zero to four effects.
func (r rng) response(name gen.EventName) string {
	n := r.IntN(5)
	effs := make([]string, n)
	for i := range effs {
		effs[i] = r.effect(name)
	}
	return "[" + strings.Join(effs, ",") + "]"
}

// TestPropertyStepwise: for random admissible response sequences (fixed
// seeds), settling them on one occurrence equals settling response by
// response, where each step starts a fresh occurrence from the previous
// step's effective event and params.state, re-sent over the wire as a
// canonical hooks/intercept request (AHP-COMP-001, AHP-EDIT-001).
func TestPropertyStepwise(t *testing.T) {
	names := []gen.EventName{gen.EventToolBefore, gen.EventTurnFinishBefore, gen.EventUserMessageInbound,
		gen.EventContextCompactBefore, gen.EventModelRequestBefore, gen.EventUserElicitationResult}
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for _, name := range names {
		t.Run(string(name), func(t *testing.T) {
			g := fullGrant(t, name)
			seen := map[string]int{}
			for seed := range seeds {
				r := rng{rand.New(rand.NewPCG(uint64(seed), 0x5e771e))}
				seq := make([]string, 1+r.IntN(4))
				for i := range seq {
					seq[i] = r.response(name)
				}
				// One occurrence for the whole chain.
				whole := newOcc(t, name)
				for _, resp := range seq {
					require.NoError(t, apply(t, whole, g, resp), "seed %d: %s", seed, resp)
				}
				// Response by response, state re-sent each step.
				ev, init := event(t, name), initialFor(t, name)
				var (
					last     settle.State
					messages []string
					accepted [][]gen.Effect
				)
				for _, resp := range seq {
					o, err := settle.New(ev, init)
					require.NoError(t, err)
					require.NoError(t, apply(t, o, g, resp), "seed %d", seed)
					last = o.State()
					messages = append(messages, last.Messages...)
					for _, a := range last.Accepted {
						accepted = append(accepted, a.Effects)
					}
					next, err := o.Event()
					require.NoError(t, err)
					wire, err := gen.EncodeInterceptRequest(&gen.InterceptRequest{ID: gen.JSONRPCIDFromString(next.ID()),
						Params: gen.InterceptRequestParams{ProtocolVersion: gen.ProtocolVersion, Event: *next, Capabilities: g, State: o.RequestState()}})
					require.NoError(t, err)
					req, err := gen.ParseInterceptRequest(wire)
					require.NoError(t, err, "seed %d: canonical re-send", seed)
					ev = &req.Params.Event
					in, err := settle.InitialFromState(req.Params.State)
					require.NoError(t, err)
					in.StopReason = last.StopReason // host-local, not on the wire
					in.ElicitationRequest = init.ElicitationRequest
					init = in
				}
				want := whole.State()
				seen["perm:"+string(want.Permission)]++
				seen["flow:"+string(want.Flow)]++
				if want.Candidate.Present {
					seen["candidate"]++
				}
				if len(want.Injections) > 0 {
					seen["injections"]++
				}
				if len(seq) > 1 {
					seen["chains"]++
				}
				require.Equal(t, want.Messages, messages, "seed %d", seed)
				require.Len(t, accepted, len(want.Accepted))
				for i := range accepted {
					require.Equal(t, want.Accepted[i].Effects, accepted[i])
				}
				want.Messages, want.Accepted = nil, nil
				last.Messages, last.Accepted = nil, nil
				require.Equal(t, want, last, "seed %d: %v", seed, seq)
			}
			t.Logf("coverage: %v", seen)
			require.Positive(t, seen["chains"])
		})
	}
}

// TestStagingWritesNothingPublished: staging a response, admitted or
// rejected (also after its modifications were merged into the staged
// state, as an answer outside the requested form is), never writes the
// committed state it starts from, whatever of it is set (a candidate,
// continuation instructions, injections, a workspace or form target, a
// stop reason): the state stays what State reported before, and the zero
// state that occurrences without those share stays zero.
func TestStagingWritesNothingPublished(t *testing.T) {
	names := []gen.EventName{gen.EventToolBefore, gen.EventTurnFinishBefore, gen.EventUserMessageInbound,
		gen.EventContextCompactBefore, gen.EventModelRequestBefore, gen.EventUserElicitationResult, gen.EventWorkspaceChangeBefore}
	extra := map[gen.EventName][]string{
		gen.EventUserElicitationResult: {
			`[{"type":"modify","target":"content","operation":"merge","value":{"count":"many"}}]`,
			`[{"type":"modify","target":"content","operation":"replace","value":{"count":1}}]`,
			`[{"type":"message","text":"m"},{"type":"modify","target":"content","operation":"merge","value":{"answer":""}}]`,
		},
		gen.EventWorkspaceChangeBefore: {
			`[{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/a","/b"]}}]`,
			`[{"type":"modify","target":"workspace","operation":"replace","value":{"cwd":"/other"}}]`,
		},
	}
	staged := map[string]int{}
	for _, name := range names {
		t.Run(string(name), func(t *testing.T) {
			full := fullGrant(t, name)
			grants := []gen.Capabilities{full, without(full, gen.EffectFamilyModify), {}}
			for seed := range 30 {
				r := rng{rand.New(rand.NewPCG(uint64(seed), 0x57a9e))}
				o := newOcc(t, name)
				for range 1 + r.IntN(4) {
					responses := append([]string{r.response(name), r.response(name)}, extra[name]...)
					before := o.State()
					for _, resp := range responses {
						for _, g := range grants {
							if o.StageOnly(g, effects(t, resp)) == nil {
								staged["admitted"]++
							} else {
								staged["rejected"]++
							}
							require.Equal(t, before, o.State(), "seed %d: staging %s", seed, resp)
						}
					}
					// Then publish one and go on from the new state.
					resp := r.response(name)
					require.NoError(t, apply(t, o, full, resp), "seed %d: %s", seed, resp)
					after := o.State()
					if after.Candidate.Present || len(after.Instructions) > 0 || len(after.Injections) > 0 || after.StopReason != "" {
						staged["from a rich state"]++
					}
				}
			}
		})
	}
	t.Logf("coverage: %v", staged)
	require.Positive(t, staged["rejected"])
	require.Positive(t, staged["from a rich state"])
	require.True(t, settle.ZeroMoreIntact(), "the shared zero state was written")
}
