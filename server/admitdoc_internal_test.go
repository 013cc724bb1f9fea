package server

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// TestAdmitValidatesLikeValidate: admit validates the encoded response
// against both canonical schemas from one scan, with the verdict and the
// error (keyword, pointer, member names) that Validate gives for the same
// bytes, and the offending effect found from that pointer.
func TestAdmitValidatesLikeValidate(t *testing.T) {
	info, ok := lookupEvent(gen.EventToolBefore)
	require.True(t, ok)
	grant := &gen.Capabilities{Effects: []gen.EffectFamily{gen.EffectFamilyDeny, gen.EffectFamilyAllow}}
	code := func(s string) *string { return &s }
	effect := func(s string) gen.Effect {
		var e gen.Effect
		require.NoError(t, e.UnmarshalJSON([]byte(s)))
		return e
	}
	invalid := 0
	for _, res := range []InterceptResult{
		{},
		{Effects: []gen.Effect{Deny("no")}},
		{Extensions: json.RawMessage(`{"not-reverse-dns":1}`)},
		{Extensions: json.RawMessage(`{"com.example.x":{"a":1}}`)},
		{Effects: []gen.Effect{Deny("no"), {Deny: &gen.DenyEffect{Reason: "no", Code: code("not a code")}}}},
		{Effects: []gen.Effect{{Allow: &gen.AllowEffect{}}, {Deny: &gen.DenyEffect{Reason: ""}}}},
		{Effects: []gen.Effect{Deny("no"), {Allow: &gen.AllowEffect{Type: "deny"}}}},
		{Effects: []gen.Effect{effect(`{"type":"allow"}`), effect(`{"type":"message","text":""}`)}},
		{Effects: []gen.Effect{{Deny: &gen.DenyEffect{Reason: "no", Extensions: json.RawMessage(`{"a":1}`)}}}},
	} {
		_, got := admit(jsonrpc.StringID("evt_1"), info, admission{granted: grant, event: nil, rq: nil}, res)
		// What Validate says of the same bytes, schema by schema.
		effects := res.Effects
		if effects == nil {
			effects = []gen.Effect{}
		}
		body, err := gen.EncodeInterceptResponse(&gen.InterceptResponse{JSONRPC: jsonrpc.Version, ID: gen.JSONRPCResponseID(`"evt_1"`),
			Result: gen.InterceptResponseResult{ProtocolVersion: gen.ProtocolVersion, Effects: effects, Extensions: res.Extensions}})
		require.NoError(t, err)
		var want error
		for _, ref := range []string{"intercept-response.schema.json", info.ResponseSchema} {
			if want = validate.Default().Validate(ref, body); want != nil {
				break
			}
		}
		if want == nil {
			if got != nil {
				_, settled := errors.AsType[*AdmissionError](got)
				require.True(t, settled, "%v", got)
				require.NotContains(t, got.Error(), "is not valid against", "%s", body)
			}
			continue
		}
		invalid++
		ae, isAdmission := errors.AsType[*AdmissionError](got)
		require.True(t, isAdmission, "%s: %v", body, got)
		require.Equal(t, want, ae.Err, "%s", body)
		if verr, ok := errors.AsType[*validate.Error](want); ok {
			if i, ok := effectIndex(verr.Pointer); ok && i < len(effects) {
				require.Equal(t, i, ae.Index)
			}
		}
	}
	require.GreaterOrEqual(t, invalid, 4, "answers invalid against the schemas")
}
