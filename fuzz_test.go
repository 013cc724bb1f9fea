package agenthooks_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// seedFromFixtures adds every fixture message of the given schema file.
func seedFromFixtures(f *testing.F, schema string) {
	cases, err := fixtures.Load()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		if c.SchemaFile() != schema {
			continue
		}
		data, err := c.Read()
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range c.Messages(data) {
			f.Add(m)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1`))
	f.Add([]byte(`[`))
	for _, m := range hostileMessages() {
		f.Add(m)
	}
}

// hostileMessages wraps each hostile value (thousands of members or
// elements, deep nesting, repeated names) into an intercept request (as
// tool input and as an unknown member), an intercept response (as an
// input replacement) and a registration (as an unknown member).
func hostileMessages() [][]byte {
	var out [][]byte
	for _, v := range hostile.Values() {
		out = append(out,
			[]byte(`{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"e1",`+
				`"source":"https://h.example/","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s"},`+
				`"tool":{"name":"w","input":`+v+`,"origin":"native"},"call":{"id":"c"},"path":"x","x":`+v+`},`+
				`"capabilities":{"effects":["deny"]}}}`),
			[]byte(`{"jsonrpc":"2.0","id":"e1","result":{"protocolVersion":"draft","effects":[`+
				`{"type":"modify","target":"input","operation":"replace","value":`+v+`}]}}`),
			[]byte(`{"protocolVersion":"draft","hooks":[],"x":`+v+`}`))
	}
	return out
}

// fuzzRoot checks a root codec on arbitrary bytes: Parse never panics and
// fails only with *gen.ParseError; what it accepts re-encodes and re-parses;
// the raw decoder, called directly on malformed bytes, never panics.
func fuzzRoot(t *testing.T, schema string, data []byte, decode func([]byte) error) {
	codec, ok := gen.LookupRoot(schema)
	if !ok {
		t.Fatalf("no codec for %s", schema)
	}
	_ = decode(data) // must not panic, whatever the bytes
	v, err := codec.Parse(data)
	if err != nil {
		var pe *gen.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error of type %T, want *gen.ParseError: %v", err, err)
		}
		return
	}
	out, err := codec.Encode(v)
	if err != nil {
		t.Fatalf("encode of a parsed document: %v", err)
	}
	if _, err := codec.Parse(out); err != nil {
		t.Fatalf("re-parse of encoded document: %v", err)
	}
}

// agreeContext checks that parseCtx (a Parse...Context function, here
// with a context that can end but does not) accepts what parse accepts,
// exactly for documents of up to 16 KiB (where its validation is the exact
// validator's) and only what parse accepts above, and decodes it to the
// same value.
func agreeContext[T any](t *testing.T, data []byte, parse func([]byte) (*T, error),
	parseCtx func(context.Context, []byte) (*T, error), encode func(*T) ([]byte, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want, werr := parse(data)
	got, gerr := parseCtx(ctx, data)
	if gerr != nil {
		if pe := (*gen.ParseError)(nil); !errors.As(gerr, &pe) {
			t.Fatalf("context parse: error of type %T, want *gen.ParseError: %v", gerr, gerr)
		}
	}
	switch {
	case (werr == nil) != (gerr == nil) && len(data) <= 16<<10:
		t.Fatalf("Parse: %v; Parse...Context: %v", werr, gerr)
	case gerr == nil && werr != nil:
		t.Fatalf("Parse...Context accepts what Parse rejects: %v", werr)
	case gerr != nil || werr != nil:
		return
	}
	a, err := encode(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("decodings differ:\n%s\n%s", a, b)
	}
}

func FuzzParseInterceptRequest(f *testing.F) {
	seedFromFixtures(f, "intercept-request.schema.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoot(t, "intercept-request.schema.json", data, func(b []byte) error {
			var v gen.InterceptRequest
			return v.UnmarshalJSON(b)
		})
		agreeContext(t, data, gen.ParseInterceptRequest, gen.ParseInterceptRequestContext, gen.EncodeInterceptRequest)
	})
}

func FuzzParseRegistration(f *testing.F) {
	seedFromFixtures(f, "registration.schema.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoot(t, "registration.schema.json", data, func(b []byte) error {
			var v gen.Registration
			return v.UnmarshalJSON(b)
		})
	})
}

func FuzzParseInterceptResponse(f *testing.F) {
	seedFromFixtures(f, "intercept-response.schema.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoot(t, "intercept-response.schema.json", data, func(b []byte) error {
			var v gen.InterceptResponse
			return v.UnmarshalJSON(b)
		})
		agreeContext(t, data, gen.ParseInterceptResponse, gen.ParseInterceptResponseContext, gen.EncodeInterceptResponse)
	})
}
