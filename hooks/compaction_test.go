package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/server"
)

const (
	before = gen.EventContextCompactBefore
	after  = gen.EventContextCompactAfter
)

// ch is one scripted compaction hook of a table case: fixed effects (a
// JSON array), or a callback error, or a panic.
type ch struct {
	b      gen.EventName
	who    string
	policy hooks.FailurePolicy
	fx     string
	err    bool
	panic  bool
}

// effects decodes a JSON array of effects with the generated codec.
func effects(t *testing.T, s string) []gen.Effect {
	t.Helper()
	var raw []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s), &raw))
	out := make([]gen.Effect, len(raw))
	for i, r := range raw {
		if string(r) == "{}" {
			continue // the zero Effect: no known family
		}
		require.NoError(t, out[i].UnmarshalJSON(r), "effect %d", i)
	}
	return out
}

func text(id, s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"` + id + `","kind":"text","mediaType":"text/plain","selection":"body","text":` + string(b) + `}`
}

func parts(ps gen.TextParts) string {
	var out []string
	for _, p := range ps {
		if p.Body != nil {
			out = append(out, p.Body.Text)
		}
	}
	return strings.Join(out, "|")
}

// seen records what each callback saw: for a before hook the effective
// instructions and whether a candidate was present, for an after hook the
// summary and the execution status.
func seen(snap hooks.CompactionSnapshot) string {
	switch {
	case snap.Event.ContextCompactBefore != nil:
		s := snap.Supplier + ":" + parts(snap.Event.ContextCompactBefore.Instructions)
		if snap.State != nil && snap.State.Candidate.Valid {
			s += "+candidate"
		}
		return s
	case snap.Event.ContextCompactAfter != nil:
		s := snap.Supplier + ":" + parts(snap.Event.ContextCompactAfter.Summary)
		if snap.Event.ContextCompactAfter.Execution.SkippedSuppliedResult != nil {
			s += "+supplied"
		}
		return s
	}
	return "?"
}

func input() hooks.CompactionInput {
	var ins gen.TextParts
	_ = ins.UnmarshalJSON([]byte(`[` + text("i1", "Keep decisions.") + `]`))
	return hooks.CompactionInput{
		Source: "urn:test:harness", Trigger: "manual", Instructions: ins,
		Items: []gen.ModelVisibleItem{}, BeforeID: "evt-before", AfterID: "evt-after",
	}
}

func TestCompaction(t *testing.T) {
	type want struct {
		applied, denied, failedClosed, generated bool
		denyReason                               string
		instructions, summary                    string
		supplier                                 string
		messages                                 []string
		trace                                    []string // outcome[:reason]
		seen                                     []string
	}
	cases := []struct {
		name  string
		hooks []ch
		want  want
	}{
		{
			name:  "no hooks: the default generator",
			hooks: nil,
			want:  want{applied: true, generated: true, instructions: "Keep decisions.", summary: "summary: Keep decisions."},
		},
		{
			name: "accepted instructions flow into later hooks and the generator",
			hooks: []ch{
				{b: before, who: "a", fx: `[{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i2", "Keep names.") + `]}]`},
				{b: before, who: "b", fx: `[]`},
				{b: after, who: "c", fx: `[]`},
			},
			want: want{applied: true, generated: true, instructions: "Keep names.", summary: "summary: Keep names.",
				trace: []string{"accepted", "accepted", "accepted"}, seen: []string{"a:Keep decisions.", "b:Keep names.", "c:summary: Keep names."}},
		},
		{
			name: "serial summary edits: each after hook sees the previous one's summary",
			hooks: []ch{
				{b: after, who: "a", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[` + text("s", "one") + `]}]`},
				{b: after, who: "b", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[` + text("s", "two") + `]}]`},
				{b: after, who: "c", fx: `[]`},
			},
			want: want{applied: true, generated: true, instructions: "Keep decisions.", summary: "two",
				trace: []string{"accepted", "accepted", "accepted"}, seen: []string{"a:summary: Keep decisions.", "b:one", "c:two"}},
		},
		{
			name: "a return skips only generation: after hooks still redact, provenance stays the supplier",
			hooks: []ch{
				{b: before, who: "sup", fx: `[{"type":"return","value":[` + text("r", "supplied secret") + `]}]`},
				{b: before, who: "next", fx: `[]`},
				{b: after, who: "redact", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[` + text("r", "supplied [redacted]") + `]}]`},
				{b: after, who: "last", fx: `[]`},
			},
			want: want{applied: true, instructions: "Keep decisions.", summary: "supplied [redacted]", supplier: "sup",
				trace: []string{"accepted", "accepted", "accepted", "accepted"},
				seen:  []string{"sup:Keep decisions.", "next:Keep decisions.+candidate", "redact:supplied secret+supplied", "last:supplied [redacted]+supplied"}},
		},
		{
			name: "a later instructions change invalidates an earlier supplied summary",
			hooks: []ch{
				{b: before, who: "sup", fx: `[{"type":"return","value":[` + text("r", "stale") + `]}]`},
				{b: before, who: "edit", fx: `[{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i2", "New focus.") + `]}]`},
			},
			want: want{applied: true, generated: true, instructions: "New focus.", summary: "summary: New focus.",
				trace: []string{"accepted", "accepted"}, seen: []string{"sup:Keep decisions.", "edit:Keep decisions.+candidate"}},
		},
		{
			name: "an unchanged replacement keeps the supplied summary",
			hooks: []ch{
				{b: before, who: "sup", fx: `[{"type":"return","value":[` + text("r", "kept") + `]}]`},
				{b: before, who: "same", fx: `[{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i1", "Keep decisions.") + `]}]`},
			},
			want: want{applied: true, instructions: "Keep decisions.", summary: "kept", supplier: "sup",
				trace: []string{"accepted", "accepted"}},
		},
		{
			name: "within one response the change precedes binding its return, whatever the order",
			hooks: []ch{
				{b: before, who: "both", fx: `[{"type":"return","value":[` + text("r", "bound") + `]},{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i2", "Changed.") + `]}]`},
			},
			want: want{applied: true, instructions: "Changed.", summary: "bound", supplier: "both", trace: []string{"accepted"}},
		},
		{
			name: "a rejected compound before response commits none of its message, instructions or return",
			hooks: []ch{
				{b: before, who: "ok", fx: `[{"type":"message","text":"earlier"}]`},
				{b: before, who: "bad", fx: `[{"type":"message","text":"leak"},{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i9", "leaked") + `]},{"type":"return","value":[` + text("r", "leaked") + `]},{"type":"modify","target":"summary","operation":"replace","value":[]}]`},
				{b: before, who: "after-bad", fx: `[]`},
			},
			want: want{applied: true, generated: true, instructions: "Keep decisions.", summary: "summary: Keep decisions.", messages: []string{"before/ok:earlier"},
				trace: []string{"accepted", "rejected:boundary_forbidden", "accepted"}, seen: []string{"ok:Keep decisions.", "bad:Keep decisions.", "after-bad:Keep decisions."}},
		},
		{
			name: "a rejected compound after response commits none of its message or summary bytes",
			hooks: []ch{
				{b: after, who: "ok", fx: `[{"type":"message","text":"kept"},{"type":"modify","target":"summary","operation":"replace","value":[` + text("s", "accepted") + `]}]`},
				{b: after, who: "bad", fx: `[{"type":"message","text":"leak"},{"type":"modify","target":"summary","operation":"replace","value":[` + text("s", "leaked bytes") + `]},{"type":"modify","target":"summary","operation":"merge","value":[]}]`},
				{b: after, who: "next", fx: `[]`},
			},
			want: want{applied: true, generated: true, instructions: "Keep decisions.", summary: "accepted", messages: []string{"after/ok:kept"},
				trace: []string{"accepted", "rejected:operation_not_granted", "accepted"}, seen: []string{"ok:summary: Keep decisions.", "bad:accepted", "next:accepted"}},
		},
		{
			name: "fail-open callback error keeps the earlier accepted state",
			hooks: []ch{
				{b: before, who: "a", fx: `[{"type":"message","text":"m1"},{"type":"modify","target":"instructions","operation":"replace","value":[` + text("i2", "A.") + `]}]`},
				{b: before, who: "boom", err: true},
				{b: after, who: "panic", panic: true},
			},
			want: want{applied: true, generated: true, instructions: "A.", summary: "summary: A.", messages: []string{"before/a:m1"},
				trace: []string{"accepted", "failed:callback_error", "failed:callback_panic"}},
		},
		{
			name: "fail-closed before prevents generation and the after boundary",
			hooks: []ch{
				{b: before, who: "a", fx: `[{"type":"message","text":"m1"}]`},
				{b: before, who: "closed", policy: hooks.FailClosed, err: true},
				{b: before, who: "never", fx: `[]`},
				{b: after, who: "never-after", fx: `[]`},
			},
			want: want{failedClosed: true, instructions: "Keep decisions.", messages: []string{"before/a:m1"},
				trace: []string{"accepted", "failed:callback_error"}},
		},
		{
			name: "fail-closed after prevents downstream application, not the generation that ran",
			hooks: []ch{
				{b: after, who: "a", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[` + text("s", "edited") + `]}]`},
				{b: after, who: "closed", policy: hooks.FailClosed, fx: `[{"type":"modify","target":"instructions","operation":"replace","value":[]}]`},
				{b: after, who: "never", fx: `[]`},
			},
			want: want{failedClosed: true, generated: true, instructions: "Keep decisions.", summary: "edited",
				trace: []string{"accepted", "rejected:boundary_forbidden"}},
		},
		{
			name: "a reason-bearing deny before compaction refuses it",
			hooks: []ch{
				{b: before, who: "guard", fx: `[{"type":"message","text":"not now"},{"type":"deny","reason":"policy forbids compaction"}]`},
				{b: before, who: "never", fx: `[]`},
				{b: after, who: "never-after", fx: `[]`},
			},
			want: want{denied: true, denyReason: "policy forbids compaction", instructions: "Keep decisions.", messages: []string{"before/guard:not now"},
				trace: []string{"accepted"}},
		},
		{
			name:  "a deny without a reason is rejected",
			hooks: []ch{{b: before, who: "x", fx: `[{"type":"deny","reason":""}]`}},
			want:  want{applied: true, generated: true, instructions: "Keep decisions.", summary: "summary: Keep decisions.", trace: []string{"rejected:invalid_effect"}},
		},
		{
			name:  "deny after compaction is not a control there",
			hooks: []ch{{b: after, who: "x", fx: `[{"type":"deny","reason":"late"}]`}},
			want:  want{applied: true, generated: true, instructions: "Keep decisions.", summary: "summary: Keep decisions.", trace: []string{"rejected:boundary_forbidden"}},
		},
		{
			name: "crossed targets, merge, injection and wrong value types fail explicitly",
			hooks: []ch{
				{b: before, who: "crossed", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[]}]`},
				{b: before, who: "merge", fx: `[{"type":"modify","target":"instructions","operation":"merge","value":[]}]`},
				{b: before, who: "inject", fx: `[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[]}]`},
				{b: before, who: "string", fx: `[{"type":"return","value":"not parts"}]`},
				{b: before, who: "object", fx: `[{"type":"return","value":{"text":"x"}}]`},
				{b: after, who: "crossed-after", fx: `[{"type":"modify","target":"instructions","operation":"replace","value":[]}]`},
				{b: after, who: "return-after", fx: `[{"type":"return","value":[]}]`},
				{b: after, who: "unknown", fx: `[{}]`},
			},
			want: want{applied: true, generated: true, instructions: "Keep decisions.", summary: "summary: Keep decisions.",
				trace: []string{"rejected:boundary_forbidden", "rejected:operation_not_granted", "rejected:effect_not_granted", "rejected:invalid_value", "rejected:invalid_value",
					"rejected:boundary_forbidden", "rejected:boundary_forbidden", "rejected:unknown_effect"}},
		},
		{
			name: "Unicode and empty summary bytes are kept exactly",
			hooks: []ch{
				{b: before, who: "sup", fx: `[{"type":"return","value":[` + text("r", "") + `]}]`},
				{b: after, who: "u", fx: `[{"type":"modify","target":"summary","operation":"replace","value":[` + text("r", "résumé ✓ 要約 \u0000") + `]}]`},
			},
			want: want{applied: true, instructions: "Keep decisions.", summary: "résumé ✓ 要約 \u0000", supplier: "sup", trace: []string{"accepted", "accepted"}},
		},
		{
			name:  "an empty supplied summary is a summary",
			hooks: []ch{{b: before, who: "sup", fx: `[{"type":"return","value":[]}]`}},
			want:  want{applied: true, instructions: "Keep decisions.", supplier: "sup", trace: []string{"accepted"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				cfg  hooks.CompactionConfig
				saw  []string
				gens int
			)
			cfg.Generator = func(ctx context.Context, ev *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
				gens++
				return hooks.DefaultCompactionGenerator(ctx, ev)
			}
			for _, h := range tc.hooks {
				var fx []gen.Effect
				if h.fx != "" {
					fx = effects(t, h.fx)
				}
				cfg.Hooks = append(cfg.Hooks, hooks.CompactionHook{Supplier: h.who, Boundary: h.b, FailurePolicy: h.policy,
					Callback: func(_ context.Context, snap hooks.CompactionSnapshot) ([]gen.Effect, error) {
						saw = append(saw, seen(snap))
						require.Equal(t, hooks.CompactionCapabilities(h.b), snap.Capabilities)
						switch {
						case h.panic:
							panic("callback panic")
						case h.err:
							return nil, errors.New("backend said " + canary)
						}
						return fx, nil
					}})
			}
			c, err := hooks.NewCompactor(cfg)
			require.NoError(t, err)
			defer c.Close()
			res, err := c.Run(context.Background(), input())
			require.NoError(t, err)
			w := tc.want
			require.Equal(t, w.applied, res.Applied, "applied")
			require.Equal(t, w.denied, res.Denied, "denied")
			require.Equal(t, w.denyReason, res.DenyReason)
			require.Equal(t, w.failedClosed, res.FailedClosed, "failedClosed")
			require.Equal(t, w.generated, res.Generated, "generated")
			require.Equal(t, map[bool]int{true: 1, false: 0}[w.generated], gens, "generator calls")
			require.Equal(t, w.instructions, parts(res.Instructions))
			require.Equal(t, w.summary, parts(res.Summary))
			require.Equal(t, w.supplier, res.Provenance.Supplier)
			require.Equal(t, w.generated, res.Provenance.Generated)
			var msgs []string
			for _, m := range res.Messages {
				msgs = append(msgs, strings.TrimPrefix(string(m.Boundary), "context.compact.")+"/"+m.Supplier+":"+m.Text)
			}
			require.Equal(t, w.messages, msgs)
			var trace []string
			for _, s := range res.Trace {
				o := string(s.Outcome)
				if s.Reason != "" {
					o += ":" + s.Reason
				}
				require.NotContains(t, s.Reason, canary)
				trace = append(trace, o)
			}
			require.Equal(t, w.trace, trace)
			if w.seen != nil {
				require.Equal(t, w.seen, saw)
			}
			down, ok := res.Downstream()
			require.Equal(t, w.applied, ok, "downstream eligibility")
			if ok {
				require.Equal(t, w.summary, parts(down))
			} else {
				require.Nil(t, down)
			}
			// The settled after event carries the summary; it is canonical.
			if res.After != nil {
				b, err := gen.EncodeEvent(res.After)
				require.NoError(t, err)
				_, err = gen.ParseEvent(b)
				require.NoError(t, err)
				require.Equal(t, w.summary, parts(res.After.ContextCompactAfter.Summary))
				require.Equal(t, w.generated, res.After.ContextCompactAfter.Execution.Executed != nil)
			} else {
				require.False(t, w.applied)
			}
		})
	}
}

// TestCompactionSnapshotsDetached: a callback that mutates its snapshot
// changes neither the run nor the next callback's snapshot.
func TestCompactionSnapshotsDetached(t *testing.T) {
	var second string
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{
		{Supplier: "mut", Boundary: before, Callback: func(_ context.Context, s hooks.CompactionSnapshot) ([]gen.Effect, error) {
			s.Event.ContextCompactBefore.Instructions[0].Body.Text = "mutated"
			s.Capabilities.Modify.Instructions.Merge = true
			s.Capabilities.Effects = append(s.Capabilities.Effects, gen.EffectFamilyInject)
			return nil, nil
		}},
		{Supplier: "next", Boundary: before, Callback: func(_ context.Context, s hooks.CompactionSnapshot) ([]gen.Effect, error) {
			second = parts(s.Event.ContextCompactBefore.Instructions)
			return effects(t, `[{"type":"modify","target":"instructions","operation":"merge","value":[]}]`), nil
		}},
		{Supplier: "mut-after", Boundary: after, Callback: func(_ context.Context, s hooks.CompactionSnapshot) ([]gen.Effect, error) {
			s.Event.ContextCompactAfter.Summary[0].Body.Text = "mutated"
			return []gen.Effect{}, nil
		}},
	}})
	require.NoError(t, err)
	defer c.Close()
	in := input()
	res, err := c.Run(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "Keep decisions.", second)
	require.Equal(t, "rejected", string(res.Trace[1].Outcome), "the mutated capabilities granted nothing")
	require.Equal(t, "summary: Keep decisions.", parts(res.Summary))
	require.Equal(t, "Keep decisions.", parts(in.Instructions), "the host's input is not modified")
	// The result is detached from the run too.
	down, ok := res.Downstream()
	require.True(t, ok)
	down[0].Body.Text = "changed"
	require.Equal(t, "summary: Keep decisions.", parts(res.Summary))
}

// TestCompactionGenerator: a host generator gets the effective before
// event; its error is the run's error and nothing is applied.
func TestCompactionGenerator(t *testing.T) {
	var got string
	edit := hooks.CompactionHook{Supplier: "e", Boundary: before, Callback: func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) {
		return effects(t, `[{"type":"modify","target":"instructions","operation":"replace","value":[`+text("i", "Be brief.")+`]}]`), nil
	}}
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{edit},
		Generator: func(_ context.Context, ev *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			got = parts(ev.Instructions)
			return gen.TextParts{{Body: &gen.TextBodyPart{ID: "g", Text: "model summary"}}}, nil
		}})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Run(context.Background(), input())
	require.NoError(t, err)
	require.Equal(t, "Be brief.", got)
	require.True(t, res.Applied)
	require.Equal(t, "model summary", parts(res.Summary))

	c2, err := hooks.NewCompactor(hooks.CompactionConfig{Generator: func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
		return nil, errors.New("model down " + canary)
	}})
	require.NoError(t, err)
	defer c2.Close()
	res, err = c2.Run(context.Background(), input())
	require.Error(t, err)
	require.Nil(t, res)

	// A generator result that is not inline text parts is an error too.
	c3, err := hooks.NewCompactor(hooks.CompactionConfig{Generator: func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
		return gen.TextParts{{Metadata: &gen.TextMetadataPart{ID: ""}}}, nil
	}})
	require.NoError(t, err)
	defer c3.Close()
	_, err = c3.Run(context.Background(), input())
	require.Error(t, err)
}

// TestCompactionConfig: invalid configurations and inputs are errors.
func TestCompactionConfig(t *testing.T) {
	cb := func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) { return nil, nil }
	for name, cfg := range map[string]hooks.CompactionConfig{
		"boundary": {Hooks: []hooks.CompactionHook{{Boundary: gen.EventToolBefore, Callback: cb}}},
		"policy":   {Hooks: []hooks.CompactionHook{{Boundary: before, FailurePolicy: "maybe", Callback: cb}}},
		"callback": {Hooks: []hooks.CompactionHook{{Boundary: before}}},
		"observer": {Observers: []hooks.CompactionObserver{nil}},
	} {
		_, err := hooks.NewCompactor(cfg)
		require.ErrorIs(t, err, hooks.ErrInvalidConfig, name)
	}
	c, err := hooks.NewCompactor(hooks.CompactionConfig{})
	require.NoError(t, err)
	in := input()
	in.Source = ""
	_, err = c.Run(context.Background(), in)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	in = input()
	in.Trigger = "sometimes"
	_, err = c.Run(context.Background(), in)
	require.ErrorIs(t, err, hooks.ErrInvalidInput)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err = c.Run(context.Background(), input())
	require.ErrorIs(t, err, hooks.ErrCompactorClosed)
}

// TestCompactionInterrupted: a run whose ctx ends in a callback is
// interrupted and never applied.
func TestCompactionInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{
		{Supplier: "s", Boundary: after, Callback: func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) {
			cancel()
			return []gen.Effect{}, nil
		}},
	}})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Run(ctx, input())
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, res.Interrupted)
	require.False(t, res.Applied)
	_, ok := res.Downstream()
	require.False(t, ok)
}

// TestCompactionObservers: settlement sets applied and the downstream sink
// gets the summary while observers are still blocked; a blocked observer
// does not serialize the others; observer panics and snapshot mutations
// change nothing; Close joins them.
func TestCompactionObservers(t *testing.T) {
	release := make(chan struct{})
	blockedIn := make(chan struct{})
	others := make(chan string, 2)
	c, err := hooks.NewCompactor(hooks.CompactionConfig{
		Hooks: []hooks.CompactionHook{{Supplier: "r", Boundary: after, Callback: func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) {
			return effects(t, `[{"type":"modify","target":"summary","operation":"replace","value":[`+text("s", "redacted")+`]}]`), nil
		}}},
		Observers: []hooks.CompactionObserver{
			func(ctx context.Context, s hooks.CompactionSnapshot) {
				close(blockedIn)
				<-release
			},
			func(ctx context.Context, s hooks.CompactionSnapshot) {
				others <- parts(s.Event.ContextCompactAfter.Summary)
				s.Event.ContextCompactAfter.Summary[0].Body.Text = "observer mutation"
				panic("observer panic")
			},
			func(ctx context.Context, s hooks.CompactionSnapshot) {
				require.Empty(t, s.Capabilities.Effects)
				others <- parts(s.Event.ContextCompactAfter.Summary)
			},
		},
	})
	require.NoError(t, err)
	res, err := c.Run(context.Background(), input())
	require.NoError(t, err)
	require.True(t, res.Applied)
	var sink []string
	down, ok := res.Downstream()
	require.True(t, ok)
	sink = append(sink, parts(down))
	<-blockedIn // the blocked observer is running, not finished
	require.Equal(t, "redacted", <-others)
	require.Equal(t, "redacted", <-others)
	require.Equal(t, []string{"redacted"}, sink)
	require.Equal(t, "redacted", parts(res.Summary))
	close(release)
	require.NoError(t, c.Close())
}

// TestCompactionObserverClose: Close cancels a blocked observer's ctx and
// waits for it.
func TestCompactionObserverClose(t *testing.T) {
	started := make(chan struct{})
	var mu sync.Mutex
	done := false
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Observers: []hooks.CompactionObserver{func(ctx context.Context, _ hooks.CompactionSnapshot) {
		close(started)
		<-ctx.Done()
		mu.Lock()
		done = true
		mu.Unlock()
	}}})
	require.NoError(t, err)
	_, err = c.Run(context.Background(), input())
	require.NoError(t, err)
	<-started
	require.NoError(t, c.Close())
	mu.Lock()
	defer mu.Unlock()
	require.True(t, done)
}

// TestCompactionRejectionFromCallback: a callback error wrapping a settle
// rejection keeps its reason (a transport callback that admitted the
// response itself).
func TestCompactionRejectionFromCallback(t *testing.T) {
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{{Supplier: "w", Boundary: before,
		Callback: func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) {
			return nil, &settle.Rejection{EffectIndex: 0, Reason: settle.ReasonTargetNotGranted}
		}}}})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Run(context.Background(), input())
	require.NoError(t, err)
	require.Equal(t, settle.ReasonTargetNotGranted, res.Trace[0].Reason)
	require.Equal(t, hooks.CompactionRejected, res.Trace[0].Outcome)
}

// ExampleCompactor runs a compaction whose summary a hook supplies before
// compaction and a host-owned callback redacts after it; the host installs
// it only because the result is applied.
func ExampleCompactor() {
	supply := func(context.Context, hooks.CompactionSnapshot) ([]gen.Effect, error) {
		return []gen.Effect{server.ReturnText(gen.TextParts{{Body: &gen.TextBodyPart{ID: "s", Text: "Deployed with key sk-123."}}})}, nil
	}
	redact := func(_ context.Context, snap hooks.CompactionSnapshot) ([]gen.Effect, error) {
		b := *snap.Event.ContextCompactAfter.Summary[0].Body
		b.Text = strings.ReplaceAll(b.Text, "sk-123", "[redacted]")
		return []gen.Effect{server.ReplaceText(gen.ModifyTextEffectTargetSummary, gen.TextParts{{Body: &b}})}, nil
	}
	c, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{
		{Supplier: "summarizer", Boundary: gen.EventContextCompactBefore, Callback: supply},
		{Supplier: "redactor", Boundary: gen.EventContextCompactAfter, FailurePolicy: hooks.FailClosed, Callback: redact},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.Run(context.Background(), hooks.CompactionInput{Source: "urn:example:host", Trigger: "auto"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if summary, ok := res.Downstream(); ok {
		fmt.Println("generated:", res.Generated, "supplier:", res.Provenance.Supplier)
		fmt.Println("install:", summary[0].Body.Text)
	}
	// Output:
	// generated: false supplier: summarizer
	// install: Deployed with key [redacted].
}

// TestCompactionGeneratorContract: the generator must return inline text
// parts. A panic, no summary, or a valid but non-inline part (metadata,
// omit, gap) is an ErrGenerator error: nothing is applied or passed
// downstream, and the panic does not escape Run.
func TestCompactionGeneratorContract(t *testing.T) {
	partsOf := func(s string) gen.TextParts {
		var ps gen.TextParts
		require.NoError(t, ps.UnmarshalJSON([]byte(s)))
		return ps
	}
	cases := map[string]hooks.CompactionGenerator{
		"panic": func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			panic("generator " + canary)
		},
		"nil": func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) { return nil, nil },
		"metadata part": func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			return partsOf(`[{"id":"s","kind":"text","mediaType":"text/plain","selection":"metadata","size":3}]`), nil
		},
		"omitted part": func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			return partsOf(`[{"id":"s","kind":"text","mediaType":"text/plain","selection":"omit"}]`), nil
		},
		"gap part": func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			return partsOf(`[` + text("a", "ok") + `,{"id":"s","kind":"text","mediaType":"text/plain","selection":"body","gap":{"reason":"unavailable"}}]`), nil
		},
	}
	for name, g := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := hooks.NewCompactor(hooks.CompactionConfig{Generator: g})
			require.NoError(t, err)
			defer c.Close()
			var res *hooks.CompactionResult
			require.NotPanics(t, func() { res, err = c.Run(context.Background(), input()) })
			require.ErrorIs(t, err, hooks.ErrGenerator)
			require.NotContains(t, err.Error(), canary)
			require.Nil(t, res)
			_, ok := res.Downstream()
			require.False(t, ok)
		})
	}
}
