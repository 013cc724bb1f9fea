package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// formValidSeeds adds dates and e-mail addresses to formatSeeds.
var formValidSeeds = append([]string{
	"2024-02-29", "2023-02-29", "2026-13-01", "2026-1-01", "0000-01-01", "2026-09-15 ", "2026-09-15T00:00:00Z",
	"a@example.com", "a.b+c@ex-ample.co", "a..b@example.com", ".a@example.com", "a.@example.com", "@example.com",
	"a@", "a@b@c", `"a b"@example.com`, `"a\"b"@example.com`, `"`, `"@example.com`, "a@[127.0.0.1]", "a@[127.0.0.01]",
	"a@[256.0.0.1]", "a@[IPv6:::1]", "a@[IPv6:fe80::1%eth0]", "a@[IPv6:1.2.3.4]", "a@[::1]", "a@-example.com",
	"a@example-.com", "a@exa_mple.com", "a@example.com.", "a@.example.com", "ä@example.com", "a@exämple.com",
	strings.Repeat("a", 65) + "@example.com", strings.Repeat("a", 64) + "@example.com",
	"a@" + strings.Repeat("b", 63) + ".com", "a@" + strings.Repeat("b", 64) + ".com",
	"a@" + strings.Repeat("b.", 126) + "c", "a@" + strings.Repeat("bcd.", 62) + "c",
}, formatSeeds...)

// TestFormatValidAgreesWithV6 holds FormatValid to v6's checkers.
func TestFormatValidAgreesWithV6(t *testing.T) {
	for _, name := range []string{"date", "date-time", "email", "uri"} {
		want := v6Format(t, name)
		for _, s := range formValidSeeds {
			got, known := FormatValid(name, s)
			require.True(t, known)
			require.Equal(t, want(s) == nil, got, "%s %q", name, s)
		}
	}
	valid, known := FormatValid("hostname", "-")
	require.False(t, known)
	require.True(t, valid)
}

func FuzzFormatValid(f *testing.F) {
	for _, s := range formValidSeeds {
		f.Add(s)
	}
	names := []string{"date", "date-time", "email", "uri"}
	checks := make([]func(any) error, len(names))
	for i, n := range names {
		checks[i] = v6Format(f, n)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, n := range names {
			if got, _ := FormatValid(n, s); got != (checks[i](s) == nil) {
				t.Fatalf("%s %q: v6 says %v", n, s, checks[i](s))
			}
		}
	})
}
