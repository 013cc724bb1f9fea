// Package boundedread reads a peer's body into memory that follows the
// bytes actually received, never a length the peer declared. The harness's
// HTTP transport and the backend's HTTP handler share it.
package boundedread

import (
	"io"
	"math"
)

// ReadAtMost reads from rd until EOF or size bytes, whichever comes first.
// The buffer starts at no more than first bytes and doubles when full,
// never beyond size, so it is at most twice the bytes received, or first:
// memory follows what the peer sent, not what it declared. The error is nil
// at EOF and at size, rd's own otherwise.
func ReadAtMost(rd io.Reader, size, first int64) ([]byte, error) {
	// The first buffer is size halved (rounding up) until it is at most
	// first, so that the doublings end on size, not one byte short of it.
	start := size
	for start > first {
		start -= start / 2
	}
	buf := make([]byte, start)
	n := 0
	for {
		if n == len(buf) {
			if int64(n) == size {
				return buf, nil
			}
			grown := make([]byte, min(size, 2*int64(n)))
			copy(grown, buf)
			buf = grown
		}
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return buf[:n], err
		}
	}
}

// PlusOne is n+1, or n when that would overflow.
func PlusOne(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
}
