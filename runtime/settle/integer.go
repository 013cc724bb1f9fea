package settle

import (
	"encoding/json"
	"math"
	"strconv"
)

// Integer returns the value of n, a JSON number that JSON Schema accepts
// as an integer: Draft 2020-12 counts integer-valued spellings such as 1.0
// and 1e3 as integers (execution-payloads.md), so allowances, counts and
// limits must be read the same way. ok is false for a fraction and for a
// decimal spelling from ±2^53 on, where float64 is no longer exact; digits
// alone are read exactly over the whole int64 range.
func Integer(n json.Number) (v int64, ok bool) {
	if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return 0, false
	}
	return int64(f), true
}
