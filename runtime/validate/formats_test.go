package validate

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// v6Format returns v6's own checker for a format name.
func v6Format(t testing.TB, name string) func(any) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("f.json", map[string]any{"format": name}))
	sch, err := c.Compile("f.json")
	require.NoError(t, err)
	require.NotNil(t, sch.Format)
	return sch.Format.Validate
}

var formatSeeds = []string{
	"2026-09-15T12:00:00Z", "2026-09-15t12:00:00z", "2026-09-15T12:00:00.123456789Z", "2026-09-15T12:00:00+02:00",
	"2026-09-15T12:00:00-23:59", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
	"2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z", "2026-09-15T24:00:00Z", "2026-09-15T23:59:60Z",
	"2026-09-15T12:00:00.Z", "2026-09-15T12:00:00+2:00", "2026-09-15 12:00:00Z", "2026-09-15T12:00:00+24:00",
	"1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "+026-09-15T12:00:00Z", "2026-09-15T12:00:00",
	"urn:test:harness", "urn:", "https://example.com", "https://example.com/a/b", "https://", "https:///a",
	"mailto:a@example.com", "file:/a/b", "a+b-c.d:x", "1a:b", ":b", "a", "http://[::1]/", "http://a:80/",
	"http://a@b/", "https://example.com/a?b", "https://example.com/#x", "urn:a%20b", "urn:a b", "urn:ä",
	"urn:a\x00b", "http://ex_ample.com/", "http://example.com/a:b@c", "HTTP://EXAMPLE.COM/", "urn:(x)'*+,;=",
}

func TestFastFormatsAgreeWithV6(t *testing.T) {
	for _, name := range []string{"date-time", "uri"} {
		check := v6Format(t, name)
		for _, s := range formatSeeds {
			if fastFormat(name, []byte(s)) {
				require.NoError(t, check(s), "fast %s accepts %q, which v6 rejects", name, s)
			}
		}
	}
	// The common spellings are decided without v6.
	for _, c := range []struct{ name, s string }{
		{"date-time", "2026-09-15T12:00:00Z"}, {"date-time", "2026-09-15T12:00:00.5+01:00"},
		{"uri", "urn:test:harness"}, {"uri", "https://example.com/hooks"},
	} {
		require.True(t, fastFormat(c.name, []byte(c.s)), "%s %q", c.name, c.s)
	}
}

func FuzzFastFormats(f *testing.F) {
	for _, s := range formatSeeds {
		f.Add(s)
	}
	dateTime, uri := v6Format(f, "date-time"), v6Format(f, "uri")
	f.Fuzz(func(t *testing.T, s string) {
		if fastDateTime([]byte(s)) && dateTime(s) != nil {
			t.Fatalf("fast date-time accepts %q, which v6 rejects", s)
		}
		if fastURI([]byte(s)) && uri(s) != nil {
			t.Fatalf("fast uri accepts %q, which v6 rejects", s)
		}
	})
}

// TestExactFormatsAgreeWithV6 holds the run time's own format checks
// (formats_exact.go) to v6's on the seeds.
func TestExactFormatsAgreeWithV6(t *testing.T) {
	for _, name := range []string{"date-time", "uri"} {
		want, got := v6Format(t, name), formatCheck(name)
		for _, s := range formatSeeds {
			require.Equal(t, want(s) == nil, got(s) == nil, "%s %q", name, s)
		}
	}
	require.Nil(t, formatCheck("email"))
}

func FuzzExactFormats(f *testing.F) {
	for _, s := range formatSeeds {
		f.Add(s)
	}
	dateTime, uri := v6Format(f, "date-time"), v6Format(f, "uri")
	f.Fuzz(func(t *testing.T, s string) {
		if exactDateTime(s) != (dateTime(s) == nil) {
			t.Fatalf("date-time %q: v6 says %v", s, dateTime(s))
		}
		if exactURI(s) != (uri(s) == nil) {
			t.Fatalf("uri %q: v6 says %v", s, uri(s))
		}
	})
}
