package server

import (
	"bytes"
	"encoding/json"

	"github.com/agenthooks/agenthooks-go/gen"
)

// Effect constructors return only the effect, so that they compose as
// values (Effects: []gen.Effect{Deny(r), MergeInput(v)}). A value that a
// constructor cannot encode, or that must be a JSON object and is not, is
// kept in the effect as a marker that is not JSON: the effect can never be
// encoded, and admission (Admit, and the dispatcher before it sends a
// response) rejects it with an *AdmissionError that names the effect and
// the constructor's reason.

// unencodable starts the marker. A NUL byte never starts JSON text, so no
// value a caller built can be mistaken for a marker or the reverse.
const unencodable = "\x00"

// encodeEffectValue encodes the value of an effect member that the protocol
// keeps as raw JSON (tool input, a supplied result). ctor names the
// constructor for the reason; object requires a JSON object. The reason
// never contains the value or the encoder's error text (which can quote
// it).
func encodeEffectValue(ctor string, v any, object bool) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(unencodable + ctor + ": the value cannot be encoded as JSON")
	}
	if object && (len(raw) == 0 || raw[0] != '{') {
		return json.RawMessage(unencodable + ctor + ": the value must encode as a JSON object, not " + jsonKind(raw))
	}
	return raw
}

// invalidValue returns the reason recorded by a constructor that could not
// encode e's value, if it did.
func invalidValue(e *gen.Effect) (string, bool) {
	var v json.RawMessage
	switch {
	case e.ModifyInput != nil:
		v = e.ModifyInput.Value
	case e.ReturnTool != nil:
		v = e.ReturnTool.Value
	}
	if r, ok := bytes.CutPrefix(v, []byte(unencodable)); ok {
		return string(r), true
	}
	return "", false
}

// jsonKind names the JSON type of an encoded value by its first byte.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
