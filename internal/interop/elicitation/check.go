package elicitation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// Case is one atomic effect application: the canonical request event, the
// result event the effects edit (absent at the request boundary), the
// request-local capabilities, the hook's complete effect list and the
// authenticated supplier identity (the host's configuration).
type Case struct {
	Name         string          `json:"name,omitempty"`
	Request      json.RawMessage `json:"request"`
	Result       json.RawMessage `json:"result,omitempty"`
	Capabilities json.RawMessage `json:"capabilities"`
	Effects      json.RawMessage `json:"effects"`
	Supplier     string          `json:"supplier"`
}

// Report is the check command's output for one case.
type Report struct {
	Name           string  `json:"name,omitempty"`
	Accepted       bool    `json:"accepted"`
	InputUnchanged bool    `json:"inputUnchanged"`
	Summary        Summary `json:"summary"`
}

// Summary describes an accepted outcome or why the list was rejected.
type Summary struct {
	Denied     bool            `json:"denied"`
	Reason     string          `json:"reason,omitempty"`
	Returned   bool            `json:"returned"`
	Modified   bool            `json:"modified"`
	Origin     string          `json:"origin,omitempty"`
	Provenance json.RawMessage `json:"provenance"`
	Result     json.RawMessage `json:"result"`
	Messages   []string        `json:"messages"`
	// Rejection is the failed effect ({effectIndex, reason}) or exchange
	// check ({check}) of a rejected list; null when accepted.
	Rejection map[string]any `json:"rejection"`
}

// RunCheck runs one case (a JSON object) or an array of cases and returns
// the report (an object or an array, matching the input).
func RunCheck(ctx context.Context, in []byte) ([]byte, error) {
	t := bytes.TrimSpace(in)
	if len(t) > 0 && t[0] == '[' {
		var cs []Case
		if err := strictDecode(t, &cs); err != nil {
			return nil, fmt.Errorf("%w: cases: %w", interop.ErrUsage, err)
		}
		out := make([]Report, 0, len(cs))
		for i := range cs {
			r, _, err := cs[i].run(ctx)
			if err != nil {
				return nil, fmt.Errorf("case %d: %w", i, err)
			}
			out = append(out, *r)
		}
		return json.Marshal(out)
	}
	var c Case
	if err := strictDecode(t, &c); err != nil {
		return nil, fmt.Errorf("%w: case: %w", interop.ErrUsage, err)
	}
	r, _, err := c.run(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// strictDecode decodes one JSON value into v, rejecting repeated member
// names at any depth (encoding/json would keep the last), unknown members
// and trailing data.
func strictDecode(data []byte, v any) error {
	sc := jsonlex.Acquire(true)
	defer sc.Release()
	if _, ok := sc.Value(data, jsonlex.SkipSpace(data, 0), 0); !ok {
		return errors.New("not a JSON value")
	}
	if off, dup := sc.Dup(); dup {
		return fmt.Errorf("repeated member name at %s", jsonlex.Pointer(data, off))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// run applies the case. An error is a malformed case (usage); a rejected
// list is a Report with Accepted false.
func (c *Case) run(ctx context.Context) (*Report, *staged, error) {
	var st staged
	reqEv, err := parseEvent(c.Request)
	if err != nil || reqEv.UserElicitationRequest == nil {
		return nil, nil, fmt.Errorf("%w: request is not a canonical user.elicitation.request event", interop.ErrUsage)
	}
	st.req = reqEv.UserElicitationRequest
	if len(c.Result) > 0 && string(bytes.TrimSpace(c.Result)) != "null" {
		resEv, err := parseEvent(c.Result)
		if err != nil || resEv.UserElicitationResult == nil {
			return nil, nil, fmt.Errorf("%w: result is not a canonical user.elicitation.result event", interop.ErrUsage)
		}
		st.res = resEv.UserElicitationResult
	}
	var caps gen.Capabilities
	if len(c.Capabilities) > 0 {
		if err := caps.UnmarshalJSON(c.Capabilities); err != nil {
			return nil, nil, fmt.Errorf("%w: capabilities: %w", interop.ErrUsage, err)
		}
	}
	var effects []gen.Effect
	if err := json.Unmarshal(c.Effects, &effects); err != nil {
		return nil, nil, fmt.Errorf("%w: effects: %w", interop.ErrUsage, err)
	}
	before := snapshot(st.req, st.res, effects)
	out, err := settle.ApplyElicitationEffects(ctx, settle.ElicitationEffects{Request: st.req, Result: st.res, Granted: caps, Effects: effects, Supplier: c.Supplier})
	rep := &Report{Name: c.Name, InputUnchanged: bytes.Equal(before, snapshot(st.req, st.res, effects)), Summary: Summary{Provenance: json.RawMessage("null"), Result: json.RawMessage("null"), Messages: []string{}}}
	if err != nil {
		var rj *settle.Rejection
		var xe *settle.ExchangeError
		switch {
		case errors.As(err, &rj):
			rep.Summary.Rejection = map[string]any{"effectIndex": rj.EffectIndex, "reason": rj.Reason}
		case errors.As(err, &xe):
			rep.Summary.Rejection = map[string]any{"check": xe.Check}
		case errors.Is(err, settle.ErrNoSupplier):
			rep.Summary.Rejection = map[string]any{"check": "supplier"}
		default:
			rep.Summary.Rejection = map[string]any{"check": "invalid"}
		}
		return rep, &st, nil
	}
	st.out = out
	rep.Accepted = true
	rep.Summary.Denied, rep.Summary.Reason = out.Denied, out.Reason
	rep.Summary.Returned, rep.Summary.Modified, rep.Summary.Origin = out.Returned, out.Modified, out.Origin
	if out.Provenance != nil {
		rep.Summary.Provenance = out.Provenance
	}
	if out.Result != nil {
		rep.Summary.Result = out.Result
	}
	if out.Messages != nil {
		rep.Summary.Messages = out.Messages
	}
	return rep, &st, nil
}

// parseEvent decodes and canonically validates an event.
func parseEvent(data json.RawMessage) (*gen.Event, error) {
	var ev gen.Event
	if err := ev.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	if err := settle.CheckEvent(&ev); err != nil {
		return nil, err
	}
	enc, err := gen.EncodeEvent(&ev)
	if err != nil {
		return nil, err
	}
	name := gen.EventUserElicitationRequest
	if ev.UserElicitationResult != nil {
		name = gen.EventUserElicitationResult
	}
	info, ok := gen.LookupEvent(name)
	if !ok {
		return nil, errors.New("unknown event")
	}
	if err := validate.Default().Validate(info.PayloadSchema, enc); err != nil {
		return nil, err
	}
	return &ev, nil
}

// snapshot encodes the inputs, to prove they are unchanged.
func snapshot(req *gen.UserElicitationRequestEvent, res *gen.UserElicitationResultEvent, effects []gen.Effect) []byte {
	var b bytes.Buffer
	if q, err := gen.EncodeEvent(&gen.Event{UserElicitationRequest: req}); err == nil {
		b.Write(q)
	}
	if res != nil {
		if r, err := gen.EncodeEvent(&gen.Event{UserElicitationResult: res}); err == nil {
			b.Write(r)
		}
	}
	if e, err := json.Marshal(effects); err == nil {
		b.Write(e)
	}
	return b.Bytes()
}
