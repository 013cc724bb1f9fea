package server

import (
	"encoding/json"
	"fmt"
)

// encodeEffectValue encodes the value of an effect member that the protocol
// keeps as raw JSON (tool input, a supplied result). ctor names the
// constructor for the error; object requires a JSON object. The error never
// contains the value.
func encodeEffectValue(ctor string, v any, object bool) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("server: %s: value cannot be encoded as JSON: %w", ctor, err)
	}
	if object && (len(raw) == 0 || raw[0] != '{') {
		return nil, fmt.Errorf("server: %s: value must encode as a JSON object, not %s", ctor, jsonKind(raw))
	}
	return raw, nil
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
