package validate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// TestDocMemberWithoutTokens: Member of a document without tokens, or of
// a token that does not exist, finds nothing instead of panicking.
func TestDocMemberWithoutTokens(t *testing.T) {
	for _, src := range []string{``, `x`, `{"a":1} x`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`} {
		d := validate.Scan(context.Background(), []byte(src))
		require.False(t, d.Tokens(), src)
		require.NotPanics(t, func() {
			_, ok := d.Member(0, "a")
			require.False(t, ok, src)
		}, src)
		d.Release()
	}
	d := validate.Scan(context.Background(), []byte(`{"a":1}`))
	defer d.Release()
	require.NotPanics(t, func() {
		for _, i := range []int{-1, 3, 100} {
			_, ok := d.Member(i, "a")
			require.False(t, ok)
		}
	})
	at, ok := d.Member(0, "a")
	require.True(t, ok)
	require.Equal(t, "1", string(d.Raw(at)))
}
