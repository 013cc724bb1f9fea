// Package jsonlex is the JSON lexer shared by the SDK's hand-written
// scanners: string and number tokens, a validating scan of whole values that
// finds duplicate member names at any depth (see [Names]) and can record the
// extent of every value, the decoding of member names as encoding/json
// decodes them, and the JSON pointer of a byte offset.
//
// Everything here is linear in the size of its input, whatever its number
// of members, elements or nesting depth; nothing allocates storage sized by
// a number the input declares.
package jsonlex

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the nesting limit of arrays and objects that [Scanner] applies
// when its MaxDepth is 0: encoding/json's own limit.
const MaxDepth = 10000

// Kinds of [Token].
const (
	KindNull   byte = 'n'
	KindTrue   byte = 't'
	KindFalse  byte = 'f'
	KindNumber byte = '0'
	KindString byte = '"'
	KindArray  byte = '['
	KindObject byte = '{'
)

// Token is one value of a scanned document. Values follow each other in
// document order: an array's elements, or an object's members as the name
// (a KindString token) and then the value, after the container's own token.
type Token struct {
	Kind    byte  // one of the Kind constants
	Escaped bool  // a string with escapes
	Start   int32 // offset of the value's first byte
	End     int32 // offset just after the value
	Next    int32 // index of the token after this value and its children
	N       int32 // elements of an array, members of an object
}

// IsSpace reports JSON insignificant whitespace.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i that is not
// whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// plain marks the bytes that stand for themselves in a JSON string:
// printable ASCII but '"' and '\\'.
var plain = func() (a [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		a[c] = c != '"' && c != '\\'
	}
	return a
}()

// String scans the JSON string whose opening quote is at b[i] and returns
// the index just after its closing quote, and whether it holds escapes. It
// reports false for an unterminated string, a control character, a
// malformed escape or invalid UTF-8; end is then where scanning stopped.
func String(b []byte, i int) (end int, escaped, ok bool) {
	j := i + 1
	for {
		for j < len(b) && plain[b[j]] {
			j++
		}
		if j >= len(b) {
			return j, false, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return j, false, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := hex4(b, j+2); !ok {
					return j, false, false
				}
				j += 6
			default:
				return j, false, false
			}
		case c < 0x20:
			return j, false, false
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				return j, false, false
			}
			j += size
		}
	}
}

// Number scans the JSON number at b[i] and returns the index just after it.
func Number(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i+1)
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// AppendUnquote appends to dst the contents of tok, a JSON string token
// that [String] accepts, decoded as encoding/json decodes it: an escaped
// surrogate that is not half of a pair, like invalid UTF-8, becomes
// U+FFFD.
func AppendUnquote(dst, tok []byte) []byte {
	if len(tok) < 2 {
		return dst
	}
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				dst = append(dst, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size <= 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		if i+1 >= len(s) {
			return dst
		}
		switch e := s[i+1]; e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return dst
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
		i += 2
	}
	return dst
}

// Scanner checks the syntax of JSON values and, on request, looks for
// duplicate member names and records every value as a [Token]. A Scanner
// is reusable: each Value call continues with the same settings. It is not
// safe for concurrent use.
type Scanner struct {
	// MaxDepth bounds the nesting of arrays and objects; 0 means
	// [MaxDepth].
	MaxDepth int
	// Dups makes Value look for member names that repeat an earlier name
	// of their object (see Dup).
	Dups bool
	// Tokenize makes Value append a Token for every value to Tokens.
	Tokenize bool
	// Tokens holds the tokens of the values scanned when Tokenize is set.
	Tokens []Token
	// Stop, when not nil, interrupts scanning once it is set (for instance
	// by context.AfterFunc at a deadline): Value looks at it every
	// [StopEvery] values and then fails, and Stopped reports true.
	Stop *atomic.Bool

	steps   int    // values scanned since the last look at Stop
	stopped bool   // scanning was interrupted by Stop
	dup     int    // 1 + the offset of the first repeated name, or 0
	keys    []key  // with Dups: the names of the open objects
	buf     []byte // with Dups: decoded escaped names
	set     Set
}

// key is a member name seen by a Scanner: at is the offset of its opening
// quote; a name with escapes is decoded at buf[off:off+n], any other is
// the n bytes after the quote.
type key struct {
	at, off, n uint32
	esc        bool
}

// Dup returns the offset of the opening quote of the first member name
// (in document order) that repeats an earlier name of its object, since
// the last Reset, and whether there was one (Dups must be set). Scanning
// goes on past a duplicate, so that a syntax error after it is still
// reported.
func (s *Scanner) Dup() (int, bool) { return s.dup - 1, s.dup > 0 }

// StopEvery is the number of values a [Scanner] scans between two looks
// at its Stop flag: once Stop is set, at most this many more values are
// scanned.
const StopEvery = 1024

// Stopped reports whether Stop interrupted a scan since the last Reset; a
// Value call that failed for that reason is not a syntax error.
func (s *Scanner) Stopped() bool { return s.stopped }

// scanners recycles Scanners (their name stacks and tables) between
// documents; see Acquire.
var scanners = sync.Pool{New: func() any { return new(Scanner) }}

// maxPooled bounds the Footprint of a Scanner kept for reuse.
const maxPooled = 1 << 16

// Acquire returns a reset Scanner, from a pool, that looks for duplicate
// names when dups is set (and neither tokenizes nor limits depth beyond
// MaxDepth). Release gives it back.
func Acquire(dups bool) *Scanner {
	s := scanners.Get().(*Scanner)
	s.Dups = dups
	return s
}

// Release resets s and returns it to the pool Acquire takes from; s must
// not be used afterwards.
func (s *Scanner) Release() {
	s.Reset()
	if s.Footprint() <= maxPooled {
		*s = Scanner{keys: s.keys, buf: s.buf, set: s.set, Tokens: s.Tokens}
		scanners.Put(s)
	}
}

// Reset prepares s for another document, keeping its settings and its
// storage.
func (s *Scanner) Reset() {
	s.Tokens = s.Tokens[:0]
	s.dup = 0
	s.steps = 0
	s.stopped = false
	s.keys = s.keys[:0]
	clear(s.buf)
	s.buf = s.buf[:0]
}

// Footprint is a measure of the memory s holds for reuse: tokens, names
// and table entries.
func (s *Scanner) Footprint() int {
	return cap(s.Tokens) + cap(s.keys) + cap(s.buf) + s.set.Footprint()
}

// Value scans the JSON value at b[i] (not whitespace), nested depth levels
// deep, and returns the index just after it. It reports false for a
// syntax error or nesting beyond MaxDepth, and the offset where scanning
// stopped.
func (s *Scanner) Value(b []byte, i, depth int) (int, bool) {
	if len(b) > math.MaxInt32 {
		return 0, false
	}
	return s.value(b, i, depth)
}

func (s *Scanner) maxDepth() int {
	if s.MaxDepth > 0 {
		return s.MaxDepth
	}
	return MaxDepth
}

func (s *Scanner) token(kind byte, start int) int {
	s.Tokens = append(s.Tokens, Token{Kind: kind, Start: int32(start)})
	return len(s.Tokens) - 1
}

// leaf records a string, number or literal token.
func (s *Scanner) leaf(kind byte, start, end int, escaped bool) {
	if s.Tokenize {
		n := int32(len(s.Tokens))
		s.Tokens = append(s.Tokens, Token{Kind: kind, Escaped: escaped, Start: int32(start), End: int32(end), Next: n + 1})
	}
}

func (s *Scanner) value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || s.stopped {
		return i, false
	}
	if s.Stop != nil {
		if s.steps++; s.steps >= StopEvery {
			s.steps = 0
			if s.Stop.Load() {
				s.stopped = true
				return i, false
			}
		}
	}
	switch c := b[i]; c {
	case '{':
		return s.object(b, i, depth+1)
	case '[':
		return s.array(b, i, depth+1)
	case '"':
		end, esc, ok := String(b, i)
		if ok {
			s.leaf(KindString, i, end, esc)
		}
		return end, ok
	case 't', 'f', 'n':
		lit := "null"
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
			return i, false
		}
		s.leaf(c, i, i+len(lit), false)
		return i + len(lit), true
	default:
		end, ok := Number(b, i)
		if ok {
			s.leaf(KindNumber, i, end, false)
		}
		return end, ok
	}
}

func (s *Scanner) object(b []byte, i, depth int) (int, bool) {
	if depth > s.maxDepth() {
		return i, false
	}
	start := i
	tok := -1
	if s.Tokenize {
		tok = s.token(KindObject, i)
	}
	keys := len(s.keys)
	i = SkipSpace(b, i+1)
	n := 0
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			end, esc, ok := String(b, i)
			if !ok {
				return end, false
			}
			if s.Dups {
				k := key{at: uint32(i), n: uint32(end - i - 2), esc: esc}
				if esc {
					k.off = uint32(len(s.buf))
					s.buf = AppendUnquote(s.buf, b[i:end])
					k.n = uint32(len(s.buf)) - k.off
				}
				s.keys = append(s.keys, k)
			}
			s.leaf(KindString, i, end, esc)
			i = SkipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = s.value(b, SkipSpace(b, i+1), depth); !ok {
				return i, false
			}
			n++
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				continue
			}
			if b[i] != '}' {
				return i, false
			}
			i++
			break
		}
	}
	if s.Dups {
		s.repeats(b, s.keys[keys:])
		s.keys = s.keys[:keys]
		if s.stopped {
			return i, false
		}
	}
	if tok >= 0 {
		t := &s.Tokens[tok]
		t.Start, t.End, t.Next, t.N = int32(start), int32(i), int32(len(s.Tokens)), int32(n)
	}
	return i, true
}

// repeats notes the first of the names of one object that repeats an
// earlier one.
func (s *Scanner) repeats(b []byte, keys []key) {
	if len(keys) < 2 {
		return
	}
	var stop func() bool
	if s.Stop != nil {
		stop = s.Stop.Load
	}
	i, found, stopped := s.set.RepeatStop(len(keys), func(i int) []byte {
		k := keys[i]
		if k.esc {
			return s.buf[k.off : k.off+k.n]
		}
		return b[k.at+1 : k.at+1+k.n]
	}, stop)
	if stopped {
		s.stopped = true
		return
	}
	if at := int(keys[i].at); found && (s.dup == 0 || at < s.dup-1) {
		s.dup = at + 1
	}
}

func (s *Scanner) array(b []byte, i, depth int) (int, bool) {
	if depth > s.maxDepth() {
		return i, false
	}
	start := i
	tok := -1
	if s.Tokenize {
		tok = s.token(KindArray, i)
	}
	i = SkipSpace(b, i+1)
	n := 0
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			var ok bool
			if i, ok = s.value(b, i, depth); !ok {
				return i, false
			}
			n++
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				continue
			}
			if b[i] != ']' {
				return i, false
			}
			i++
			break
		}
	}
	if tok >= 0 {
		t := &s.Tokens[tok]
		t.Start, t.End, t.Next, t.N = int32(start), int32(i), int32(len(s.Tokens)), int32(n)
	}
	return i, true
}

// Pointer returns the RFC 6901 JSON pointer of the member name or value
// that starts at byte offset off of doc, one JSON value with optional
// surrounding whitespace (a member name stands for its member). It returns
// "" for the whole document and for an offset at which nothing starts.
// Member names are decoded as encoding/json decodes them.
func Pointer(doc []byte, off int) string {
	if len(doc) > math.MaxInt32 {
		return ""
	}
	var segs []string
	if _, found := find(doc, SkipSpace(doc, 0), off, &segs); found {
		return join(segs)
	}
	return ""
}

// find scans the value at doc[i] for the member name or value at offset
// off, in one pass. When it finds it, segs holds its path.
func find(doc []byte, i, off int, segs *[]string) (int, bool) {
	if i == off {
		return i, true
	}
	if i > off || i >= len(doc) {
		return i, false
	}
	var s Scanner
	switch doc[i] {
	case '{':
		i = SkipSpace(doc, i+1)
		for i < len(doc) && doc[i] == '"' {
			end, _, ok := String(doc, i)
			if !ok {
				return end, false
			}
			name := string(AppendUnquote(nil, doc[i:end]))
			if i == off {
				*segs = append(*segs, name)
				return i, true
			}
			v := SkipSpace(doc, end)
			if v >= len(doc) || doc[v] != ':' {
				return v, false
			}
			v = SkipSpace(doc, v+1)
			*segs = append(*segs, name)
			e, found := find(doc, v, off, segs)
			if found {
				return e, true
			}
			*segs = (*segs)[:len(*segs)-1]
			if e <= v {
				return e, false
			}
			i = SkipSpace(doc, e)
			if i < len(doc) && doc[i] == ',' {
				i = SkipSpace(doc, i+1)
			}
		}
		return i + 1, false
	case '[':
		i = SkipSpace(doc, i+1)
		for k := 0; i < len(doc) && doc[i] != ']'; k++ {
			*segs = append(*segs, strconv.Itoa(k))
			e, found := find(doc, i, off, segs)
			if found {
				return e, true
			}
			*segs = (*segs)[:len(*segs)-1]
			if e <= i {
				return e, false
			}
			i = SkipSpace(doc, e)
			if i < len(doc) && doc[i] == ',' {
				i = SkipSpace(doc, i+1)
			}
		}
		return i + 1, false
	}
	e, ok := s.value(doc, i, 0)
	if !ok {
		return i, false
	}
	return e, false
}

// join renders pointer segments, escaping '~' and '/'.
func join(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		for k := 0; k < len(s); k++ {
			switch s[k] {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(s[k])
			}
		}
	}
	return b.String()
}
