package settle

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// stopTestEvent is a tool.before event whose tool input has n members.
func stopTestEvent(t *testing.T, n int) *gen.Event {
	t.Helper()
	ev, err := gen.ParseEvent([]byte(`{"id":"evt1","source":"https://h.example/","time":"2026-08-24T08:51:14Z","type":"tool.before",` +
		`"session":{"id":"s1"},"tool":{"name":"w","input":` + hostile.Object(n) + `,"origin":"native"},"call":{"id":"c1"},"path":"x"}`))
	require.NoError(t, err)
	return ev
}

// stopTestResult is an input modification (replace or merge) by a value
// of n members.
func stopTestResult(t *testing.T, op string, n int) *gen.InterceptResponseResult {
	t.Helper()
	r, err := gen.ParseInterceptResponse([]byte(`{"jsonrpc":"2.0","id":"evt1","result":{"protocolVersion":"draft","effects":[` +
		`{"type":"modify","target":"input","operation":"` + op + `","value":` + hostile.Object(n) + `}]}}`))
	require.NoError(t, err)
	return &r.Result
}

var stopTestGrant = gen.Capabilities{
	Effects: []gen.EffectFamily{gen.EffectFamilyModify},
	Modify:  &gen.CapabilitiesModify{Input: &gen.CapabilitiesModifyInput{Replace: true, Merge: true}},
}

// TestScansObserveStop: the scans of staging give up once their stop flag
// is set, with errStopped rather than a verdict on the text; without a
// flag, or with one that is not set, they read the whole text.
func TestScansObserveStop(t *testing.T) {
	doc := []byte(hostile.Object(100000))
	var set, unset atomic.Bool
	set.Store(true)
	_, err := splitObjectStop(doc, true, &set)
	require.ErrorIs(t, err, errStopped)
	require.ErrorIs(t, checkJSONStop(doc, &set), errStopped)
	for _, stop := range []*atomic.Bool{nil, &unset} {
		ms, err := splitObjectStop(doc, true, stop)
		require.NoError(t, err)
		require.Len(t, ms, 100000)
		require.NoError(t, checkJSONStop(doc, stop))
	}
}

// TestStageObservesStop: staging a large input replacement or merge gives
// up once the occurrence's stop flag is set (what ApplyContext sets when
// its context ends), where it would otherwise admit it.
func TestStageObservesStop(t *testing.T) {
	for _, op := range []string{"replace", "merge"} {
		t.Run(op, func(t *testing.T) {
			o, err := New(stopTestEvent(t, 1), Initial{})
			require.NoError(t, err)
			result := stopTestResult(t, op, 250000)
			_, rej := o.stage(&stopTestGrant, result.Effects, nil)
			require.Nil(t, rej, "admissible")

			var stop atomic.Bool
			stop.Store(true)
			o.stop = &stop
			_, rej = o.stage(&stopTestGrant, result.Effects, nil)
			require.NotNil(t, rej, "the stage gave up")
		})
	}
}

// TestApplyContextEnded: a context that ended before ApplyContext publishes
// nothing and stages nothing: the result is its error, even for a response
// that staging would reject, and the state is unchanged.
func TestApplyContextEnded(t *testing.T) {
	o, err := New(stopTestEvent(t, 1000), Initial{})
	require.NoError(t, err)
	before := o.State()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	bad := stopTestResult(t, "replace", 10)
	bad.Effects[0].ModifyInput.Value = []byte(`[1]`) // not an object: inadmissible
	for _, r := range []*gen.InterceptResponseResult{stopTestResult(t, "replace", 250000), bad} {
		err := o.ApplyContext(ctx, stopTestGrant, r, ApplyOptions{})
		require.ErrorIs(t, err, context.Canceled)
		var rj *Rejection
		require.False(t, errors.As(err, &rj), "not a rejection: %v", err)
	}
	require.Equal(t, before, o.State())
	require.Nil(t, o.stop, "the flag does not outlive the call")

	// With time left the same occurrence accepts the replacement.
	require.NoError(t, o.ApplyContext(t.Context(), stopTestGrant, stopTestResult(t, "replace", 250000), ApplyOptions{}))
	require.Len(t, o.cur.input, 250000)
}
