package agenthooks_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// onePassRoot is one root under the one-pass differential test: its
// Parse<Root>Context, which validates and decodes the tokens of one scan,
// against the two passes it replaces (validate.Check, then UnmarshalJSON,
// which decodes the bytes).
type onePassRoot struct {
	name, schema string
	// parse is Parse<Root>Context; twoPass is Check then UnmarshalJSON;
	// at is gen.DecodeAt of the root token of a scanned document.
	parse, twoPass func([]byte) (any, error)
	// exact is Parse<Root>; exactTwoPass is Validate then UnmarshalJSON.
	exact, exactTwoPass func([]byte) (any, error)
	at                  func(*validate.Doc) (any, error)
}

func newOnePassRoot[T any, P interface {
	*T
	gen.Decodable
	UnmarshalJSON([]byte) error
}](name, schema string, parse func(context.Context, []byte) (*T, error), exact func([]byte) (*T, error)) onePassRoot {
	return onePassRoot{
		name: name, schema: schema,
		exact: func(data []byte) (any, error) {
			v, err := exact(data)
			if err != nil {
				return nil, err
			}
			return v, nil
		},
		exactTwoPass: func(data []byte) (any, error) {
			if err := validate.Default().Validate(schema, data); err != nil {
				return nil, err
			}
			v := P(new(T))
			if err := v.UnmarshalJSON(data); err != nil {
				return nil, err
			}
			return v, nil
		},
		parse: func(data []byte) (any, error) {
			v, err := parse(context.Background(), data)
			if err != nil {
				return nil, err
			}
			return v, nil
		},
		twoPass: func(data []byte) (any, error) {
			if err := validate.Default().Check(context.Background(), schema, data); err != nil {
				return nil, err
			}
			v := P(new(T))
			if err := v.UnmarshalJSON(data); err != nil {
				return nil, err
			}
			return v, nil
		},
		at: func(d *validate.Doc) (any, error) {
			v := P(new(T))
			if err := gen.DecodeAt(d, 0, v); err != nil {
				return nil, err
			}
			return v, nil
		},
	}
}

var onePassRoots = []onePassRoot{
	newOnePassRoot[gen.InterceptRequest]("InterceptRequest", "intercept-request.schema.json", gen.ParseInterceptRequestContext, gen.ParseInterceptRequest),
	newOnePassRoot[gen.InterceptResponse]("InterceptResponse", "intercept-response.schema.json", gen.ParseInterceptResponseContext, gen.ParseInterceptResponse),
	newOnePassRoot[gen.ObserveNotification]("ObserveNotification", "observe-notification.schema.json", gen.ParseObserveNotificationContext, gen.ParseObserveNotification),
	newOnePassRoot[gen.Registration]("Registration", "registration.schema.json", gen.ParseRegistrationContext, gen.ParseRegistration),
	newOnePassRoot[gen.Event]("Event", "event.schema.json", gen.ParseEventContext, gen.ParseEvent),
}

// checkOnePass is the differential property: the one-pass parse accepts
// exactly what validation then decoding of the bytes accept, with equal
// values, and fails with the same pointer and keyword; decoding the tokens
// of any document without repeated names gives what decoding its bytes
// gives.
func checkOnePass(t *testing.T, data []byte) {
	t.Helper()
	for _, r := range onePassRoots {
		agreeOnePass(t, r.name, data, r.parse, r.twoPass)
		agreeOnePass(t, r.name, data, r.exact, r.exactTwoPass)
		d := validate.Scan(context.Background(), data)
		if _, dup := d.Repeated(); d.Tokens() && !dup {
			v, err := r.at(d)
			u, uerr := decodeBytes(r, data)
			if (err == nil) != (uerr == nil) {
				t.Fatalf("%s: DecodeAt: %v; UnmarshalJSON: %v", r.name, err, uerr)
			}
			if err == nil && !reflect.DeepEqual(v, u) {
				t.Fatalf("%s: DecodeAt decoded %+v; UnmarshalJSON %+v", r.name, v, u)
			}
		}
		d.Release()
	}
}

// agreeOnePass compares a one-pass parse of root name with the two passes
// it replaces.
func agreeOnePass(t *testing.T, name string, data []byte, parse, twoPass func([]byte) (any, error)) {
	t.Helper()
	got, err := parse(data)
	want, werr := twoPass(data)
	if pe, ok := errors.AsType[*gen.ParseError](err); ok && pe.Keyword == "eventIdEquality" && werr == nil {
		// A check of Parse<Root> beyond the schema, which the two passes
		// do not make.
		err, got = nil, want
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: one pass: %v; two passes: %v", name, err, werr)
	}
	if err == nil {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: one pass decoded %+v; two passes %+v", name, got, want)
		}
		return
	}
	pe, ok := errors.AsType[*gen.ParseError](err)
	if !ok {
		t.Fatalf("%s: %v is not a *gen.ParseError", name, err)
	}
	if ve, ok := errors.AsType[*validate.Error](werr); ok && (pe.Pointer != ve.Pointer || pe.Keyword != ve.Keyword) {
		t.Fatalf("%s: one pass fails at %q (%s); validation at %q (%s)", name, pe.Pointer, pe.Keyword, ve.Pointer, ve.Keyword)
	}
}

// decodeBytes is UnmarshalJSON of data into r's root type.
func decodeBytes(r onePassRoot, data []byte) (any, error) {
	for _, root := range decodeOnly {
		if root.name == r.name {
			return root.decode(data)
		}
	}
	return nil, errors.New("no root")
}

type decodeOnlyRoot struct {
	name   string
	decode func([]byte) (any, error)
}

func newDecodeOnly[T any, P interface {
	*T
	UnmarshalJSON([]byte) error
}](name string) decodeOnlyRoot {
	return decodeOnlyRoot{name: name, decode: func(data []byte) (any, error) {
		v := P(new(T))
		if err := v.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return v, nil
	}}
}

var decodeOnly = []decodeOnlyRoot{
	newDecodeOnly[gen.InterceptRequest]("InterceptRequest"),
	newDecodeOnly[gen.InterceptResponse]("InterceptResponse"),
	newDecodeOnly[gen.ObserveNotification]("ObserveNotification"),
	newDecodeOnly[gen.Registration]("Registration"),
	newDecodeOnly[gen.Event]("Event"),
}

// onePassSeeds are the decode seeds plus large and deep valid messages.
func onePassSeeds(tb testing.TB) [][]byte {
	seeds := decodeSeeds(tb)
	req := func(input string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"e1",` +
			`"source":"https://h.example/","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s"},` +
			`"tool":{"name":"w","input":` + input + `,"origin":"native"},"call":{"id":"c"},"path":"x"},` +
			`"capabilities":{"effects":["deny"]},"state":{"permission":"none","candidate":null}}}`)
	}
	for _, in := range []string{
		hostile.Object(5000),
		`{"a":` + hostile.Array(3000) + `}`,
		`{"deep":` + hostile.Deep(900, `"x"`) + `}`,
		`{"deep":` + hostile.DeepArrays(2000, `1`) + `}`,
		`{"s":"` + strings.Repeat(`caf\u00e9 \"q\" \\ `, 4000) + `","\u0041":1}`,
	} {
		seeds = append(seeds, req(in))
	}
	return seeds
}

// TestOnePassAgreesWithTwoPasses runs the one-pass differential property
// on the seed corpus.
func TestOnePassAgreesWithTwoPasses(t *testing.T) {
	for _, s := range onePassSeeds(t) {
		checkOnePass(t, s)
	}
}

func FuzzOnePass(f *testing.F) {
	for _, s := range onePassSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkOnePass)
}
