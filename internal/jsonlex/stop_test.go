package jsonlex

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScannerStop: once Stop is set, a scan ends within StopEvery values,
// wherever it is, reports Stopped, and a Reset makes the Scanner usable
// again; without Stop set the same document scans whole.
func TestScannerStop(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":[`)
	const n = 250000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i) + `}`)
	}
	b.WriteString(`]}`)
	doc := []byte(b.String())

	var stop atomic.Bool
	s := Scanner{Dups: true, Stop: &stop, Tokenize: true}
	end, ok := s.Value(doc, 0, 0)
	require.True(t, ok)
	require.Equal(t, len(doc), end)
	require.False(t, s.Stopped())

	s.Reset()
	stop.Store(true)
	end, ok = s.Value(doc, 0, 0)
	require.False(t, ok)
	require.True(t, s.Stopped())
	// At most StopEvery values (and their member names) were read.
	require.LessOrEqual(t, len(s.Tokens), 2*StopEvery)
	require.Less(t, end, len(doc)/100)

	s.Reset()
	require.False(t, s.Stopped())
	stop.Store(false)
	end, ok = s.Value(doc, 0, 0)
	require.True(t, ok)
	require.Equal(t, len(doc), end)
}
