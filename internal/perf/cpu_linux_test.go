package perf_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time this process and its live
// children (the stdio backend) have used so far, read from getrusage and
// /proc; ok is false if it cannot be read.
func cpuTime() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	d = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, pid := range strings.Fields(string(b)) {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				continue
			}
			// Fields after the parenthesised command: state is the 3rd
			// field of the line, utime and stime the 14th and 15th.
			i := strings.LastIndexByte(string(stat), ')')
			f := strings.Fields(string(stat[i+1:]))
			if len(f) < 13 {
				continue
			}
			ut, err1 := strconv.ParseInt(f[11], 10, 64)
			st, err2 := strconv.ParseInt(f[12], 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			d += time.Duration(ut+st) * (time.Second / clockTicks)
		}
	}
	return d, true
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on every
// Linux architecture Go supports).
const clockTicks = 100
