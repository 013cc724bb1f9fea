package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/internal/hostile"
)

// fixtureSeeds returns every fixture file and every line of the stdio
// fixtures.
func fixtureSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var seeds [][]byte
	for _, pattern := range []string{"http/*.json", "stdio/*.jsonl"} {
		files, err := filepath.Glob(filepath.Join(fixtureDir, pattern))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			seeds = append(seeds, data)
			for line := range bytes.SplitSeq(data, []byte("\n")) {
				if len(line) > 0 {
					seeds = append(seeds, line)
				}
			}
		}
	}
	return seeds
}

var classifySeeds = []string{
	``, `{}`, `[]`, `null`, `"x"`, `{"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
	`{"jsonrpc":"2.0","id":"\u0061","method":"hooks\/observe"}`,
	`{"jsonrpc":"2.0","id":-0,"result":null}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":[]}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	`{"a":[[[[{"b":"\ud800"}]]]],"jsonrpc":"2.0","method":"m"}`,
}

func FuzzClassify(f *testing.F) {
	for _, s := range fixtureSeeds(f) {
		f.Add(s)
	}
	for _, s := range classifySeeds {
		f.Add([]byte(s))
	}
	for _, v := range hostile.Values() {
		f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":` + v + `}`))
		f.Add([]byte(`{"jsonrpc":"2.0","id":"a","result":{"effects":[` + v + `]}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Classify(data)

		// A repeated member name at any depth is an invalid request.
		if err == nil && hostile.HasDuplicate(data) {
			t.Fatalf("classified a message with a repeated member name")
		}

		// Classify agrees with encoding/json and utf8 on what is JSON.
		wellFormed := json.Valid(data) && utf8.Valid(data)
		if errors.Is(err, ErrParse) == wellFormed {
			t.Fatalf("parse error = %v, but json.Valid && utf8.Valid = %v", err, wellFormed)
		}
		if err != nil {
			if errors.Is(err, ErrParse) == errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v must be exactly one of parse error and invalid request", err)
			}
			if env.Kind != KindInvalid || env.Method != "" || env.Params != nil || env.Result != nil || env.Error != nil {
				t.Fatalf("invalid envelope has content: %+v", env)
			}
			if len(env.ID.raw) > len(data) {
				t.Fatalf("id longer than input")
			}
			return
		}

		if env.Kind < KindRequest || env.Kind > KindErrorResponse {
			t.Fatalf("bad kind %v", env.Kind)
		}
		total := len(env.ID.raw) + len(env.Params) + len(env.Result) + len(env.Error)
		if total > len(data) {
			t.Fatalf("members (%d bytes) larger than input (%d bytes)", total, len(data))
		}
		for _, raw := range [][]byte{env.Params, env.Result, env.Error} {
			if raw != nil && !json.Valid(raw) {
				t.Fatalf("raw member is not valid JSON: %q", raw)
			}
		}

		// Cross-check with encoding/json (no duplicates remain, so the map
		// is faithful).
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json rejects a classified envelope: %v", err)
		}
		if _, ok := m["id"]; ok == env.ID.IsZero() {
			t.Fatalf("id presence mismatch")
		}
		if raw, ok := m["method"]; ok {
			var method string
			if err := json.Unmarshal(raw, &method); err != nil || method != env.Method {
				t.Fatalf("method %q vs %q (%v)", env.Method, method, err)
			}
		}

		// Re-encode and re-classify.
		var out []byte
		switch env.Kind {
		case KindRequest:
			out = AppendRequest(nil, env.ID, env.Method, env.Params)
		case KindNotification:
			out = AppendNotification(nil, env.Method, env.Params)
		case KindResponse:
			out = AppendResponse(nil, env.ID, env.Result)
		case KindErrorResponse:
			e, err := env.DecodeError()
			if err != nil {
				t.Fatalf("DecodeError on a classified error response: %v", err)
			}
			if len(e.Data) > len(env.Error) {
				t.Fatalf("error data larger than error member")
			}
			out = AppendErrorResponse(nil, env.ID, e)
		}
		if bytes.IndexByte(out, '\n') >= 0 || bytes.IndexByte(out, '\r') >= 0 {
			t.Fatalf("encoded envelope has a raw line break: %q", out)
		}
		// Escaping can at most double the decoded strings, plus fixed
		// member overhead and generic error messages.
		if len(out) > 2*len(data)+128 {
			t.Fatalf("encoded envelope too large: %d bytes from %d", len(out), len(data))
		}
		again, err := Classify(out)
		if err != nil {
			t.Fatalf("re-encoded envelope does not classify: %v\n%s", err, out)
		}
		if again.Kind != env.Kind || again.ID != env.ID || again.Method != env.Method {
			t.Fatalf("round trip changed the envelope: %+v vs %+v", again, env)
		}
	})
}

// referenceFrames models FrameReader with bytes.Split: the expected frames
// and errors, ending in io.EOF.
func referenceFrames(data []byte, maxLine int) []step {
	var out []step
	parts := bytes.Split(data, []byte("\n"))
	for i, p := range parts {
		last := i == len(parts)-1
		switch {
		case last && len(p) == 0:
		case len(p) > maxLine:
			out = append(out, step{err: ErrFrameTooLarge})
		case last:
			out = append(out, step{err: ErrUnterminatedFrame})
		case len(p) == 0:
			out = append(out, step{err: ErrEmptyFrame})
		case p[len(p)-1] == '\r':
			out = append(out, step{err: ErrCRLF})
		default:
			out = append(out, step{frame: string(p)})
		}
	}
	return append(out, step{err: io.EOF})
}

func FuzzFrameReader(f *testing.F) {
	for _, s := range fixtureSeeds(f) {
		f.Add(s, uint16(0), uint8(0))
		f.Add(s, uint16(64), uint8(1))
	}
	f.Add([]byte(""), uint16(1), uint8(0))
	f.Add([]byte("\n\r\n{}\r\n\n"), uint16(2), uint8(2))
	f.Add([]byte("aaaaaaaa\nb"), uint16(3), uint8(3))
	for _, v := range hostile.Values() {
		f.Add([]byte(v+"\n"+v+"\n"), uint16(0), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxLine uint16, mode uint8) {
		limit := int(maxLine)
		if limit == 0 {
			limit = DefaultMaxFrameSize
		}
		var r io.Reader = bytes.NewReader(data)
		switch mode % 4 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		case 3:
			r = iotest.DataErrReader(r)
		}
		fr := NewFrameReader(r, int(maxLine))
		want := referenceFrames(data, limit)
		// Every step consumes at least one input byte, except the final
		// io.EOF, so the loop is bounded.
		got := readAll(fr, len(data)+2)
		if len(got) != len(want) {
			t.Fatalf("got %d steps, want %d: %v vs %v", len(got), len(want), got, want)
		}
		total := 0
		for i := range want {
			if want[i].err != nil {
				if !errors.Is(got[i].err, want[i].err) {
					t.Fatalf("step %d: got %v, want %v", i, got[i].err, want[i].err)
				}
				continue
			}
			if got[i].err != nil || got[i].frame != want[i].frame {
				t.Fatalf("step %d: got %q %v, want %q", i, got[i].frame, got[i].err, want[i].frame)
			}
			if len(got[i].frame) > limit {
				t.Fatalf("frame over the limit")
			}
			total += len(got[i].frame)
		}
		if total > len(data) {
			t.Fatalf("frames larger than input")
		}
	})
}

func FuzzIDUnmarshal(f *testing.F) {
	for _, s := range []string{`"a"`, `1`, `-0`, `null`, `""`, `1.5`, `"\u0061"`, ` 7 `, `true`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var id ID
		if err := id.UnmarshalJSON(data); err != nil {
			if !id.IsZero() {
				t.Fatalf("id changed on error")
			}
			return
		}
		_ = id.String()
		if id.IsString() == id.IsInteger() && !id.IsNull() {
			t.Fatalf("id %s is neither string, integer nor null", id)
		}
		if !id.Equal(id) {
			t.Fatalf("id %s not equal to itself", id)
		}
		out, err := id.MarshalJSON()
		if err != nil || !bytes.Equal(out, trimWS(data)) {
			t.Fatalf("round trip %q -> %q (%v)", data, out, err)
		}
	})
}

// FuzzMembers: Members agrees with one Member call per name on any input.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"protocolVersion":"draft","event":{"type":"tool.before"},"a":1,"\u0061":2}`))
	f.Add([]byte(`{"event":1,"event":{"type":"x"}}`))
	f.Add([]byte(`{"a":[1,2,{"b":"c"}],"b":null}`))
	for _, v := range hostile.Values() {
		f.Add([]byte(`{"protocolVersion":"draft","event":` + v + `,"a":` + v + `}`))
	}
	names := []string{"protocolVersion", "event", "a", "b"}
	f.Fuzz(func(t *testing.T, obj []byte) {
		values := make([][]byte, len(names))
		found := make([]bool, len(names))
		ok := Members(obj, names, values, found)
		for i, name := range names {
			want, wantOK := Member(obj, name)
			if wantOK != found[i] || string(want) != string(values[i]) {
				t.Fatalf("Members(%q)[%s] = %q %v, Member = %q %v", obj, name, values[i], found[i], want, wantOK)
			}
			if !ok && found[i] {
				t.Fatalf("Members(%q) failed but found %s", obj, name)
			}
		}
	})
}
