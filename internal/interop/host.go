package interop

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// Rejection stages: where an acquired response was refused.
const (
	stageEnvelope    = "envelope"    // not a JSON-RPC success response
	stageCorrelation = "correlation" // id does not match the request
	stageSchema      = "schema"      // generated codec or canonical schema
	stageAdmission   = "admission"   // capability, boundary and staging admission (at acceptance)
	stageApplication = "application" // the synthetic host's tool codec
)

// rejection is the refusal of an acquired response. Its text comes from
// fixed vocabularies (stage names, the SDK's diagnostic reasons); it never
// quotes backend values.
type rejection struct {
	stage  string
	reason string
}

func (r *rejection) Error() string { return "rejected at " + r.stage + ": " + r.reason }

// rejectionFor classifies a failed delivery the SDK reported (a failed
// attempt or a diagnostic of the accepted call) as a rejection of the
// acquired response, or nil when it is a delivery failure: a transport
// failure, an HTTP status, a timeout or anything else that is not a refusal
// of a response that was received.
func rejectionFor(code hooks.Code, stage hooks.Stage, reason string) *rejection {
	switch code {
	case transport.CodeRemoteRPC:
		return &rejection{stageEnvelope, "JSON-RPC error response (operational failure)"}
	case transport.CodeProtocolRejection:
	default:
		return nil
	}
	switch reason {
	case "malformed_json", "invalid_envelope", "invalid_error":
		return &rejection{stageEnvelope, "not a JSON-RPC 2.0 message"}
	case "not_response":
		return &rejection{stageEnvelope, "not a JSON-RPC 2.0 response"}
	case "id_mismatch":
		return &rejection{stageCorrelation, "response id does not match the request id"}
	case "schema", "missing_effects":
		return &rejection{stageSchema, "the response does not satisfy its canonical schema (" + reason + ")"}
	case "reserved_reference":
		return &rejection{stageSchema, "the response names a reference it was never given"}
	}
	if stage == transport.StageAdmit && reason != "" {
		return &rejection{stageAdmission, reason} // settle's fixed rejection reasons
	}
	return nil
}

// syntheticHost is the interop README's deterministic host for one row: its
// managed policy allows the operation and its native policy needs no
// prompt, so permission none resolves to allow; ask stays pending; the
// edit_task tool accepts only objects with a positive integer task. The
// occurrence is settled by the SDK (hooks.Invocation); the host keeps the
// published Result and side-effect counters so tests can prove a rejection
// published nothing.
type syntheticHost struct {
	req     *gen.InterceptRequest
	info    gen.EventInfo
	granted gen.Capabilities
	input   json.RawMessage // the event's tool input, nil when it has none
	res     *hooks.Result   // the accepted outcome, nil before acceptance

	// Side effects published after acceptance.
	executions int
	prompts    int
	delivered  int // messages shown to the user
	injected   int // injections staged or scheduled
}

// newSyntheticHost starts a row from its canonical request (raw, which
// must parse as req).
func newSyntheticHost(req *gen.InterceptRequest, raw []byte) (*syntheticHost, error) {
	info, ok := gen.LookupEvent(gen.EventName(req.Params.Event.Type()))
	if !ok || !info.Interceptable() || info.ResponseSchema == "" {
		return nil, errors.New("event is not an interception boundary")
	}
	if st := req.Params.State; st != nil && !st.Permission.Known() {
		return nil, errors.New("incoming state: unknown permission")
	}
	var doc struct {
		Params struct {
			Event struct {
				Tool struct {
					Input json.RawMessage `json:"input"`
				} `json:"tool"`
			} `json:"event"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, errors.New("request is not JSON")
	}
	h := &syntheticHost{req: req, info: info, granted: req.Params.Capabilities}
	if in := doc.Params.Event.Tool.Input; len(in) > 0 && in[0] == '{' {
		h.input = in
	}
	return h, nil
}

// checkToolCodec is the synthetic tool's own input contract (README
// semantics 4): every staged input, after each modification in response
// order, must be an object whose task is a positive integer. It is host
// behaviour, not an AHP schema rule.
func (h *syntheticHost) checkToolCodec(effects []gen.Effect) error {
	cur := h.input
	if cur == nil {
		return nil
	}
	var staged map[string]json.RawMessage
	if err := json.Unmarshal(cur, &staged); err != nil {
		return errors.New("effective input is not an object")
	}
	for i, e := range effects {
		m := e.ModifyInput
		if m == nil {
			continue
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(m.Value, &v); err != nil || v == nil {
			return fmt.Errorf("effect %d: staged input is not an object", i)
		}
		switch m.Operation {
		case gen.EffectOperationReplace:
			staged = v
		case gen.EffectOperationMerge:
			next := make(map[string]json.RawMessage, len(staged)+len(v))
			for k, x := range staged {
				next[k] = x
			}
			for k, x := range v {
				next[k] = x
			}
			staged = next
		default:
			return fmt.Errorf("effect %d: unknown operation", i)
		}
		if !positiveInteger(staged["task"]) {
			return fmt.Errorf("effect %d: staged input needs a positive integer task", i)
		}
	}
	return nil
}

// positiveInteger reports whether raw is a JSON number with an integral
// value greater than zero (booleans, strings and null are not).
func positiveInteger(raw json.RawMessage) bool {
	var v any
	if err := DecodeJSON(raw, &v); err != nil {
		return false
	}
	n, ok := v.(json.Number) // a JSON string such as "1" is not a number
	if !ok {
		return false
	}
	r, ok := new(big.Rat).SetString(n.String())
	return ok && r.IsInt() && r.Sign() > 0
}

// isFinish reports a finish boundary: no original tool, continuation
// applies.
func (h *syntheticHost) isFinish() bool { return h.info.Name == gen.EventTurnFinishBefore }

// grantedRemaining returns the advertised remaining continuation allowance.
func (h *syntheticHost) grantedRemaining() (int, bool) {
	f := h.granted.Flow
	if f == nil || f.RemainingContinuations == nil {
		return 0, false
	}
	n, err := f.RemainingContinuations.Int64()
	if err != nil {
		return 0, false
	}
	return int(n), true
}

func (h *syntheticHost) injectGranted() bool {
	return slices.Contains(h.granted.Effects, gen.EffectFamilyInject)
}

// actualResult is the report's application result for an accepted row.
// Optional keys are present exactly where this host makes them applicable:
// input at tool boundaries; result when a candidate is selected; flow when
// resolved; continuation keys at a finish boundary (remaining when an
// allowance was advertised); injections when inject was advertised.
type actualResult struct {
	Decision                 string              `json:"decision"`
	Executed                 bool                `json:"executed"`
	Input                    json.RawMessage     `json:"input,omitempty"`
	Messages                 []string            `json:"messages"`
	Result                   json.RawMessage     `json:"result,omitempty"`
	Flow                     string              `json:"flow,omitempty"`
	ContinuationInstructions *[]string           `json:"continuationInstructions,omitempty"`
	ContinuationRemaining    *int                `json:"continuationRemaining,omitempty"`
	Injections               *[]gen.InjectEffect `json:"injections,omitempty"`
}

// derive computes the application result from the accepted Result and
// publishes the side effects (README semantics 2, 5-9).
func (h *syntheticHost) derive(res *hooks.Result) actualResult {
	h.res = res
	out := actualResult{Messages: append([]string{}, res.Messages...)}
	switch res.Permission {
	case gen.PermissionDeny:
		out.Decision = "deny"
	case gen.PermissionAsk:
		out.Decision = "ask" // pending: no approval is fabricated
		h.prompts++
	default:
		out.Decision = "allow" // none resolves to allow under this host's policy
	}
	stopped := res.Flow == gen.FlowStateStop
	if res.Flow == gen.FlowStateStop || res.Flow == gen.FlowStateContinue {
		out.Flow = string(res.Flow)
	}
	if res.Candidate.Present && out.Decision == "allow" && !stopped {
		out.Result = res.Candidate.Value
	}
	if res.Input != nil {
		out.Input = res.Input
		out.Executed = out.Decision == "allow" && !stopped && !res.Candidate.Present
	}
	if h.isFinish() {
		instr := append([]string{}, res.Instructions...)
		out.ContinuationInstructions = &instr
		if _, ok := h.grantedRemaining(); ok {
			rem := res.RemainingContinuations
			out.ContinuationRemaining = &rem
		}
	}
	if h.injectGranted() {
		inj := append([]gen.InjectEffect{}, res.Injections...)
		out.Injections = &inj
	}
	if out.Executed {
		h.executions++
	}
	h.delivered += len(res.Messages)
	h.injected += len(res.Injections)
	return out
}

// hostSnapshot is the host's pending state and side-effect counters, used to
// prove that a rejected response published nothing (README, "A negative
// response is one atomic failure boundary").
type hostSnapshot struct {
	Permission               string             `json:"permission"`
	Candidate                *snapshotCandidate `json:"candidate"`
	Input                    json.RawMessage    `json:"input,omitempty"`
	Messages                 []string           `json:"messages"`
	Injections               []gen.InjectEffect `json:"injections"`
	Flow                     string             `json:"flow"`
	ContinuationInstructions []string           `json:"continuationInstructions"`
	ContinuationRemaining    *int               `json:"continuationRemaining,omitempty"`
	Executions               int                `json:"executions"`
	Prompts                  int                `json:"prompts"`
	Delivered                int                `json:"delivered"`
	Injected                 int                `json:"injected"`
}

type snapshotCandidate struct {
	Value json.RawMessage `json:"value"`
}

// snapshot captures the host state: the accepted Result's, or before
// acceptance (and after a rejection, which publishes nothing) the
// request's own state. The remaining allowance is the host's ledger: the
// advertised allowance, less one once a continuation resolves.
func (h *syntheticHost) snapshot() hostSnapshot {
	s := hostSnapshot{
		Permission:               string(gen.PermissionNone),
		Input:                    h.input,
		Messages:                 []string{},
		Injections:               []gen.InjectEffect{},
		Flow:                     string(gen.FlowStateNone),
		ContinuationInstructions: []string{},
		Executions:               h.executions,
		Prompts:                  h.prompts,
		Delivered:                h.delivered,
		Injected:                 h.injected,
	}
	flow := gen.FlowStateNone
	if r := h.res; r != nil {
		s.Permission, s.Input, flow = string(r.Permission), r.Input, r.Flow
		s.Messages = append(s.Messages, r.Messages...)
		s.Injections = append(s.Injections, r.Injections...)
		s.ContinuationInstructions = append(s.ContinuationInstructions, r.Instructions...)
		if r.Candidate.Present {
			s.Candidate = &snapshotCandidate{Value: r.Candidate.Value}
		}
	} else if st := h.req.Params.State; st != nil {
		if st.Permission != "" {
			s.Permission = string(st.Permission)
		}
		if st.Flow != nil && *st.Flow != "" {
			flow = *st.Flow
		}
		s.Injections = append(s.Injections, st.Injections...)
		s.ContinuationInstructions = append(s.ContinuationInstructions, st.Instructions...)
		if st.Candidate.Valid {
			s.Candidate = &snapshotCandidate{Value: st.Candidate.Value.Value}
		}
	}
	if flow != "" {
		s.Flow = string(flow)
	}
	if s.Input != nil {
		if in, err := CompactJSON(s.Input); err == nil {
			s.Input = in // a Result's input is compact; the request's may not be
		}
	}
	if rem, ok := h.grantedRemaining(); ok {
		if flow == gen.FlowStateContinue && rem > 0 {
			rem--
		}
		s.ContinuationRemaining = &rem
	}
	return s
}
