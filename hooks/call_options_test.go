package hooks_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
)

// TestInitialStateOptionShared: calls refer to a WithInitialState option's
// state, never write it. Concurrent calls given the same option and
// WithOriginalElicitationRequest (which adds the original request to the
// call's initial state) each settle the backend's merge against the
// original request, and a later call given the same option without the
// original request finds none: its merge is rejected as
// context_unavailable, as for a call given no option at all.
func TestInitialStateOptionShared(t *testing.T) {
	ctx := context.Background()
	h, _ := elicitHooks(t, mergeAge())
	sess := &gen.Session{ID: "s1"}
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Session: sess, Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	original := reqRes.Event()
	parent := original.UserElicitationRequest.ID
	answer := `{"action":"accept","content":{"name":"Ada"}}`
	input := hooks.UserElicitationResultInput{Session: sess, ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept, Result: elicitPart("r", answer)}}
	initial := hooks.WithInitialState(hooks.InitialState(gen.PermissionNone))
	withOriginal := hooks.WithOriginalElicitationRequest(original)

	const calls = 4
	results := make([]*hooks.Result, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.UserElicitationResult(ctx, input, initial, withOriginal)
		}()
	}
	wg.Wait()
	for i := range calls {
		require.NoError(t, errs[i])
		require.Empty(t, results[i].Diagnostics)
		require.JSONEq(t, `{"action":"accept","content":{"name":"Ada","age":41}}`, results[i].Event().UserElicitationResult.Elicitation.Result.Body.Text)
	}

	res, err := h.UserElicitationResult(ctx, input, initial)
	require.NoError(t, err)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, "context_unavailable", res.Diagnostics[0].Reason, "the option's state holds no original request")
	require.JSONEq(t, answer, res.Event().UserElicitationResult.Elicitation.Result.Body.Text)
}
