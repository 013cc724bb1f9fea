package transport

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// shortReader returns its data and then io.ErrUnexpectedEOF, as net/http's
// body does for a response shorter than its Content-Length.
type shortReader struct{ r io.Reader }

func (s shortReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// TestReadBody: a declared length reads exactly that body; an unknown one,
// or one over the limit, reads up to limit+1 bytes; a body longer than
// declared is still bounded by the limit, and a short one is an error.
func TestReadBody(t *testing.T) {
	const limit = 16
	for _, c := range []struct {
		name    string
		body    string
		length  int64
		want    string
		wantErr bool
	}{
		{"declared", `{"a":1}`, 7, `{"a":1}`, false},
		{"empty", ``, 0, ``, false},
		{"unknown length", `{"a":1}`, -1, `{"a":1}`, false},
		{"declared at the limit", strings.Repeat("x", limit), limit, strings.Repeat("x", limit), false},
		{"declared over the limit", strings.Repeat("x", 40), 40, strings.Repeat("x", limit+1), false},
		{"unknown and too long", strings.Repeat("x", 40), -1, strings.Repeat("x", limit+1), false},
		{"longer than declared", strings.Repeat("x", 40), 4, strings.Repeat("x", limit+1), false},
		{"longer than declared, in bounds", `{"a":12}`, 4, `{"a":12}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readBody(bytes.NewReader([]byte(c.body)), c.length, limit)
			require.NoError(t, err)
			require.Equal(t, c.want, string(got))
		})
	}
	_, err := readBody(shortReader{strings.NewReader(`{"a"`)}, 7, limit)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a body shorter than declared")
}

// TestReadBodyLarge: bodies larger than the first buffer are read intact,
// whatever the reads' sizes, with and without a declared length; one that
// ends before its declared length is an error.
func TestReadBodyLarge(t *testing.T) {
	const limit = DefaultMaxResponseBytes
	body := bytes.Repeat([]byte("y"), 3*firstReadBytes+7)
	n := int64(len(body))
	for _, length := range []int64{n, -1} {
		got, err := readBody(iotest.HalfReader(bytes.NewReader(body)), length, limit)
		require.NoError(t, err)
		require.Equal(t, body, got)
	}
	_, err := readBody(bytes.NewReader(body[:100]), limit-1, limit)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a body shorter than declared")
}
