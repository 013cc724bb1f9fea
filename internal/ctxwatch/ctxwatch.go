// Package ctxwatch arranges for a function to run when a context ends, as
// context.AfterFunc does, at less cost for a context that arranges it
// itself.
package ctxwatch

import "context"

// afterFuncer is the method context.AfterFunc looks for on a context.
type afterFuncer interface {
	AfterFunc(func()) func() bool
}

// AfterFunc is context.AfterFunc(ctx, f). A ctx with an AfterFunc method
// of its own (the one context.AfterFunc would use to schedule the call)
// gets f directly, without the context and stop function context.AfterFunc
// wraps f in, whose registration with ctx costs three allocations more
// (the harness's delivery contexts are such contexts). f may then run in
// the goroutine that ends ctx: it must return at once and take no lock
// that whoever ends ctx may hold.
func AfterFunc(ctx context.Context, f func()) (stop func() bool) {
	if a, ok := ctx.(afterFuncer); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}
