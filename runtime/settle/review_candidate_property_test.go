package settle_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// TestCandidateFollowsComposition draws random response sequences at the
// boundaries with a supplied result and checks the candidate after every
// accepted response against base/composition.md: a denial leaves none; a
// response's own return binds its last returned value; otherwise a
// changed effective operation (the target differs after the response)
// leaves none, and an unchanged one keeps the earlier candidate. The
// RequestState sent to the next receiver carries the same candidate.
func TestCandidateFollowsComposition(t *testing.T) {
	counts := map[string]int{}
	for _, name := range []gen.EventName{gen.EventToolBefore, gen.EventModelRequestBefore, gen.EventContextCompactBefore} {
		t.Run(string(name), func(t *testing.T) {
			g := fullGrant(t, name)
			for seed := range 300 {
				r := rng{rand.New(rand.NewPCG(uint64(seed), 0xca4d))}
				o := newOcc(t, name)
				for range 1 + r.IntN(5) {
					resp := r.response(name)
					before := o.State()
					es := effects(t, resp)
					if o.Apply(g, result(es)) != nil {
						continue
					}
					after := o.State()
					var lastReturn json.RawMessage
					for i := range es {
						if es[i].ReturnTool != nil {
							lastReturn = es[i].ReturnTool.Value
						}
					}
					rs := o.RequestState()
					require.Equal(t, after.Candidate.Present, rs.Candidate.Valid, "seed %d: %s", seed, resp)
					same, differs := compareTargets(before, after)
					switch {
					case after.Permission == gen.PermissionDeny:
						counts["denied"]++
						require.False(t, after.Candidate.Present, "seed %d: a candidate after a denial: %s", seed, resp)
					case lastReturn != nil:
						counts["returned"]++
						require.True(t, after.Candidate.Present, "seed %d: %s", seed, resp)
						require.JSONEq(t, string(lastReturn), string(after.Candidate.Value), "seed %d: %s", seed, resp)
					case differs:
						if before.Candidate.Present {
							counts["changed with a candidate"]++
						}
						require.False(t, after.Candidate.Present, "seed %d: the candidate survives a changed operation: %s", seed, resp)
					case same:
						counts["unchanged"]++
						require.Equal(t, before.Candidate, after.Candidate, "seed %d: %s", seed, resp)
					}
				}
			}
		})
	}
	t.Logf("coverage: %v", counts)
	require.Positive(t, counts["changed with a candidate"])
}

// compareTargets reports whether the effective input and targets of a and
// b are byte for byte the same, or differ as JSON values (neither when
// they differ in spelling only).
func compareTargets(a, b settle.State) (same, differs bool) {
	enc := func(s settle.State) []byte {
		out, _ := json.Marshal(struct {
			Input   json.RawMessage
			Targets map[gen.ModifyTarget]json.RawMessage
		}{s.Input, s.Targets})
		return out
	}
	ea, eb := enc(a), enc(b)
	if bytes.Equal(ea, eb) {
		return true, false
	}
	var va, vb any
	_ = json.Unmarshal(ea, &va)
	_ = json.Unmarshal(eb, &vb)
	return false, !reflect.DeepEqual(va, vb)
}
