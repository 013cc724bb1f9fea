package hooks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestResultExposesEffectiveTargets: a prompt modification at turn.start is
// visible in Result.Targets (and in the effective event), as typed JSON.
func TestResultExposesEffectiveTargets(t *testing.T) {
	const prompt = `[{"id":"m1","role":"user","parts":[{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"Explain photosynthesis."}]}]`
	const extra = `[{"id":"m2","role":"user","parts":[{"id":"m2-t","kind":"text","mediaType":"text/plain","selection":"body","text":"Keep it short."}]}]`
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(prompt), &items))
	var add gen.CanonicalMessages
	require.NoError(t, json.Unmarshal([]byte(extra), &add))

	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{server.MergeMessages(gen.ModifyMessagesEffectTargetPrompt, add)}
	}}
	h, err := hooks.New(registration(backendJSON("com.example.prompt", httpTransport("http://127.0.0.1:9/x"),
		interceptSub(`"turn.start"`, 5000, "fail-closed"))), hooks.Config{
		Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventTurnStart: hooks.Intercept().ModifyPrompt(hooks.Merge),
		},
		Transports: map[string]transport.Transport{"com.example.prompt": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})},
	})
	require.NoError(t, err)
	defer h.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.TurnStart(ctx, hooks.TurnStartInput{
		Items:   items,
		Turn:    gen.ExecutionEventTurn{ID: "turn-1"},
		Trigger: gen.ExecutionEventTurnStartTriggerUser,
	})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, res.Accepted, 1)
	got, ok := res.Targets[gen.ModifyTargetPrompt]
	require.True(t, ok, "prompt target present")
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(got, &msgs))
	require.Len(t, msgs, 2, "merge appends to the prompt list")
	require.Equal(t, "m1", msgs[0]["id"])
	require.Equal(t, "m2", msgs[1]["id"])
	ev := res.Event()
	require.NotNil(t, ev)
	require.NotNil(t, ev.TurnStart)
	require.Len(t, ev.TurnStart.Items, 2, "the effective event carries the edited prompt")
}
