package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

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

// TestReadPooled: readPooled reads what readDeclared reads, into buffers
// of bodyPool that later bodies, smaller and larger, reuse or replace.
func TestReadPooled(t *testing.T) {
	for _, size := range []int{0, 1, 700, 300, firstReadBytes - 1, 5} {
		body := bytes.Repeat([]byte{byte('a' + size%26)}, size)
		n := int64(size)
		got, bp, err := readPooled(iotest.HalfReader(bytes.NewReader(body)), n)
		require.NoError(t, err)
		require.Equal(t, body, got)
		require.NotNil(t, bp)
		require.Greater(t, cap(*bp), size)
		putBody(bp)
		if size > 0 {
			_, bp, err = readPooled(bytes.NewReader(body[:n-1]), n)
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			putBody(bp)
			_, bp, err = readPooled(bytes.NewReader(body), n-1)
			require.ErrorContains(t, err, "longer than Content-Length")
			putBody(bp)
		}
		_, bp, err = readPooled(iotest.ErrReader(errors.New("reset")), n)
		require.ErrorContains(t, err, "reset")
		putBody(bp)
	}
}
