package settle_test

import (
	"encoding/json"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/stretchr/testify/require"
)

func TestInteger(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-3", -3, true},
		{"1.0", 1, true},
		{"1e0", 1, true},
		{"2.5e1", 25, true},
		{"1E2", 100, true},
		{"-0.0", 0, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"1.5", 0, false},
		{"1e-1", 0, false},
		{"1e300", 0, false},
		{"9007199254740993.0", 0, false},
		{"x", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			v, ok := settle.Integer(json.Number(tc.in))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, v)
		})
	}
}

// TestIntegerValuedAllowance: a continuation allowance spelled 1.0 or 1e0
// is the allowance 1, for Admit and Apply alike (it used to read as none,
// and a granted continue was rejected as exhausted).
func TestIntegerValuedAllowance(t *testing.T) {
	ev := event(t, gen.EventTurnFinishBefore)
	for _, n := range []string{"1", "1.0", "1e0"} {
		t.Run(n, func(t *testing.T) {
			c := caps(t, `{"effects":["flow"],"flow":{"operations":["stop","continue"],"remainingContinuations":`+n+`,"continuationCount":0}}`)
			require.NoError(t, settle.Admit(ev, c, effects(t, `[{"type":"flow","operation":"continue"}]`)))
			o := newOcc(t, gen.EventTurnFinishBefore)
			require.NoError(t, apply(t, o, c, `[{"type":"flow","operation":"continue"}]`))
			require.Equal(t, gen.FlowStateContinue, o.State().Flow)
		})
	}
	c := caps(t, `{"effects":["flow"],"flow":{"operations":["stop","continue"],"remainingContinuations":0.0,"continuationCount":1}}`)
	require.Error(t, settle.Admit(ev, c, effects(t, `[{"type":"flow","operation":"continue"}]`)))
}
