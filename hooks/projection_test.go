package hooks_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
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
