package hooks_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

const elicitForm = `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0,"default":1.5}},"required":["name"]}}`

func elicitPart(id, text string) *gen.TextPart {
	return &gen.TextPart{Body: &gen.TextBodyPart{ID: id, Text: text}}
}

// elicitHooks returns hooks whose one HTTP backend edits accepted answers
// (merge {"age":41}) and records what it receives.
func elicitHooks(t *testing.T, edit []gen.Effect) (*hooks.Hooks, *recorder) {
	t.Helper()
	rec := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		if req.Params.Event.UserElicitationResult != nil {
			return edit
		}
		return nil
	}}
	srv := httptest.NewServer(rec.handler())
	t.Cleanup(srv.Close)
	cfg := hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Deny().Return().Message().ElicitationForm(),
		gen.EventUserElicitationResult:  hooks.Intercept().Message().ModifyContent(hooks.Replace, hooks.Merge).ElicitationForm(),
	}}
	sub := `{"events":["user.elicitation.request","user.elicitation.result"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":{"default":"body"}}`
	h, err := hooks.New(registration(backendJSON("com.example.editor", httpTransport(srv.URL), sub)), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h, rec
}

func mergeAge() []gen.Effect {
	return []gen.Effect{server.MergeForm(gen.OrderedMap[gen.FormAnswerValue]{{Name: "age", Value: gen.FormAnswerValue(`41`)}})}
}

// TestOriginalElicitationRequestSettlesEdits: without the original request
// a backend's merge of the answer object is rejected as
// context_unavailable (the reproduction); with
// WithOriginalElicitationRequest it settles against the requested schema.
func TestOriginalElicitationRequestSettlesEdits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		withOrig bool
		edit     []gen.Effect
		want     string // effective result text ("" = unchanged)
		reason   string // diagnostic reason
	}{
		{name: "without original request", edit: mergeAge(), reason: "context_unavailable"},
		{name: "merge", withOrig: true, edit: mergeAge(), want: `{"action":"accept","content":{"name":"Ada","age":41}}`},
		{name: "replace", withOrig: true, edit: []gen.Effect{server.ReplaceForm(gen.OrderedMap[gen.FormAnswerValue]{{Name: "name", Value: gen.FormAnswerValue(`"Bea"`)}})}, want: `{"action":"accept","content":{"name":"Bea"}}`},
		{name: "edit failing the form schema", withOrig: true, edit: []gen.Effect{server.MergeForm(gen.OrderedMap[gen.FormAnswerValue]{{Name: "age", Value: gen.FormAnswerValue(`1.5`)}})}, reason: "invalid_value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rec := elicitHooks(t, tc.edit)
			sess := &gen.Session{ID: "s1"}
			reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Session: sess, Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
				Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
			require.NoError(t, err)
			require.Empty(t, reqRes.Diagnostics)
			original := reqRes.Event()
			parent := original.UserElicitationRequest.ID
			answer := `{"action":"accept","content":{"name":"Ada"}}`
			var opts []hooks.CallOption
			if tc.withOrig {
				opts = append(opts, hooks.WithOriginalElicitationRequest(original))
			}
			res, err := h.UserElicitationResult(ctx, hooks.UserElicitationResultInput{Session: sess, ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
				Server: "mcp-a", Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept, Result: elicitPart("r", answer)}}, opts...)
			require.NoError(t, err)
			i, _ := rec.counts()
			require.Equal(t, 2, i)
			text := res.Event().UserElicitationResult.Elicitation.Result.Body.Text
			if tc.reason != "" {
				require.Len(t, res.Diagnostics, 1)
				require.Equal(t, hooks.Code("protocol_rejection"), res.Diagnostics[0].Code)
				require.Equal(t, tc.reason, res.Diagnostics[0].Reason)
				require.Equal(t, answer, text, "a rejected edit leaves the result unchanged")
				return
			}
			require.Empty(t, res.Diagnostics)
			require.JSONEq(t, tc.want, text)
			require.JSONEq(t, `{"name":"Ada","age":41}`, string(mustContent(t, res, tc.want)))
		})
	}
}

func mustContent(t *testing.T, res *hooks.Result, want string) json.RawMessage {
	t.Helper()
	var w struct {
		Content json.RawMessage `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(want), &w))
	got, ok := res.Targets[gen.ModifyTargetContent]
	require.True(t, ok)
	require.JSONEq(t, string(w.Content), string(got))
	return json.RawMessage(`{"name":"Ada","age":41}`)
}

// TestOriginalElicitationRequestRefused: the option is invalid input on
// another event, with a non-request event, and with a request that does
// not correlate (parent, source, session, server); the backend is never
// called.
func TestOriginalElicitationRequestRefused(t *testing.T) {
	ctx := context.Background()
	h, rec := elicitHooks(t, mergeAge())
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{ID: "q1", Session: &gen.Session{ID: "s1"}, Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	original := reqRes.Event()
	result := func(parent, session, server string) hooks.UserElicitationResultInput {
		return hooks.UserElicitationResultInput{Session: &gen.Session{ID: session}, ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
			Server: server, Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept, Result: elicitPart("r", `{"action":"accept","content":{"name":"Ada"}}`)}}
	}
	for name, call := range map[string]func() error{
		"other event": func() error {
			_, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Elicitation: gen.InteractionEventUserElicitationRequestElicitation{Server: "x", Mode: gen.ElicitationModeForm}}, hooks.WithOriginalElicitationRequest(original))
			return err
		},
		"not a request": func() error {
			_, err := h.UserElicitationResult(ctx, result("q1", "s1", "mcp-a"), hooks.WithOriginalElicitationRequest(&gen.Event{}))
			return err
		},
		"nil": func() error {
			_, err := h.UserElicitationResult(ctx, result("q1", "s1", "mcp-a"), hooks.WithOriginalElicitationRequest(nil))
			return err
		},
		"wrong parent": func() error {
			_, err := h.UserElicitationResult(ctx, result("q2", "s1", "mcp-a"), hooks.WithOriginalElicitationRequest(original))
			return err
		},
		"other session": func() error {
			_, err := h.UserElicitationResult(ctx, result("q1", "s2", "mcp-a"), hooks.WithOriginalElicitationRequest(original))
			return err
		},
		"other server": func() error {
			_, err := h.UserElicitationResult(ctx, result("q1", "s1", "mcp-b"), hooks.WithOriginalElicitationRequest(original))
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			before, _ := rec.counts()
			err := call()
			require.ErrorIs(t, err, hooks.ErrInvalidInput)
			after, _ := rec.counts()
			require.Equal(t, before, after, "no backend call")
		})
	}
}

// TestElicitationReturnProvenance: a result a backend returns at
// user.elicitation.request carries hook provenance naming the backend of the
// host's registration, not anything asserted in the event or the answer.
func TestElicitationReturnProvenance(t *testing.T) {
	ret := server.ReturnElicitResult(gen.MCPElicitationElicitResult{Action: gen.MCPElicitationElicitResultActionAccept,
		Content: gen.OrderedMap[gen.FormAnswerValue]{{Name: "name", Value: gen.FormAnswerValue(`"Bot"`)}}})
	rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{ret} }}
	srv := httptest.NewServer(rec.handler())
	t.Cleanup(srv.Close)
	cfg := hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Return().ElicitationForm(),
	}}
	sub := `{"events":["user.elicitation.request"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":{"default":"body"}}`
	h, err := hooks.New(registration(backendJSON("com.example.answerer", httpTransport(srv.URL), sub)), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	res, err := h.UserElicitationRequest(context.Background(), hooks.UserElicitationRequestInput{Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "com.example.answerer", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	require.True(t, res.Candidate.Present)
	require.JSONEq(t, `{"action":"accept","content":{"name":"Bot"}}`, string(res.Candidate.Value))
	var p map[string]string
	require.NoError(t, json.Unmarshal(res.Candidate.Provenance, &p))
	require.Equal(t, "hook", p["kind"])
	require.Equal(t, "com.example.answerer", p["backendId"])
	require.NotEmpty(t, p["requestId"])
}

// TestOriginalElicitationRequestDispatch: the option works the same for a
// canonical event given to Dispatch.
func TestOriginalElicitationRequestDispatch(t *testing.T) {
	ctx := context.Background()
	h, _ := elicitHooks(t, mergeAge())
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	original := reqRes.Event()
	parent := original.UserElicitationRequest.ID
	ev := &gen.Event{UserElicitationResult: &gen.UserElicitationResultEvent{ID: "r-dispatch", Source: "urn:test:harness", Time: "2026-09-15T12:00:00Z",
		Type: "user.elicitation.result", ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
			Server: "mcp-a", Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept,
			Result: elicitPart("r", `{"action":"accept","content":{"name":"Ada"}}`)}}}
	res, err := h.Dispatch(ctx, ev, hooks.WithOriginalElicitationRequest(original))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.JSONEq(t, `{"action":"accept","content":{"name":"Ada","age":41}}`, res.Event().UserElicitationResult.Elicitation.Result.Body.Text)
}

// TestElicitationEditReachesNextSubscriber: after an accepted edit the next
// body subscriber receives the complete effective result as new inline
// text, and a metadata subscriber after it receives neither the user's nor
// the edited answer.
func TestElicitationEditReachesNextSubscriber(t *testing.T) {
	ctx := context.Background()
	editor := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		if req.Params.Event.UserElicitationResult != nil {
			return mergeAge()
		}
		return nil
	}}
	reader, meta := &recorder{}, &recorder{}
	cfg := hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Message().ElicitationForm(),
		gen.EventUserElicitationResult:  hooks.Intercept().Message().ModifyContent(hooks.Merge).ElicitationForm(),
	}}
	sub := func(sel string) string {
		return `{"events":["user.elicitation.request","user.elicitation.result"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":{"default":"` + sel + `"}}`
	}
	var backends []string
	for _, b := range []struct {
		id  string
		r   *recorder
		sel string
	}{{"com.example.editor", editor, "body"}, {"com.example.reader", reader, "body"}, {"com.example.meta", meta, "metadata"}} {
		srv := httptest.NewServer(b.r.handler())
		t.Cleanup(srv.Close)
		backends = append(backends, backendJSON(b.id, httpTransport(srv.URL), sub(b.sel)))
	}
	h, err := hooks.New(registration(backends...), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Request: elicitPart("q", elicitForm)}})
	require.NoError(t, err)
	original := reqRes.Event()
	parent := original.UserElicitationRequest.ID
	const user = `{"action":"accept","content":{"name":"Ada-secret-answer"}}`
	res, err := h.UserElicitationResult(ctx, hooks.UserElicitationResultInput{ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
		Server: "mcp-a", Mode: gen.ElicitationModeForm, Action: gen.InteractionEventUserElicitationResultElicitationActionAccept, Result: elicitPart("r", user)}},
		hooks.WithOriginalElicitationRequest(original))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	want := `{"action":"accept","content":{"name":"Ada-secret-answer","age":41}}`
	require.JSONEq(t, want, res.Event().UserElicitationResult.Elicitation.Result.Body.Text)

	require.Len(t, reader.intercept, 2)
	seen := reader.intercept[1].Params.Event.UserElicitationResult.Elicitation.Result
	require.NotNil(t, seen.Body)
	require.JSONEq(t, want, seen.Body.Text, "the next subscriber gets the effective result")
	require.Len(t, meta.intercept, 2)
	b, err := gen.EncodeInterceptRequest(meta.intercept[1])
	require.NoError(t, err)
	require.NotContains(t, string(b), "Ada-secret-answer")
	require.NotContains(t, string(b), "Your name?")
	require.NotNil(t, meta.intercept[1].Params.Event.UserElicitationResult.Elicitation.Result.Metadata)
}
