package lifecycle

import (
	"bytes"
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
)

// outcomes is the actual "outcomes" object: for every request a call was
// made for, what the host derived from the SDK's Result.
func (r *scenarioRun) outcomes(invs []*invocation) map[string]any {
	out := map[string]any{}
	for _, inv := range invs {
		out[inv.key] = outcomeOf(inv)
	}
	return out
}

// outcomeOf derives a call's application outcome under the synthetic
// host's policy (interop README): permission none resolves to allow,
// execution happens once exactly when the decision is allow, the flow is
// not stopped and there is no candidate. An interrupted call is
// "cancelled": its Result keeps what was accepted before the interruption
// (input, messages) and never authorizes (deny). Observation-only calls
// report "observed". Failed deliveries are listed by mode, code and
// reason.
func outcomeOf(inv *invocation) map[string]any {
	res := inv.res
	if res == nil {
		return map[string]any{"state": "error"}
	}
	o := map[string]any{}
	if fails := failures(res.Diagnostics); len(fails) > 0 {
		o["failures"] = fails
	}
	if inv.observe {
		o["state"] = "observed"
		return o
	}
	o["state"] = "accepted"
	if res.Interrupted {
		o["state"] = "cancelled"
	}
	decision := string(res.Permission)
	if res.Permission == gen.PermissionNone {
		decision = "allow"
	}
	o["decision"] = decision
	o["executed"] = decision == "allow" && res.Flow != gen.FlowStateStop && !res.Candidate.Present && !res.Interrupted
	if len(res.Input) > 0 {
		var v any
		dec := json.NewDecoder(bytes.NewReader(res.Input))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			o["input"] = v
		}
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []string{}
	}
	o["messages"] = msgs
	if res.Candidate.Present {
		var v any
		if json.Unmarshal(res.Candidate.Value, &v) == nil {
			o["result"] = v
		}
	}
	if res.Flow != gen.FlowStateNone && res.Flow != "" {
		o["flow"] = string(res.Flow)
	}
	if !inv.finish && len(res.Injections) > 0 {
		o["injections"] = injections(res.Injections)
	}
	if inv.finish {
		// A finish boundary has no tool to execute; its continuation and
		// injection results are asserted instead.
		o["executed"] = false
		instr := res.Instructions
		if instr == nil {
			instr = []string{}
		}
		o["continuationInstructions"] = instr
		o["continuationRemaining"] = res.RemainingContinuations
		o["injections"] = injections(res.Injections)
	}
	return o
}

func failures(ds []hooks.Diagnostic) []map[string]any {
	var out []map[string]any
	for _, d := range ds {
		f := map[string]any{"mode": string(d.Mode), "code": string(d.Code)}
		if d.Reason != "" {
			f["reason"] = d.Reason
		}
		if d.Downgraded {
			f["downgraded"] = true
		}
		out = append(out, f)
	}
	return out
}

// injections renders accepted inject effects as JSON values.
func injections(list []gen.InjectEffect) []any {
	out := []any{}
	for _, e := range list {
		b, err := json.Marshal(e)
		var v any
		if err == nil && json.Unmarshal(b, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}
