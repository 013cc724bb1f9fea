package jsonlex

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepeatStopInterrupts: the pass for repeated names of one large object
// looks at stop every StopEvery names, so an object of hundreds of
// thousands of members cannot hold a parse past its deadline once its
// members are scanned.
func TestRepeatStopInterrupts(t *testing.T) {
	const n = 300000
	names := make([][]byte, n)
	for i := range names {
		names[i] = []byte("k" + strconv.Itoa(i))
	}
	var s Set
	calls := 0
	name := func(i int) []byte { calls++; return names[i] }
	_, found, stopped := s.RepeatStop(n, name, func() bool { return calls > 5000 })
	require.False(t, found)
	require.True(t, stopped)
	require.Less(t, calls, 5000+2*StopEvery)

	calls = 0
	i, found, stopped := s.RepeatStop(3, func(i int) []byte { return [][]byte{[]byte("a"), []byte("b"), []byte("a")}[i] }, func() bool { return false })
	require.True(t, found)
	require.False(t, stopped)
	require.Equal(t, 2, i)
	_, found, stopped = s.RepeatStop(n, name, nil)
	require.False(t, found)
	require.False(t, stopped)
	require.Equal(t, n, calls)
}
