package server

import (
	"bytes"
	"errors"
	"fmt"
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
	errBoom := errors.New("boom")
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
		{"size one", "a", 1, 16, 1},
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
			{"half", iotest.HalfReader},
		} {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				got, err := readAtMost(r.wrap(strings.NewReader(c.in)), c.size, c.first)
				require.NoError(t, err)
				require.Equal(t, c.in[:c.wantLen], string(got))
				require.LessOrEqual(t, int64(cap(got)), max(min(c.size, c.first), 2*int64(len(got))), "the buffer follows the bytes received")
			})
		}
	}
	got, err := readAtMost(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errBoom)), 10, 4)
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, "ab", string(got))
}

// TestReadDeclared: a body of the declared length is read, a shorter or
// longer one is an error.
func TestReadDeclared(t *testing.T) {
	body := bytes.Repeat([]byte("y"), 3*firstReadBytes+7)
	n := int64(len(body))
	got, err := readDeclared(iotest.HalfReader(bytes.NewReader(body)), n)
	require.NoError(t, err)
	require.Equal(t, body, got)
	_, err = readDeclared(bytes.NewReader(body[:n-1]), n)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = readDeclared(bytes.NewReader(body), n-1)
	require.ErrorContains(t, err, "longer than Content-Length")
	got, err = readDeclared(bytes.NewReader(nil), 0)
	require.NoError(t, err)
	require.Empty(t, got)
}

// BenchmarkReadDeclared reads bodies of declared length with readDeclared
// next to the baseline it replaced: one buffer of the declared length plus
// one, filled with io.ReadFull. Below firstReadBytes both make the same one
// allocation; above it readDeclared doubles its buffer as bytes arrive.
func BenchmarkReadDeclared(b *testing.B) {
	for _, size := range []int{711, firstReadBytes - 1, 64 << 10, 1 << 20, 4<<20 - 1} {
		body := bytes.Repeat([]byte(" "), size)
		n := int64(size)
		rd := bytes.NewReader(body)
		b.Run(fmt.Sprintf("%d/growing", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(n)
			for b.Loop() {
				rd.Reset(body)
				if _, err := readDeclared(rd, n); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/exact", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(n)
			for b.Loop() {
				rd.Reset(body)
				buf := make([]byte, n+1)
				if got, err := io.ReadFull(rd, buf); int64(got) != n || !errors.Is(err, io.ErrUnexpectedEOF) {
					b.Fatal(got, err)
				}
			}
		})
	}
}

func TestPlusOne(t *testing.T) {
	require.Equal(t, int64(1), plusOne(0))
	require.Equal(t, int64(math.MaxInt64), plusOne(math.MaxInt64-1))
	require.Equal(t, int64(math.MaxInt64), plusOne(math.MaxInt64))
}
