package elicitation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// Plan is the client's input.
type Plan struct {
	// Endpoint is the receiver's base URL (the server's {"endpoint"}).
	Endpoint string `json:"endpoint"`
	// Steps run in order.
	Steps []Step `json:"steps"`
}

// Step is one step of a plan. Op selects the members that apply:
//
//   - "upload": POST /upload with Text (or BodyBase64) as raw octets and
//     correct framing, unless SHA256 or Length override it.
//   - "intercept": POST /hooks/intercept with a hooks/intercept envelope of
//     Event and Capabilities (id = the event id).
//   - "raw": POST Path with Body (a string) as application/json.
//   - "receipts": GET /receipts.
//   - "hooks": a request and its result through the SDK's public hooks API
//     to the receiver, with the subscription's content Selection (body,
//     metadata or omit).
//   - "stage": settle.ApplyElicitationEffects on Request/Result with
//     Capabilities, Effects and Supplier; a staged result is delivered to
//     the receiver as a user.elicitation.result (Deliver), a failed list
//     publishes nothing (status 422).
//
// Token is "hooks" (AHP_ELICITATION_TOKEN), "upload"
// (AHP_ELICITATION_UPLOAD_TOKEN), "wrong" or "none"; the default is the
// route's own token.
type Step struct {
	Op           string          `json:"op"`
	Token        string          `json:"token,omitempty"`
	Text         *string         `json:"text,omitempty"`
	BodyBase64   *string         `json:"bodyBase64,omitempty"`
	SHA256       string          `json:"sha256,omitempty"`
	Length       *int64          `json:"length,omitempty"`
	Event        json.RawMessage `json:"event,omitempty"`
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	Path         string          `json:"path,omitempty"`
	Body         *string         `json:"body,omitempty"`

	// hooks
	Selection   string `json:"selection,omitempty"`
	Source      string `json:"source,omitempty"`
	Session     string `json:"session,omitempty"`
	Server      string `json:"server,omitempty"`
	Mode        string `json:"mode,omitempty"`
	RequestID   string `json:"requestId,omitempty"`
	RequestText string `json:"requestText,omitempty"`
	ResultID    string `json:"resultId,omitempty"`
	Action      string `json:"action,omitempty"`
	ResultText  string `json:"resultText,omitempty"`

	// stage
	Request  json.RawMessage `json:"request,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Effects  json.RawMessage `json:"effects,omitempty"`
	Supplier string          `json:"supplier,omitempty"`
	Deliver  *Deliver        `json:"deliver,omitempty"`
}

// Deliver names the published result event of a stage step.
type Deliver struct {
	// ID is the published result event's id.
	ID string `json:"id"`
	// Capabilities are the request-local capabilities of the delivery.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
}

// Outcome is one step's output.
type Outcome struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// RunClient runs a plan and returns the JSON array of step outcomes.
func RunClient(ctx context.Context, planJSON []byte, getenv func(string) string) ([]byte, error) {
	var p Plan
	if err := strictDecode(bytes.TrimSpace(planJSON), &p); err != nil {
		return nil, fmt.Errorf("%w: plan: %w", interop.ErrUsage, err)
	}
	if !strings.HasPrefix(p.Endpoint, "http://127.0.0.1:") && !strings.HasPrefix(p.Endpoint, "http://[::1]:") && !strings.HasPrefix(p.Endpoint, "http://localhost:") {
		return nil, fmt.Errorf("%w: the endpoint must be a loopback http URL", interop.ErrUsage)
	}
	c := &client{endpoint: strings.TrimSuffix(p.Endpoint, "/"), getenv: getenv, http: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	defer c.http.CloseIdleConnections()
	out := make([]Outcome, 0, len(p.Steps))
	for i := range p.Steps {
		o, err := c.step(ctx, &p.Steps[i])
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i, p.Steps[i].Op, err)
		}
		out = append(out, o)
	}
	return json.Marshal(out)
}

type client struct {
	endpoint string
	getenv   func(string) string
	http     *http.Client
}

func (c *client) token(name, def string) string {
	if name == "" {
		name = def
	}
	switch name {
	case "hooks":
		return c.getenv(TokenEnv)
	case "upload":
		return c.getenv(UploadTokenEnv)
	case "wrong":
		return "wrong-token"
	}
	return ""
}

func (c *client) step(ctx context.Context, s *Step) (Outcome, error) {
	switch s.Op {
	case "upload":
		return c.upload(ctx, s)
	case "intercept":
		body, err := envelope(s.Event, s.Capabilities)
		if err != nil {
			return Outcome{}, err
		}
		return c.do(ctx, http.MethodPost, "/hooks/intercept", c.token(s.Token, "hooks"), "application/json", body, nil)
	case "raw":
		if s.Body == nil || s.Path == "" {
			return Outcome{}, fmt.Errorf("%w: raw needs path and body", interop.ErrUsage)
		}
		return c.do(ctx, http.MethodPost, s.Path, c.token(s.Token, "hooks"), "application/json", []byte(*s.Body), nil)
	case "receipts":
		return c.do(ctx, http.MethodGet, "/receipts", c.token(s.Token, "hooks"), "", nil, nil)
	case "hooks":
		return c.hooks(ctx, s)
	case "stage":
		return c.stage(ctx, s)
	}
	return Outcome{}, fmt.Errorf("%w: unknown op %q", interop.ErrUsage, s.Op)
}

// envelope builds a hooks/intercept request of event and capabilities.
func envelope(event, caps json.RawMessage) ([]byte, error) {
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(event, &head); err != nil {
		return nil, fmt.Errorf("%w: event: %w", interop.ErrUsage, err)
	}
	if len(caps) == 0 {
		caps = json.RawMessage(`{"effects":[]}`)
	}
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": head.ID, "method": "hooks/intercept",
		"params": map[string]any{"protocolVersion": gen.ProtocolVersion, "event": event, "capabilities": caps}})
}

func (c *client) do(ctx context.Context, method, path, token, ctype string, body []byte, hdr http.Header) (Outcome, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+path, bytes.NewReader(body))
	if err != nil {
		return Outcome{}, err
	}
	if body == nil {
		req.Body = http.NoBody
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxStdin))
	if err != nil {
		return Outcome{}, fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	return Outcome{Status: resp.StatusCode, Body: bodyValue(data)}, nil
}

// bodyValue is a response body as JSON: the value itself when it is JSON,
// a JSON string otherwise, null when empty.
func bodyValue(data []byte) json.RawMessage {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return json.RawMessage("null")
	}
	if json.Valid(t) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(string(t))
	return b
}

func (c *client) upload(ctx context.Context, s *Step) (Outcome, error) {
	var raw []byte
	switch {
	case s.Text != nil:
		raw = []byte(*s.Text)
	case s.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*s.BodyBase64)
		if err != nil {
			return Outcome{}, fmt.Errorf("%w: bodyBase64: %w", interop.ErrUsage, err)
		}
		raw = b
	default:
		raw = []byte{}
	}
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:])
	if s.SHA256 != "" {
		digest = s.SHA256
	}
	hdr := http.Header{"Ahp-Content-Sha256": {digest}}
	o, err := c.doLength(ctx, raw, s.Length, c.token(s.Token, "upload"), hdr)
	if err != nil || o.Status != http.StatusCreated {
		return o, err
	}
	// The sender checks the receipt against the exact bytes it sent.
	var rc struct {
		Ref    string      `json:"ref"`
		Size   json.Number `json:"size"`
		SHA256 string      `json:"sha256"`
	}
	if interop.DecodeJSON(o.Body, &rc) != nil || rc.Ref == "" || rc.Size.String() != strconv.Itoa(len(raw)) || rc.SHA256 != hex.EncodeToString(sum[:]) {
		return Outcome{}, errors.New("upload receipt does not match the bytes sent")
	}
	return o, nil
}

// doLength posts raw to /upload with an optional declared length that
// differs from the body (a framing check).
func (c *client) doLength(ctx context.Context, raw []byte, length *int64, token string, hdr http.Header) (Outcome, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/upload", bytes.NewReader(raw))
	if err != nil {
		return Outcome{}, err
	}
	req.Header = hdr
	req.Header.Set("Content-Type", "application/octet-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.ContentLength = int64(len(raw))
	if length != nil && *length < int64(len(raw)) {
		// A short declared length: net/http sends that many octets.
		req.ContentLength = *length
		req.Body = io.NopCloser(bytes.NewReader(raw[:*length]))
		req.Header.Set("Ahp-Content-Sha256", hdr.Get("Ahp-Content-Sha256"))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Outcome{}, fmt.Errorf("POST /upload: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxStdin))
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: resp.StatusCode, Body: bodyValue(data)}, nil
}

// hooksSummary is the body of a hooks step.
type hooksSummary struct {
	Request hooksCall  `json:"request"`
	Result  *hooksCall `json:"result"`
}

type hooksCall struct {
	Error       string            `json:"error,omitempty"`
	Permission  string            `json:"permission,omitempty"`
	Candidate   json.RawMessage   `json:"candidate,omitempty"`
	Diagnostics []hooksDiagnostic `json:"diagnostics"`
	Text        *string           `json:"text,omitempty"`
}

type hooksDiagnostic struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Status int    `json:"status,omitempty"`
}

func diagnostics(ds []hooks.Diagnostic) []hooksDiagnostic {
	out := make([]hooksDiagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, hooksDiagnostic{Code: string(d.Code), Reason: d.Reason, Status: d.Status})
	}
	return out
}

// hooks runs one request and its result through the public hooks API.
func (c *client) hooks(ctx context.Context, s *Step) (Outcome, error) {
	sel := s.Selection
	if sel == "" {
		sel = "body"
	}
	source := s.Source
	if source == "" {
		source = "urn:ahp:interop:elicitation:go"
	}
	reg := fmt.Sprintf(`{"protocolVersion":"draft","hooks":[{"id":"org.agenthooks.interop.receiver","transport":{"type":"http","url":%q},"authentication":{"type":"bearer","tokenEnv":%q},`+
		`"subscriptions":[{"events":["user.elicitation.request","user.elicitation.result"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":{"default":%q}}]}]}`,
		c.endpoint+"/hooks/intercept", TokenEnv, sel)
	h, err := hooks.New([]byte(reg), hooks.Config{Source: source, Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Deny().Return().Message().ElicitationForm().ElicitationURL(),
		gen.EventUserElicitationResult:  hooks.Intercept().Message().ModifyContent(hooks.Replace, hooks.Merge).ElicitationForm().ElicitationURL(),
	}})
	if err != nil {
		return Outcome{}, fmt.Errorf("hooks: %w", err)
	}
	defer func() { _ = h.Close() }()
	var session *gen.Session
	if s.Session != "" {
		session = &gen.Session{ID: s.Session}
	}
	mode := gen.ElicitationMode(s.Mode)
	var sum hooksSummary
	status := http.StatusOK
	reqIn := hooks.UserElicitationRequestInput{ID: s.RequestID, Session: session, Elicitation: gen.InteractionEventUserElicitationRequestElicitation{Server: s.Server, Mode: mode}}
	if s.RequestText != "" {
		reqIn.Elicitation.Request = &gen.TextPart{Body: &gen.TextBodyPart{ID: "mcp-request", Text: s.RequestText}}
	}
	rr, err := h.UserElicitationRequest(ctx, reqIn)
	if err != nil {
		sum.Request.Error = errorKind(err)
		return summaryOutcome(http.StatusBadRequest, sum)
	}
	sum.Request = hooksCall{Permission: string(rr.Permission), Diagnostics: diagnostics(rr.Diagnostics)}
	if rr.Candidate.Present {
		sum.Request.Candidate = rr.Candidate.Value
	}
	if len(rr.Diagnostics) > 0 || rr.Permission == gen.PermissionDeny || s.Action == "" {
		if len(rr.Diagnostics) > 0 {
			status = http.StatusBadGateway
		}
		return summaryOutcome(status, sum)
	}
	original := rr.Event()
	parent := original.UserElicitationRequest.ID
	resIn := hooks.UserElicitationResultInput{ID: s.ResultID, Session: session, ParentEventID: &parent, Elicitation: gen.InteractionEventUserElicitationResultElicitation{
		Server: s.Server, Mode: mode, Action: gen.InteractionEventUserElicitationResultElicitationAction(s.Action)}}
	if s.ResultText != "" {
		resIn.Elicitation.Result = &gen.TextPart{Body: &gen.TextBodyPart{ID: "mcp-result", Text: s.ResultText}}
	}
	res, err := h.UserElicitationResult(ctx, resIn, hooks.WithOriginalElicitationRequest(original))
	sum.Result = &hooksCall{}
	if err != nil {
		sum.Result.Error = errorKind(err)
		return summaryOutcome(http.StatusBadRequest, sum)
	}
	sum.Result.Permission, sum.Result.Diagnostics = string(res.Permission), diagnostics(res.Diagnostics)
	if p := res.Event().UserElicitationResult.Elicitation.Result; p != nil && p.Body != nil {
		sum.Result.Text = &p.Body.Text
	}
	if len(res.Diagnostics) > 0 {
		status = http.StatusBadGateway
	}
	return summaryOutcome(status, sum)
}

// errorKind names a hooks error without its text.
func errorKind(err error) string {
	if errors.Is(err, hooks.ErrInvalidInput) {
		return "invalid_input"
	}
	return "error"
}

func summaryOutcome(status int, v any) (Outcome, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: status, Body: b}, nil
}

// stage applies an effect list with the SDK's atomic helper and delivers
// the staged result.
func (c *client) stage(ctx context.Context, s *Step) (Outcome, error) {
	cs := Case{Request: s.Request, Result: s.Result, Capabilities: s.Capabilities, Effects: s.Effects, Supplier: s.Supplier}
	rep, staged, err := cs.run(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if !rep.Accepted {
		return summaryOutcome(http.StatusUnprocessableEntity, map[string]any{"staged": rep, "published": false})
	}
	ev, publish, err := stagedEvent(staged, s)
	if err != nil {
		return Outcome{}, err
	}
	if !publish {
		return summaryOutcome(http.StatusOK, map[string]any{"staged": rep, "published": false})
	}
	caps := json.RawMessage(`{"effects":[]}`)
	if s.Deliver != nil && len(s.Deliver.Capabilities) > 0 {
		caps = s.Deliver.Capabilities
	}
	body, err := envelope(ev, caps)
	if err != nil {
		return Outcome{}, err
	}
	o, err := c.do(ctx, http.MethodPost, "/hooks/intercept", c.token(s.Token, "hooks"), "application/json", body, nil)
	if err != nil {
		return Outcome{}, err
	}
	return summaryOutcome(o.Status, map[string]any{"staged": rep, "published": true, "event": ev, "response": o.Body})
}

// stagedEvent builds the published user.elicitation.result of a staged
// outcome: the edited result event, or for a request-boundary return a new
// result event answering the request. A denial publishes nothing.
func stagedEvent(st *staged, s *Step) (json.RawMessage, bool, error) {
	if st.out.Denied || st.out.Result == nil {
		return nil, false, nil
	}
	var r gen.MCPElicitationElicitResult
	if err := r.UnmarshalJSON(st.out.Result); err != nil {
		return nil, false, err
	}
	var ev gen.UserElicitationResultEvent
	if st.res != nil {
		ev = *st.res
	} else {
		q := st.req
		id := "staged-result"
		if s.Deliver != nil && s.Deliver.ID != "" {
			id = s.Deliver.ID
		}
		parent := q.ID
		ev = gen.UserElicitationResultEvent{ID: id, Source: q.Source, Time: q.Time, Session: q.Session, ParentEventID: &parent, Type: string(gen.EventUserElicitationResult),
			Elicitation: gen.InteractionEventUserElicitationResultElicitation{Server: q.Elicitation.Server, Mode: q.Elicitation.Mode}}
	}
	if s.Deliver != nil && s.Deliver.ID != "" {
		ev.ID = s.Deliver.ID
	}
	ev.Elicitation.Action = gen.InteractionEventUserElicitationResultElicitationAction(r.Action)
	// New complete JSON as new inline text; the part gets a new id.
	ev.Elicitation.Result = &gen.TextPart{Body: &gen.TextBodyPart{ID: ev.ID + "-result", Text: string(st.out.Result)}}
	b, err := gen.EncodeEvent(&gen.Event{UserElicitationResult: &ev})
	return b, err == nil, err
}

// staged is a case's applied outcome with its parsed inputs.
type staged struct {
	req *gen.UserElicitationRequestEvent
	res *gen.UserElicitationResultEvent
	out *settle.ElicitationOutcome
}
