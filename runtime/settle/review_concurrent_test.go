package settle_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestOccurrencesShareNothingWritable: occurrences of one event, settled
// at the same time on several goroutines (as the calls of one Hooks are),
// share what they share (the boundary, the zero state of the rarely set
// part) read-only: each settles to its own responses, and under -race no
// write to shared state shows up. Every goroutine alternates between a
// response that leaves the rarely set part absent (no effect, an approval,
// a denial) and one that sets it (a supplied result, an injection, a stop).
func TestOccurrencesShareNothingWritable(t *testing.T) {
	g := fullGrant(t, gen.EventToolBefore)
	ev := event(t, gen.EventToolBefore)
	encoded, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	responses := []struct {
		effects  string
		wantPerm gen.Permission
		wantCand bool
		wantFlow gen.FlowState
	}{
		{`[]`, gen.PermissionNone, false, gen.FlowStateNone},
		{`[{"type":"allow"}]`, gen.PermissionAllow, false, gen.FlowStateNone},
		{`[{"type":"deny","reason":"no"},{"type":"message","text":"m"}]`, gen.PermissionDeny, false, gen.FlowStateNone},
		{`[{"type":"return","value":{"n":%d}}]`, gen.PermissionNone, true, gen.FlowStateNone},
		{`[` + injectNow + `,{"type":"flow","operation":"stop","reason":"r%d"}]`, gen.PermissionNone, false, gen.FlowStateStop},
	}
	const workers, rounds = 8, 200
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				r := responses[(w+i)%len(responses)]
				o, err := settle.NewValidated(ev, encoded, settle.Initial{})
				if err != nil {
					errs <- err
					return
				}
				body := r.effects
				if r.wantCand || r.wantFlow == gen.FlowStateStop {
					body = fmt.Sprintf(body, i)
				}
				es, err := parseEffects(body)
				if err != nil {
					errs <- err
					return
				}
				if err := o.Apply(g, result(es)); err != nil {
					errs <- fmt.Errorf("%s: %w", body, err)
					return
				}
				s := o.State()
				switch {
				case s.Permission != r.wantPerm, s.Candidate.Present != r.wantCand, s.Flow != r.wantFlow:
					errs <- fmt.Errorf("%s: settled to %s %v %s", body, s.Permission, s.Candidate.Present, s.Flow)
					return
				case r.wantCand && string(s.Candidate.Value) != fmt.Sprintf(`{"n":%d}`, i):
					errs <- fmt.Errorf("%s: candidate %s", body, s.Candidate.Value)
					return
				case r.wantFlow == gen.FlowStateStop && s.StopReason != fmt.Sprintf("r%d", i):
					errs <- fmt.Errorf("%s: stop reason %q", body, s.StopReason)
					return
				case !r.wantCand && r.wantFlow != gen.FlowStateStop && (len(s.Injections) != 0 || s.StopReason != ""):
					errs <- fmt.Errorf("%s: state of another occurrence: %+v", body, s)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.True(t, settle.ZeroMoreIntact())
}

// parseEffects is effects for a goroutine other than the test's: it
// returns the error rather than failing the test.
func parseEffects(data string) ([]gen.Effect, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(data), &raws); err != nil {
		return nil, err
	}
	out := make([]gen.Effect, 0, len(raws))
	for _, r := range raws {
		e, err := gen.ParseEffect(r)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, nil
}
