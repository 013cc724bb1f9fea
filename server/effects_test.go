package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

func TestEffectConstructors(t *testing.T) {
	msgs := messages(t)
	var parts gen.TextParts
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"t1","kind":"text","mediaType":"text/plain","selection":"body","text":"hi"}]`), &parts))
	cwd := "/repo"
	answers := gen.OrderedMap[gen.FormAnswerValue]{{Name: "name", Value: gen.FormAnswerValueFromString("ada")}}
	var elicit gen.MCPElicitationElicitResult
	require.NoError(t, json.Unmarshal([]byte(`{"action":"accept","content":{"name":"ada"}}`), &elicit))

	cases := []struct {
		name   string
		effect gen.Effect
		def    string // effect.schema.json definition it must satisfy
		json   string
	}{
		{"Deny", server.Deny("no"), "deny-effect.schema.json", `{"type":"deny","reason":"no"}`},
		{"Allow", server.Allow(), "effect.schema.json#/$defs/AllowEffect", `{"type":"allow"}`},
		{"Ask", server.Ask(), "effect.schema.json#/$defs/AskEffect", `{"type":"ask"}`},
		{"Message", server.Message("hello"), "effect.schema.json#/$defs/MessageEffect", `{"type":"message","text":"hello"}`},
		{"StopFlow", server.StopFlow("done"), "effect.schema.json#/$defs/StopFlowEffect", `{"type":"flow","operation":"stop","reason":"done"}`},
		{"ContinueFlow", server.ContinueFlow("more"), "effect.schema.json#/$defs/ContinueFlowEffect", `{"type":"flow","operation":"continue","instruction":"more"}`},
		{"ContinueFlow empty", server.ContinueFlow(""), "effect.schema.json#/$defs/ContinueFlowEffect", `{"type":"flow","operation":"continue"}`},
		{"Inject", server.Inject(gen.DeliverAtNow, msgs), "effect.schema.json#/$defs/InjectEffect", `{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":` + injectMessages + `}`},
		{"ReplaceMessages", server.ReplaceMessages(gen.ModifyMessagesEffectTargetPrompt, msgs), "effect.schema.json#/$defs/ModifyMessagesEffect", `{"type":"modify","target":"prompt","operation":"replace","value":` + injectMessages + `}`},
		{"MergeMessages", server.MergeMessages(gen.ModifyMessagesEffectTargetContent, msgs), "effect.schema.json#/$defs/ModifyMessagesEffect", `{"type":"modify","target":"content","operation":"merge","value":` + injectMessages + `}`},
		{"ReplaceText", server.ReplaceText(gen.ModifyTextEffectTargetInstructions, parts), "effect.schema.json#/$defs/ModifyTextEffect", ""},
		{"MergeText", server.MergeText(gen.ModifyTextEffectTargetSummary, parts), "effect.schema.json#/$defs/ModifyTextEffect", ""},
		{"ReplaceWorkspace", server.ReplaceWorkspace(gen.WorkspaceChange{Cwd: &cwd}), "effect.schema.json#/$defs/ModifyWorkspaceEffect", `{"type":"modify","target":"workspace","operation":"replace","value":{"cwd":"/repo"}}`},
		{"MergeWorkspace", server.MergeWorkspace(gen.WorkspaceChange{WorkspaceRoots: []string{"/a"}}), "effect.schema.json#/$defs/ModifyWorkspaceEffect", ""},
		{"ReplaceForm", server.ReplaceForm(answers), "effect.schema.json#/$defs/ModifyFormEffect", `{"type":"modify","target":"content","operation":"replace","value":{"name":"ada"}}`},
		{"MergeForm", server.MergeForm(answers), "effect.schema.json#/$defs/ModifyFormEffect", ""},
		{"ReplaceInput", server.ReplaceInput(map[string]any{"path": "a"}), "effect.schema.json#/$defs/ModifyInputEffect", `{"type":"modify","target":"input","operation":"replace","value":{"path":"a"}}`},
		{"MergeInput", server.MergeInput(json.RawMessage(`{ "n": 1.50 }`)), "effect.schema.json#/$defs/ModifyInputEffect", `{"type":"modify","target":"input","operation":"merge","value":{"n":1.50}}`},
		{"Return", server.Return([]int{1, 2}), "effect.schema.json#/$defs/ReturnToolEffect", `{"type":"return","value":[1,2]}`},
		{"Return null", server.Return(nil), "effect.schema.json#/$defs/ReturnToolEffect", `{"type":"return","value":null}`},
		{"ReturnMessages", server.ReturnMessages(msgs), "effect.schema.json#/$defs/ReturnMessagesEffect", ""},
		{"ReturnText", server.ReturnText(parts), "effect.schema.json#/$defs/ReturnTextEffect", ""},
		{"ReturnElicitResult", server.ReturnElicitResult(elicit), "effect.schema.json#/$defs/ReturnElicitResultEffect", `{"type":"return","value":{"action":"accept","content":{"name":"ada"}}}`},
	}
	v := validate.Default()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := gen.EncodeEffect(&c.effect)
			require.NoError(t, err)
			if c.json != "" {
				require.JSONEq(t, c.json, string(data))
			}
			require.NoError(t, v.Validate(c.def, data), "%s", data)
			require.NoError(t, v.Validate("effect.schema.json", data), "%s", data)
			back, err := gen.ParseEffect(data)
			require.NoError(t, err)
			again, err := gen.EncodeEffect(back)
			require.NoError(t, err)
			require.Equal(t, string(data), string(again))
		})
	}

	// A value a constructor cannot encode makes an effect that is never
	// sent: admission rejects it, naming the effect and the constructor,
	// and it cannot be encoded either. Values never appear.
	req := parseRequest(t, toolBefore(t, toolBeforeFull))
	for _, c := range []struct {
		effect gen.Effect
		family string
		reason string
	}{
		{server.ReplaceInput([]string{"secret-value"}), "modify", "ReplaceInput: the value must encode as a JSON object, not an array"},
		{server.MergeInput(nil), "modify", "MergeInput: the value must encode as a JSON object, not null"},
		{server.Return(make(chan int)), "return", "Return: the value cannot be encoded as JSON"},
		{server.Return(json.RawMessage(`{"secret-value"`)), "return", "Return: the value cannot be encoded as JSON"},
		{server.ReturnMessages(gen.CanonicalMessages{{ID: "m", Role: "user", Parts: []gen.ContentItem{{}}}}), "return", "ReturnMessages: the value cannot be encoded as JSON"},
	} {
		t.Run(c.reason, func(t *testing.T) {
			err := server.Admit(req, server.InterceptResult{Effects: []gen.Effect{server.Allow(), c.effect}})
			var ae *server.AdmissionError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, 1, ae.Index)
			require.Equal(t, c.family, ae.Effect)
			require.Equal(t, c.reason, ae.Reason)
			require.NotContains(t, err.Error(), "secret-value")
			_, err = gen.EncodeEffect(&c.effect)
			require.Error(t, err)
		})
	}
}
