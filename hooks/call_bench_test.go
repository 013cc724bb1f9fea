package hooks_test

import (
	"context"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
)

// BenchmarkToolBeforeOptionsNoTransport is BenchmarkToolBeforeNoTransport
// with the options a host commonly gives (its own prior decision and the
// event id), made per call as a host makes them.
func BenchmarkToolBeforeOptionsNoTransport(b *testing.B) {
	h := noTransportHooks(b)
	ctx := context.Background()
	in := toolInput()
	b.ReportAllocs()
	for b.Loop() {
		res, err := h.ToolBefore(ctx, in, hooks.WithInitialState(hooks.InitialState(gen.PermissionAllow)), hooks.WithEventID("evt-bench"))
		if err != nil || res.Permission != gen.PermissionAllow || len(res.Diagnostics) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
