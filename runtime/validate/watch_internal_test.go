package validate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScannedDocDropsContext checks that a scanned Doc does not keep the
// context of its Scan: a caller that holds the Doc would keep the context's
// values alive for nothing.
func TestScannedDocDropsContext(t *testing.T) {
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, make([]byte, 1<<20)))
	defer cancel()
	d := Scan(ctx, []byte(`{"a":[1,2,3]}`))
	defer d.Release()
	require.True(t, d.Tokens())
	require.Nil(t, d.tp.w.ctx)
}
