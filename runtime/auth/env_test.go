package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/stretchr/testify/require"
)

const canary = "CANARY-auth-5d1e-SECRET"

func bearerEnv(name string) gen.Authentication {
	return gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &name}}
}

func bearerRef(ref string) gen.Authentication {
	return gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenRef: &ref}}
}

func oauth() gen.Authentication {
	return gen.Authentication{Oauth: &gen.AuthenticationOauth{Type: "oauth", Issuer: "https://issuer.example", Resource: "https://rs.example", ClientID: "c", Flow: gen.AuthenticationFlow("client_credentials")}}
}

func TestEnvironmentProvider(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"AHP_TOKEN": canary, "AHP_EMPTY": ""}
	p := auth.EnvironmentProvider{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}

	c, err := p.Credential(ctx, auth.Request{Binding: bearerEnv("AHP_TOKEN"), Purpose: auth.PurposeEvent})
	require.NoError(t, err)
	require.Equal(t, auth.Bearer(canary, "env:AHP_TOKEN"), c)

	env["AHP_TOKEN"] = "rotated"
	c, err = p.Credential(ctx, auth.Request{Binding: bearerEnv("AHP_TOKEN")})
	require.NoError(t, err)
	require.Equal(t, "rotated", c.Token, "read at delivery time, not cached")

	for _, name := range []string{"AHP_EMPTY", "AHP_UNSET"} {
		_, err = p.Credential(ctx, auth.Request{Binding: bearerEnv(name)})
		require.ErrorIs(t, err, auth.ErrMissingSecret, name)
	}

	c, err = p.Credential(ctx, auth.Request{})
	require.NoError(t, err)
	require.True(t, c.IsZero(), "no binding: anonymous")

	_, err = p.Credential(ctx, auth.Request{Binding: oauth()})
	require.ErrorIs(t, err, auth.ErrUnsupported)
	_, err = p.Credential(ctx, auth.Request{Binding: bearerRef("vault:x")})
	require.ErrorIs(t, err, auth.ErrUnsupported, "tokenRef needs a resolver")
	_, err = p.Credential(ctx, auth.Request{Binding: gen.Authentication{Bearer: &gen.AuthenticationBearer{}}})
	require.ErrorIs(t, err, auth.ErrUnsupported, "a bearer binding naming no secret")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Credential(cctx, auth.Request{Binding: bearerEnv("AHP_TOKEN")})
	require.ErrorIs(t, err, context.Canceled)

	require.ErrorIs(t, p.Challenge(ctx, auth.Request{}, auth.Challenge{Replay: true}), auth.ErrNoReplay)

	require.NoError(t, p.CheckBinding(bearerEnv("X")))
	require.NoError(t, p.CheckBinding(gen.Authentication{}))
	require.ErrorIs(t, p.CheckBinding(oauth()), auth.ErrUnsupported)
	require.ErrorIs(t, p.CheckBinding(bearerRef("r")), auth.ErrUnsupported)
}

func TestEnvironmentProviderTokenRef(t *testing.T) {
	type call struct {
		ref string
		ctx context.Context
	}
	var calls []call
	secrets := map[string]string{"vault:policy": canary}
	resolverErr := errors.New("vault said " + canary)
	p := auth.EnvironmentProvider{ResolveRef: func(ctx context.Context, ref string) (string, error) {
		calls = append(calls, call{ref, ctx})
		if ref == "vault:broken" {
			return "", resolverErr
		}
		return secrets[ref], nil
	}}
	require.NoError(t, p.CheckBinding(bearerRef("vault:policy")))
	require.Empty(t, calls, "checking a binding resolves nothing")

	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "delivery")
	c, err := p.Credential(ctx, auth.Request{Binding: bearerRef("vault:policy")})
	require.NoError(t, err)
	require.Equal(t, auth.Bearer(canary, "ref:vault:policy"), c)
	require.Len(t, calls, 1)
	require.Equal(t, "delivery", calls[0].ctx.Value(key{}), "the resolver gets the delivery's context")

	secrets["vault:policy"] = "rotated"
	c, err = p.Credential(ctx, auth.Request{Binding: bearerRef("vault:policy")})
	require.NoError(t, err)
	require.Equal(t, "rotated", c.Token, "resolved at every delivery")

	_, err = p.Credential(ctx, auth.Request{Binding: bearerRef("vault:none")})
	require.ErrorIs(t, err, auth.ErrMissingSecret)

	_, err = p.Credential(ctx, auth.Request{Binding: bearerRef("vault:broken")})
	require.ErrorIs(t, err, auth.ErrMissingSecret)
	require.ErrorIs(t, err, resolverErr, "the resolver's error stays inspectable")
	require.NotContains(t, err.Error(), canary, "but not in the text")

	// A resolver that returns because its context ended reports that end.
	cctx, cancel := context.WithCancel(context.Background())
	blocking := auth.EnvironmentProvider{ResolveRef: func(ctx context.Context, ref string) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	_, err = blocking.Credential(cctx, auth.Request{Binding: bearerRef("r")})
	require.ErrorIs(t, err, context.Canceled)
}

func TestCredentialNeverPrintsToken(t *testing.T) {
	c := auth.Bearer(canary, "attempt-7")
	var logs bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logs, nil))
	l.Info("x", "cred", c)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "cred", c)
	data, err := json.Marshal(c)
	require.NoError(t, err)
	all := fmt.Sprintf("%v %+v %#v %s %q %x %d", c, c, c, c, c, c, c) + c.String() + string(data) + logs.String() +
		fmt.Sprint(&c) + fmt.Sprintf("%v", struct{ C auth.Credential }{c})
	require.NotContains(t, all, canary)
	require.Contains(t, all, "attempt-7")
	require.Contains(t, auth.Credential{}.String(), "anonymous")
}

func TestValidToken(t *testing.T) {
	for tok, ok := range map[string]bool{"abc.DEF-123_~+/=": true, "": false, " a": false, "a ": false, "a\r\nX: y": false, "a\x7f": false, "a\tb": false, "a b": true} {
		require.Equal(t, ok, auth.ValidToken(tok), "%q", tok)
	}
}
