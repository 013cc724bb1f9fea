package hooks

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/stretchr/testify/require"
)

// nativeMembers returns the JSON pointers of the native members in v,
// outside the members that are opaque application JSON.
func nativeMembers(v any, ptr string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for name, m := range x {
			switch name {
			case "native":
				*out = append(*out, ptr+"/native")
				continue
			case "extensions", "input", "output", "params":
				continue // opaque: the host projects it
			}
			nativeMembers(m, ptr+"/"+name, out)
		}
	case []any:
		for i, m := range x {
			nativeMembers(m, ptr+"/"+strconv.Itoa(i), out)
		}
	}
}

// TestWithoutNativeEveryFixture: withoutNative leaves no native member in
// any fixture event, nested ones included (an error.native is added to every
// fixture event that has an error object), keeps the view valid, and does
// not modify the canonical event.
func TestWithoutNativeEveryFixture(t *testing.T) {
	errors := 0
	for name, ev := range fixtureEvents(t) {
		data, err := gen.EncodeEvent(ev)
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(data, &doc))
		if e, ok := doc["error"].(map[string]any); ok {
			e["native"] = map[string]any{"trace": "CANARY"}
			errors++
			planted, err := json.Marshal(doc)
			require.NoError(t, err)
			ev, err = gen.ParseEvent(planted)
			require.NoError(t, err, name)
			data, err = gen.EncodeEvent(ev)
			require.NoError(t, err)
		}
		view := withoutNative(ev)
		vdata, err := gen.EncodeEvent(view)
		require.NoError(t, err)
		var vdoc any
		require.NoError(t, json.Unmarshal(vdata, &vdoc))
		var left []string
		nativeMembers(vdoc, "", &left)
		require.Empty(t, left, name)
		_, err = gen.ParseEvent(vdata)
		require.NoError(t, err, name)
		again, err := gen.EncodeEvent(ev)
		require.NoError(t, err)
		require.Equal(t, string(data), string(again), name)
	}
	require.Positive(t, errors, "some fixture events carry an error object")
}

// TestSentTextMatchesEncoder: sentText and sentLen are the text a receiver
// decodes from the event's encoding, for valid and invalid UTF-8 alike.
func TestSentTextMatchesEncoder(t *testing.T) {
	for _, s := range []string{"", "plain", "caf\u00e9 \u2028\u2029", "a\xffb", "\xff\xfe", "\xe2\x82", "ok\xed\xa0\x80", "\xf4\x90\x80\x80", "\"\\\n\x00"} {
		b, err := gen.ContentItem{TextBodyPart: &gen.TextBodyPart{ID: "p", Text: s}}.MarshalJSON()
		require.NoError(t, err)
		var got struct {
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(b, &got))
		require.Equal(t, got.Text, sentText(s), "%q", s)
		require.Equal(t, len(got.Text), sentLen(s), "%q", s)
	}
}
