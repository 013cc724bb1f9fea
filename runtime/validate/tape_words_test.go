package validate

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNotPlain8 checks the word-at-a-time string scan against plainByte:
// for every byte value at every position of a word of plain bytes (and
// after a second non-plain byte), the first byte it reports is the first
// byte that is not plain.
func TestNotPlain8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			for _, after := range []byte{'a', '"', '\\', 0x00, 0x1f, 0x80, 0xff} {
				w := []byte("abcdefgh")
				w[pos] = byte(c)
				if pos < 7 {
					w[7] = after
				}
				want := 8
				for k, b := range w {
					if !plainByte[b] {
						want = k
						break
					}
				}
				m := notPlain8(binary.LittleEndian.Uint64(w))
				if want == 8 {
					require.Zero(t, m, "%q", w)
					continue
				}
				require.NotZero(t, m, "%q", w)
				require.Equal(t, want, int(trailingZeroBytes(m)), "%q", w)
			}
		}
	}
}

func trailingZeroBytes(m uint64) uint {
	n := uint(0)
	for m&0xff == 0 {
		m >>= 8
		n++
	}
	return n
}

// TestSkipSpace checks the whitespace skipper, whose indentation runs go
// eight bytes at a time, against a byte-at-a-time reference.
func TestSkipSpace(t *testing.T) {
	ref := func(src []byte, p int) int {
		for p < len(src) && bytes.IndexByte([]byte(" \t\n\r"), src[p]) >= 0 {
			p++
		}
		return p
	}
	var cases [][]byte
	for n := range 20 {
		for _, tail := range []string{"", "x", "\t", "\r\n  x", "\x00", "\v"} {
			cases = append(cases, append(append([]byte("\n"), bytes.Repeat([]byte(" "), n)...), tail...))
			cases = append(cases, append(bytes.Repeat([]byte(" "), n), tail...))
			cases = append(cases, append(append([]byte("\n\t"), bytes.Repeat([]byte(" "), n)...), tail...))
		}
	}
	for _, c := range cases {
		for p := range len(c) + 1 {
			require.Equal(t, ref(c, p), skipSpace(c, p), "%q at %d", c, p)
		}
	}
}

// TestMemberByWord checks that looking a schema key up in an object (by
// its bloom bit, hash, length and, for keys up to eight bytes, one word)
// finds exactly the member of that name, for keys of every length near
// the word size, escaped or not, and at the very end of the document.
func TestMemberByWord(t *testing.T) {
	// Some names share a keyHash (which reads the length and the first,
	// middle and last bytes) and differ elsewhere.
	names := []string{"", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgH", "bbcdefgh", "abZdefgh",
		"aZcdefgh", "aZcdefghi", "abcZ", "ab\u00e9"}
	for _, escaped := range []bool{false, true} {
		var b bytes.Buffer
		b.WriteByte('{')
		for k, name := range names {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('"')
			for _, c := range []byte(name) {
				if escaped && c < 0x80 {
					b.WriteString(`\u00`)
					b.WriteString("0123456789abcdef"[c>>4 : c>>4+1])
					b.WriteString("0123456789abcdef"[c&15 : c&15+1])
				} else {
					b.WriteByte(c)
				}
			}
			b.WriteString(`":0`)
		}
		b.WriteByte('}')
		tp := new(tape)
		require.True(t, tp.parse(b.Bytes()), b.String())
		require.False(t, tp.dup)
		for k, name := range names {
			want := uint32(0)
			for c := uint32(1); c < tp.toks[0].end; c = tp.toks[c+1].end {
				if string(tp.bytes(c)) == name {
					want = c + 1
				}
			}
			require.NotZero(t, want)
			if name == "abZdefgh" {
				require.Equal(t, keyHash("abcdefgh"), keyHash(name))
			}
			require.Equal(t, want, memberNamed(tp, 0, ptr(newKeyName(name))), "%q", name)
			require.Equal(t, want, member(tp, 0, name, keyHash(name)), "%q", name)
			n := &fastNode{}
			n.propList = []namedNode{{keyName: keyName{name: name}}}
			n.setOps()
			require.Equal(t, 0, n.propAt(tp, want-1), "%q", name)
			for j, other := range names {
				if j != k {
					require.Equal(t, -1, n.propAt(tp, memberNamed(tp, 0, ptr(newKeyName(other)))-1), "%q vs %q", name, other)
				}
			}
			missing := name + "z"
			require.Zero(t, memberNamed(tp, 0, ptr(newKeyName(missing))), "%q", missing)
		}
	}
}

func ptr[T any](v T) *T { return &v }
