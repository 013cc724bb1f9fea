package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The encoders below append one compact JSON-RPC envelope to dst and return
// the extended slice. They never fail and never emit a raw CR or LF byte, so
// their output can be framed for stdio as is.
//
// Raw params, result and error data must be valid JSON; they are copied
// verbatim when they contain no line break, and compacted otherwise (raw CR
// and LF can only be insignificant whitespace in valid JSON). Invalid JSON
// is not detected on the fast path: the output is then invalid too, but it
// still stays on one line. Raw values that are empty or only whitespace
// count as absent.

// AppendRequest appends a request envelope. id should be a string or integer
// id; an absent or null id is written as null, which receivers reject as an
// invalid request. Absent params are omitted.
func AppendRequest(dst []byte, id ID, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	if p := trimWS(params); len(p) > 0 {
		dst = append(dst, `,"params":`...)
		dst = appendRaw(dst, p)
	}
	return append(dst, '}')
}

// AppendNotification appends a notification envelope (no id). Absent params
// are omitted.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, method)
	if p := trimWS(params); len(p) > 0 {
		dst = append(dst, `,"params":`...)
		dst = appendRaw(dst, p)
	}
	return append(dst, '}')
}

// AppendResponse appends a success response envelope echoing id exactly; an
// absent id is written as null. An absent result is written as null.
func AppendResponse(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	if r := trimWS(result); len(r) > 0 {
		dst = appendRaw(dst, r)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}

// AppendErrorResponse appends an error response envelope echoing id exactly;
// an absent id is written as null. A nil e is sent as CodeInternalError, an
// empty Message is replaced by the generic text of the code, and an absent
// Data is omitted.
func AppendErrorResponse(dst []byte, id ID, e *Error) []byte {
	if e == nil {
		e = NewError(CodeInternalError)
	}
	msg := e.Message
	if msg == "" {
		msg = NewError(e.Code).Message
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	if d := trimWS(e.Data); len(d) > 0 {
		dst = append(dst, `,"data":`...)
		dst = appendRaw(dst, d)
	}
	return append(dst, "}}"...)
}

func appendID(dst []byte, id ID) []byte {
	if id.raw == "" {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}

// appendRaw appends raw JSON, compacting it when it contains a line break.
func appendRaw(dst, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...)
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err == nil {
		return buf.Bytes()
	}
	// Not valid JSON: keep it on one line anyway.
	dst = buf.Bytes()
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Control characters, quotes and
// backslashes are escaped, U+2028 and U+2029 are escaped for JavaScript
// peers, and invalid UTF-8 is replaced by U+FFFD, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
