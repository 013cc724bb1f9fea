package settle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
)

// elicitCtx is what settlement needs to know about an MCP elicitation
// boundary (interaction-payloads.md §MCP elicitation binding).
type elicitCtx struct {
	mode gen.ElicitationMode
	// result boundary
	action     string                          // envelope action
	result     *gen.MCPElicitationElicitResult // parsed body, nil unless body-selected
	resultPart *gen.TextBodyPart               // the body part carrying result
	// origAnswers are the answers of the result, as the event carries them.
	origAnswers gen.OrderedMap[gen.FormAnswerValue]
	// form is the compiled requested form schema, nil when the request body
	// is not available (metadata/omit selection, URL mode, or no host context).
	form *formSchema
}

// formAvailable reports whether the result's answer object is a
// modification target: an accepted, body-selected form result.
func (c *elicitCtx) formAvailable() bool {
	return c != nil && c.mode == gen.ElicitationModeForm &&
		c.action == string(gen.InteractionEventUserElicitationResultElicitationActionAccept) && c.result != nil
}

// parseRequestParams parses the body text of a user.elicitation.request
// event: complete MCP elicitation/create params.
func parseRequestParams(text string) (*gen.MCPElicitationElicitRequestParams, error) {
	var p gen.MCPElicitationElicitRequestParams
	if err := parseCanonical(refElicitRequest, []byte(text), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// paramsMode returns the parsed mode of request params (omission means form).
func paramsMode(p *gen.MCPElicitationElicitRequestParams) gen.ElicitationMode {
	if p.URL != nil {
		return gen.ElicitationModeURL
	}
	return gen.ElicitationModeForm
}

// parseResult parses the body text of a user.elicitation.result event: a
// complete MCP ElicitResult.
func parseResult(text string) (*gen.MCPElicitationElicitResult, error) {
	var r gen.MCPElicitationElicitResult
	if err := parseCanonical(refElicitResult, []byte(text), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// validAnswerValue checks one pinned MCP FormAnswerValue: a string, number,
// boolean, or array of strings.
func validAnswerValue(v gen.FormAnswerValue) bool {
	switch gen.FormAnswerValue(v).Kind() {
	case "string", "number", "boolean":
		return json.Valid(v)
	case "array":
		var ss []string
		return json.Unmarshal(v, &ss) == nil
	}
	return false
}

// mergeAnswers shallow-merges supplied answers over current ones: named
// fields are replaced whole, omitted fields survive, new ones are appended.
// It is linear in the members: beyond a few, names are looked up in an
// index rather than by scanning the growing result for each supplied one.
func mergeAnswers(cur, sup gen.OrderedMap[gen.FormAnswerValue]) gen.OrderedMap[gen.FormAnswerValue] {
	out := make(gen.OrderedMap[gen.FormAnswerValue], len(cur), len(cur)+len(sup))
	copy(out, cur)
	if len(cur)+len(sup) <= smallMembers {
		for _, e := range sup {
			found := false
			for i := range out {
				if out[i].Name == e.Name {
					out[i].Value = e.Value
					found = true
				}
			}
			if !found {
				out = append(out, e)
			}
		}
		return out
	}
	// Every place of a name (a repeated name is replaced everywhere, as
	// the scan does).
	idx := make(map[string][]int, len(out)+len(sup))
	for i := range out {
		idx[out[i].Name] = append(idx[out[i].Name], i)
	}
	for _, e := range sup {
		if is, ok := idx[e.Name]; ok {
			for _, i := range is {
				out[i].Value = e.Value
			}
			continue
		}
		idx[e.Name] = []int{len(out)}
		out = append(out, e)
	}
	return out
}

// cloneAnswers deep-copies an answer object (nil stays nil).
func cloneAnswers(m gen.OrderedMap[gen.FormAnswerValue]) gen.OrderedMap[gen.FormAnswerValue] {
	if m == nil {
		return nil
	}
	out := make(gen.OrderedMap[gen.FormAnswerValue], len(m))
	for i, e := range m {
		out[i] = gen.MapEntry[gen.FormAnswerValue]{Name: e.Name, Value: gen.FormAnswerValue(bytes.Clone(e.Value))}
	}
	return out
}

// answersEqual compares two answer objects ignoring member order.
func answersEqual(a, b gen.OrderedMap[gen.FormAnswerValue]) bool {
	am, bm := answerMembers(a), answerMembers(b)
	return membersEqual(am, bm)
}

// answerMembers lists the answers as members; a repeated name keeps its
// first place and its last value.
func answerMembers(m gen.OrderedMap[gen.FormAnswerValue]) []member {
	out := make([]member, 0, len(m))
	var idx map[string]int
	if len(m) > smallMembers {
		idx = make(map[string]int, len(m))
	}
	for _, e := range m {
		if k := findMember(out, idx, e.Name); k >= 0 {
			out[k].value = json.RawMessage(e.Value)
			continue
		}
		if idx != nil {
			idx[e.Name] = len(out)
		}
		out = append(out, member{name: e.Name, value: json.RawMessage(e.Value)})
	}
	return out
}

// correlateElicitation checks that req is the request a result event
// answers: parent, source, session, server and mode. It reads no body.
func correlateElicitation(res *gen.UserElicitationResultEvent, req *gen.UserElicitationRequestEvent) error {
	if res.ParentEventID == nil || *res.ParentEventID != req.ID {
		return errors.New("elicitation request does not parent the result")
	}
	if res.Source != req.Source || res.Elicitation.Server != req.Elicitation.Server || res.Elicitation.Mode != req.Elicitation.Mode {
		return errors.New("elicitation request and result do not correlate")
	}
	if (res.Session == nil) != (req.Session == nil) || (res.Session != nil && res.Session.ID != req.Session.ID) {
		return errors.New("elicitation request and result sessions differ")
	}
	return nil
}

// requestForm parses a request event's body and compiles its form schema;
// it returns nil without error when no form body is available.
func requestForm(req *gen.UserElicitationRequestEvent) (*formSchema, error) {
	part := req.Elicitation.Request
	if part == nil || part.Body == nil {
		return nil, nil
	}
	p, err := parseRequestParams(part.Body.Text)
	if err != nil {
		return nil, fmt.Errorf("elicitation request body: %w", err)
	}
	if paramsMode(p) != req.Elicitation.Mode {
		return nil, errors.New("elicitation request mode differs from its body")
	}
	if p.Form == nil {
		return nil, nil
	}
	s, err := compileForm(p.Form)
	if err != nil {
		return nil, fmt.Errorf("elicitation requested schema: %w", err)
	}
	return s, nil
}
