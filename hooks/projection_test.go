package hooks_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// encodeObserved returns the events a recorder observed, encoded.
func encodeObserved(t *testing.T, r *recorder) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.observed {
		b, err := gen.EncodeEvent(&n.Params.Event)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// TestSelectionViewsDoNotCollide: observers whose selections differ get
// their own views even when a category name holds the bytes that separate
// names and levels elsewhere: {"x\u00002\u0000y":"omit"} is not
// {"x":"metadata","y":"omit"}.
func TestSelectionViewsDoNotCollide(t *testing.T) {
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[
		{"id":"p","kind":"text","mediaType":"text/plain","selection":"body","category":"x","text":"`+secretText+`"}]}]`), &items))
	a, b := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, selectionConfig(), map[string]*recorder{"com.example.a": a, "com.example.b": b}, registration(
		backendJSON("com.example.a", u, observeContent(`{"default":"body","x\u00002\u0000y":"omit"}`)),
		backendJSON("com.example.b", u, observeContent(`{"default":"body","x":"metadata","y":"omit"}`))))
	res, err := h.TurnStart(context.Background(), turnStart(items))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)

	av, bv := encodeObserved(t, a), encodeObserved(t, b)
	require.Len(t, av, 1)
	require.Len(t, bv, 1)
	require.Contains(t, av[0], secretText, "category x is not named by a: the default body")
	require.NotContains(t, bv[0], secretText, "b selects metadata for category x")
	require.Contains(t, bv[0], `"selection":"metadata"`)
}

// requestStateOf returns the params.state of each interception a recorder
// received, encoded.
func requestStateOf(t *testing.T, r *recorder) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, req := range r.intercept {
		require.NotNil(t, req.Params.State)
		b, err := req.Params.State.MarshalJSON()
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// TestSelectionCoversCandidate: the return candidate travels in the next
// request's state; a receiver whose selection withholds text gets it
// projected like the event (AHP-CONTENT-002: no duplicate-content bypass),
// whether an earlier interceptor returned it or the host supplied it with
// WithInitialState; a body receiver gets it whole.
func TestSelectionCoversCandidate(t *testing.T) {
	const messages = `[{"id":"c1","role":"assistant","parts":[{"id":"c1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"` + secretText + `"}]}]`
	const textParts = `[{"id":"s1","kind":"text","mediaType":"text/plain","selection":"body","text":"` + secretText + `"}]`
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[{"id":"p","kind":"text","mediaType":"text/plain","selection":"body","text":"hello"}]}]`), &items))
	cases := []struct {
		name      string
		event     gen.EventName
		value     string
		returns   func(v string) (gen.Effect, error)
		metaValue string // the candidate value a metadata receiver gets
		call      func(h *hooks.Hooks, opts ...hooks.CallOption) (*hooks.Result, error)
	}{
		{
			name: "model.request.before", event: gen.EventModelRequestBefore, value: messages,
			returns: func(v string) (gen.Effect, error) {
				var ms gen.CanonicalMessages
				if err := json.Unmarshal([]byte(v), &ms); err != nil {
					return gen.Effect{}, err
				}
				return server.ReturnMessages(ms), nil
			},
			metaValue: `"value":[{"id":"c1","role":"assistant","parts":[{"id":"c1-t","kind":"text","mediaType":"text/plain","selection":"metadata","size":18}]}]`,
			call: func(h *hooks.Hooks, opts ...hooks.CallOption) (*hooks.Result, error) {
				return h.ModelRequestBefore(context.Background(), hooks.ModelRequestBeforeInput{Items: items,
					Model: gen.ExecutionEventModel{Provider: "example", ID: "m1"}, Attempt: gen.ExecutionEventAttempt{ID: "a1", Number: "1"}, Params: json.RawMessage(`{}`)}, opts...)
			},
		},
		{
			name: "context.compact.before", event: gen.EventContextCompactBefore, value: textParts,
			returns: func(v string) (gen.Effect, error) {
				var ps gen.TextParts
				if err := json.Unmarshal([]byte(v), &ps); err != nil {
					return gen.Effect{}, err
				}
				return server.ReturnText(ps), nil
			},
			metaValue: `"value":[{"id":"s1","kind":"text","mediaType":"text/plain","selection":"metadata","size":18}]`,
			call: func(h *hooks.Hooks, opts ...hooks.CallOption) (*hooks.Result, error) {
				return h.ContextCompactBefore(context.Background(), hooks.ContextCompactBeforeInput{Items: items, Trigger: gen.ExecutionEventContextCompactBeforeTriggerManual}, opts...)
			},
		},
	}
	for _, tc := range cases {
		sub := func(content string) string {
			return `{"events":["` + string(tc.event) + `"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":` + content + `}`
		}
		cfg := func() hooks.Config {
			c := selectionConfig()
			c.Capabilities[tc.event] = hooks.Intercept().Deny().Return()
			return c
		}
		u := httpTransport("http://127.0.0.1:1/x")
		t.Run(tc.name+"/returned", func(t *testing.T) {
			returns := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
				e, err := tc.returns(tc.value)
				require.NoError(t, err)
				return []gen.Effect{e}
			}}
			meta, body := &recorder{}, &recorder{}
			h := inproc(t, cfg(), map[string]*recorder{"com.example.returns": returns, "com.example.meta": meta, "com.example.body": body}, registration(
				backendJSON("com.example.returns", u, sub(`{"default":"body"}`)),
				backendJSON("com.example.meta", u, sub(`{"default":"metadata"}`)),
				backendJSON("com.example.body", u, sub(`{"default":"body"}`))))
			res, err := tc.call(h)
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			require.True(t, res.Candidate.Present)
			require.Contains(t, string(res.Candidate.Value), secretText, "the host's Result keeps the candidate")

			m := requestStateOf(t, meta)
			require.Len(t, m, 1)
			require.NotContains(t, m[0], secretText)
			require.Contains(t, m[0], tc.metaValue)
			require.Contains(t, m[0], `"provenance":{"requestId":`)
			b := requestStateOf(t, body)
			require.Len(t, b, 1)
			require.Contains(t, b[0], secretText)
		})
		t.Run(tc.name+"/initial", func(t *testing.T) {
			meta := &recorder{}
			h := inproc(t, cfg(), map[string]*recorder{"com.example.meta": meta}, registration(
				backendJSON("com.example.meta", u, sub(`{"default":"body","text":"metadata"}`))))
			res, err := tc.call(h, hooks.WithInitialState(hooks.InitialState(gen.PermissionNone).WithCandidate(json.RawMessage(tc.value), nil)))
			require.NoError(t, err)
			require.Empty(t, res.Diagnostics)
			m := requestStateOf(t, meta)
			require.Len(t, m, 1)
			require.NotContains(t, m[0], secretText)
			require.Contains(t, m[0], tc.metaValue)
		})
	}
}

// TestNativeOmittedAtEveryDepth: every native member the event schemas
// define reaches only includeNative subscriptions, the error.native of
// tool.after and turn.end as well as the event's own.
func TestNativeOmittedAtEveryDepth(t *testing.T) {
	const secretNative = `{"provider_trace":"CANARY-SECRET-NATIVE"}`
	errWithNative := &gen.ExecutionEventError{Message: "failed", Class: "tool_error", Native: json.RawMessage(secretNative)}
	cfg := baseConfig()
	plain, native := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.plain": plain, "com.example.native": native}, registration(
		backendJSON("com.example.plain", u, `{"events":["tool.after","turn.end"],"mode":"observe","content":{"default":"body"}}`),
		backendJSON("com.example.native", u, `{"events":["tool.after","turn.end"],"mode":"observe","content":{"default":"body"},"includeNative":true}`)))
	res, err := h.ToolAfter(context.Background(), hooks.ToolAfterInput{Name: "read_file", Input: map[string]any{}, Origin: gen.ExecutionEventToolOriginNative,
		CallID: "call-1", Path: "native", Items: []gen.ModelVisibleItem{}, Outcome: gen.ExecutionEventOutcomeError, Execution: gen.ExecutionEventExecution{Executed: &gen.ExecutionEventExecutionExecuted{}},
		Error: errWithNative})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	res, err = h.TurnEnd(context.Background(), hooks.TurnEndInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"},
		Outcome: gen.OutcomeFailed, ContinuationCount: "0", Error: errWithNative})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)

	p, n := encodeObserved(t, plain), encodeObserved(t, native)
	require.Len(t, p, 2)
	require.Len(t, n, 2)
	for i := range p {
		require.NotContains(t, p[i], "CANARY-SECRET-NATIVE")
		require.NotContains(t, p[i], `"native":`)
		require.Contains(t, p[i], `"error":{"message":"failed","class":"tool_error"}`)
		require.Contains(t, n[i], `"native":`+secretNative)
	}
	require.Equal(t, json.RawMessage(secretNative), errWithNative.Native, "the host's value is not modified")
}

// nativeBack is a Preparer that puts a native value into the view it is
// given: the event's own, or an error's.
type nativeBack struct{ value json.RawMessage }

func (p nativeBack) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	switch {
	case d.Event.TurnStart != nil:
		d.Event.TurnStart.Native = p.value
	case d.Event.TurnEnd != nil:
		d.Event.TurnEnd.Error.Native = p.value
	}
	return d.Event, nil
}

// TestPreparerCannotAddNative: the SDK drops native for a subscription
// without includeNative; a Preparer that puts it back (at the top or
// nested) widens the view, a preparation failure, for interception and
// observation alike. For an includeNative subscription native is the
// Preparer's to project.
func TestPreparerCannotAddNative(t *testing.T) {
	const secretNative = `{"trace":"CANARY-SECRET-NATIVE"}`
	var recorded rawBodies
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventTurnEnd] = hooks.Observe()
	cfg.Preparer = nativeBack{json.RawMessage(secretNative)}
	cfg.Transports = map[string]transport.Transport{
		"com.example.i":      transport.NewInProcess(recorded.wrap("i", answerHandler(false)), transport.InProcessOptions{}),
		"com.example.o":      transport.NewInProcess(recorded.wrap("o", answerHandler(false)), transport.InProcessOptions{}),
		"com.example.native": transport.NewInProcess(recorded.wrap("native", answerHandler(false)), transport.InProcessOptions{}),
	}
	u := httpTransport("http://127.0.0.1:1/x")
	h, err := hooks.New(registration(
		backendJSON("com.example.i", u, interceptContent(`{"default":"body"}`)),
		backendJSON("com.example.o", u, `{"events":["turn.start","turn.end"],"mode":"observe","content":{"default":"body"}}`),
		backendJSON("com.example.native", u, `{"events":["turn.start","turn.end"],"mode":"observe","content":{"default":"body"},"includeNative":true}`)), cfg)
	require.NoError(t, err)
	defer h.Close()

	res, err := h.TurnStart(context.Background(), turnStart(secretItems(t)))
	require.NoError(t, err)
	require.Len(t, res.Diagnostics, 2)
	for _, d := range res.Diagnostics {
		require.Equal(t, transport.CodePreparation, d.Code)
		require.Equal(t, "widening", d.Reason)
	}
	require.True(t, res.SyntheticDenial, "the fail-closed interceptor's preparation failed")

	res, err = h.TurnEnd(context.Background(), hooks.TurnEndInput{Items: []gen.ModelVisibleItem{}, Turn: gen.ExecutionEventTurn{ID: "t"},
		Outcome: gen.OutcomeFailed, ContinuationCount: "0", Error: &gen.ExecutionEventError{Message: "failed", Class: "model_error"}})
	require.NoError(t, err)
	require.Len(t, res.Diagnostics, 1)
	require.Equal(t, "com.example.o", res.Diagnostics[0].BackendID)
	require.Equal(t, "widening", res.Diagnostics[0].Reason)

	require.Empty(t, recorded.of("i"))
	require.Empty(t, recorded.of("o"))
	got := recorded.of("native")
	require.Len(t, got, 2)
	for _, b := range got {
		require.Contains(t, string(b), `"native":`+secretNative)
	}
}

// TestBodyReceiverGetsGapForMissingBody: parts the host gives without
// their body (metadata or omit) reach a body receiver as a body gap
// (selection body with gap, keeping the size and digest the host stated),
// never as a metadata or omit part (content-upload.md: "a missing
// requested body uses selection: body and gap instead"); a metadata or
// omit receiver gets them capped by its selection as before. Context that
// a metadata receiver injected with such a part (an existing one, as it saw
// it: settlement admits no other) is projected the same way.
func TestBodyReceiverGetsGapForMissingBody(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[
		{"id":"tm","kind":"text","mediaType":"text/plain","selection":"metadata","size":5},
		{"id":"to","kind":"text","mediaType":"text/plain","selection":"omit","category":"reasoning"},
		{"id":"am","kind":"attachment","mediaType":"image/png","selection":"metadata","size":7,"sha256":"`+sha+`"},
		{"id":"ao","kind":"attachment","mediaType":"application/pdf","selection":"omit"},
		{"id":"tb","kind":"text","mediaType":"text/plain","selection":"body","text":"hello"}]}]`), &items))
	var value gen.CanonicalMessages
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"c","role":"developer","parts":[{"id":"tm","kind":"text","mediaType":"text/plain","selection":"metadata","size":5}]}]`), &value))
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().Deny().Inject(gen.DeliverAtNow)
	injects := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Inject(gen.DeliverAtNow, value)} }}
	// The body receiver injects the first part as it saw it, a body gap:
	// the SDK maps it back to the host's part, which settlement knows.
	body := &recorder{effects: func(req *gen.InterceptRequest) []gen.Effect {
		seen := req.Params.Event.TurnStart.Items[0].Parts[0]
		return []gen.Effect{server.Inject(gen.DeliverAtNow, gen.CanonicalMessages{{ID: "c2", Role: gen.CanonicalMessageRoleDeveloper, Parts: []gen.ContentItem{seen}}})}
	}}
	meta, omit := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.injects": injects, "com.example.body": body, "com.example.meta": meta, "com.example.omit": omit}, registration(
		backendJSON("com.example.injects", u, interceptContent(`{"default":"metadata"}`)),
		backendJSON("com.example.body", u, interceptContent(`{"default":"body"}`)),
		backendJSON("com.example.meta", u, interceptContent(`{"default":"metadata"}`)),
		backendJSON("com.example.omit", u, interceptContent(`{"default":"omit"}`))))
	res, err := h.TurnStart(context.Background(), turnStart(items))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)

	partsOf := func(r *recorder) []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Len(t, r.intercept, 1)
		var out []string
		for _, p := range r.intercept[0].Params.Event.TurnStart.Items[0].Parts {
			b, err := p.MarshalJSON()
			require.NoError(t, err)
			out = append(out, string(b))
		}
		return out
	}
	const gap = `"selection":"body","gap":{"reason":"body unavailable"}`
	require.Equal(t, []string{
		`{"id":"tm","kind":"text","mediaType":"text/plain",` + gap + `,"size":5}`,
		`{"id":"to","kind":"text","mediaType":"text/plain",` + gap + `,"category":"reasoning"}`,
		`{"id":"am","kind":"attachment","mediaType":"image/png",` + gap + `,"size":7,"sha256":"` + sha + `"}`,
		`{"id":"ao","kind":"attachment","mediaType":"application/pdf",` + gap + `}`,
		`{"id":"tb","kind":"text","mediaType":"text/plain","selection":"body","text":"hello"}`,
	}, partsOf(body))
	require.Equal(t, []string{
		`{"id":"tm","kind":"text","mediaType":"text/plain","selection":"metadata","size":5}`,
		`{"id":"to","kind":"text","mediaType":"text/plain","selection":"omit","category":"reasoning"}`,
		`{"id":"am","kind":"attachment","mediaType":"image/png","selection":"metadata","size":7,"sha256":"` + sha + `"}`,
		`{"id":"ao","kind":"attachment","mediaType":"application/pdf","selection":"omit"}`,
		`{"id":"tb","kind":"text","mediaType":"text/plain","selection":"metadata","size":5}`,
	}, partsOf(meta))
	for _, p := range partsOf(omit) {
		require.Contains(t, p, `"selection":"omit"`)
		require.NotContains(t, p, `"size"`)
		require.NotContains(t, p, `"sha256"`)
	}

	b := requestStateOf(t, body)
	require.Len(t, b, 1)
	require.Contains(t, b[0], `"parts":[{"id":"tm","kind":"text","mediaType":"text/plain",`+gap+`,"size":5}]`)
	m := requestStateOf(t, meta)
	require.Len(t, m, 1)
	require.Contains(t, m[0], `"parts":[{"id":"tm","kind":"text","mediaType":"text/plain","selection":"metadata","size":5}]`)

	require.Len(t, res.Injections, 2)
	echoed, err := res.Injections[1].Value[0].Parts[0].MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"id":"tm","kind":"text","mediaType":"text/plain","selection":"metadata","size":5}`, string(echoed), "the host's part, not the view's gap")
}

// TestSelectionWithholdsElicitationReturn: at user.elicitation.request an
// answer (return) depends on the form the request body carries; a receiver
// whose selection withholds that body is not offered return, and the
// candidate answer an earlier interceptor returned reaches it with its
// action only, not the answer's content (SDK-FEATURES: metadata and omit
// selections cannot authorize body-dependent effects; AHP-CONTENT-002). A
// body receiver gets both.
func TestSelectionWithholdsElicitationReturn(t *testing.T) {
	var el gen.InteractionEventUserElicitationRequestElicitation
	require.NoError(t, json.Unmarshal([]byte(`{"server":"example","mode":"form","request":{"id":"q","kind":"text","mediaType":"text/plain","selection":"body",
		"text":"{\"message\":\"Choose an answer\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"}},\"required\":[\"answer\"]}}"}}`), &el))
	var answer gen.MCPElicitationElicitResult
	require.NoError(t, json.Unmarshal([]byte(`{"action":"accept","content":{"answer":"`+secretText+`"},"_meta":{"note":"`+secretText+`"}}`), &answer))
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventUserElicitationRequest] = hooks.Intercept().Deny().Return().Message().ElicitationForm()
	answers := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect {
		return []gen.Effect{server.Return(answer)}
	}}
	meta, body := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	sub := func(content string) string {
		return `{"events":["user.elicitation.request"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":` + content + `}`
	}
	h := inproc(t, cfg, map[string]*recorder{"com.example.answers": answers, "com.example.meta": meta, "com.example.body": body}, registration(
		backendJSON("com.example.answers", u, sub(`{"default":"body"}`)),
		backendJSON("com.example.meta", u, sub(`{"default":"body","text":"metadata"}`)),
		backendJSON("com.example.body", u, sub(`{"default":"body"}`))))
	res, err := h.UserElicitationRequest(context.Background(), hooks.UserElicitationRequestInput{Elicitation: el})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.True(t, res.Candidate.Present)
	require.Contains(t, string(res.Candidate.Value), secretText, "the host's Result keeps the answer")

	require.Len(t, answers.intercept, 1)
	require.Contains(t, answers.intercept[0].Params.Capabilities.Effects, gen.EffectFamilyReturn)
	require.Len(t, meta.intercept, 1)
	require.NotNil(t, meta.intercept[0].Params.Event.UserElicitationRequest.Elicitation.Request.Metadata)
	require.Equal(t, []gen.EffectFamily{gen.EffectFamilyDeny, gen.EffectFamilyMessage}, meta.intercept[0].Params.Capabilities.Effects)
	m := requestStateOf(t, meta)
	require.NotContains(t, m[0], secretText)
	require.Contains(t, m[0], `"candidate":{"value":{"action":"accept"},"provenance":{"requestId":`)
	require.Len(t, body.intercept, 1)
	require.Contains(t, body.intercept[0].Params.Capabilities.Effects, gen.EffectFamilyReturn)
	require.Contains(t, requestStateOf(t, body)[0], `"content":{"answer":"`+secretText+`"}`)
}

// TestWithheldAttachmentKeepsReplace pins the reading of composition.md
// ("A whole-list replacement MUST NOT be advertised or accepted when the
// target contains text withheld by metadata/omit selection or a content
// gap"): an attachment the receiver's selection withholds (its metadata or
// omit view) does not take replace away, since replacement never preserves
// attachment slots anyway; a content gap does, an attachment gap included
// (a body receiver's view of an attachment the host gave without its
// body).
func TestWithheldAttachmentKeepsReplace(t *testing.T) {
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().ModifyPrompt(hooks.Replace, hooks.Merge)
	imagesMeta, imagesOmit, body := &recorder{}, &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.meta": imagesMeta, "com.example.omit": imagesOmit, "com.example.body": body}, registration(
		backendJSON("com.example.meta", u, interceptContent(`{"default":"body","images":"metadata"}`)),
		backendJSON("com.example.omit", u, interceptContent(`{"default":"body","images":"omit"}`)),
		backendJSON("com.example.body", u, interceptContent(`{"default":"body"}`))))
	replace := func(r *recorder, i int) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.intercept[i].Params.Capabilities.Modify.Prompt.Replace
	}
	for i, image := range []string{
		`{"id":"i","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"ref-img"}}`,
		`{"id":"i","kind":"attachment","mediaType":"image/png","selection":"metadata","size":3}`,
	} {
		var items []gen.ModelVisibleItem
		require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[
			{"id":"t","kind":"text","mediaType":"text/plain","selection":"body","text":"hello"},`+image+`]}]`), &items))
		res, err := h.TurnStart(context.Background(), turnStart(items))
		require.NoError(t, err)
		require.Empty(t, res.Diagnostics)
		require.True(t, replace(imagesMeta, i), "the metadata view of an attachment keeps replace")
		require.True(t, replace(imagesOmit, i), "the omit view of an attachment keeps replace")
		require.Equal(t, i == 0, replace(body, i), "an attachment gap takes replace away")
	}
}

// TestMetadataSizeIsOfTextAsSent: the size of a metadata view is the byte
// length of the UTF-8 text the event carries: a Go string holding invalid
// UTF-8 is sent with U+FFFD for each invalid byte (3 bytes each), and the
// size says so, equal to the length of the text a body receiver gets.
func TestMetadataSizeIsOfTextAsSent(t *testing.T) {
	meta, body := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, selectionConfig(), map[string]*recorder{"com.example.meta": meta, "com.example.body": body}, registration(
		backendJSON("com.example.meta", u, interceptContent(`{"default":"metadata"}`)),
		backendJSON("com.example.body", u, interceptContent(`{"default":"body"}`))))
	for _, text := range []string{"plain", "caf\u00e9 \u2028", "a\xffb", "\xff\xfe", "\xe2\x82", "ok\xed\xa0\x80"} {
		items := []gen.ModelVisibleItem{{ID: "m", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "p", Text: text}}}}}
		res, err := h.TurnStart(context.Background(), turnStart(items))
		require.NoError(t, err)
		require.Empty(t, res.Diagnostics)
	}
	require.Len(t, meta.intercept, 6)
	require.Len(t, body.intercept, 6)
	for i := range meta.intercept {
		sent := body.intercept[i].Params.Event.TurnStart.Items[0].Parts[0].TextBodyPart.Text
		m := meta.intercept[i].Params.Event.TurnStart.Items[0].Parts[0].TextMetadataPart
		require.NotNil(t, m)
		require.NotNil(t, m.Size)
		require.Equal(t, strconv.Itoa(len(sent)), m.Size.String(), "%q", sent)
	}
}
