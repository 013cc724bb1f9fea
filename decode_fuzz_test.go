package agenthooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// decodeRoot is one root type under differential test: its UnmarshalJSON
// and Encode on the one hand, its Parse (canonical validation) as the
// filter on the other.
type decodeRoot struct {
	name string
	// decode runs UnmarshalJSON on a fresh value and encodes the result.
	decode func([]byte) ([]byte, error)
	parse  func([]byte) error
}

func newDecodeRoot[T any, P interface {
	*T
	UnmarshalJSON([]byte) error
}](name string, parse func([]byte) (*T, error), encode func(*T) ([]byte, error)) decodeRoot {
	return decodeRoot{
		name: name,
		decode: func(data []byte) ([]byte, error) {
			var v T
			if err := P(&v).UnmarshalJSON(data); err != nil {
				return nil, err
			}
			return encode(&v)
		},
		parse: func(data []byte) error {
			_, err := parse(data)
			return err
		},
	}
}

var decodeRoots = []decodeRoot{
	newDecodeRoot("InterceptRequest", gen.ParseInterceptRequest, gen.EncodeInterceptRequest),
	newDecodeRoot("InterceptResponse", gen.ParseInterceptResponse, gen.EncodeInterceptResponse),
	newDecodeRoot("Event", gen.ParseEvent, gen.EncodeEvent),
	newDecodeRoot("Registration", gen.ParseRegistration, gen.EncodeRegistration),
}

// anyJSON decodes JSON with exact numbers, or reports that it is not JSON.
func anyJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

// checkDecode is the differential property: UnmarshalJSON never panics and
// fails only with an error matching gen.ErrInvalid; on a document that its
// root's Parse accepts it succeeds, and the result encodes to JSON
// semantically equal to the document (numbers compared as exact text).
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	dup := hostile.HasDuplicate(data)
	for _, r := range decodeRoots {
		out, derr := r.decode(data)
		if derr != nil && !errors.Is(derr, gen.ErrInvalid) {
			t.Fatalf("%s: UnmarshalJSON or Encode error %v does not match gen.ErrInvalid", r.name, derr)
		}
		if dup {
			// A repeated member name anywhere: both refuse it (RFC 7493).
			if derr == nil || r.parse(data) == nil {
				t.Fatalf("%s: a document with a repeated member name was accepted", r.name)
			}
			continue
		}
		if r.parse(data) != nil {
			continue
		}
		if derr != nil {
			t.Fatalf("%s: Parse accepts the document, UnmarshalJSON+Encode fails: %v", r.name, derr)
		}
		want, err := anyJSON(data)
		if err != nil {
			t.Fatalf("%s: Parse accepts a document encoding/json rejects: %v", r.name, err)
		}
		got, err := anyJSON(out)
		if err != nil {
			t.Fatalf("%s: encoding is not JSON: %v\n%s", r.name, err, out)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: encoding differs from the document\nin:  %s\nout: %s", r.name, data, out)
		}
	}
}

// decodeSeeds returns every fixture message, the event of every intercept
// request fixture, and a few malformed inputs.
func decodeSeeds(tb testing.TB) [][]byte {
	cases, err := fixtures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, c := range cases {
		data, err := c.Read()
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range c.Messages(data) {
			seeds = append(seeds, m)
			var env struct {
				Params struct {
					Event json.RawMessage `json:"event"`
				} `json:"params"`
			}
			if json.Unmarshal(m, &env) == nil && len(env.Params.Event) > 0 {
				seeds = append(seeds, env.Params.Event)
			}
		}
	}
	for _, s := range []string{``, `{}`, `null`, `[`, `{"jsonrpc":"2.0","id":1`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`,
		`{"id":"\ud800","x":[1,{"y":"\u00e9"}]}`, `{"type":"tool.before","type":"x"}`, "{\"k\":\"\xff\"}"} {
		seeds = append(seeds, []byte(s))
	}
	return append(seeds, hostileMessages()...)
}

// TestDecodeFixtures runs the differential property on the seed corpus.
func TestDecodeFixtures(t *testing.T) {
	accepted := 0
	for _, s := range decodeSeeds(t) {
		checkDecode(t, s)
		for _, r := range decodeRoots {
			if r.parse(s) == nil {
				accepted++
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no seed is a valid document of the roots under test")
	}
	t.Logf("%d (seed, root) pairs valid and round-tripped", accepted)
}

func FuzzDecodeDifferential(f *testing.F) {
	for _, s := range decodeSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkDecode)
}
