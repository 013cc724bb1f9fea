package boundedread

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestReadAtMost: the bytes read are exactly the input up to size, whatever
// the reads' sizes; the buffer starts at first and at most doubles what was
// received; EOF is not an error, the reader's own errors are.
func TestReadAtMost(t *testing.T) {
	for _, c := range []struct {
		name        string
		in          string
		size, first int64
		wantLen     int
	}{
		{"empty", "", 10, 4, 0},
		{"shorter than size", "abc", 10, 4, 3},
		{"exactly size", "abcdefghij", 10, 4, 10},
		{"longer than size", "abcdefghijklmnop", 10, 4, 10},
		{"first over size", "abc", 4, 1 << 20, 3},
		{"many doublings", strings.Repeat("x", 5000), 1 << 20, 1, 5000},
		{"doublings to size", strings.Repeat("x", 5000), 4097, 1, 4097},
		{"size without bound", "abc", math.MaxInt64, 4, 3},
	} {
		for _, r := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			{"one byte", iotest.OneByteReader},
			{"data with EOF", iotest.DataErrReader},
		} {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				got, err := ReadAtMost(r.wrap(strings.NewReader(c.in)), c.size, c.first)
				require.NoError(t, err)
				require.Equal(t, c.in[:c.wantLen], string(got))
				require.LessOrEqual(t, int64(cap(got)), max(min(c.size, c.first), 2*int64(len(got))), "the buffer follows the bytes received")
			})
		}
	}
	errBoom := errors.New("boom")
	got, err := ReadAtMost(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errBoom)), 10, 4)
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, "ab", string(got))
}

func TestPlusOne(t *testing.T) {
	require.Equal(t, int64(1), PlusOne(0))
	require.Equal(t, int64(math.MaxInt64), PlusOne(math.MaxInt64-1))
	require.Equal(t, int64(math.MaxInt64), PlusOne(math.MaxInt64))
}
