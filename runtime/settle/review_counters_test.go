package settle_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestContinuationCountersAtTheirBounds pins the continuation counters a
// continue settles to when the advertised remainingContinuations and
// continuationCount (a backend's request, a host's grant) and the event's
// continuationCount lie at the edges of what the occurrence keeps (at most
// 1<<31): the largest kept values settle exactly, larger, negative and
// fractional ones are absent (the remaining allowance then admits no
// continue, the count is the event's).
func TestContinuationCountersAtTheirBounds(t *testing.T) {
	for _, tc := range []struct {
		name                string
		remaining, count    string // advertised
		eventCount          string
		wantErr             string // a rejection reason, or ""
		wantRemaining, want int    // State after one continue
	}{
		{"small", "3", "0", "1", "", 2, 1},
		{"largest int32", "2147483647", "2147483647", "1", "", 2147483646, 2147483648},
		{"1<<31", "2147483648", "2147483648", "1", "", 2147483647, 2147483649},
		{"1<<31 + 1 is absent", "2147483649", "2147483649", "1", settle.ReasonContinuationExhausted, 0, 0},
		{"1<<32 is absent", "4294967296", "4294967296", "1", settle.ReasonContinuationExhausted, 0, 0},
		{"1<<32 + 3 does not wrap", "4294967299", "0", "1", settle.ReasonContinuationExhausted, 0, 0},
		{"exponent form", "3e0", "2E0", "1", "", 2, 3},
		{"negative is absent", "-1", "-1", "1", settle.ReasonContinuationExhausted, 0, 0},
		{"fraction is absent", "1.5", "0", "1", settle.ReasonContinuationExhausted, 0, 0},
		{"count absent: the event's", "3", "-1", "7", "", 2, 8},
		{"event count 1<<31 - 1", "3", "-1", "2147483647", "", 2, 2147483648},
		{"event count 1<<31 is not kept", "3", "-1", "2147483648", "", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(eventJSON[gen.EventTurnFinishBefore], `"continuationCount":1`, `"continuationCount":`+tc.eventCount, 1)
			o, err := settle.New(decodeEvent(t, src), settle.Initial{})
			require.NoError(t, err)
			g := fullGrant(t, gen.EventTurnFinishBefore)
			r, c := json.Number(tc.remaining), json.Number(tc.count)
			g.Flow.RemainingContinuations, g.Flow.ContinuationCount = &r, &c
			err = apply(t, o, g, `[{"type":"flow","operation":"continue","instruction":"again"}]`)
			if tc.wantErr != "" {
				requireRejected(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			s := o.State()
			require.Equal(t, gen.FlowStateContinue, s.Flow)
			require.Equal(t, tc.wantRemaining, s.RemainingContinuations)
			require.Equal(t, tc.want, s.ContinuationCount)
		})
	}
}
