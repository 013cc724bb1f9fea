package validate

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
)

// A tape is a JSON document parsed into one flat slice of tokens, the form
// the fast path (fastpath.go) walks. Every value is one token, followed by
// its children in document order: an array's elements, or an object's
// members as key (a string token) then value. Each token records the index
// of the token after its subtree, so siblings are reached without walking
// into children.
//
// Strings and numbers refer to their bytes by offset. A string without
// escapes points into the document itself; an escaped string is decoded
// once, while parsing, into the tape's own buffer (fBuf). Nothing else is
// decoded or allocated: scanning a document into a reused tape allocates
// only when the tape has to grow.
//
// parse accepts exactly the documents that encoding/json with UseNumber
// accepts as one value followed by whitespace, and the tree it describes
// (see value) is the one encoding/json builds, except that an object may
// hold duplicate keys; such a tape is marked dup (with the offset of the
// first repeated key), which Validate rejects. Duplicates are found in time
// linear in the members of an object, whatever the keys. Inputs whose
// handling by encoding/json differs from a plain reading (invalid UTF-8,
// escaped lone surrogates, very deep nesting) make parse report false, and
// the caller decodes with encoding/json instead.

// tok is one tape token.
type tok struct {
	kind  uint8  // tNull, tBool, tNumber, tString, tArray or tObject
	flags uint8  // fTrue, fBuf
	hash  uint16 // object keys: keyHash of the key
	off   uint32 // strings, numbers: offset of the bytes in src, or in buf with fBuf; objects: keyBloom of the keys
	n     uint32 // strings, numbers: byte length; arrays, objects: number of elements or members
	end   uint32 // index of the token after this value and its children
	pos   uint32 // parsed tapes: offset in src of the value's first byte
	stop  uint32 // parsed tapes: offset in src just after the value
}

// Token flags.
const (
	fTrue uint8 = 1 << iota // a true boolean
	fBuf                    // the bytes are in tape.buf, not in tape.src
)

// maxTapeDepth bounds the nesting of arrays and objects that parse and
// fromValue handle: encoding/json's own bound, so that a document parse
// refuses for its depth is one encoding/json refuses too.
const maxTapeDepth = 10000

// maxTapeBytes bounds the documents that parse handles, so that offsets fit
// in a tok.
const maxTapeBytes = math.MaxUint32 - 1

// tape is a document parsed by parse, or a value put on a tape by
// fromValue (see above).
type tape struct {
	src   []byte // the document (nil for a tape built by fromValue)
	buf   []byte // decoded escaped strings; every string and number for fromValue
	toks  []tok
	dup   bool // some object has two members with the same key
	dupAt int  // with dup: offset in src of the first repeated key

	w       watch  // parseUntil: stop once its context has ended
	steps   uint32 // values scanned, to poll w
	stopped bool   // parse gave up because the context ended

	keys []uint32    // parse scratch: key tokens of a large object
	set  jsonlex.Set // parse scratch: finds repeated keys of large objects
}

// noteDup records a repeated key at offset at of src, keeping the first
// in document order.
func (t *tape) noteDup(at int) {
	if !t.dup || at < t.dupAt {
		t.dup, t.dupAt = true, at
	}
}

// maxPairwiseKeys is the number of keys up to which an object's keys are
// compared pairwise (when their hashes may collide) to find duplicates;
// the keys of larger objects go into a hash table.
const maxPairwiseKeys = 32

// Pooled tapes whose slices grew beyond these capacities are dropped rather
// than kept for reuse.
const (
	maxPooledToks = 1 << 16
	maxPooledBuf  = 1 << 20
)

var tapePool = sync.Pool{New: func() any { return new(tape) }}

func getTape() *tape { return tapePool.Get().(*tape) }

func putTape(t *tape) {
	if reusable(t) {
		// Decoded strings are not kept around in pooled memory.
		clear(t.buf)
		t.src, t.w = nil, watch{}
		tapePool.Put(t)
	}
}

// reusable reports whether t is small enough to keep in the pool.
func reusable(t *tape) bool {
	return cap(t.toks) <= maxPooledToks && cap(t.buf) <= maxPooledBuf && cap(t.keys) <= maxPooledToks &&
		t.set.Footprint() <= maxPooledToks
}

func (t *tape) reset(src []byte) {
	// Capped at its length: a string of the tape then has no capacity past
	// the document, so keyName.is never reads the caller's bytes after it.
	t.src = src[:len(src):len(src)]
	t.buf = t.buf[:0]
	t.toks = t.toks[:0]
	t.keys = t.keys[:0]
	t.dup, t.dupAt = false, 0
	t.w, t.steps, t.stopped = watch{}, 0, false
}

// pollEvery is how many values parsing and the fast path go through
// between two looks at a deadline.
const pollEvery = 1024

// watch is the context that a scan or a run of the fast path looks at
// every pollEvery values or visits. Its Done channel is asked for at the
// first look only: a cancelable context such as net/http's request context
// creates its channel at the first call to Done, which a message of fewer
// than pollEvery values would otherwise pay for (an allocation, and the
// work of closing the channel when the request ends) without ever looking
// at it.
type watch struct {
	ctx  context.Context // nil: nothing to look at
	done <-chan struct{} // ctx.Done(), once asked for
}

// watchOf is the watch of ctx: none for a context that never ends.
func watchOf(ctx context.Context) watch {
	if ctx == nil || ctx == context.Background() || ctx == context.TODO() {
		return watch{}
	}
	return watch{ctx: ctx}
}

// ended reports whether the context of w (not nil) has ended.
func (w *watch) ended() bool {
	if w.done == nil {
		if w.done = w.ctx.Done(); w.done == nil {
			w.ctx = nil // a context that never ends: no more looks
			return false
		}
	}
	return closed(w.done)
}

// closed reports whether done is closed.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// bytes returns the bytes of string or number token i: a string's decoded
// contents, a number's text.
func (t *tape) bytes(i uint32) []byte {
	k := &t.toks[i]
	if k.flags&fBuf != 0 {
		return t.buf[k.off : k.off+k.n]
	}
	return t.src[k.off : k.off+k.n]
}

// parse scans src into t. It reports false when src is not exactly one
// JSON value with optional surrounding whitespace, or when it is one that
// encoding/json reads in a way parse does not model; t is then unusable.
func (t *tape) parse(src []byte) bool { return t.parseUntil(src, watch{}) }

// parseUntil is parse that gives up, setting t.stopped, once the context
// of w has ended; it looks every pollEvery values. The tape does not keep
// the context after parsing (a Doc held by its caller would keep the
// context's values alive for nothing).
func (t *tape) parseUntil(src []byte, w watch) bool {
	t.reset(src)
	if uint64(len(src)) > maxTapeBytes {
		return false
	}
	if want := len(src) / 8; cap(t.toks) < want {
		t.toks = make([]tok, 0, want)
	}
	t.w = w
	p, ok := t.scanValue(skipSpace(src, 0), 0)
	t.w = watch{}
	return ok && skipSpace(src, p) == len(src)
}

// skipSpace returns the offset of the first byte at or after src[p] that
// is not JSON whitespace (len(src) if none). The common case, no
// whitespace at all, is decided inline.
func skipSpace(src []byte, p int) int {
	if p < len(src) && src[p] > ' ' {
		return p
	}
	return skipSpaceRun(src, p)
}

// skipSpaceRun is skipSpace past a run of whitespace.
//
//go:noinline
func skipSpaceRun(src []byte, p int) int {
	for p < len(src) {
		c := src[p]
		if c > ' ' || spaceBits&(1<<c) == 0 {
			return p
		}
		p++
		if c == '\n' {
			// Indentation: the run of spaces after a line break, up to
			// eight at a time.
			for p+8 <= len(src) {
				if y := binary.LittleEndian.Uint64(src[p:]) ^ 0x2020202020202020; y != 0 {
					p += bits.TrailingZeros64(y) >> 3
					break
				}
				p += 8
			}
		}
	}
	return p
}

// spaceBits has bit c set for the JSON whitespace bytes c.
const spaceBits = 1<<' ' | 1<<'\t' | 1<<'\n' | 1<<'\r'

// push appends a token to t.toks and returns it, with its fields to be
// set (they may hold an earlier scan's values).
func (t *tape) push() *tok {
	n := len(t.toks)
	if n == cap(t.toks) {
		t.toks = slices.Grow(t.toks, 1)
	}
	t.toks = t.toks[:n+1]
	return &t.toks[n]
}

// scanValue scans the value starting at src[p] (not whitespace) and returns the
// offset just after it.
func (t *tape) scanValue(p, depth int) (int, bool) {
	src := t.src
	if p >= len(src) {
		return p, false
	}
	if t.w.ctx != nil {
		if t.steps++; t.steps%pollEvery == 0 && t.w.ended() {
			t.stopped = true
			return p, false
		}
	}
	i := uint32(len(t.toks))
	switch c := src[p]; {
	case c == '"':
		return t.scanString(p)
	case c == '{':
		return t.scanObject(p, depth)
	case c == '[':
		return t.scanArray(p, depth)
	case c == 't':
		if len(src)-p >= 4 && string(src[p:p+4]) == "true" {
			t.toks = append(t.toks, tok{kind: tBool, flags: fTrue, end: i + 1, pos: uint32(p), stop: uint32(p + 4)})
			return p + 4, true
		}
	case c == 'f':
		if len(src)-p >= 5 && string(src[p:p+5]) == "false" {
			t.toks = append(t.toks, tok{kind: tBool, end: i + 1, pos: uint32(p), stop: uint32(p + 5)})
			return p + 5, true
		}
	case c == 'n':
		if len(src)-p >= 4 && string(src[p:p+4]) == "null" {
			t.toks = append(t.toks, tok{kind: tNull, end: i + 1, pos: uint32(p), stop: uint32(p + 4)})
			return p + 4, true
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return t.scanNumber(p)
	}
	return p, false
}

func (t *tape) scanObject(p, depth int) (int, bool) {
	if depth >= maxTapeDepth {
		return p, false
	}
	src := t.src
	i := uint32(len(t.toks))
	t.toks = append(t.toks, tok{kind: tObject, pos: uint32(p)})
	p = skipSpace(src, p+1)
	if p < len(src) && src[p] == '}' {
		t.toks[i].end, t.toks[i].stop = i+1, uint32(p+1)
		return p + 1, true
	}
	// One bit per key hash in each of seen and seen2 (from different bits
	// of the hash), to spot possible duplicates.
	var seen, seen2 uint64
	var bloom uint32
	var n uint32
	for {
		// Compact JSON has no whitespace between tokens: each expected
		// byte is looked for first, whitespace skipped only if it is not
		// there.
		if p >= len(src) || src[p] != '"' {
			if p = skipSpace(src, p); p >= len(src) || src[p] != '"' {
				return p, false
			}
		}
		k := uint32(len(t.toks))
		var ok bool
		var h uint16
		if q := plainRun(src, p+1); q < len(src) && src[q] == '"' {
			// The common key, without escapes: scanString inline.
			h = keyHash(src[p+1 : q])
			*t.push() = tok{kind: tString, hash: h, off: uint32(p + 1), n: uint32(q - p - 1), end: k + 1,
				pos: uint32(p), stop: uint32(q + 1)}
			p = q + 1
		} else {
			if p, ok = t.stringRest(p, q); !ok {
				return p, false
			}
			kt := &t.toks[k]
			h = keyHash(t.bytes(k))
			kt.hash = h
		}
		if n < maxPairwiseKeys {
			bit, bit2 := uint64(1)<<(h&63), uint64(1)<<(h>>6&63)
			if seen&bit != 0 && seen2&bit2 != 0 {
				// The earlier keys of this object are complete on the
				// tape: compare those of the same hash.
				for c := i + 1; c < k; c = t.toks[c+1].end {
					if t.toks[c].hash == h && string(t.bytes(c)) == string(t.bytes(k)) {
						t.noteDup(int(t.toks[k].pos))
						break
					}
				}
			}
			seen |= bit
			seen2 |= bit2
		}
		bloom |= keyBloom(h)
		if p >= len(src) || src[p] != ':' {
			if p = skipSpace(src, p); p >= len(src) || src[p] != ':' {
				return p, false
			}
		}
		var c byte
		if p = skipSpace(src, p+1); p < len(src) {
			c = src[p]
		}
		if c == '"' || c == '{' {
			// The common values, strings and objects, without the
			// dispatch of scanValue (whose look at done is repeated
			// here); a string without escapes is scanned inline.
			if t.w.ctx != nil {
				if t.steps++; t.steps%pollEvery == 0 && t.w.ended() {
					t.stopped = true
					return p, false
				}
			}
			if c == '{' {
				p, ok = t.scanObject(p, depth+1)
			} else if q := plainRun(src, p+1); q < len(src) && src[q] == '"' {
				v := uint32(len(t.toks))
				*t.push() = tok{kind: tString, off: uint32(p + 1), n: uint32(q - p - 1), end: v + 1,
					pos: uint32(p), stop: uint32(q + 1)}
				p, ok = q+1, true
			} else {
				p, ok = t.stringRest(p, q)
			}
		} else {
			p, ok = t.scanValue(p, depth+1)
		}
		if !ok {
			return p, false
		}
		n++
		if p < len(src) && src[p] == ',' {
			p++
			continue
		}
		p = skipSpace(src, p)
		if p >= len(src) {
			return p, false
		}
		switch src[p] {
		case ',':
			p++
			continue
		case '}':
			if n > maxPairwiseKeys {
				// Past a few dozen keys nearly every bit of seen is set:
				// the keys are looked up in a hash table instead, which
				// keeps the object linear in its members.
				keys := t.keys[:0]
				for c := i + 1; c < uint32(len(t.toks)); c = t.toks[c+1].end {
					keys = append(keys, c)
				}
				t.keys = keys
				var stop func() bool
				if t.w.ctx != nil {
					stop = func() bool { return t.w.ctx != nil && t.w.ended() }
				}
				d, found, stopped := t.set.RepeatStop(len(keys), func(j int) []byte { return t.bytes(keys[j]) }, stop)
				if stopped {
					t.stopped = true
					return p, false
				}
				if found {
					t.noteDup(int(t.toks[keys[d]].pos))
				}
			}
			t.toks[i].n, t.toks[i].off = n, bloom
			t.toks[i].end, t.toks[i].stop = uint32(len(t.toks)), uint32(p+1)
			return p + 1, true
		}
		return p, false
	}
}

// keyBloom is the bit of the keys of hash h in the key bloom filter an
// object token keeps (tok.off): an object none of whose keys has the bit
// has no key of hash h.
func keyBloom(h uint16) uint32 { return 1 << (h & 31) }

// keyHash is a cheap hash of an object key, from its length and three of
// its bytes. It speeds up looking keys up and spotting duplicates; equal
// hashes are always confirmed by comparing the keys.
func keyHash[K string | []byte](b K) uint16 {
	const m = 0x9E3779B1
	h := uint32(len(b))
	if len(b) > 0 {
		h = (h*m ^ uint32(b[0])) * m
		h = (h ^ uint32(b[len(b)-1])) * m
		h = (h ^ uint32(b[len(b)/2])) * m
	}
	h ^= h >> 16
	return uint16(h)
}

func (t *tape) scanArray(p, depth int) (int, bool) {
	if depth >= maxTapeDepth {
		return p, false
	}
	src := t.src
	i := uint32(len(t.toks))
	t.toks = append(t.toks, tok{kind: tArray, pos: uint32(p)})
	p = skipSpace(src, p+1)
	if p < len(src) && src[p] == ']' {
		t.toks[i].end, t.toks[i].stop = i+1, uint32(p+1)
		return p + 1, true
	}
	var n uint32
	for {
		var ok bool
		if p, ok = t.scanValue(p, depth+1); !ok {
			return p, false
		}
		n++
		if p < len(src) && src[p] == ',' {
			p = skipSpace(src, p+1)
			continue
		}
		p = skipSpace(src, p)
		if p >= len(src) {
			return p, false
		}
		switch src[p] {
		case ',':
			p = skipSpace(src, p+1)
			continue
		case ']':
			t.toks[i].n = n
			t.toks[i].end, t.toks[i].stop = uint32(len(t.toks)), uint32(p+1)
			return p + 1, true
		}
		return p, false
	}
}

// scanNumber scans a number by the JSON grammar; what follows it is checked
// by the caller.
func (t *tape) scanNumber(p int) (int, bool) {
	src := t.src
	start := p
	if src[p] == '-' {
		p++
	}
	if p >= len(src) {
		return p, false
	}
	switch c := src[p]; {
	case c == '0':
		p++
	case c >= '1' && c <= '9':
		p = skipDigits(src, p+1)
	default:
		return p, false
	}
	if p < len(src) && src[p] == '.' {
		p++
		if p >= len(src) || src[p] < '0' || src[p] > '9' {
			return p, false
		}
		p = skipDigits(src, p+1)
	}
	if p < len(src) && (src[p] == 'e' || src[p] == 'E') {
		p++
		if p < len(src) && (src[p] == '+' || src[p] == '-') {
			p++
		}
		if p >= len(src) || src[p] < '0' || src[p] > '9' {
			return p, false
		}
		p = skipDigits(src, p+1)
	}
	i := uint32(len(t.toks))
	t.toks = append(t.toks, tok{kind: tNumber, off: uint32(start), n: uint32(p - start), end: i + 1, pos: uint32(start), stop: uint32(p)})
	return p, true
}

func skipDigits(src []byte, p int) int {
	for p < len(src) && src[p] >= '0' && src[p] <= '9' {
		p++
	}
	return p
}

// plainByte marks the bytes that stand for themselves inside a JSON
// string: printable ASCII other than '"' and '\\'.
var plainByte = func() (a [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		a[c] = c != '"' && c != '\\'
	}
	return a
}()

// plainRun returns the offset of the first byte at or after src[i] that
// is not plainByte (len(src) if none): eight at a time, then one at a
// time.
func plainRun(src []byte, i int) int {
	for i+8 <= len(src) {
		if m := notPlain8(binary.LittleEndian.Uint64(src[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(src) && plainByte[src[i]] {
		i++
	}
	return i
}

// scanString scans the string whose opening quote is at src[p].
func (t *tape) scanString(p int) (int, bool) {
	src := t.src
	// A closing quote after the plain bytes ends the common string,
	// anything else goes to stringRest.
	i := plainRun(src, p+1)
	if i < len(src) && src[i] == '"' {
		k := t.push()
		k.kind, k.flags, k.hash = tString, 0, 0
		k.off, k.n, k.end, k.pos, k.stop = uint32(p+1), uint32(i-p-1), uint32(len(t.toks)), uint32(p), uint32(i+1)
		return i + 1, true
	}
	return t.stringRest(p, i)
}

// stringRest finishes scanning the string whose opening quote is at
// src[p], from its first byte at src[i] that is not plainByte.
func (t *tape) stringRest(p, i int) (int, bool) {
	src := t.src
	for {
		for i < len(src) && plainByte[src[i]] {
			i++
		}
		if i >= len(src) {
			return i, false
		}
		switch c := src[i]; {
		case c == '"':
			k := t.push()
			k.kind, k.flags, k.hash = tString, 0, 0
			k.off, k.n, k.end, k.pos, k.stop = uint32(p+1), uint32(i-p-1), uint32(len(t.toks)), uint32(p), uint32(i+1)
			return i + 1, true
		case c == '\\':
			return t.escapedString(p, i)
		case c < 0x20:
			return i, false
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, false
			}
			i += size
		}
	}
}

// notPlain8 returns, for the eight bytes of x (little endian), a word
// whose lowest set bit is the high bit of the first byte that is not
// plainByte ('"', '\\', a control byte or a byte of a multi-byte
// sequence), or 0 when all eight are plain. Bits above the lowest may be
// set spuriously.
func notPlain8(x uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := x ^ ('"' * ones)
	b := x ^ ('\\' * ones)
	return ((q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x | x) & highs
}

// escapedString finishes scanning a string whose opening quote is at
// src[quote] and whose first escape is at src[i], decoding it into buf.
func (t *tape) escapedString(quote, i int) (int, bool) {
	start := quote + 1
	off := len(t.buf)
	buf, i, ok := unescape(append(t.buf, t.src[start:i]...), t.src, i)
	t.buf = buf
	if !ok {
		return i, false
	}
	k := uint32(len(t.toks))
	t.toks = append(t.toks, tok{kind: tString, flags: fBuf, off: uint32(off), n: uint32(len(buf) - off), end: k + 1,
		pos: uint32(quote), stop: uint32(i + 1)})
	return i + 1, true
}

// unescape appends to buf the decoded string contents from src[i] up to
// the closing quote, and returns the offset of that quote.
func unescape(buf, src []byte, i int) ([]byte, int, bool) {
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return buf, i, true
		case plainByte[c]:
			buf = append(buf, c)
			i++
			continue
		case c < 0x20:
			return buf, i, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size <= 1 {
				return buf, i, false
			}
			buf = append(buf, src[i:i+size]...)
			i += size
			continue
		}
		// c == '\\'
		if i+1 >= len(src) {
			return buf, i, false
		}
		switch e := src[i+1]; e {
		case '"', '\\', '/':
			buf, i = append(buf, e), i+2
		case 'b':
			buf, i = append(buf, '\b'), i+2
		case 'f':
			buf, i = append(buf, '\f'), i+2
		case 'n':
			buf, i = append(buf, '\n'), i+2
		case 'r':
			buf, i = append(buf, '\r'), i+2
		case 't':
			buf, i = append(buf, '\t'), i+2
		case 'u':
			r, ok := hex4(src, i+2)
			if !ok {
				return buf, i, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a well-formed pair is handled here; anything else
				// is left to encoding/json's replacement rules.
				if i+6 > len(src) || src[i] != '\\' || src[i+1] != 'u' {
					return buf, i, false
				}
				r2, ok := hex4(src, i+2)
				if !ok {
					return buf, i, false
				}
				dec := utf16.DecodeRune(r, r2)
				if dec == utf8.RuneError {
					return buf, i, false
				}
				r = dec
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return buf, i, false
		}
	}
	return buf, i, false
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
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

// value returns the subtree at token i as encoding/json decodes it with
// UseNumber: map[string]any (the last of duplicate members winning), []any,
// string, json.Number, bool or nil. Strings are copied out of the tape.
func (t *tape) value(i uint32) any {
	k := &t.toks[i]
	switch k.kind {
	case tNull:
		return nil
	case tBool:
		return k.flags&fTrue != 0
	case tNumber:
		return json.Number(t.bytes(i))
	case tString:
		return string(t.bytes(i))
	case tArray:
		a := make([]any, 0, k.n)
		for c := i + 1; c < k.end; c = t.toks[c].end {
			a = append(a, t.value(c))
		}
		return a
	}
	m := make(map[string]any, k.n)
	for c := i + 1; c < k.end; c = t.toks[c+1].end {
		m[string(t.bytes(c))] = t.value(c + 1)
	}
	return m
}

// fromValue fills t with value, which must consist of the types decoded
// JSON holds with numbers as json.Number (see [Validator.ValidateValue]).
// It reports false for anything else, including a json.Number that
// scanNumber refuses and nesting deeper than maxTapeDepth; every string and
// number is copied into buf.
func (t *tape) fromValue(value any) bool {
	t.reset(nil)
	return t.add(value, 0)
}

func (t *tape) add(value any, depth int) bool {
	i := uint32(len(t.toks))
	switch x := value.(type) {
	case nil:
		t.toks = append(t.toks, tok{kind: tNull, end: i + 1})
	case bool:
		k := tok{kind: tBool, end: i + 1}
		if x {
			k.flags = fTrue
		}
		t.toks = append(t.toks, k)
	case string:
		t.addBytes(tString, x)
	case json.Number:
		if _, _, _, ok := scanNumber(string(x)); !ok {
			return false
		}
		t.addBytes(tNumber, string(x))
	case []any:
		if depth >= maxTapeDepth {
			return false
		}
		t.toks = append(t.toks, tok{kind: tArray, n: uint32(len(x))})
		for _, e := range x {
			if !t.add(e, depth+1) {
				return false
			}
		}
		t.toks[i].end = uint32(len(t.toks))
	case map[string]any:
		if depth >= maxTapeDepth {
			return false
		}
		t.toks = append(t.toks, tok{kind: tObject, n: uint32(len(x))})
		var bloom uint32
		for k, e := range x {
			t.addBytes(tString, k)
			h := keyHash(k)
			t.toks[len(t.toks)-1].hash = h
			bloom |= keyBloom(h)
			if !t.add(e, depth+1) {
				return false
			}
		}
		t.toks[i].off = bloom
		t.toks[i].end = uint32(len(t.toks))
	default:
		return false
	}
	return uint64(len(t.buf)) <= maxTapeBytes && uint64(len(t.toks)) <= maxTapeBytes
}

func (t *tape) addBytes(kind uint8, s string) {
	i := uint32(len(t.toks))
	off := len(t.buf)
	t.buf = append(t.buf, s...)
	t.toks = append(t.toks, tok{kind: kind, flags: fBuf, off: uint32(off), n: uint32(len(s)), end: i + 1})
}
