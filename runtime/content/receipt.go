package content

import (
	"bytes"
	"encoding/json"
)

// uniqueMembers reports whether data, a JSON document the receipt schema
// accepted, is an object whose member names are all distinct. The
// generated parser keeps the last of duplicate members; a receipt that
// names ref, size or sha256 twice is ambiguous and is rejected. The schema
// allows only scalar members, so an earlier duplicate's value is the only
// place a nested value can hide; it is skipped in linear time.
func uniqueMembers(data []byte) bool {
	if !json.Valid(data) {
		return false // also what follows the object
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := make(map[string]struct{}, 3)
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return false
		}
		if _, dup := seen[k]; dup {
			return false
		}
		seen[k] = struct{}{}
		for depth := 0; ; {
			t, err := dec.Token()
			if err != nil {
				return false
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
	t, err := dec.Token()
	return err == nil && t == json.Delim('}')
}
