package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/agenthooks/agenthooks-go/internal/jsonlex"
)

// decode parses doc as exactly one JSON value, keeping numbers as
// json.Number. It rejects empty input, invalid UTF-8 and anything but
// whitespace after the value. The returned error never carries input bytes.
func decode(doc []byte) (any, *Error) {
	t := getTape()
	defer putTape(t)
	if t.parse(doc) {
		return t.value(0), nil
	}
	return decodeStd(doc)
}

// decodeStd is decode by encoding/json, for the documents a tape does not
// take, including every malformed one: encoding/json also locates the
// error.
func decodeStd(doc []byte) (any, *Error) {
	if !utf8.Valid(doc) {
		return nil, malformed(int64(invalidUTF8Offset(doc)))
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return nil, malformed(syntaxOffset(err, doc))
	}
	// Anything after the value, other than whitespace, is an error.
	if off := dec.InputOffset(); off < int64(len(doc)) {
		if rest := bytes.TrimLeft(doc[off:], " \t\r\n"); len(rest) > 0 {
			return nil, malformed(int64(len(doc) - len(rest)))
		}
	}
	return value, nil
}

// UniqueMembers checks that no object in doc, one JSON value with optional
// surrounding whitespace, has two members of the same name (after
// unescaping, as encoding/json decodes names). It returns nil, an [*Error]
// matching [ErrDuplicateMember] with the pointer and offset of the first
// repeat in document order, or an [*Error] matching [ErrMalformedJSON] for
// input that is not one JSON value. Its time is linear in the size of doc,
// whatever its members and nesting; it validates no schema.
func UniqueMembers(doc []byte) error {
	s := jsonlex.Acquire(true)
	defer s.Release()
	end, ok := s.Value(doc, jsonlex.SkipSpace(doc, 0), 0)
	if !ok || jsonlex.SkipSpace(doc, end) != len(doc) {
		if _, derr := decodeStd(doc); derr != nil {
			return derr
		}
		return malformed(int64(end)) // what encoding/json takes but I-JSON does not
	}
	if at, dup := s.Dup(); dup {
		return duplicate("", doc, at)
	}
	return nil
}

// findDuplicate looks for a repeated member name in doc, which must be
// one valid JSON value, and returns the offset of the first repeat.
func findDuplicate(doc []byte) (int, bool) {
	s := jsonlex.Acquire(true)
	defer s.Release()
	if _, ok := s.Value(doc, jsonlex.SkipSpace(doc, 0), 0); !ok {
		return 0, false
	}
	return s.Dup()
}

// duplicate is the error for a document whose member name at offset at
// repeats an earlier member of its object.
func duplicate(key string, doc []byte, at int) *Error {
	return &Error{Schema: key, Pointer: jsonlex.Pointer(doc, at), Keyword: KeywordDuplicateMember, Offset: int64(at)}
}

func malformed(offset int64) *Error {
	return &Error{Keyword: KeywordJSON, Offset: offset}
}

// syntaxOffset returns the byte offset at which decoding failed.
func syntaxOffset(err error, doc []byte) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	// io.EOF (empty input) and io.ErrUnexpectedEOF (truncated input) both
	// fail at the end of the document.
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return int64(len(doc))
	}
	return 0
}

func invalidUTF8Offset(doc []byte) int {
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(doc)
}
