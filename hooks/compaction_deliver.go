package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// ErrCompactionDelivery is wrapped by the errors of a DeliverCompaction
// callback whose delivery failed or was ambiguous.
var ErrCompactionDelivery = errors.New("hooks: compaction delivery failed")

// DeliverCompaction returns a CompactionHook callback that delivers each
// snapshot through h as one hooks/intercept: the snapshot's canonical
// event (same id and time) through ContextCompactBefore or
// ContextCompactAfter, with the pending candidate and permission as the
// initial state, so that the SDK projects the event for the subscription's
// content selection, authenticates it and admits the response. The
// callback returns the effects of the one response h accepted; the
// Compactor then stages them again over its own state.
//
// h must have exactly one intercept subscription matching boundary, with
// a grant at that event no wider than CompactionCapabilities (for example
// Intercept().Deny().Return().Message().ModifyInstructions(Replace)
// before, Intercept().Message().ModifySummary(Replace) after): several
// accepted responses cannot be returned as one, and the callback fails
// (ErrCompactionDelivery). A response h rejected on admission is returned
// as a *settle.Rejection with its reason; any other failed delivery as an
// error naming only its diagnostic code. The CompactionHook's
// FailurePolicy, not the registration's, decides what the run does then.
func DeliverCompaction(h *Hooks, boundary gen.EventName) func(context.Context, CompactionSnapshot) ([]gen.Effect, error) {
	return func(ctx context.Context, snap CompactionSnapshot) ([]gen.Effect, error) {
		init := InitialState(gen.PermissionNone)
		if st := snap.State; st != nil {
			if st.Permission != "" {
				init = InitialState(st.Permission)
			}
			if st.Candidate.Valid {
				var prov json.RawMessage
				if p := st.Candidate.Value.Provenance; p != nil {
					b, err := p.MarshalJSON()
					if err != nil {
						return nil, fmt.Errorf("%w: candidate provenance: %w", ErrCompactionDelivery, err)
					}
					prov = b
				}
				init = init.WithCandidate(st.Candidate.Value.Value, prov)
			}
		}
		var (
			res *Result
			err error
		)
		switch ev := snap.Event; {
		case ev == nil:
			return nil, fmt.Errorf("%w: no event", ErrCompactionDelivery)
		case boundary == gen.EventContextCompactBefore && ev.ContextCompactBefore != nil:
			e := ev.ContextCompactBefore
			res, err = h.ContextCompactBefore(ctx, ContextCompactBeforeInput{ID: e.ID, Time: parseEventTime(e.Time), Session: e.Session,
				Native: e.Native, Extensions: e.Extensions, ParentEventID: e.ParentEventID, Turn: e.Turn, Items: e.Items, Gaps: e.Gaps,
				Trigger: e.Trigger, Instructions: e.Instructions, TokenCounts: e.TokenCounts, Synthesized: e.Synthesized},
				WithInitialState(init))
		case boundary == gen.EventContextCompactAfter && ev.ContextCompactAfter != nil:
			e := ev.ContextCompactAfter
			res, err = h.ContextCompactAfter(ctx, ContextCompactAfterInput{ID: e.ID, Time: parseEventTime(e.Time), Session: e.Session,
				Native: e.Native, Extensions: e.Extensions, ParentEventID: e.ParentEventID, Turn: e.Turn, Items: e.Items, Gaps: e.Gaps,
				Summary: e.Summary, Removed: e.Removed, Execution: e.Execution, TokenCounts: e.TokenCounts, Synthesized: e.Synthesized},
				WithInitialState(init))
		default:
			return nil, fmt.Errorf("%w: the snapshot is not of boundary %s", ErrCompactionDelivery, boundary)
		}
		if err != nil {
			return nil, err
		}
		defer res.Close()
		switch {
		case len(res.Accepted) > 1:
			return nil, fmt.Errorf("%w: %d responses accepted; deliver one subscription per callback", ErrCompactionDelivery, len(res.Accepted))
		case len(res.Accepted) == 1:
			return res.Accepted[0].Effects, nil
		}
		for _, d := range res.Diagnostics {
			if d.Mode != gen.ModeIntercept {
				continue
			}
			if d.Code == transport.CodeProtocolRejection && d.Stage == transport.StageAdmit && d.Reason != "" {
				return nil, &settle.Rejection{EffectIndex: -1, Reason: d.Reason}
			}
			return nil, fmt.Errorf("%w: %s", ErrCompactionDelivery, d.Code)
		}
		if res.Interrupted {
			return nil, fmt.Errorf("%w: interrupted", ErrCompactionDelivery)
		}
		return []gen.Effect{}, nil // no matching subscription: no effect
	}
}

// parseEventTime parses an event time; an unparsable one is zero (now).
func parseEventTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
