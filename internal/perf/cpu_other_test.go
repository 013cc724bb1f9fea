//go:build !linux

package perf_test

import "time"

// cpuTime is not measured outside Linux.
func cpuTime() (time.Duration, bool) { return 0, false }
