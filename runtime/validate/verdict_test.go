package validate

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// requireVerdictOnlyAgrees checks that CheckDoc of doc gives the same
// verdict with VerdictOnly as without, and that the only difference is a
// violation reported without its location.
func requireVerdictOnlyAgrees(t *testing.T, v *Validator, what, ref string, doc []byte) (valid bool) {
	t.Helper()
	ctx := context.Background()
	full := Scan(ctx, doc)
	defer full.Release()
	want := v.CheckDoc(ctx, ref, full)
	terse := Scan(ctx, doc)
	defer terse.Release()
	terse.VerdictOnly()
	got := v.CheckDoc(ctx, ref, terse)
	if want == nil {
		require.NoError(t, got, "%s: VerdictOnly rejects a valid document", what)
		return true
	}
	require.Error(t, got, "%s: VerdictOnly accepts an invalid document (%v)", what, want)
	var we, ge *Error
	require.True(t, errors.As(want, &we), "%s: %v", what, want)
	require.True(t, errors.As(got, &ge), "%s: %v", what, got)
	if !reflect.DeepEqual(ge, we) {
		require.Equal(t, Error{Schema: we.Schema, Keyword: KeywordSchema}, *ge, "%s: VerdictOnly error (full: %v)", what, want)
	}
	return false
}

// TestVerdictOnlyAgrees: on every fixture message and on every mutation of
// the valid ones, CheckDoc with VerdictOnly accepts exactly what CheckDoc
// accepts, and rejects the rest with CheckDoc's error or, for a violation
// the program found, keyword "schema" without a pointer; so do malformed
// documents, repeated member names and documents too deep for the tape.
func TestVerdictOnlyAgrees(t *testing.T) {
	v := Default()
	var valid, invalid int
	count := func(ok bool) {
		if ok {
			valid++
		} else {
			invalid++
		}
	}
	for _, m := range fixtureMessages(t) {
		count(requireVerdictOnlyAgrees(t, v, m.id, m.ref, m.raw))
		if !m.valid {
			continue
		}
		value, derr := decode(m.raw)
		if derr != nil {
			continue
		}
		eachMutation(value, func(p []string, mu mutation, mv any) {
			raw, err := json.Marshal(mv)
			require.NoError(t, err)
			count(requireVerdictOnlyAgrees(t, v, m.id+" "+pointer(p)+" "+mu.name, m.ref, raw))
		})
	}
	const ref = "intercept-request.schema.json"
	for name, doc := range map[string]string{
		"malformed":  `{"jsonrpc":"2.0",`,
		"repeated":   `{"jsonrpc":"2.0","jsonrpc":"2.0"}`,
		"deep":       hostile.Deep(20000, `1`),
		"not object": `[1,2]`,
		"empty":      ``,
	} {
		count(requireVerdictOnlyAgrees(t, v, name, ref, []byte(doc)))
	}
	require.Positive(t, valid)
	require.Greater(t, invalid, 1000)
	t.Logf("%d valid, %d invalid documents", valid, invalid)
}

// TestVerdictOnlyReleased: Release resets VerdictOnly, so that a pooled
// Doc scanned again locates violations.
func TestVerdictOnlyReleased(t *testing.T) {
	v := Default()
	const ref = "intercept-request.schema.json"
	doc := []byte(`{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":{}}`)
	for range 3 {
		d := Scan(context.Background(), doc)
		d.VerdictOnly()
		var e *Error
		require.ErrorAs(t, v.CheckDoc(context.Background(), ref, d), &e)
		require.Equal(t, KeywordSchema, e.Keyword)
		d.Release()
	}
	for range 3 {
		d := Scan(context.Background(), doc)
		var e *Error
		require.ErrorAs(t, v.CheckDoc(context.Background(), ref, d), &e)
		require.NotEqual(t, KeywordSchema, e.Keyword)
		d.Release()
	}
}
