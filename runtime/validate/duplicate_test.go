package validate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// answer is an intercept response around the given effects.
func answer(effects string) string {
	return `{"jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"draft","effects":[` + effects + `]}}`
}

// interceptRequest is a tool.before request whose tool input is input.
func interceptRequest(input string) string {
	return `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"e1",` +
		`"source":"https://h.example/","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s"},` +
		`"tool":{"name":"w","kind":"file_write","input":` + input + `,"origin":"native"},"call":{"id":"c"},"path":"x"},` +
		`"capabilities":{"effects":["deny"]}}}`
}

// TestDuplicateMembersRejected checks that a repeated member name is an
// error at every depth, whichever occurrence the schema would accept, with
// the pointer of the repeat; including inside opaque JSON (tool input) and
// in documents the fast path does not take.
func TestDuplicateMembersRejected(t *testing.T) {
	v := newValidator(t)
	deep := strings.Repeat(`{"a":`, 600) + `{"x":1,"x":2}` + strings.Repeat("}", 600)
	for _, c := range []struct {
		name, ref, doc, pointer string
	}{
		{"effects repeated, deny then allow", "intercept-response.schema.json",
			`{"jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"no"}],"effects":[{"type":"allow"}]}}`,
			"/result/effects"},
		{"effect type repeated, deny then allow", "intercept-response.schema.json",
			answer(`{"type":"deny","reason":"no","type":"allow"}`), "/result/effects/0/type"},
		{"escaped repeat", "intercept-response.schema.json",
			answer(`{"type":"allow","\u0074ype":"allow"}`), "/result/effects/0/type"},
		{"envelope", "intercept-response.schema.json",
			`{"jsonrpc":"2.0","jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"draft","effects":[]}}`, "/jsonrpc"},
		{"tool input", "intercept-request.schema.json", interceptRequest(`{"path":"/safe","path":"/etc/passwd"}`),
			"/params/event/tool/input/path"},
		{"large tool input", "intercept-request.schema.json", interceptRequest(`{` + hostile.Members(5000) + `,"k4999":1}`),
			"/params/event/tool/input/k4999"},
		{"nested in tool input beyond the fast path's depth", "intercept-request.schema.json", interceptRequest(deep),
			"/params/event/tool/input" + strings.Repeat("/a", 600) + "/x"},
		{"lone surrogates decode alike", "intercept-request.schema.json", interceptRequest(`{"\ud800":1,"\udbff":2}`),
			"/params/event/tool/input/\uFFFD"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate(c.ref, []byte(c.doc))
			require.ErrorIs(t, err, validate.ErrDuplicateMember)
			require.ErrorIs(t, err, validate.ErrInvalid)
			var verr *validate.Error
			require.ErrorAs(t, err, &verr)
			require.Equal(t, validate.KeywordDuplicateMember, verr.Keyword)
			require.Equal(t, c.pointer, verr.Pointer)
			require.NotContains(t, err.Error(), "passwd")
		})
	}
	// The same documents without the repeat are valid.
	require.NoError(t, v.Validate("intercept-response.schema.json", []byte(answer(`{"type":"deny","reason":"no"}`))))
	require.NoError(t, v.Validate("intercept-request.schema.json", []byte(interceptRequest(`{`+hostile.Members(5000)+`}`))))
	require.NoError(t, v.Validate("intercept-request.schema.json",
		[]byte(interceptRequest(strings.Repeat(`{"a":`, 600)+`{"x":1,"y":2}`+strings.Repeat("}", 600)))))
	// A syntax error wins over a duplicate before it.
	err := v.Validate("intercept-request.schema.json", []byte(interceptRequest(`{"a":1,"a":2,}`)))
	require.ErrorIs(t, err, validate.ErrMalformedJSON)
}

// BenchmarkValidateMembers shows that validation is linear in the members
// of an object: the tool input of an intercept request with 4k and 40k
// members (ns/member should stay flat), beside a baseline of json.Valid on
// the same bytes.
func BenchmarkValidateMembers(b *testing.B) {
	v := newValidator(b)
	for _, n := range []int{4000, 40000} {
		doc := []byte(interceptRequest(`{` + hostile.Members(n) + `}`))
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := v.Validate("intercept-request.schema.json", doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
		b.Run(fmt.Sprintf("members=%d/json.Valid", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !jsonValid(doc) {
					b.Fatal("invalid")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
		})
	}
}

func jsonValid(doc []byte) bool { return json.Valid(doc) }

// TestCheck covers Check's bounds: large documents are decided by the fast
// path alone, large undecidable ones are ErrUnverified, small ones get
// Validate's errors, and an ended context stops it.
func TestCheck(t *testing.T) {
	v := newValidator(t)
	ctx := context.Background()
	const ref = "intercept-response.schema.json"
	modify := func(target, value string) []byte {
		return []byte(answer(`{"type":"modify","target":"` + target + `","operation":"replace","value":` + value + `}`))
	}
	large := hostile.Object(100000)

	require.NoError(t, v.Check(ctx, ref, modify("input", large)))
	require.NoError(t, v.Check(ctx, ref, modify("input", hostile.Object(10))))

	// A violation in a large document: found, not located.
	err := v.Check(ctx, ref, modify("tool.input", large))
	var verr *validate.Error
	require.ErrorAs(t, err, &verr)
	require.ErrorIs(t, err, validate.ErrInvalid)
	require.Equal(t, validate.KeywordSchema, verr.Keyword)
	require.Equal(t, "", verr.Pointer)
	// In a small one: Validate's error.
	small := modify("tool.input", hostile.Object(10))
	require.Equal(t, v.Validate(ref, small), v.Check(ctx, ref, small))

	// A lone surrogate (which encoding/json reads as U+FFFD) is decided
	// like any other string.
	require.NoError(t, v.Check(ctx, ref, modify("input", `{"s":"\ud800",`+large[1:])))
	// Undecidable: a number beyond the exact range where the schema reads
	// it, in a large document.
	for _, doc := range [][]byte{
		modify("content", `{"n":1e99999,`+large[1:]),
	} {
		err = v.Check(ctx, ref, doc)
		require.ErrorIs(t, err, validate.ErrUnverified)
		require.ErrorIs(t, err, validate.ErrInvalid)
	}
	// Malformed and repeated names are found at any size.
	require.ErrorIs(t, v.Check(ctx, ref, append(modify("input", large), ',')), validate.ErrMalformedJSON)
	err = v.Check(ctx, ref, modify("input", hostile.ObjectDup(100000)))
	require.ErrorIs(t, err, validate.ErrDuplicateMember)
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "/result/effects/0/value/k0", verr.Pointer)

	// An ended context stops Check, before and during the work.
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, v.Check(done, ref, modify("input", large)), context.Canceled)
	require.ErrorIs(t, v.Check(done, ref, small), context.Canceled)
}

// TestValid checks that Valid agrees with Validate, including where only
// v6 can decide.
func TestValid(t *testing.T) {
	v := newValidator(t)
	const ref = "intercept-response.schema.json"
	for _, doc := range []string{
		answer(`{"type":"allow"}`),
		answer(`{"type":"deny"}`),
		answer(`{"type":"allow","type":"allow"}`),
		answer(`{"type":"modify","target":"input","operation":"replace","value":{"s":"\ud800"}}`),
		answer(`{"type":"modify","target":"content","operation":"replace","value":{"n":1e99999}}`),
		answer(`{"type":"modify","target":"content","operation":"replace","value":{"n":1e2}}`),
		`{`,
	} {
		require.Equal(t, v.Validate(ref, []byte(doc)) == nil, v.Valid(ref, []byte(doc)), doc)
	}
	require.False(t, v.Valid("nope.schema.json", []byte(`{}`)))
}
