package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
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
