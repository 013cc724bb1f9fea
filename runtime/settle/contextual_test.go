package settle_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// editContext is the manifest's description of the boundary a contextual
// fixture is applied at.
type editContext struct {
	Event   gen.EventName `json:"event"`
	Current struct {
		Output  json.RawMessage `json:"output"`
		Content json.RawMessage `json:"content"`
	} `json:"current"`
	Mode   string `json:"mode"`
	Action string `json:"action"`
}

// contextualEvent builds the event (and host context) an editContext describes.
func contextualEvent(t *testing.T, ec editContext) (*gen.Event, settle.Initial) {
	t.Helper()
	switch ec.Event {
	case gen.EventToolAfter:
		return parseEvent(t, `{"id":"edit-1",`+envelope+`,"type":"tool.after","tool":{"name":"t","input":{},"origin":"native"},"outcome":"ok","execution":{"status":"executed"},"call":{"id":"c1"},"path":"example","items":`+string(ec.Current.Output)+`}`), settle.Initial{}
	case gen.EventUserMessageOutbound:
		return parseEvent(t, `{"id":"edit-1",`+envelope+`,"type":"user.message.outbound","message":{"channel":"chat","messages":`+string(ec.Current.Content)+`}}`), settle.Initial{}
	case gen.EventUserElicitationResult:
		// The original request: a form whose schema fits the current answers,
		// or a URL request.
		var params string
		if ec.Mode == "url" {
			params = `{"mode":"url","message":"Sign in","url":"https://example.com/auth","elicitationId":"e1"}`
		} else {
			var current map[string]any
			require.NoError(t, json.Unmarshal(ec.Current.Content, &current))
			props := map[string]any{"name": map[string]any{"type": "string"}}
			for k, v := range current {
				switch v.(type) {
				case bool:
					props[k] = map[string]any{"type": "boolean"}
				case string:
					props[k] = map[string]any{"type": "string"}
				}
			}
			schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
			require.NoError(t, err)
			params = `{"message":"Edit","requestedSchema":` + string(schema) + `}`
		}
		req := parseEvent(t, fmt.Sprintf(`{"id":"req-1",`+envelope+`,"type":"user.elicitation.request","elicitation":{"server":"srv","mode":%q,"request":{"id":"rq","kind":"text","mediaType":"text/plain","selection":"body","text":%q}}}`, ec.Mode, params))
		// MCP: content is present only for accepted form data.
		body := map[string]any{"action": ec.Action}
		if ec.Mode == "form" && ec.Action == "accept" {
			body["content"] = json.RawMessage(ec.Current.Content)
		}
		text, err := json.Marshal(body)
		require.NoError(t, err)
		ev := parseEvent(t, fmt.Sprintf(`{"id":"edit-1",`+envelope+`,"type":"user.elicitation.result","parentEventId":"req-1","elicitation":{"server":"srv","mode":%q,"action":%q,"result":{"id":"rs","kind":"text","mediaType":"text/plain","selection":"body","text":%q}}}`, ec.Mode, ec.Action, text))
		return ev, settle.Initial{ElicitationRequest: req.UserElicitationRequest}
	}
	t.Fatalf("unexpected edit context event %s", ec.Event)
	return nil, settle.Initial{}
}

// TestContextualFixtures runs every fixture of the vendored manifest that
// carries contextualExpectedValid and an editContext: the response is
// parsed canonically (schema-invalid ones are rejected there) and applied
// at the described boundary with capabilities granting its target; the
// verdict must equal contextualExpectedValid (AHP-EDIT-001).
func TestContextualFixtures(t *testing.T) {
	cases, err := fixtures.Load()
	require.NoError(t, err)
	n := 0
	for _, c := range cases {
		if c.ContextualExpectedValid == nil || len(c.EditContext) == 0 {
			continue
		}
		n++
		t.Run(c.ID, func(t *testing.T) {
			var ec editContext
			require.NoError(t, json.Unmarshal(c.EditContext, &ec))
			ev, initial := contextualEvent(t, ec)
			o, err := settle.New(ev, initial)
			require.NoError(t, err)
			before := o.State()

			data, err := c.Read()
			require.NoError(t, err)
			resp, perr := gen.ParseInterceptResponse(data)
			admitted := false
			if perr == nil {
				aerr := o.Apply(fullGrant(t, ec.Event), &resp.Result)
				admitted = aerr == nil
				if aerr != nil {
					require.ErrorIs(t, aerr, settle.ErrRejected)
					t.Logf("rejected: %v", aerr)
				}
				require.Equal(t, aerr == nil, settle.Admit(ev, fullGrant(t, ec.Event), resp.Result.Effects) == nil, "Admit agrees with Apply")
			} else {
				require.False(t, c.ExpectedValid, "only schema-invalid fixtures fail to parse")
			}
			require.Equal(t, *c.ContextualExpectedValid, admitted)
			if !admitted {
				require.Equal(t, before, o.State())
				return
			}
			s := o.State()
			target := map[gen.EventName]gen.ModifyTarget{gen.EventToolAfter: gen.ModifyTargetOutput,
				gen.EventUserMessageOutbound: gen.ModifyTargetContent, gen.EventUserElicitationResult: gen.ModifyTargetContent}[ec.Event]
			require.NotNil(t, s.Targets[target])
			eff := resp.Result.Effects[0]
			switch {
			case eff.ModifyForm != nil:
				requireJSONEq(t, `{"name":"new","keep":true}`, s.Targets[target])
				out, err := o.Event()
				require.NoError(t, err)
				requireJSONEq(t, `{"action":"accept","content":{"name":"new","keep":true}}`, json.RawMessage(out.UserElicitationResult.Elicitation.Result.Body.Text))
			case eff.ModifyMessages != nil && eff.ModifyMessages.Operation == gen.EffectOperationMerge:
				var cur []json.RawMessage
				require.NoError(t, json.Unmarshal(s.Targets[target], &cur))
				require.Len(t, cur, 2, "merge appends without deduplication")
				require.JSONEq(t, string(cur[0]), string(cur[1]))
			default:
				var cur []json.RawMessage
				require.NoError(t, json.Unmarshal(s.Targets[target], &cur))
				require.Len(t, cur, 1)
			}
			requireCanonicalRequest(t, o, fullGrant(t, ec.Event))
		})
	}
	require.Equal(t, 10, n, "contextual fixture count")
}
