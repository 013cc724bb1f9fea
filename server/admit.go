package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// AdmissionError reports why an intercept response was not sent. It names
// the event, the offending effect and a reason from a fixed vocabulary; Err,
// when set, is the underlying *validate.Error, *settle.Rejection or encoding
// error. It never contains effect values.
type AdmissionError struct {
	// Event is the intercepted event.
	Event gen.EventName
	// Index is the position of the offending effect in the result, or -1
	// when the response as a whole is at fault.
	Index int
	// Effect is the offending effect's family ("modify", "flow", ...), if
	// known.
	Effect string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns a one-line description without effect values.
func (e *AdmissionError) Error() string {
	var b strings.Builder
	b.WriteString("server: intercept response for ")
	b.WriteString(string(e.Event))
	b.WriteString(" not admitted")
	if e.Index >= 0 {
		b.WriteString(": effect ")
		b.WriteString(strconv.Itoa(e.Index))
		if e.Effect != "" {
			b.WriteString(" (")
			b.WriteString(e.Effect)
			b.WriteString(")")
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *AdmissionError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNotAdmitted.
func (e *AdmissionError) Is(target error) bool { return target == ErrNotAdmitted }

// Admit runs the admission checks that the dispatcher applies to an
// Intercept callback's answer before sending it, against req's capabilities:
// the effects must be advertised (effect family, modification target and
// operation, flow operation and remaining continuations, inject delivery),
// pass runtime/settle's boundary rules, and the encoded response must be
// valid against intercept-response.schema.json and the event's own response
// definition. It returns nil or an [*AdmissionError]. A callback can use it
// to choose between alternatives (for example deny when granted, else an
// error).
func Admit(req *gen.InterceptRequest, res InterceptResult) error {
	if req == nil {
		return &AdmissionError{Index: -1, Reason: "nil request"}
	}
	info, ok := lookupEvent(gen.EventName(req.Params.Event.Type()))
	if !ok || !info.Interceptable() {
		return &AdmissionError{Event: info.Name, Index: -1, Reason: "the event cannot be intercepted"}
	}
	var id jsonrpc.ID
	if err := id.UnmarshalJSON([]byte(req.ID)); err != nil {
		return &AdmissionError{Event: info.Name, Index: -1, Reason: "the request id is invalid", Err: err}
	}
	_, err := admit(id, info, admission{granted: &req.Params.Capabilities, event: &req.Params.Event}, res)
	return err
}

// admit builds the response to an intercept request and returns its bytes
// only if it is admissible against a. a may be the zero admission when res
// carries no effects.
func admit(id jsonrpc.ID, info gen.EventInfo, a admission, res InterceptResult) ([]byte, error) {
	effects := res.Effects
	if effects == nil {
		effects = []gen.Effect{}
	}
	fail := func(index int, family gen.EffectFamily, reason string, err error) error {
		return &AdmissionError{Event: info.Name, Index: index, Effect: string(family), Reason: reason, Err: err}
	}

	// The shape of each effect, before anything is encoded.
	for i := range effects {
		family, _, _ := effectFacts(&effects[i])
		if family == "" {
			return nil, fail(i, "", "no effect arm is set", nil)
		}
		if reason, ok := invalidValue(&effects[i]); ok {
			return nil, fail(i, family, reason, nil)
		}
	}

	idText, err := id.MarshalJSON()
	if err != nil {
		return nil, fail(-1, "", "the request id cannot be echoed", err)
	}
	resp := gen.InterceptResponse{
		JSONRPC: jsonrpc.Version,
		ID:      gen.JSONRPCResponseID(idText),
		Result: gen.InterceptResponseResult{
			ProtocolVersion: gen.ProtocolVersion,
			Effects:         effects,
			Extensions:      res.Extensions,
		},
	}
	body, err := gen.EncodeInterceptResponse(&resp)
	if err != nil {
		return nil, fail(-1, "", "the response cannot be encoded", err)
	}

	// Capabilities advertised in this request (AHP-CAP-001). An empty
	// answer uses none and cannot break a boundary rule (the event itself
	// was checked before the callback ran).
	if len(effects) > 0 {
		if err := checkGrants(info, a.granted, effects); err != nil {
			return nil, err
		}
	}

	// Canonical schemas: the generic response, then the event's own, from
	// one scan of the response (ValidateDoc gives Validate's verdict and
	// errors).
	v := validate.Default()
	doc := validate.Scan(context.Background(), body)
	for _, ref := range []string{"intercept-response.schema.json", info.ResponseSchema} {
		if ref == "" {
			continue
		}
		if err := v.ValidateDoc(ref, doc); err != nil {
			// The error may hold memory of doc, which is left to the
			// collector rather than released.
			index, family := -1, gen.EffectFamily("")
			if verr, ok := errors.AsType[*validate.Error](err); ok {
				if i, ok := effectIndex(verr.Pointer); ok && i < len(effects) {
					index = i
					family, _, _ = effectFacts(&effects[i])
				}
			}
			return nil, fail(index, family, "the response is not valid against "+ref, err)
		}
	}
	doc.Release()

	// Boundary rules shared with the harness.
	if len(effects) == 0 {
		return body, nil
	}
	if err := boundaryAdmit(a, info.Name, effects); err != nil {
		index, family := -1, gen.EffectFamily("")
		if i, ok := rejectedIndex(err); ok && i >= 0 && i < len(effects) {
			index = i
			family, _, _ = effectFacts(&effects[i])
		}
		return nil, fail(index, family, "rejected by the settlement rules", err)
	}
	return body, nil
}

// The no-effect answer, around the echoed request id: exactly what admit
// encodes for an InterceptResult without effects or extensions.
const (
	noEffectHead = `{"jsonrpc":"` + jsonrpc.Version + `","id":`
	noEffectTail = `,"result":{"protocolVersion":"` + gen.ProtocolVersion + `","effects":[]}}`
)

// noEffectResponse returns the answer without effects and without
// extensions to the intercept request with id, byte for byte what admit
// returns for it, and false when id is neither a non-empty string nor an
// integer (admit then decides).
//
// The dispatcher sends it without admit's two schema validations, which
// cannot fail for it:
//   - the id has passed canonical validation of the request as a jsonRpcId
//     (common.schema.json), and the response's id is a jsonRpcResponseId,
//     anyOf jsonRpcId and null, so the same token is valid there too; it is
//     echoed verbatim, as admit does;
//   - the rest is constant: it does not depend on the event, and it is
//     valid against intercept-response.schema.json and against the response
//     definition of every interceptable event of the catalogue, which the
//     schemas (embedded, fixed at build time) and the catalogue (generated)
//     make a finite, static set; the package tests check every member of it;
//   - had the validator failed to load its schemas, the request could not
//     have passed canonical validation.
//
// Effects always go through admit, and so does any Extensions value, which
// is the callback's JSON and must be validated.
func noEffectResponse(id jsonrpc.ID) ([]byte, bool) {
	if !id.IsString() && !id.IsInteger() {
		return nil, false
	}
	raw := id.String() // the exact JSON text of a string or integer id
	if raw == `""` {
		return nil, false
	}
	body := make([]byte, 0, len(noEffectHead)+len(raw)+len(noEffectTail))
	body = append(body, noEffectHead...)
	body = append(body, raw...)
	return append(body, noEffectTail...), true
}

// effectIndex extracts N from a pointer /result/effects/N[/...].
func effectIndex(ptr string) (int, bool) {
	rest, ok := strings.CutPrefix(ptr, "/result/effects/")
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// checkGrants checks every effect against the capabilities the request
// advertised (base/capabilities.md: "A backend MUST return only effects
// advertised in that request") and against the boundary's catalogue entry.
func checkGrants(info gen.EventInfo, granted *gen.Capabilities, effects []gen.Effect) error {
	for i := range effects {
		e := &effects[i]
		family, target, operation := effectFacts(e)
		fail := func(reason string) error {
			return &AdmissionError{Event: info.Name, Index: i, Effect: string(family), Reason: reason}
		}
		if !slices.Contains(info.EffectFamilies, family) {
			return fail(fmt.Sprintf("%s cannot grant %q effects", info.Name, family))
		}
		if !slices.Contains(granted.Effects, family) {
			return fail(fmt.Sprintf("%q is not advertised in capabilities.effects", family))
		}
		switch family {
		case gen.EffectFamilyModify:
			if !modifyGrant(granted.Modify, target, operation) {
				return fail(fmt.Sprintf("capabilities.modify does not grant %q on target %q", operation, target))
			}
		case gen.EffectFamilyFlow:
			if granted.Flow == nil || !slices.Contains(granted.Flow.Operations, gen.FlowOperation(operation)) {
				return fail(fmt.Sprintf("capabilities.flow does not grant %q", operation))
			}
			if gen.FlowOperation(operation) == gen.FlowOperationContinue {
				remaining := int64(0)
				if granted.Flow.RemainingContinuations != nil {
					remaining, _ = settle.Integer(*granted.Flow.RemainingContinuations)
				}
				if remaining <= 0 {
					return fail("capabilities.flow.remainingContinuations allows no continuation")
				}
			}
		case gen.EffectFamilyInject:
			if granted.Inject == nil || !granted.Inject.Context.Append {
				return fail("capabilities.inject.context does not grant append")
			}
			if !slices.Contains(granted.Inject.Context.DeliverAt, e.Inject.DeliverAt) {
				return fail(fmt.Sprintf("capabilities.inject.context.deliverAt does not list %q", e.Inject.DeliverAt))
			}
		}
	}
	return nil
}
