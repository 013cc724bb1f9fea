package validate

import (
	"context"
	"sync"
)

// Doc is a JSON document tokenized once, by [Scan], so that everything a
// message goes through reads the same tokens instead of scanning its bytes
// again: [Validator.CheckDoc] validates them, a JSON-RPC envelope is
// classified from the top-level members, and the generated decoders of
// package gen decode from them.
//
// The tokens are in document order; each value is one token followed by
// its children (an array's elements; an object's members as a key token,
// then the value's tokens), and every token records the index of the token
// after its subtree ([Doc.End]). Token 0 is the document's value. Strings
// are decoded once, while scanning; a Doc aliases the bytes it was scanned
// from, which must not change while it is in use.
//
// A Doc is not safe for concurrent use. Release returns its memory to a
// pool; nothing it returned may be used afterwards.
type Doc struct {
	docState
	tp tape // pooled with the Doc, which keeps its memory
}

// docState is what a Doc knows about one document; Release clears it.
type docState struct {
	src     []byte
	t       *tape  // &Doc.tp
	tokens  bool   // t holds src as parsed: the token accessors may be used
	stopped bool   // scanning gave up because the context ended
	loaded  bool   // without tokens: fallback has run
	err     *Error // malformed, a repeated member name, or unverified; Schema empty
	// verdictOnly: CheckDoc does not locate a violation (see VerdictOnly).
	verdictOnly bool
}

var docPool = sync.Pool{New: func() any { return new(Doc) }}

// Scan tokenizes src, in one pass linear in its size, observing ctx: once
// ctx.Done() is closed, scanning stops within about a thousand values and
// the Doc reports [Doc.Stopped]. Scan never calls ctx.Err.
//
// The tokens model src exactly as encoding/json (with UseNumber) reads it,
// except that repeated member names are kept and reported ([Doc.Repeated]).
// A document whose reading is not modelled (invalid UTF-8, escaped lone
// surrogates, nesting deeper than 10000 levels) or that is not JSON has no
// tokens ([Doc.Tokens] is false); it is still checked by
// [Validator.CheckDoc], through encoding/json, exactly as [Validator.Check]
// checks it.
func Scan(ctx context.Context, src []byte) *Doc {
	d := docPool.Get().(*Doc)
	d.src, d.t = src, &d.tp
	t := d.t
	if t.parseUntil(src, watchOf(ctx)) {
		d.tokens = true
	} else if t.stopped {
		d.stopped = true
	}
	return d
}

// fallback loads a document without tokens the way Check does, through
// encoding/json, when it is first checked: a message that is not JSON is
// then rejected by whoever reads it first, without this decoding.
func (d *Doc) fallback() {
	if d.tokens || d.stopped || d.loaded {
		return
	}
	d.loaded = true
	value, derr := decodeStd(d.src)
	if derr != nil {
		d.err = derr
		return
	}
	if at, ok := findDuplicate(d.src); ok {
		d.err = duplicate("", d.src, at)
		return
	}
	if !d.t.fromValue(value) {
		d.err = &Error{Keyword: KeywordUnverified}
	}
}

// Release gives the memory of d back for reuse; d must not be used
// afterwards. A nil d is ignored, and so is a second Release of d (which
// would otherwise hand the same Doc to two later scans).
func (d *Doc) Release() {
	if d == nil || d.t == nil {
		return
	}
	d.docState = docState{}
	if t := &d.tp; reusable(t) {
		// Decoded strings are not kept around in pooled memory.
		clear(t.buf)
		t.src, t.w = nil, watch{}
	} else {
		d.tp = tape{}
	}
	docPool.Put(d)
}

// Src returns the bytes d was scanned from.
func (d *Doc) Src() []byte { return d.src }

// Tokens reports whether the token accessors describe the document: it
// was scanned completely and its reading is modelled (see [Scan]). A
// document with repeated member names has tokens.
func (d *Doc) Tokens() bool { return d.tokens }

// Stopped reports whether scanning gave up because the context ended.
func (d *Doc) Stopped() bool { return d.stopped }

// Repeated returns the byte offset of the first member name, in document
// order, that repeats an earlier member of its object, if any.
func (d *Doc) Repeated() (offset int, ok bool) {
	if d.tokens && d.t.dup {
		return d.t.dupAt, true
	}
	return 0, false
}

// Len returns the number of tokens.
func (d *Doc) Len() int { return len(d.t.toks) }

// First returns the first byte of the value at token i: '{', '[', '"',
// 't', 'f', 'n', or the first byte of a number.
func (d *Doc) First(i int) byte { return d.src[d.t.toks[i].pos] }

// End returns the index of the token after the value at token i and its
// children.
func (d *Doc) End(i int) int { return int(d.t.toks[i].end) }

// Count returns the number of elements of the array, or of members of the
// object, at token i.
func (d *Doc) Count(i int) int { return int(d.t.toks[i].n) }

// Text returns the decoded contents of the string at token i, or the text
// of the number at token i. It aliases d.
func (d *Doc) Text(i int) []byte { return d.t.bytes(uint32(i)) }

// Escaped reports whether the string at token i is written with escapes
// (its Text differs from the bytes between its quotes).
func (d *Doc) Escaped(i int) bool { return d.t.toks[i].flags&fBuf != 0 }

// Pos returns the offset in [Doc.Src] of the first byte of the value at
// token i.
func (d *Doc) Pos(i int) int { return int(d.t.toks[i].pos) }

// Stop returns the offset in [Doc.Src] just after the value at token i.
func (d *Doc) Stop(i int) int { return int(d.t.toks[i].stop) }

// Raw returns the JSON text of the value at token i, exactly as written.
// It aliases d.
func (d *Doc) Raw(i int) []byte {
	k := &d.t.toks[i]
	return d.src[k.pos:k.stop]
}

// Member returns the token of the value of the last member called name of
// the object at token obj, if there is one. A document without tokens, or
// an obj that is not a token, has none.
func (d *Doc) Member(obj int, name string) (int, bool) {
	if !d.tokens || obj < 0 || obj >= len(d.t.toks) {
		return 0, false
	}
	toks := d.t.toks
	if toks[obj].kind != tObject {
		return 0, false
	}
	found, at := false, 0
	h := keyHash(name)
	for c := uint32(obj + 1); c < toks[obj].end; c = toks[c+1].end {
		if toks[c].hash == h && string(d.t.bytes(c)) == name {
			found, at = true, int(c+1)
		}
	}
	return at, found
}

// CheckDoc is [Validator.Check] of the document d was scanned from, without
// scanning it again: the verdict, the errors and the observation of ctx are
// Check's. Scanning stopped by ctx makes CheckDoc return an error wrapping
// ctx.Err(), as Check does.
func (v *Validator) CheckDoc(ctx context.Context, ref string, d *Doc) error {
	key, fs, err := v.schema(ref)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	if d.stopped {
		return stopped(ctx.Err())
	}
	if err := d.loadError(key); err != nil {
		return err
	}
	size := len(d.src)
	if d.verdictOnly {
		// Decided as a document too large to be explained.
		size = maxExactBytes + 1
	}
	return v.decide(ctx, key, fs, d.t, size)
}

// loadError puts d on its tape if it has no tokens yet (see fallback) and
// returns, for the schema named key, the error a malformed document or a
// repeated member name gets, or nil.
func (d *Doc) loadError(key string) error {
	d.fallback()
	if d.err != nil {
		e := *d.err
		e.Schema = key
		return &e
	}
	if d.tokens && d.t.dup {
		return duplicate(key, d.src, d.t.dupAt)
	}
	return nil
}

// ValidateDoc is [Validator.Validate] of the document d was scanned from,
// without scanning it again: the verdict and the errors are Validate's.
// d must not have been stopped by its context (a stopped scan is reported
// as unverified).
func (v *Validator) ValidateDoc(ref string, d *Doc) error {
	key, fs, err := v.schema(ref)
	if err != nil {
		return err
	}
	if d.stopped {
		return &Error{Schema: key, Keyword: KeywordUnverified}
	}
	if err := d.loadError(key); err != nil {
		return err
	}
	return judge(key, fs, d.t)
}

// FirstValidAt is [Validator.FirstValid] of the value at token i of d,
// which must have tokens: the index of the first of refs that value is
// certainly valid against, or -1.
func (v *Validator) FirstValidAt(refs []string, d *Doc, i int) int {
	if !d.tokens || d.t.dup || i < 0 || i >= len(d.t.toks) {
		return -1
	}
	for k, ref := range refs {
		_, fs, err := v.schema(ref)
		if err != nil || fs == nil || fs.root == nil {
			continue
		}
		r := fastRun{t: d.t}
		if r.valid(fs.root, uint32(i)) && !r.abort {
			return k
		}
	}
	return -1
}
