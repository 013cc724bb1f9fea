package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// secretValue is a secret-looking instance value planted in invalid
// documents: no error may repeat it.
const secretValue = "sk-live-" + canary

// sentinels are the documented sentinel errors of package hooks.
var sentinels = []error{
	hooks.ErrClosed, hooks.ErrInvalidRegistration, hooks.ErrInvalidConfig, hooks.ErrInvalidInput,
	hooks.ErrNoInput, hooks.ErrNoTarget, hooks.ErrDecode, hooks.ErrNoAttachment, hooks.ErrGenerator,
	hooks.ErrInternal, hooks.ErrCompactorClosed,
	hooks.ErrCancelled, hooks.ErrUncorrelated, hooks.ErrDuplicate, hooks.ErrRejected, hooks.ErrNoPending, hooks.ErrFinished,
}

// requireSentinel asserts that err matches want and no other documented
// sentinel (ErrWidening is also ErrInvalidInput by definition).
func requireSentinel(t *testing.T, err, want error) {
	t.Helper()
	require.ErrorIs(t, err, want)
	for _, s := range sentinels {
		if s != want && !(want == hooks.ErrWidening && s == hooks.ErrInvalidInput) {
			require.NotErrorIs(t, err, s, "%v also matches %v", err, s)
		}
	}
	require.NotContains(t, err.Error(), canary)
}

// problems returns the *hooks.ValidationErrors err reports: itself, or
// each of a joined error.
func problems(t *testing.T, err error) []*hooks.ValidationError {
	t.Helper()
	var out []*hooks.ValidationError
	if j, ok := err.(interface{ Unwrap() []error }); ok && !isValidationError(err) {
		for _, e := range j.Unwrap() {
			var ve *hooks.ValidationError
			require.ErrorAs(t, e, &ve)
			out = append(out, ve)
		}
		return out
	}
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	return []*hooks.ValidationError{ve}
}

func isValidationError(err error) bool {
	_, ok := err.(*hooks.ValidationError)
	return ok
}

// TestNewNamesTheMissingMember: a registration missing timeoutMs says so,
// at the subscription's pointer (it used to say only "required").
func TestNewNamesTheMissingMember(t *testing.T) {
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		`{"events":["tool.before"],"mode":"intercept","failurePolicy":"fail-open","content":{"default":"body"}}`))
	_, err := hooks.New(reg, baseConfig())
	requireSentinel(t, err, hooks.ErrInvalidRegistration)
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0/subscriptions/0", ve.Pointer)
	require.Equal(t, "required", ve.Keyword)
	require.Equal(t, `missing "timeoutMs"`, ve.Detail)
	require.EqualError(t, err, `hooks: invalid registration: registration "/hooks/0/subscriptions/0": required: missing "timeoutMs"`)
}

// TestNewNamesAllowedValues: an enum failure lists the schema's values and
// never the instance's.
func TestNewNamesAllowedValues(t *testing.T) {
	reg := registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"),
		interceptSub(`"tool.before"`, 500, secretValue)))
	_, err := hooks.New(reg, baseConfig())
	requireSentinel(t, err, hooks.ErrInvalidRegistration)
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "/hooks/0/subscriptions/0/failurePolicy", ve.Pointer)
	require.Equal(t, "enum", ve.Keyword)
	require.Equal(t, `allowed "fail-open", "fail-closed"`, ve.Detail)
}

// TestNewReportsEveryProblem: every load-time problem of a registration is
// reported, each with its pointer, in document order; errors.As finds the
// first.
func TestNewReportsEveryProblem(t *testing.T) {
	u := httpTransport("http://127.0.0.1:1/x")
	reg := registration(
		backendJSON("com.example.a", u, interceptSub(`"tool.before","turn.start"`, 500, "fail-open"), observeSub(`"foo.*"`)),
		backendJSON("com.example.a", httpTransport("http://user:"+secretValue+"@127.0.0.1:1/x"), interceptSub(`"tool.before"`, 500, "fail-open")),
	)
	_, err := hooks.New(reg, baseConfig())
	requireSentinel(t, err, hooks.ErrInvalidRegistration)
	got := problems(t, err)
	type p struct{ pointer, keyword string }
	var ps []p
	for _, ve := range got {
		ps = append(ps, p{ve.Pointer, ve.Keyword})
		requireSentinel(t, ve, hooks.ErrInvalidRegistration)
	}
	require.Equal(t, []p{
		{"/hooks/0/subscriptions/0/events/1", "advertised"},
		{"/hooks/0/subscriptions/1/events/0", "family"},
		{"/hooks/1/id", "unique"},
		{"/hooks/1/transport/url", "credentials"},
	}, ps)
	var first *hooks.ValidationError
	require.ErrorAs(t, err, &first)
	require.Equal(t, "/hooks/0/subscriptions/0/events/1", first.Pointer)

	// Schema failures too: each cause is one problem.
	reg = registration(backendJSON("com.example.a", u,
		`{"events":["tool.before"],"mode":"intercept","failurePolicy":"fail-open","content":{"default":"body"}}`,
		`{"events":["tool.before"],"mode":"intercept","timeoutMs":5,"failurePolicy":"`+secretValue+`","content":{"default":"body"}}`))
	_, err = hooks.New(reg, baseConfig())
	requireSentinel(t, err, hooks.ErrInvalidRegistration)
	got = problems(t, err)
	require.Len(t, got, 2, err.Error())
	require.Equal(t, "/hooks/0/subscriptions/0", got[0].Pointer)
	require.Equal(t, `missing "timeoutMs"`, got[0].Detail)
	require.Equal(t, "/hooks/0/subscriptions/1/failurePolicy", got[1].Pointer)
}

// TestSettleFailureSaysWhatIsWrong: an MCP elicitation request body that is
// not a valid MCP ElicitRequest is reported at its pointer with the
// failing keyword and the missing member; it used to be reported as
// `state "": settle: the event or initial state cannot be settled`.
func TestSettleFailureSaysWhatIsWrong(t *testing.T) {
	cfg := hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Deny(),
	}}
	h := inproc(t, cfg, map[string]*recorder{"com.example.a": {}},
		registration(backendJSON("com.example.a", httpTransport("http://127.0.0.1:1/x"), interceptSub(`"user.elicitation.request"`, 500, "fail-open"))))
	body, err := json.Marshal(map[string]any{"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}, "token": secretValue})
	require.NoError(t, err)
	_, err = h.UserElicitationRequest(context.Background(), hooks.UserElicitationRequestInput{
		Elicitation: gen.InteractionEventUserElicitationRequestElicitation{
			Server: "example",
			Mode:   gen.ElicitationModeForm,
			Request: &gen.TextPart{Body: &gen.TextBodyPart{
				ID: "req", Kind: "text", MediaType: "text/plain", Selection: "body", Text: string(body),
			}},
		},
	})
	requireSentinel(t, err, hooks.ErrInvalidInput)
	var ve *hooks.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "event", ve.Doc)
	require.Equal(t, "/elicitation/request/text", ve.Pointer)
	require.Equal(t, "required", ve.Keyword, err.Error())
	require.Contains(t, ve.Detail, "the elicitation request cannot be settled")
	require.Contains(t, ve.Detail, `missing "message"`)
	require.NotContains(t, err.Error(), "sk-live")
}

// TestDecodeErrorsMatchSentinels: DecodeInput and DecodeTarget failures
// match their documented sentinels (a DecodeInput failure used to match
// none).
func TestDecodeErrorsMatchSentinels(t *testing.T) {
	type narrow struct {
		Other string `json:"other"`
	}
	res := &hooks.Result{
		Input:   json.RawMessage(`{"path":"/etc/hosts"}`),
		Targets: map[gen.ModifyTarget]json.RawMessage{gen.ModifyTargetPrompt: json.RawMessage(`[{"id":"m1","role":"user","parts":[]}]`)},
	}
	var n narrow
	requireSentinel(t, res.DecodeInput(&n), hooks.ErrDecode)
	requireSentinel(t, res.DecodeTarget(gen.ModifyTargetInput, &n), hooks.ErrDecode)
	var s string
	requireSentinel(t, res.DecodeTarget(gen.ModifyTargetPrompt, &s), hooks.ErrDecode)
	requireSentinel(t, res.DecodeTarget(gen.ModifyTargetOutput, &s), hooks.ErrNoTarget)
	requireSentinel(t, (&hooks.Result{}).DecodeInput(&n), hooks.ErrNoInput)
	requireSentinel(t, (*hooks.Result)(nil).DecodeTarget(gen.ModifyTargetPrompt, &s), hooks.ErrNoTarget)

	var in struct {
		Path string `json:"path"`
	}
	require.NoError(t, res.DecodeTarget(gen.ModifyTargetInput, &in))
	require.Equal(t, "/etc/hosts", in.Path)
	var msgs []gen.CanonicalMessage
	require.NoError(t, res.DecodeTarget(gen.ModifyTargetPrompt, &msgs))
	require.Len(t, msgs, 1)
	require.Equal(t, gen.CanonicalMessageRole("user"), msgs[0].Role)
}

// TestErrorsMatchSentinels walks the error returns of the package's API and
// checks each against exactly one documented sentinel.
func TestErrorsMatchSentinels(t *testing.T) {
	u := httpTransport("http://127.0.0.1:1/x")
	okReg := registration(backendJSON("com.example.a", u, interceptSub(`"tool.before"`, 500, "fail-open")))
	cases := []struct {
		name string
		err  func(t *testing.T) error
		want error
	}{
		{"New: no Source", func(*testing.T) error { _, err := hooks.New(okReg, hooks.Config{}); return err }, hooks.ErrInvalidConfig},
		{"New: malformed registration", func(*testing.T) error { _, err := hooks.New([]byte(`{"hooks":`), baseConfig()); return err }, hooks.ErrInvalidRegistration},
		{"New: duplicate member", func(*testing.T) error {
			_, err := hooks.New([]byte(`{"protocolVersion":"draft","protocolVersion":"draft","hooks":[]}`), baseConfig())
			return err
		}, hooks.ErrInvalidRegistration},
		{"New: unknown Transports key", func(*testing.T) error {
			cfg := baseConfig()
			cfg.Transports = map[string]transport.Transport{"com.example.none": nil}
			_, err := hooks.New(okReg, cfg)
			return err
		}, hooks.ErrInvalidConfig},
		{"New: unknown event in Capabilities", func(*testing.T) error {
			_, err := hooks.New(okReg, hooks.Config{Source: "urn:x", Capabilities: map[gen.EventName]hooks.Grant{"no.such": hooks.Observe()}})
			return err
		}, hooks.ErrInvalidConfig},
		{"ToolBefore: undeclared event", func(t *testing.T) error {
			h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": {}}, okReg)
			_, err := h.TurnStart(context.Background(), hooks.TurnStartInput{})
			return err
		}, hooks.ErrInvalidInput},
		{"ToolBefore: input not an object", func(t *testing.T) error {
			h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": {}}, okReg)
			in := toolInput()
			in.Input = []string{secretValue}
			_, err := h.ToolBefore(context.Background(), in)
			return err
		}, hooks.ErrInvalidInput},
		{"ToolBefore: widening grant", func(t *testing.T) error {
			h := inproc(t, hooks.Config{Source: "urn:x", Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny()}},
				map[string]*recorder{"com.example.a": {}}, okReg)
			_, err := h.ToolBefore(context.Background(), toolInput(), hooks.WithCapabilities(hooks.Intercept().Deny().Allow()))
			return err
		}, hooks.ErrWidening},
		{"ToolBefore: after Close", func(t *testing.T) error {
			h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": {}}, okReg)
			require.NoError(t, h.Close())
			_, err := h.ToolBefore(context.Background(), toolInput())
			return err
		}, hooks.ErrClosed},
		{"Deliver: invalid event", func(t *testing.T) error {
			h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": {}}, okReg)
			_, err := h.Deliver(context.Background(), []byte(`{"type":"tool.before","token":"`+secretValue+`"}`))
			return err
		}, hooks.ErrInvalidInput},
		{"Attachments.Read: unknown part", func(*testing.T) error {
			_, err := (&hooks.Result{}).Attachments().Read(context.Background(), "p")
			return err
		}, hooks.ErrNoAttachment},
		{"Compactor: generator fails", func(t *testing.T) error {
			c, err := hooks.NewCompactor(hooks.CompactionConfig{Generator: func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
				return nil, errors.New("model down")
			}})
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Run(context.Background(), input())
			return err
		}, hooks.ErrGenerator},
		{"Compactor: invalid generated summary", func(t *testing.T) error {
			c, err := hooks.NewCompactor(hooks.CompactionConfig{Generator: func(context.Context, *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
				return gen.TextParts{{Metadata: &gen.TextMetadataPart{ID: ""}}}, nil
			}})
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Run(context.Background(), input())
			return err
		}, hooks.ErrGenerator},
		{"Compactor: no source", func(t *testing.T) error {
			c, err := hooks.NewCompactor(hooks.CompactionConfig{})
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Run(context.Background(), hooks.CompactionInput{})
			return err
		}, hooks.ErrInvalidInput},
		{"Compactor: closed", func(t *testing.T) error {
			c, err := hooks.NewCompactor(hooks.CompactionConfig{})
			require.NoError(t, err)
			require.NoError(t, c.Close())
			_, err = c.Run(context.Background(), input())
			return err
		}, hooks.ErrCompactorClosed},
		{"NewCompactor: no callback", func(*testing.T) error {
			_, err := hooks.NewCompactor(hooks.CompactionConfig{Hooks: []hooks.CompactionHook{{Boundary: gen.EventContextCompactBefore}}})
			return err
		}, hooks.ErrInvalidConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err(t)
			require.Error(t, err)
			requireSentinel(t, err, c.want)
			require.False(t, strings.Contains(err.Error(), "sk-live"), err.Error())
		})
	}

	// The caller's context: wrapped, matching no sentinel.
	h := inproc(t, baseConfig(), map[string]*recorder{"com.example.a": {}}, okReg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.ToolBefore(ctx, toolInput())
	require.ErrorIs(t, err, context.Canceled)
	for _, s := range sentinels {
		require.NotErrorIs(t, err, s)
	}
}
