package auth_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/stretchr/testify/require"
)

func TestParseWWWAuthenticate(t *testing.T) {
	p := func(n, v string) auth.Param { return auth.Param{Name: n, Value: v} }
	for _, tc := range []struct {
		name string
		in   []string
		want []auth.SchemeChallenge
	}{
		{name: "none", in: nil, want: nil},
		{name: "empty elements", in: []string{" , ,\t,"}, want: nil},
		{name: "bare scheme", in: []string{"Bearer"}, want: []auth.SchemeChallenge{{Scheme: "Bearer"}}},
		{name: "rfc 6750 invalid_token", in: []string{`Bearer realm="example", error="invalid_token", error_description="The access token expired"`},
			want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", "example"), p("error", "invalid_token"), p("error_description", "The access token expired")}}}},
		{name: "rfc 9110 two challenges", in: []string{`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`},
			want: []auth.SchemeChallenge{
				{Scheme: "Newauth", Params: []auth.Param{p("realm", "apps"), p("type", "1"), p("title", `Login to "apps"`)}},
				{Scheme: "Basic", Params: []auth.Param{p("realm", "simple")}},
			}},
		{name: "token68", in: []string{"Negotiate a87421000492aa874209af8bc028"}, want: []auth.SchemeChallenge{{Scheme: "Negotiate", Token68: "a87421000492aa874209af8bc028"}}},
		{name: "token68 with padding then a challenge", in: []string{"Basic dXNlcg==, Bearer"}, want: []auth.SchemeChallenge{{Scheme: "Basic", Token68: "dXNlcg=="}, {Scheme: "Bearer"}}},
		{name: "a name and equals is a token68", in: []string{"Bearer realm="}, want: []auth.SchemeChallenge{{Scheme: "Bearer", Token68: "realm="}}},
		{name: "token68 of one char", in: []string{"X a"}, want: []auth.SchemeChallenge{{Scheme: "X", Token68: "a"}}},
		{name: "bws around equals", in: []string{"Bearer realm = \"x\" ,scope\t=\t\"a b\""}, want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", "x"), p("scope", "a b")}}}},
		{name: "field lines are one list", in: []string{`Bearer realm="x"`, `error="invalid_token", Basic`},
			want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", "x"), p("error", "invalid_token")}}, {Scheme: "Basic"}}},
		{name: "escapes and obs-text", in: []string{"Bearer realm=\"a\\\\b\\\"c\\d\xe9\""}, want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", "a\\b\"cd\xe9")}}}},
		{name: "empty quoted value", in: []string{`Bearer realm=""`}, want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", "")}}}},
		{name: "escape first", in: []string{`Bearer realm="\"x"`}, want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("realm", `"x`)}}}},
		{name: "resource metadata", in: []string{`Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource", scope="files:read"`},
			want: []auth.SchemeChallenge{{Scheme: "Bearer", Params: []auth.Param{p("resource_metadata", "https://rs.example/.well-known/oauth-protected-resource"), p("scope", "files:read")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := auth.ParseWWWAuthenticate(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			// The canonical rendering reads back as the same challenges.
			var out []string
			for _, c := range got {
				out = append(out, c.String())
			}
			again, err := auth.ParseWWWAuthenticate(out)
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestParseWWWAuthenticateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
	}{
		{name: "param before any scheme", in: `realm="x"`},
		{name: "unterminated quote", in: `Bearer realm="x`},
		{name: "escape at the end", in: `Bearer realm="x\`},
		{name: "control in quote", in: "Bearer realm=\"a\x01b\""},
		{name: "escaped control", in: "Bearer realm=\"a\\\x01\""},
		{name: "newline in quote", in: "Bearer realm=\"a\nb\""},
		{name: "missing comma", in: `Bearer realm="x" error="y"`},
		{name: "empty value", in: `Bearer realm=, error="y"`},
		{name: "duplicate param", in: `Bearer realm="x", error="a", ERROR="b"`},
		{name: "param after token68", in: `Basic abc=, realm="x"`},
		{name: "token68 then junk", in: `Basic abc==x`},
		{name: "scheme then equals", in: `Bearer=x`},
		{name: "not a token", in: `@Bearer`},
		{name: "junk after scheme", in: `Bearer "x"`},
		{name: "param without equals", in: `Bearer realm "x"`},
		{name: "lone equals", in: `Bearer =`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := auth.ParseWWWAuthenticate([]string{tc.in})
			require.ErrorIs(t, err, auth.ErrChallengeSyntax)
			require.Nil(t, got)
			require.NotContains(t, err.Error(), tc.in, "errors carry an offset, not the input")
		})
	}
}

func TestParseWWWAuthenticateLimits(t *testing.T) {
	big := `Bearer realm="` + strings.Repeat("a", auth.MaxChallengeBytes) + `"`
	_, err := auth.ParseWWWAuthenticate([]string{big})
	require.ErrorIs(t, err, auth.ErrChallengeLimit)
	// Many field lines add up, separators included.
	lines := make([]string, auth.MaxChallengeBytes/2)
	for i := range lines {
		lines[i] = "a"
	}
	_, err = auth.ParseWWWAuthenticate(lines)
	require.ErrorIs(t, err, auth.ErrChallengeLimit)

	many := strings.Repeat("X, ", auth.MaxChallenges)
	got, err := auth.ParseWWWAuthenticate([]string{many})
	require.NoError(t, err)
	require.Len(t, got, auth.MaxChallenges)
	_, err = auth.ParseWWWAuthenticate([]string{many + "Y"})
	require.ErrorIs(t, err, auth.ErrChallengeLimit)

	var params []string
	for i := 0; i < auth.MaxChallengeParams; i++ {
		params = append(params, "p"+strings.Repeat("x", i)+"=1")
	}
	got, err = auth.ParseWWWAuthenticate([]string{"Bearer " + strings.Join(params, ", ")})
	require.NoError(t, err)
	require.Len(t, got[0].Params, auth.MaxChallengeParams)
	_, err = auth.ParseWWWAuthenticate([]string{"Bearer " + strings.Join(params, ", ") + ", q=1"})
	require.ErrorIs(t, err, auth.ErrChallengeLimit)

	// Just inside the byte bound: a long quoted value with escapes parses.
	val := strings.Repeat(`\"`, (auth.MaxChallengeBytes-20)/2)
	got, err = auth.ParseWWWAuthenticate([]string{`Bearer realm="` + val + `"`})
	require.NoError(t, err)
	require.Len(t, got[0].Params[0].Value, len(val)/2)
}

func TestBearerChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x"`)
	h.Add("Www-Authenticate", `bearer error="invalid_token"`)
	c, ok := auth.BearerChallenge(h)
	require.True(t, ok)
	v, ok := c.Param("ERROR")
	require.True(t, ok)
	require.Equal(t, "invalid_token", v)
	_, ok = c.Param("realm")
	require.False(t, ok)

	_, ok = auth.BearerChallenge(http.Header{"Www-Authenticate": {`Basic realm="x"`}})
	require.False(t, ok, "another scheme is no Bearer challenge")
	_, ok = auth.BearerChallenge(http.Header{"Www-Authenticate": {`Bearer realm="x`}})
	require.False(t, ok, "a malformed header has no challenge")
	_, ok = auth.BearerChallenge(http.Header{})
	require.False(t, ok)
}

// hostileChallenges are inputs built to hurt a parser: long runs of
// escapes, quotes, separators and parameters, at and past the bounds.
func hostileChallenges() []string {
	n := auth.MaxChallengeBytes
	return []string{
		`Bearer realm="` + strings.Repeat(`\\`, n/2-10) + `"`,
		`Bearer realm="` + strings.Repeat(`\`, n-16),
		`Bearer realm="` + strings.Repeat(`"`, n-16),
		strings.Repeat(",", n),
		strings.Repeat(", ", n/2),
		strings.Repeat("Bearer ", n/7),
		strings.Repeat("a=b, ", n/5),
		"Bearer " + strings.Repeat("a=b, ", n/5-2),
		"Bearer " + strings.Repeat("=", n-8),
		"Basic " + strings.Repeat("A", n-7) + "=",
		strings.Repeat(`Bearer realm="x", `, n/18),
		"Bearer realm=\"" + strings.Repeat("\xff", n-16) + "\"",
		strings.Repeat("\t", n),
		strings.Repeat("x", n+1),
	}
}

func FuzzParseWWWAuthenticate(f *testing.F) {
	for _, s := range []string{
		`Bearer realm="example", error="invalid_token"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		"Basic dXNlcg==, Bearer",
		`Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource"`,
		"", ",", `"`, `\`, "Bearer =", "a=b", "Bearer a=\"\\",
	} {
		f.Add(s, "")
	}
	for _, s := range hostileChallenges() {
		f.Add(s, "Bearer")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		in := []string{a, b}
		got, err := auth.ParseWWWAuthenticate(in)
		if err != nil {
			require.Nil(t, got)
			return
		}
		require.LessOrEqual(t, len(got), auth.MaxChallenges)
		var out []string
		size := 0
		for _, c := range got {
			require.NotEmpty(t, c.Scheme)
			require.LessOrEqual(t, len(c.Params), auth.MaxChallengeParams)
			require.False(t, c.Token68 != "" && len(c.Params) > 0)
			for _, p := range c.Params {
				size += len(p.Value)
			}
			out = append(out, c.String())
		}
		require.LessOrEqual(t, size, len(a)+len(b), "values are never longer than the input")
		again, err := auth.ParseWWWAuthenticate(out)
		if err == nil {
			require.Equal(t, got, again)
		} else {
			// Only the bound can refuse the canonical form (it quotes every value).
			require.ErrorIs(t, err, auth.ErrChallengeLimit)
		}
	})
}

func TestHostileChallengesTerminate(t *testing.T) {
	for _, s := range hostileChallenges() {
		_, _ = auth.ParseWWWAuthenticate([]string{s})
	}
}

var sink int

func BenchmarkParseWWWAuthenticate(b *testing.B) {
	inputs := map[string]string{
		"typical":        `Bearer realm="example", error="invalid_token", resource_metadata="https://rs.example/.well-known/oauth-protected-resource"`,
		"escapes-16KiB":  `Bearer realm="` + strings.Repeat(`\"`, auth.MaxChallengeBytes/2-10) + `"`,
		"elements-16KiB": strings.Repeat(", ", auth.MaxChallengeBytes/2),
	}
	for _, name := range []string{"typical", "escapes-16KiB", "elements-16KiB"} {
		in := []string{inputs[name]}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in[0])))
			for b.Loop() {
				_, _ = auth.ParseWWWAuthenticate(in)
			}
		})
		// Baseline: one byte loop over the same input that only counts
		// separators, the least a single pass can do.
		b.Run(name+"/baseline-scan", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in[0])))
			for b.Loop() {
				n := 0
				for i := 0; i < len(in[0]); i++ {
					if c := in[0][i]; c == ',' || c == '"' || c == '=' {
						n++
					}
				}
				sink = n
			}
		})
	}
}
