package validate_test

import (
	"context"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/stretchr/testify/require"
)

// firstUseFixture is the request a per_event backend validates once per
// process.
const (
	firstUseFixture = "fixtures/draft/http/intercept-request.valid.json"
	firstUseRef     = "intercept-request.schema.json"
)

// BenchmarkFirstCheck measures a fresh Validator's first Check of the
// intercept request (what a per_event backend pays once per process, the
// generated program's nodes included), beside its baseline: the same Check
// on a Validator that has already checked it (steady state).
func BenchmarkFirstCheck(b *testing.B) {
	doc := readFixture(b, firstUseFixture)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := validate.New()
			if err != nil {
				b.Fatal(err)
			}
			if err := v.Check(ctx, firstUseRef, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("steady", func(b *testing.B) {
		v := newValidator(b)
		require.NoError(b, v.Check(ctx, firstUseRef, doc))
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Check(ctx, firstUseRef, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
