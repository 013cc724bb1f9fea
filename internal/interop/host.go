package interop

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// Rejection stages: where an acquired response was refused.
const (
	stageEnvelope    = "envelope"    // not a JSON-RPC success response
	stageCorrelation = "correlation" // id does not match the request
	stageSchema      = "schema"      // generated codec or canonical schema
	stageAdmission   = "admission"   // capability and boundary admission (settle.Admit)
	stageApplication = "application" // the synthetic host's tool codec
	stageStaging     = "staging"     // atomic application (settle.Apply)
)

// rejection is the refusal of an acquired response. Its text comes from
// fixed vocabularies (stage names, settle reasons, schema pointer and
// keyword); it never quotes backend values.
type rejection struct {
	stage  string
	reason string
}

func (r *rejection) Error() string { return "rejected at " + r.stage + ": " + r.reason }

// syntheticHost is the interop README's deterministic host for one row: its
// managed policy allows the operation and its native policy needs no
// prompt, so permission none resolves to allow; ask stays pending; the
// edit_task tool accepts only objects with a positive integer task. It keeps
// side-effect counters so tests can prove a rejection published nothing.
type syntheticHost struct {
	req     *gen.InterceptRequest
	rpcID   jsonrpc.ID
	info    gen.EventInfo
	granted gen.Capabilities
	occ     *settle.Occurrence

	// Side effects published after acceptance.
	executions int
	prompts    int
	delivered  int // messages shown to the user
	injected   int // injections staged or scheduled
}

// newSyntheticHost starts a row from its canonical request: the event's own
// input and the incoming params.state (omitted state is permission none and
// a null candidate).
func newSyntheticHost(req *gen.InterceptRequest) (*syntheticHost, error) {
	info, ok := gen.LookupEvent(gen.EventName(req.Params.Event.Type()))
	if !ok || !info.Interceptable() || info.ResponseSchema == "" {
		return nil, errors.New("event is not an interception boundary")
	}
	rpcID, err := requestID(req)
	if err != nil {
		return nil, err
	}
	initial, err := settle.InitialFromState(req.Params.State)
	if err != nil {
		return nil, fmt.Errorf("incoming state: %w", err)
	}
	occ, err := settle.New(&req.Params.Event, initial)
	if err != nil {
		return nil, fmt.Errorf("start settlement: %w", err)
	}
	return &syntheticHost{req: req, rpcID: rpcID, info: info, granted: req.Params.Capabilities, occ: occ}, nil
}

// requestID converts the request's JSON-RPC id to a jsonrpc.ID.
func requestID(req *gen.InterceptRequest) (jsonrpc.ID, error) {
	if s, ok := req.ID.AsString(); ok {
		return jsonrpc.StringID(s), nil
	}
	if n, ok := req.ID.AsNumber(); ok {
		var id jsonrpc.ID
		if err := id.UnmarshalJSON([]byte(n.String())); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("request id: %w", err)
		}
		return id, nil
	}
	return jsonrpc.ID{}, errors.New("request id is neither a string nor an integer")
}

// accept validates the whole acquired response and, only if every check
// passes, applies it atomically. A non-nil result means nothing was
// published.
func (h *syntheticHost) accept(raw []byte) *rejection {
	env, err := jsonrpc.Classify(raw)
	if err != nil {
		return &rejection{stageEnvelope, "not a JSON-RPC 2.0 message"}
	}
	switch env.Kind {
	case jsonrpc.KindResponse:
	case jsonrpc.KindErrorResponse:
		return &rejection{stageEnvelope, "JSON-RPC error response (operational failure)"}
	default:
		return &rejection{stageEnvelope, "not a response"}
	}
	if !env.ID.Equal(h.rpcID) {
		return &rejection{stageCorrelation, "response id does not match the request id"}
	}
	resp, err := gen.ParseInterceptResponse(raw)
	if err != nil {
		return &rejection{stageSchema, err.Error()}
	}
	if err := validate.Default().Validate(h.info.ResponseSchema, raw); err != nil {
		return &rejection{stageSchema, err.Error()}
	}
	if err := settle.Admit(&h.req.Params.Event, h.granted, resp.Result.Effects); err != nil {
		return &rejection{stageAdmission, err.Error()}
	}
	if err := h.checkToolCodec(resp.Result.Effects); err != nil {
		return &rejection{stageApplication, err.Error()}
	}
	if err := h.occ.Apply(h.granted, &resp.Result); err != nil {
		var rj *settle.Rejection
		if errors.As(err, &rj) {
			return &rejection{stageStaging, rj.Error()}
		}
		return &rejection{stageStaging, "settlement failed"}
	}
	return nil
}

// checkToolCodec is the synthetic tool's own input contract (README
// semantics 4): every staged input, after each modification in response
// order, must be an object whose task is a positive integer. It is host
// behaviour, not an AHP schema rule.
func (h *syntheticHost) checkToolCodec(effects []gen.Effect) error {
	cur := h.occ.State().Input
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

// derive computes the application result from the committed settlement and
// publishes the side effects (README semantics 2, 5-9).
func (h *syntheticHost) derive() actualResult {
	st := h.occ.State()
	out := actualResult{Messages: append([]string{}, st.Messages...)}
	switch st.Permission {
	case gen.PermissionDeny:
		out.Decision = "deny"
	case gen.PermissionAsk:
		out.Decision = "ask" // pending: no approval is fabricated
		h.prompts++
	default:
		out.Decision = "allow" // none resolves to allow under this host's policy
	}
	stopped := st.Flow == gen.FlowStateStop
	if st.Flow == gen.FlowStateStop || st.Flow == gen.FlowStateContinue {
		out.Flow = string(st.Flow)
	}
	if cand, ok := st.SuppliedResult(); ok && out.Decision == "allow" {
		out.Result = cand.Value
	}
	if st.Input != nil {
		out.Input = st.Input
		out.Executed = out.Decision == "allow" && !stopped && !st.Candidate.Present
	}
	if h.isFinish() {
		instr := append([]string{}, st.Instructions...)
		out.ContinuationInstructions = &instr
		if _, ok := h.grantedRemaining(); ok {
			rem := st.RemainingContinuations
			out.ContinuationRemaining = &rem
		}
	}
	if h.injectGranted() {
		inj := append([]gen.InjectEffect{}, st.Injections...)
		out.Injections = &inj
	}
	if out.Executed {
		h.executions++
	}
	h.delivered += len(st.Messages)
	h.injected += len(st.Injections)
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

// snapshot captures the host state. The remaining allowance is the host's
// ledger: the advertised allowance, less one once a continuation resolves.
func (h *syntheticHost) snapshot() hostSnapshot {
	st := h.occ.State()
	s := hostSnapshot{
		Permission:               string(st.Permission),
		Input:                    st.Input,
		Messages:                 append([]string{}, st.Messages...),
		Injections:               append([]gen.InjectEffect{}, st.Injections...),
		Flow:                     string(st.Flow),
		ContinuationInstructions: append([]string{}, st.Instructions...),
		Executions:               h.executions,
		Prompts:                  h.prompts,
		Delivered:                h.delivered,
		Injected:                 h.injected,
	}
	if s.Permission == "" {
		s.Permission = string(gen.PermissionNone)
	}
	if s.Flow == "" {
		s.Flow = string(gen.FlowStateNone)
	}
	if st.Candidate.Present {
		s.Candidate = &snapshotCandidate{Value: st.Candidate.Value}
	}
	if rem, ok := h.grantedRemaining(); ok {
		if st.Flow == gen.FlowStateContinue && rem > 0 {
			rem--
		}
		s.ContinuationRemaining = &rem
	}
	return s
}
