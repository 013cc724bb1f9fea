package interop

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// strictKeys are the result keys whose presence is itself an assertion
// (interop README, "Verifier contract"): an actual result carrying one of
// them fails a successful-case comparison unless expected asserts it, even
// when its value is null or empty.
var strictKeys = []string{"result", "flow", "injections", "continuationInstructions", "continuationRemaining", "rejected"}

// ComparePartial compares actual with the partial expected object under the
// README's verifier rules: every expected key must be present and deeply
// equal (arrays exact in length and order, objects exact, JSON null is an
// assertion, booleans are not numbers, numbers compare by value); keys
// missing from expected impose nothing, except strictKeys.
func ComparePartial(expected, actual []byte) error {
	var exp, act map[string]any
	if err := DecodeJSON(expected, &exp); err != nil || exp == nil {
		return fmt.Errorf("expected is not a JSON object")
	}
	if err := DecodeJSON(actual, &act); err != nil || act == nil {
		return fmt.Errorf("actual is not a JSON object")
	}
	keys := make([]string, 0, len(exp))
	for k := range exp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		av, ok := act[k]
		if !ok {
			return fmt.Errorf("key %q: missing from actual", k)
		}
		if !JSONEqual(exp[k], av) {
			return fmt.Errorf("key %q: actual differs from expected", k)
		}
	}
	for _, k := range strictKeys {
		if _, inAct := act[k]; inAct {
			if _, inExp := exp[k]; !inExp {
				return fmt.Errorf("key %q: present in actual but not asserted", k)
			}
		}
	}
	return nil
}

// CompareExact compares actual with expected as whole JSON values under the
// lifecycle and catalogue verifier rule ("actual must equal expected
// exactly"): objects have the same member names, arrays the same length
// and order, numbers compare by value, null and booleans are themselves.
// The error names the JSON pointer of the first difference found, never a
// value.
func CompareExact(expected, actual []byte) error {
	var exp, act any
	if err := DecodeJSON(expected, &exp); err != nil {
		return fmt.Errorf("expected is not JSON")
	}
	if err := DecodeJSON(actual, &act); err != nil {
		return fmt.Errorf("actual is not JSON")
	}
	if ptr, ok := firstDifference(exp, act, ""); !ok {
		if ptr == "" {
			return fmt.Errorf("actual differs from expected at the root")
		}
		return fmt.Errorf("actual differs from expected at %s", ptr)
	}
	return nil
}

// firstDifference walks a and b together and returns the JSON pointer of
// the first difference (ok false), in sorted member order.
func firstDifference(a, b any, at string) (string, bool) {
	switch av := a.(type) {
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return at, false
		}
		for i := range av {
			if p, ok := firstDifference(av[i], bv[i], at+"/"+strconv.Itoa(i)); !ok {
				return p, false
			}
		}
		return "", true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return at, false
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, dup := av[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			x, inA := av[k]
			y, inB := bv[k]
			p := at + "/" + escapePointer(k)
			if !inA || !inB {
				return p, false
			}
			if p, ok := firstDifference(x, y, p); !ok {
				return p, false
			}
		}
		return "", true
	}
	if !JSONEqual(a, b) {
		return at, false
	}
	return "", true
}

// escapePointer escapes a member name as a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// JSONEqual reports deep equality of two decoded JSON values (numbers as
// json.Number, compared by exact rational value).
func JSONEqual(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		ar, ok1 := new(big.Rat).SetString(av.String())
		br, ok2 := new(big.Rat).SetString(bv.String())
		return ok1 && ok2 && ar.Cmp(br) == 0
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !JSONEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok || !JSONEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}
