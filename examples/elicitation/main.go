// Command elicitation shows an MCP form elicitation through the hooks API:
// the host delivers user.elicitation.request with the complete MCP
// elicitation/create params as inline text, the user answers, and a policy
// backend edits the answer at user.elicitation.result (it lowercases the
// email address with a shallow merge of the answer object).
//
// The edit settles only when the host hands the call the original request
// with hooks.WithOriginalElicitationRequest: settlement checks the edited
// answers against the request's requestedSchema (without injecting
// defaults). Without it the backend's edit is rejected as
// context_unavailable and the user's answer stands. The example prints both
// and checks the published result with settle.ValidateElicitationExchange.
//
//	go run ./examples/elicitation
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "elicitation:", err)
		os.Exit(1)
	}
}

// The MCP server's elicitation/create params, serialized complete (with
// _meta). The age default is an annotation only: it is never injected.
const requestParams = `{"message":"Where should we send the report?","requestedSchema":{"type":"object","properties":` +
	`{"email":{"type":"string","minLength":3,"title":"Email"},"plan":{"type":"string","enum":["free","pro"]},"age":{"type":"integer","minimum":0,"default":30}},` +
	`"required":["email","plan"]},"_meta":{"trace":"t-42"}}`

// The user's MCP ElicitResult.
const userAnswer = `{"action":"accept","content":{"email":"Ada@Example.COM","plan":"pro"}}`

// backend is the policy backend: at user.elicitation.result it lowercases
// the email of an accepted form answer.
func backend() *server.Handler {
	return &server.Handler{
		InterceptEvents: []gen.EventName{gen.EventUserElicitationRequest, gen.EventUserElicitationResult},
		Intercept: func(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
			ev := req.Params.Event.UserElicitationResult
			if ev == nil || ev.Elicitation.Result == nil || ev.Elicitation.Result.Body == nil {
				return server.InterceptResult{}, nil
			}
			var r gen.MCPElicitationElicitResult
			if err := r.UnmarshalJSON([]byte(ev.Elicitation.Result.Body.Text)); err != nil {
				return server.InterceptResult{}, err
			}
			for _, a := range r.Content {
				var email string
				if a.Name == "email" && json.Unmarshal(a.Value, &email) == nil && email != strings.ToLower(email) {
					v, _ := json.Marshal(strings.ToLower(email))
					return server.InterceptResult{Effects: []gen.Effect{
						server.MergeForm(gen.OrderedMap[gen.FormAnswerValue]{{Name: "email", Value: gen.FormAnswerValue(v)}}),
					}}, nil
				}
			}
			return server.InterceptResult{}, nil
		},
	}
}

func run(ctx context.Context, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := server.NewHTTPServer(ln.Addr().String(), backend())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Shutdown(context.Background())
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "serve:", err)
		}
	}()

	reg := fmt.Sprintf(`{"protocolVersion":"draft","hooks":[{"id":"com.example.policy","transport":{"type":"http","url":"http://%s/"},`+
		`"subscriptions":[{"events":["user.elicitation.request","user.elicitation.result"],"mode":"intercept","timeoutMs":5000,"failurePolicy":"fail-open","content":{"default":"body"}}]}]}`, ln.Addr())
	h, err := hooks.New([]byte(reg), hooks.Config{Source: "urn:example:agent", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventUserElicitationRequest: hooks.Intercept().Deny().Return().Message().ElicitationForm(),
		gen.EventUserElicitationResult:  hooks.Intercept().Message().ModifyContent(hooks.Merge).ElicitationForm(),
	}})
	if err != nil {
		return err
	}
	defer func() { _ = h.Close() }()

	session := &gen.Session{ID: "session-1"}
	reqRes, err := h.UserElicitationRequest(ctx, hooks.UserElicitationRequestInput{Session: session,
		Elicitation: gen.InteractionEventUserElicitationRequestElicitation{Server: "mcp.reports", Mode: gen.ElicitationModeForm,
			Request: &gen.TextPart{Body: &gen.TextBodyPart{ID: "mcp-request", Text: requestParams}}}})
	if err != nil {
		return err
	}
	if reqRes.Permission == gen.PermissionDeny {
		return errors.New("the elicitation was denied")
	}
	fmt.Fprintf(out, "request: permission=%s diagnostics=%d\n", reqRes.Permission, len(reqRes.Diagnostics))
	original := reqRes.Event() // the canonical request as delivered

	result := func(opts ...hooks.CallOption) (*hooks.Result, error) {
		parent := original.UserElicitationRequest.ID
		return h.UserElicitationResult(ctx, hooks.UserElicitationResultInput{Session: session, ParentEventID: &parent,
			Elicitation: gen.InteractionEventUserElicitationResultElicitation{Server: "mcp.reports", Mode: gen.ElicitationModeForm,
				Action: gen.InteractionEventUserElicitationResultElicitationActionAccept,
				Result: &gen.TextPart{Body: &gen.TextBodyPart{ID: "mcp-result", Text: userAnswer}}}}, opts...)
	}

	// Without the original request the edit cannot be checked and is
	// rejected; the user's answer stands.
	plain, err := result()
	if err != nil {
		return err
	}
	reasons := make([]string, 0, len(plain.Diagnostics))
	for _, d := range plain.Diagnostics {
		reasons = append(reasons, string(d.Code)+" "+d.Reason)
	}
	fmt.Fprintf(out, "without the original request: diagnostics=%v answer=%s\n", reasons, answerText(plain))

	// With it the merge settles against the requested schema.
	edited, err := result(hooks.WithOriginalElicitationRequest(original))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "with the original request: diagnostics=%d answer=%s\n", len(edited.Diagnostics), answerText(edited))

	// The host publishes the effective result: check the exchange as the
	// next receiver would.
	x, err := settle.ValidateElicitationExchange(original.UserElicitationRequest, edited.Event().UserElicitationResult)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "published exchange: mode=%s action=%s request=%s result=%s\n", x.Mode, x.Action, x.RequestBody, x.ResultBody)
	return nil
}

// answerText is the effective MCP result text of a result call.
func answerText(r *hooks.Result) string {
	if ev := r.Event(); ev != nil && ev.UserElicitationResult != nil {
		if p := ev.UserElicitationResult.Elicitation.Result; p != nil && p.Body != nil {
			return p.Body.Text
		}
	}
	return ""
}
