package settle_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// envelope is the common event envelope used by the test events.
const envelope = `"source":"urn:test:harness","time":"2026-09-15T12:00:00Z"`

// textPart renders one inline text part.
func textPart(id, text string) string {
	return fmt.Sprintf(`{"id":%q,"kind":"text","mediaType":"text/plain","selection":"body","text":%q}`, id, text)
}

// message renders one canonical message with one inline text part.
func message(id, role, text string) string {
	return fmt.Sprintf(`{"id":%q,"role":%q,"parts":[%s]}`, id, role, textPart(id+"-t", text))
}

const elicitRequestBody = `{"message":"Choose an answer","requestedSchema":{"type":"object","properties":{"answer":{"type":"string","minLength":1},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["answer"]}}`

// eventJSON holds one canonical example of each of the 19 interceptable
// events (shapes from the vendored catalogue fixtures).
var eventJSON = map[gen.EventName]string{
	gen.EventToolBefore:            `{"id":"evt1",` + envelope + `,"type":"tool.before","session":{"id":"s1"},"tool":{"name":"write_file","input":{"path":"README.md","content":"example","mode":{"append":false}},"origin":"native"},"call":{"id":"call1"},"path":"example"}`,
	gen.EventToolAfter:             `{"id":"evt1",` + envelope + `,"type":"tool.after","tool":{"name":"read_file","input":{"path":"README.md"},"origin":"native"},"outcome":"ok","execution":{"status":"executed"},"call":{"id":"call1"},"path":"example","items":[` + message("m1", "tool", "result") + `]}`,
	gen.EventSessionStart:          `{"id":"evt1",` + envelope + `,"type":"session.start","session":{"id":"s1"},"trigger":"startup","harness":{"name":"h","version":"1"},"permissionMode":"default","manifest":{"events":[],"gaps":[],"transports":["http"],"authentication":[],"toolPaths":["native"],"contentCategories":["text"],"limits":{},"managedPolicy":{"scopes":["user"],"disableable":true},"correlationIdentityFields":["id"]},"items":[]}`,
	gen.EventConfigChangeBefore:    `{"id":"evt1",` + envelope + `,"type":"config.change.before","change":{"source":"example","scope":"example","settings":[],"summary":"example"}}`,
	gen.EventTurnStart:             `{"id":"evt1",` + envelope + `,"type":"turn.start","turn":{"id":"turn1"},"trigger":"user","items":[` + message("m1", "user", "Explain photosynthesis.") + `]}`,
	gen.EventTurnFinishBefore:      `{"id":"evt1",` + envelope + `,"type":"turn.finish.before","turn":{"id":"turn1"},"outcome":"completed","continuationCount":1,"items":[` + message("m1", "assistant", "Done.") + `]}`,
	gen.EventModelRequestBefore:    `{"id":"evt1",` + envelope + `,"type":"model.request.before","model":{"id":"m","provider":"p"},"attempt":{"id":"a1","number":1},"params":{},"items":[` + message("m1", "user", "Hello") + `]}`,
	gen.EventModelResponseAfter:    `{"id":"evt1",` + envelope + `,"type":"model.response.after","model":{"id":"m","provider":"p"},"attempt":{"id":"a1","number":1},"execution":{"status":"executed"},"items":[` + message("m1", "assistant", "Hi") + `],"finishReason":"stop"}`,
	gen.EventModelSwitchBefore:     `{"id":"evt1",` + envelope + `,"type":"model.switch.before","current":{"id":"a","provider":"p"},"proposed":{"id":"b","provider":"p"},"reason":"example"}`,
	gen.EventToolPermissionRequest: `{"id":"evt1",` + envelope + `,"type":"tool.permission.request","tool":{"name":"run","origin":"native","input":{"cmd":"ls"}},"call":{"id":"call1"},"path":"example","suggestions":[],"sandboxBypass":false}`,
	gen.EventToolBatchAfter:        `{"id":"evt1",` + envelope + `,"type":"tool.batch.after","batch":{"id":"b1"},"calls":[{"call":{"id":"c1"},"tool":{"name":"x","input":{},"origin":"native"},"path":"example","outcome":"ok","execution":{"status":"executed"}}]}`,
	gen.EventContextCompactBefore:  `{"id":"evt1",` + envelope + `,"type":"context.compact.before","trigger":"auto","items":[],"instructions":[` + textPart("i1", "Keep decisions.") + `]}`,
	gen.EventContextCompactAfter:   `{"id":"evt1",` + envelope + `,"type":"context.compact.after","summary":[` + textPart("s1", "Summary.") + `],"removed":[],"execution":{"status":"executed"}}`,
	gen.EventTaskChangeBefore:      `{"id":"evt1",` + envelope + `,"type":"task.change.before","task":{"id":"task1","operation":"create","change":{"status":"open"}}}`,
	gen.EventUserElicitationRequest: `{"id":"req1",` + envelope + `,"type":"user.elicitation.request","session":{"id":"s1"},"elicitation":{"server":"example","mode":"form","request":` +
		fmt.Sprintf(`{"id":"mcp-request-item","kind":"text","mediaType":"text/plain","selection":"body","text":%q}`, elicitRequestBody) + `}}`,
	gen.EventUserElicitationResult: `{"id":"evt1",` + envelope + `,"type":"user.elicitation.result","session":{"id":"s1"},"parentEventId":"req1","elicitation":{"server":"example","mode":"form","action":"accept","result":` +
		fmt.Sprintf(`{"id":"mcp-result-item","kind":"text","mediaType":"text/plain","selection":"body","text":%q}`, `{"action":"accept","content":{"answer":"yes","count":2},"_meta":{"k":"v"}}`) + `}}`,
	gen.EventUserMessageInbound:    `{"id":"evt1",` + envelope + `,"type":"user.message.inbound","message":{"channel":"chat","sender":"alice","messages":[` + message("m1", "user", "Please help.") + `]}}`,
	gen.EventUserMessageOutbound:   `{"id":"evt1",` + envelope + `,"type":"user.message.outbound","message":{"channel":"chat","messages":[` + message("m1", "assistant", "Sure.") + `]}}`,
	gen.EventWorkspaceChangeBefore: `{"id":"evt1",` + envelope + `,"type":"workspace.change.before","workspace":{"kind":"cwd","change":{"cwd":"/new"}}}`,
}

// sprintf is fmt.Sprintf, short for effect templates.
var sprintf = fmt.Sprintf

// parseEvent parses a canonical event.
func parseEvent(t testing.TB, data string) *gen.Event {
	t.Helper()
	ev, err := gen.ParseEvent([]byte(data))
	require.NoError(t, err)
	return ev
}

// decodeEvent decodes an event without canonical validation (to build
// invalid host input).
func decodeEvent(t testing.TB, data string) *gen.Event {
	t.Helper()
	var ev gen.Event
	require.NoError(t, ev.UnmarshalJSON([]byte(data)))
	return &ev
}

// event returns the canonical example of name.
func event(t testing.TB, name gen.EventName) *gen.Event {
	t.Helper()
	s, ok := eventJSON[name]
	require.True(t, ok, "no example event for %s", name)
	return parseEvent(t, s)
}

// initialFor returns the host context an event needs (the original
// elicitation request for a result).
func initialFor(t testing.TB, name gen.EventName) settle.Initial {
	t.Helper()
	if name != gen.EventUserElicitationResult {
		return settle.Initial{}
	}
	return settle.Initial{ElicitationRequest: event(t, gen.EventUserElicitationRequest).UserElicitationRequest}
}

// newOcc starts an occurrence of the example event.
func newOcc(t testing.TB, name gen.EventName) *settle.Occurrence {
	t.Helper()
	o, err := settle.New(event(t, name), initialFor(t, name))
	require.NoError(t, err)
	return o
}

// caps parses a capabilities document.
func caps(t testing.TB, data string) gen.Capabilities {
	t.Helper()
	c, err := gen.ParseCapabilities([]byte(data))
	require.NoError(t, err)
	return *c
}

// fullGrant advertises everything the boundary can grant (from the
// generated catalogue), with both modify operations, both inject delivery
// points, three remaining continuations and both elicitation modes.
func fullGrant(t testing.TB, name gen.EventName) gen.Capabilities {
	t.Helper()
	info, ok := gen.LookupEvent(name)
	require.True(t, ok)
	c := gen.Capabilities{Effects: append([]gen.EffectFamily(nil), info.EffectFamilies...)}
	for _, f := range info.EffectFamilies {
		switch f {
		case gen.EffectFamilyModify:
			c.Modify = &gen.CapabilitiesModify{}
			setModify(c.Modify, info.ModifyTargets[0], true, true)
		case gen.EffectFamilyFlow:
			c.Flow = &gen.CapabilitiesFlow{}
			for _, op := range info.FlowOperations {
				c.Flow.Operations = append(c.Flow.Operations, gen.FlowOperation(op))
			}
			three, zero := json.Number("3"), json.Number("0")
			c.Flow.RemainingContinuations, c.Flow.ContinuationCount = &three, &zero
		case gen.EffectFamilyInject:
			c.Inject = &gen.CapabilitiesInject{Context: gen.CapabilitiesInjectContext{Append: true, DeliverAt: []gen.DeliverAt{gen.DeliverAtNow, gen.DeliverAtNextTurn}}}
		}
	}
	if name == gen.EventUserElicitationRequest || name == gen.EventUserElicitationResult {
		c.Elicitation = &gen.CapabilitiesElicitation{Form: json.RawMessage(`{}`), URL: json.RawMessage(`{}`)}
	}
	return c
}

// setModify sets the operations of one target.
func setModify(m *gen.CapabilitiesModify, t gen.ModifyTarget, replace, merge bool) {
	switch t {
	case gen.ModifyTargetInput:
		m.Input = &gen.CapabilitiesModifyInput{Replace: replace, Merge: merge}
	case gen.ModifyTargetOutput:
		m.Output = &gen.CapabilitiesModifyOutput{Replace: replace, Merge: merge}
	case gen.ModifyTargetPrompt:
		m.Prompt = &gen.CapabilitiesModifyPrompt{Replace: replace, Merge: merge}
	case gen.ModifyTargetRequest:
		m.Request = &gen.CapabilitiesModifyRequest{Replace: replace, Merge: merge}
	case gen.ModifyTargetResponse:
		m.Response = &gen.CapabilitiesModifyResponse{Replace: replace, Merge: merge}
	case gen.ModifyTargetContent:
		m.Content = &gen.CapabilitiesModifyContent{Replace: replace, Merge: merge}
	case gen.ModifyTargetInstructions:
		m.Instructions = &gen.CapabilitiesModifyInstructions{Replace: replace, Merge: merge}
	case gen.ModifyTargetSummary:
		m.Summary = &gen.CapabilitiesModifySummary{Replace: replace, Merge: merge}
	case gen.ModifyTargetWorkspace:
		m.Workspace = &gen.CapabilitiesModifyWorkspace{Replace: replace, Merge: merge}
	}
}

// without removes a family (and its option block) from a grant.
func without(c gen.Capabilities, f gen.EffectFamily) gen.Capabilities {
	var effects []gen.EffectFamily
	for _, e := range c.Effects {
		if e != f {
			effects = append(effects, e)
		}
	}
	c.Effects = effects
	switch f {
	case gen.EffectFamilyModify:
		c.Modify = nil
	case gen.EffectFamilyFlow:
		c.Flow = nil
	case gen.EffectFamilyInject:
		c.Inject = nil
	}
	return c
}

// effects parses a JSON array of effects with the generic effect schema.
func effects(t testing.TB, data string) []gen.Effect {
	t.Helper()
	var raws []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &raws))
	out := make([]gen.Effect, 0, len(raws))
	for _, r := range raws {
		e, err := gen.ParseEffect(r)
		require.NoError(t, err, "effect %s", r)
		out = append(out, *e)
	}
	return out
}

// result wraps effects in a draft result.
func result(es []gen.Effect) *gen.InterceptResponseResult {
	if es == nil {
		es = []gen.Effect{}
	}
	return &gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: es}
}

// apply applies a JSON effect list.
func apply(t testing.TB, o *settle.Occurrence, c gen.Capabilities, data string) error {
	t.Helper()
	return o.Apply(c, result(effects(t, data)))
}

// requireRejected asserts a *Rejection with the given reason.
func requireRejected(t testing.TB, err error, reason string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, settle.ErrRejected)
	var rej *settle.Rejection
	require.ErrorAs(t, err, &rej)
	require.Equal(t, reason, rej.Reason, "rejection %v", err)
}

// requireJSONEq compares JSON texts semantically.
func requireJSONEq(t testing.TB, want string, got json.RawMessage) {
	t.Helper()
	require.JSONEq(t, want, string(got))
}

// requireCanonicalRequest checks that the state the occurrence would send
// next forms a canonical hooks/intercept request with its effective event.
func requireCanonicalRequest(t testing.TB, o *settle.Occurrence, c gen.Capabilities) {
	t.Helper()
	ev, err := o.Event()
	require.NoError(t, err)
	req := gen.InterceptRequest{ID: gen.JSONRPCIDFromString(ev.ID()), Params: gen.InterceptRequestParams{
		ProtocolVersion: gen.ProtocolVersion, Event: *ev, Capabilities: c, State: o.RequestState()}}
	data, err := gen.EncodeInterceptRequest(&req)
	require.NoError(t, err)
	require.NoError(t, validate.Default().Validate("intercept-request.schema.json", data), "%s", data)
}

// interceptable returns the 19 interceptable events of the catalogue.
func interceptable() []gen.EventInfo {
	var out []gen.EventInfo
	for _, e := range gen.Events() {
		if e.Interceptable() {
			out = append(out, e)
		}
	}
	return out
}
