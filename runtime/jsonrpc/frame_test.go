package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// step is one expected result of FrameReader.Next.
type step struct {
	frame string
	err   error
}

func readAll(fr *FrameReader, limit int) []step {
	var out []step
	for range limit {
		frame, err := fr.Next()
		if err != nil {
			out = append(out, step{err: err})
			if errors.Is(err, io.EOF) {
				return out
			}
			continue
		}
		out = append(out, step{frame: string(frame)})
	}
	return out
}

func TestFrameReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		max   int
		steps []step
	}{
		{name: "zero bytes", in: "", steps: []step{{err: io.EOF}}},
		{name: "one line", in: "{}\n", steps: []step{{frame: "{}"}, {err: io.EOF}}},
		{name: "two lines", in: "{\"a\":1}\n[2]\n", steps: []step{{frame: `{"a":1}`}, {frame: "[2]"}, {err: io.EOF}}},
		{name: "crlf rejected then continue", in: "{}\r\n{}\n", steps: []step{{err: ErrCRLF}, {frame: "{}"}, {err: io.EOF}}},
		{name: "lone cr line", in: "\r\n", steps: []step{{err: ErrCRLF}, {err: io.EOF}}},
		{name: "inner cr kept", in: "{\r}\n", steps: []step{{frame: "{\r}"}, {err: io.EOF}}},
		{name: "empty line", in: "\n{}\n\n", steps: []step{{err: ErrEmptyFrame}, {frame: "{}"}, {err: ErrEmptyFrame}, {err: io.EOF}}},
		{name: "partial final line", in: "{}\n{\"a\"", steps: []step{{frame: "{}"}, {err: ErrUnterminatedFrame}, {err: io.EOF}}},
		{name: "only partial line", in: "{}", steps: []step{{err: ErrUnterminatedFrame}, {err: io.EOF}}},
		{name: "exactly max", in: "12345\n", max: 5, steps: []step{{frame: "12345"}, {err: io.EOF}}},
		{name: "one over max", in: "123456\n1\n", max: 5, steps: []step{{err: ErrFrameTooLarge}, {frame: "1"}, {err: io.EOF}}},
		{name: "cr counts toward max", in: "12345\r\n", max: 5, steps: []step{{err: ErrFrameTooLarge}, {err: io.EOF}}},
		{name: "over max unterminated", in: "1\n123456", max: 5, steps: []step{{frame: "1"}, {err: ErrFrameTooLarge}, {err: io.EOF}}},
		{name: "long lines spanning buffer", in: strings.Repeat("a", 100) + "\n" + strings.Repeat("b", 40) + "\n", max: 64,
			steps: []step{{err: ErrFrameTooLarge}, {frame: strings.Repeat("b", 40)}, {err: io.EOF}}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"plain":    func(r io.Reader) io.Reader { return r },
		"one-byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data-err": iotest.DataErrReader,
	}
	for _, tc := range tests {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				fr := NewFrameReader(wrap(strings.NewReader(tc.in)), tc.max)
				got := readAll(fr, 100)
				require.Len(t, got, len(tc.steps))
				for i, want := range tc.steps {
					if want.err != nil {
						require.ErrorIs(t, got[i].err, want.err, "step %d", i)
						continue
					}
					require.NoError(t, got[i].err, "step %d", i)
					require.Equal(t, want.frame, got[i].frame, "step %d", i)
				}
				// EOF is sticky.
				_, err := fr.Next()
				require.ErrorIs(t, err, io.EOF)
			})
		}
	}
}

func TestFrameReaderUnterminatedIsUnexpectedEOF(t *testing.T) {
	_, err := NewFrameReader(strings.NewReader("{}"), 0).Next()
	require.ErrorIs(t, err, ErrUnterminatedFrame)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestFrameReaderReadErrorIsSticky(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{}\n{\"a\""), iotest.ErrReader(boom))
	fr := NewFrameReader(r, 0)
	frame, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, "{}", string(frame))
	_, err = fr.Next()
	require.ErrorIs(t, err, boom)
	_, err = fr.Next()
	require.ErrorIs(t, err, boom)
}

// script returns its reads in order: data, or an error.
type script []any

func (s *script) Read(p []byte) (int, error) {
	if len(*s) == 0 {
		return 0, io.EOF
	}
	next := (*s)[0]
	*s = (*s)[1:]
	if err, ok := next.(error); ok {
		return 0, err
	}
	return copy(p, next.(string)), nil
}

func TestFrameReaderDeadlineResumes(t *testing.T) {
	timeout := fmt.Errorf("read |0: %w", os.ErrDeadlineExceeded)
	tests := []struct {
		name  string
		reads script
		max   int
		steps []step
	}{
		{name: "between lines", reads: script{"{}\n", timeout, "[1]\n"},
			steps: []step{{frame: "{}"}, {err: os.ErrDeadlineExceeded}, {frame: "[1]"}, {err: io.EOF}}},
		{name: "mid line", reads: script{`{"a":`, timeout, "1}\n"},
			steps: []step{{err: os.ErrDeadlineExceeded}, {frame: `{"a":1}`}, {err: io.EOF}}},
		{name: "twice mid line", reads: script{`{"a"`, timeout, ":", timeout, "2}\n{}\n"},
			steps: []step{{err: os.ErrDeadlineExceeded}, {err: os.ErrDeadlineExceeded}, {frame: `{"a":2}`}, {frame: "{}"}, {err: io.EOF}}},
		{name: "too large across the timeout", max: 4, reads: script{"123", timeout, "456\n{}\n"},
			steps: []step{{err: os.ErrDeadlineExceeded}, {err: ErrFrameTooLarge}, {frame: "{}"}, {err: io.EOF}}},
		{name: "skipping too large across the timeout", max: 4, reads: script{"123456", timeout, "78\n{}\n"},
			steps: []step{{err: os.ErrDeadlineExceeded}, {err: ErrFrameTooLarge}, {frame: "{}"}, {err: io.EOF}}},
		{name: "unterminated after the timeout", reads: script{"{", timeout, "}"},
			steps: []step{{err: os.ErrDeadlineExceeded}, {err: ErrUnterminatedFrame}, {err: io.EOF}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reads := tc.reads
			got := readAll(NewFrameReader(&reads, tc.max), 100)
			require.Len(t, got, len(tc.steps))
			for i, want := range tc.steps {
				if want.err != nil {
					require.ErrorIs(t, got[i].err, want.err, "step %d", i)
					continue
				}
				require.NoError(t, got[i].err, "step %d", i)
				require.Equal(t, want.frame, got[i].frame, "step %d", i)
			}
		})
	}
}

// TestFrameReaderPipeDeadline interrupts a Next blocked on a pipe with a
// read deadline and resumes reading after clearing it.
func TestFrameReaderPipeDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	fr := NewFrameReader(r, 0)
	_, err = w.Write([]byte(`{"a":`))
	require.NoError(t, err)
	require.NoError(t, r.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
	_, err = fr.Next()
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, r.SetReadDeadline(time.Time{}))
	_, err = w.Write([]byte("1}\n"))
	require.NoError(t, err)
	frame, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(frame))
}

func TestFrameReaderFramesAreOwned(t *testing.T) {
	fr := NewFrameReader(strings.NewReader("aaaa\nbbbb\n"), 0)
	first, err := fr.Next()
	require.NoError(t, err)
	second, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, "aaaa", string(first), "earlier frames must not be overwritten")
	require.Equal(t, "bbbb", string(second))
	// Appending to a frame must not clobber reader state.
	_ = append(first, 'x')
}

// lazyLine produces n bytes of 'a' and then tail, without holding n bytes.
type lazyLine struct {
	n    int64
	tail *strings.Reader
}

func (l *lazyLine) Read(p []byte) (int, error) {
	if l.n > 0 {
		k := min(int64(len(p)), l.n)
		for i := range k {
			p[i] = 'a'
		}
		l.n -= k
		return int(k), nil
	}
	return l.tail.Read(p)
}

func TestFrameReaderHugeLineBoundedMemory(t *testing.T) {
	const huge = 100 << 20
	const limit = 1 << 20
	valid := `{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`
	r := &lazyLine{n: huge, tail: strings.NewReader("\n" + valid + "\n")}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	fr := NewFrameReader(r, limit)
	_, err := fr.Next()
	require.ErrorIs(t, err, ErrFrameTooLarge)
	frame, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, valid, string(frame))
	_, err = fr.Next()
	require.ErrorIs(t, err, io.EOF)

	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes while skipping a %d-byte line with a %d-byte limit", allocated, huge, limit)
	// The partial line grows by appends up to the limit (< 2x) plus the
	// 64 KiB read buffer; anything near the line size means it was
	// buffered.
	require.Less(t, allocated, uint64(3*limit))
}

func TestFrameReaderHugeLineDefaultLimit(t *testing.T) {
	r := &lazyLine{n: DefaultMaxFrameSize + 1, tail: strings.NewReader("\n{}\n")}
	fr := NewFrameReader(r, 0)
	_, err := fr.Next()
	require.ErrorIs(t, err, ErrFrameTooLarge)
	frame, err := fr.Next()
	require.NoError(t, err)
	require.Equal(t, "{}", string(frame))

	r = &lazyLine{n: DefaultMaxFrameSize, tail: strings.NewReader("\n")}
	frame, err = NewFrameReader(r, 0).Next()
	require.NoError(t, err)
	require.Len(t, frame, DefaultMaxFrameSize)
}

func TestFrameReaderAllocs(t *testing.T) {
	line := strings.Repeat("x", 1000) + "\n"
	input := strings.Repeat(line, 1)
	allocs := testing.AllocsPerRun(100, func() {
		fr := NewFrameReader(strings.NewReader(input), 0)
		_, _ = fr.Next()
	})
	// reader, bufio.Reader and its buffer, and the frame.
	require.LessOrEqual(t, allocs, 4.0)
}

func TestFrameWriter(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	require.NoError(t, fw.WriteFrame([]byte(`{"a":1}`)))
	require.ErrorIs(t, fw.WriteFrame([]byte("{\n}")), ErrNewlineInFrame)
	require.ErrorIs(t, fw.WriteFrame([]byte("{}\r")), ErrNewlineInFrame)
	require.ErrorIs(t, fw.WriteFrame(nil), ErrEmptyFrame)
	require.NoError(t, fw.WriteFrame([]byte(`[]`)))
	require.Equal(t, "{\"a\":1}\n[]\n", buf.String())
}

// chunkWriter records each Write call separately.
type chunkWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestFrameWriterConcurrent(t *testing.T) {
	w := &chunkWriter{}
	fw := NewFrameWriter(w)
	const goroutines, perG = 16, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				msg := AppendRequest(nil, IntID(int64(g*perG+i)), MethodIntercept, []byte(`{"pad":"`+strings.Repeat("p", i)+`"}`))
				require.NoError(t, fw.WriteFrame(msg))
			}
		})
	}
	wg.Wait()
	require.Len(t, w.writes, goroutines*perG)
	var all strings.Builder
	for _, chunk := range w.writes {
		require.True(t, strings.HasSuffix(chunk, "\n"))
		require.Equal(t, 1, strings.Count(chunk, "\n"), "one frame per Write call")
		all.WriteString(chunk)
	}
	fr := NewFrameReader(strings.NewReader(all.String()), 0)
	seen := map[int64]bool{}
	for {
		frame, err := fr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		env, err := Classify(frame)
		require.NoError(t, err)
		n, ok := env.ID.Int64()
		require.True(t, ok)
		seen[n] = true
	}
	require.Len(t, seen, goroutines*perG)
}

// failWriter writes at most n bytes and then fails.
type failWriter struct {
	n   int
	err error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	k := w.n
	w.n = 0
	return k, w.err
}

func TestFrameWriterErrors(t *testing.T) {
	boom := errors.New("boom")

	t.Run("error before any byte is not sticky", func(t *testing.T) {
		w := &failWriter{n: 0, err: boom}
		fw := NewFrameWriter(w)
		require.ErrorIs(t, fw.WriteFrame([]byte("{}")), boom)
		w.n = 100
		require.NoError(t, fw.WriteFrame([]byte("{}")))
	})
	t.Run("partial write is sticky", func(t *testing.T) {
		w := &failWriter{n: 1, err: boom}
		fw := NewFrameWriter(w)
		require.ErrorIs(t, fw.WriteFrame([]byte("{}")), boom)
		w.n = 100
		require.ErrorIs(t, fw.WriteFrame([]byte("{}")), boom)
	})
	t.Run("short write without error", func(t *testing.T) {
		fw := NewFrameWriter(shortWriter{})
		require.ErrorIs(t, fw.WriteFrame([]byte("{}")), io.ErrShortWrite)
	})
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) - 1, nil }

func TestFrameReaderHugeLimit(t *testing.T) {
	fr := NewFrameReader(strings.NewReader(strings.Repeat("z", 200<<10)+"\n"), math.MaxInt)
	frame, err := fr.Next()
	require.NoError(t, err)
	require.Len(t, frame, 200<<10)
	_, err = fr.Next()
	require.ErrorIs(t, err, io.EOF)
}
