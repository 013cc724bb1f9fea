package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
)

// DefaultMaxFrameSize is the default maximum size in bytes of one stdio frame,
// excluding its LF terminator.
const DefaultMaxFrameSize = 4 << 20

// readChunk is the size of the read buffer of a FrameReader whose limit is
// larger; longer lines are assembled from several chunks.
const readChunk = 64 << 10

// Frame errors. Except for write errors, they leave the reader or writer
// usable: a FrameReader continues at the start of the next line.
var (
	// ErrFrameTooLarge reports a line longer than the reader's limit. The
	// line is skipped without being buffered.
	ErrFrameTooLarge = errors.New("jsonrpc: frame too large")
	// ErrEmptyFrame reports an empty line, which is not a message under
	// AHP-STDIO-001, or an attempt to write an empty frame.
	ErrEmptyFrame = errors.New("jsonrpc: empty frame")
	// ErrCRLF reports a line terminated by CRLF. AHP-STDIO-001 requires a
	// single LF terminator.
	ErrCRLF = errors.New("jsonrpc: frame terminated by CRLF")
	// ErrUnterminatedFrame reports data after the last LF at end of input:
	// a message that is not terminated by a newline (AHP-STDIO-001) and
	// cannot be told apart from a truncated write. It also matches
	// io.ErrUnexpectedEOF.
	ErrUnterminatedFrame = errors.New("jsonrpc: unterminated frame at end of input")
	// ErrNewlineInFrame reports an attempt to write a message containing a
	// raw LF or CR byte, which would break the line framing.
	ErrNewlineInFrame = errors.New("jsonrpc: frame contains a raw line break")
)

// FrameReader splits a stdio byte stream into messages, one per LF-terminated
// line (AHP-STDIO-001).
//
// Memory use is bounded by the limit plus a read buffer of at most 64 KiB,
// whatever the input. A FrameReader is not safe for concurrent use.
type FrameReader struct {
	br  *bufio.Reader
	max int
	err error // terminal error: io.EOF or a read error

	// The line being read when a Read timed out, resumed by the next call.
	partial         []byte
	partialTooLarge bool
}

// NewFrameReader returns a reader of frames from r whose content (excluding
// the LF) is at most maxLine bytes; maxLine <= 0 means
// [DefaultMaxFrameSize].
func NewFrameReader(r io.Reader, maxLine int) *FrameReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxFrameSize
	}
	size := readChunk
	if maxLine < readChunk {
		size = maxLine + 1
	}
	return &FrameReader{br: bufio.NewReaderSize(r, size), max: maxLine}
}

// Next returns the next frame without its LF terminator. The returned slice
// is newly allocated and owned by the caller.
//
// At a clean end of input (nothing after the last LF, including empty input)
// it returns io.EOF. Otherwise it returns [ErrFrameTooLarge],
// [ErrEmptyFrame] or [ErrCRLF] for a bad line, after which the next call
// reads the following line; [ErrUnterminatedFrame] for a final line without
// LF, after which the next call returns io.EOF; or a wrapped read error,
// which is returned again by every later call.
//
// A read error matching [os.ErrDeadlineExceeded] (a read deadline set on a
// pipe or connection to interrupt a blocked Next) is the exception: it is
// returned wrapped but leaves the reader usable, and the next call continues
// the line that was being read.
func (fr *FrameReader) Next() ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	line, tooLarge := fr.partial, fr.partialTooLarge
	fr.partial, fr.partialTooLarge = nil, false
	for {
		chunk, err := fr.br.ReadSlice('\n')
		if !tooLarge {
			n := len(line) + len(chunk)
			if err == nil {
				n-- // the terminator
			}
			if n > fr.max {
				tooLarge = true
				line = nil
			} else {
				line = fr.grow(line, n+1)
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			switch {
			case tooLarge:
				return nil, ErrFrameTooLarge
			case len(line) == 1:
				return nil, ErrEmptyFrame
			case line[len(line)-2] == '\r':
				return nil, ErrCRLF
			}
			return line[: len(line)-1 : len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			fr.err = io.EOF
			switch {
			case tooLarge:
				return nil, ErrFrameTooLarge
			case len(line) > 0:
				return nil, fmt.Errorf("%w: %w", ErrUnterminatedFrame, io.ErrUnexpectedEOF)
			}
			return nil, io.EOF
		case errors.Is(err, os.ErrDeadlineExceeded):
			fr.partial, fr.partialTooLarge = line, tooLarge
			return nil, fmt.Errorf("jsonrpc: read frame: %w", err)
		default:
			fr.err = fmt.Errorf("jsonrpc: read frame: %w", err)
			return nil, fr.err
		}
	}
}

// Buffered reports how many bytes of input have been read from the
// underlying reader and not yet returned by Next: nonzero when the start of
// another frame is already waiting.
func (fr *FrameReader) Buffered() int {
	return fr.br.Buffered() + len(fr.partial)
}

// grow makes room for line to reach need bytes, doubling its capacity but
// never beyond the limit plus the terminator, so that assembling a long line
// allocates less than twice the limit in total.
func (fr *FrameReader) grow(line []byte, need int) []byte {
	if need <= cap(line) {
		return line
	}
	limit := fr.max
	if limit < math.MaxInt {
		limit++ // room for the terminator
	}
	newCap := min(max(2*cap(line), need), limit)
	grown := make([]byte, len(line), newCap)
	copy(grown, line)
	return grown
}

// maxRetainedWriteBuffer bounds the buffer a FrameWriter keeps between
// writes.
const maxRetainedWriteBuffer = 64 << 10

// FrameWriter writes messages to a stdio stream, one per line. It is safe for
// concurrent use: each frame is written with a single Write call under a
// mutex, so frames from different goroutines never interleave.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error // set after a partial write, which corrupts the stream
}

// NewFrameWriter returns a FrameWriter that writes to w.
func NewFrameWriter(w io.Writer) *FrameWriter {
	return &FrameWriter{w: w}
}

// WriteFrame writes msg followed by a single LF. msg must be one compact JSON
// value; WriteFrame does not parse it but refuses an empty msg
// ([ErrEmptyFrame]) and one containing a raw LF or CR byte
// ([ErrNewlineInFrame]). A write error is returned wrapped; if part of the
// frame was written the stream is corrupt and every later call fails with the
// same error.
func (fw *FrameWriter) WriteFrame(msg []byte) error {
	if len(msg) == 0 {
		return ErrEmptyFrame
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		return ErrNewlineInFrame
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		return fw.err
	}
	buf := append(append(fw.buf[:0], msg...), '\n')
	if cap(buf) <= maxRetainedWriteBuffer {
		fw.buf = buf
	} else {
		fw.buf = nil
	}
	n, err := fw.w.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		err = fmt.Errorf("jsonrpc: write frame: %w", err)
		if n > 0 {
			fw.err = err
		}
		return err
	}
	return nil
}
