package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
)

// strictKeys are the result keys whose presence is itself an assertion
// (interop README, "Verifier contract"): an actual result carrying one of
// them fails a successful-case comparison unless expected asserts it, even
// when its value is null or empty.
var strictKeys = []string{"result", "flow", "injections", "continuationInstructions", "continuationRemaining", "rejected"}

// comparePartial compares actual with the partial expected object under the
// README's verifier rules: every expected key must be present and deeply
// equal (arrays exact in length and order, objects exact, JSON null is an
// assertion, booleans are not numbers, numbers compare by value); keys
// missing from expected impose nothing, except strictKeys.
func comparePartial(expected, actual []byte) error {
	var exp, act map[string]any
	if err := decodeJSON(expected, &exp); err != nil || exp == nil {
		return fmt.Errorf("expected is not a JSON object")
	}
	if err := decodeJSON(actual, &act); err != nil || act == nil {
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
		if !jsonEqual(exp[k], av) {
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

// jsonEqual reports deep equality of two decoded JSON values (numbers as
// json.Number, compared by exact rational value).
func jsonEqual(a, b any) bool {
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
			if !jsonEqual(av[i], bv[i]) {
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
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}
