package auth

import (
	"context"
	"os"

	"github.com/agenthooks/agenthooks-go/gen"
)

// EnvironmentProvider is the default provider: it resolves bearer bindings
// at delivery time, tokenEnv from the environment and tokenRef through
// ResolveRef. It supports nothing else: an OAuth binding, or a tokenRef
// without ResolveRef, fails with ErrUnsupported (and is rejected when the
// harness is built, through CheckBinding); a variable that is unset or
// empty, or a reference that resolves to nothing, fails with
// ErrMissingSecret. Neither ever falls back to anonymous delivery. For an
// endpoint without a binding it returns no credential, and it never asks
// for a replay after a challenge: a static secret does not get better by
// asking again, and discovery needs a provider of the host's own.
//
// The zero value is usable. It holds no state and is safe for concurrent
// use if ResolveRef and LookupEnv are.
type EnvironmentProvider struct {
	// LookupEnv reads an environment variable; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// ResolveRef resolves a tokenRef (a name of a deployment-managed
	// secret) to its token; nil means tokenRef bindings are unsupported. It
	// is called at every delivery, with the delivery's context. Its error
	// text is never reported.
	ResolveRef func(ctx context.Context, ref string) (string, error)
}

// Credential implements Provider.
func (p EnvironmentProvider) Credential(ctx context.Context, req Request) (Credential, error) {
	if err := ctx.Err(); err != nil {
		return Credential{}, err
	}
	if !req.HasBinding() {
		return Credential{}, nil
	}
	if err := p.CheckBinding(req.Binding); err != nil {
		return Credential{}, err
	}
	b := req.Binding.Bearer
	if b.TokenEnv != nil {
		lookup := p.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(*b.TokenEnv)
		if !ok || v == "" {
			return Credential{}, ErrMissingSecret
		}
		return Credential{Token: v, Identity: "env:" + *b.TokenEnv}, nil
	}
	v, err := p.ResolveRef(ctx, *b.TokenRef)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return Credential{}, cerr
		}
		return Credential{}, &resolveError{cause: err}
	}
	if v == "" {
		return Credential{}, ErrMissingSecret
	}
	return Credential{Token: v, Identity: "ref:" + *b.TokenRef}, nil
}

// Challenge implements Provider: it never asks for a replay.
func (EnvironmentProvider) Challenge(context.Context, Request, Challenge) error {
	return ErrNoReplay
}

// CheckBinding implements BindingChecker: a bearer binding with exactly
// one of tokenEnv and tokenRef, the latter only with ResolveRef, or no
// binding at all.
func (p EnvironmentProvider) CheckBinding(b gen.Authentication) error {
	switch {
	case b.Oauth != nil:
		return ErrUnsupported
	case b.Bearer == nil:
		return nil
	case (b.Bearer.TokenEnv == nil) == (b.Bearer.TokenRef == nil):
		return ErrUnsupported // the schema's oneOf; a hand-built binding may break it
	case b.Bearer.TokenRef != nil && p.ResolveRef == nil:
		return ErrUnsupported
	}
	return nil
}

// resolveError is a failure of ResolveRef: it matches ErrMissingSecret and
// wraps the resolver's error for errors.Is and errors.As, but its text is
// fixed, never the resolver's.
type resolveError struct{ cause error }

func (e *resolveError) Error() string {
	return ErrMissingSecret.Error() + " (tokenRef resolver failed)"
}

func (e *resolveError) Unwrap() []error { return []error{ErrMissingSecret, e.cause} }

var _ interface {
	Provider
	BindingChecker
} = EnvironmentProvider{}
