package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
)

// Kind is the kind of a JSON-RPC message.
type Kind uint8

// Message kinds reported by [Classify].
const (
	// KindInvalid is the kind of a message that failed classification.
	KindInvalid Kind = iota
	// KindRequest is a message with "method" and a non-null "id".
	KindRequest
	// KindNotification is a message with "method" and no "id".
	KindNotification
	// KindResponse is a success response: "id" and "result".
	KindResponse
	// KindErrorResponse is an error response: "id" and "error".
	KindErrorResponse
)

// String returns the lower-case name of the kind.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindErrorResponse:
		return "error response"
	default:
		return "invalid"
	}
}

// Envelope holds the top-level members of a classified message.
//
// Params, Result and Error are the raw JSON of those members, exactly as they
// appeared in the input (nil when absent); they alias the slice passed to
// [Classify], which must therefore not be modified while they are in use.
type Envelope struct {
	// Kind is the message kind.
	Kind Kind
	// ID is the message id, exactly as received; zero for notifications.
	ID ID
	// Method is the decoded method name of a request or notification.
	Method string
	// Params is the raw "params" member (an object or an array), or nil.
	Params json.RawMessage
	// Result is the raw "result" member of a success response.
	Result json.RawMessage
	// Error is the raw "error" member of an error response; see
	// [Envelope.DecodeError].
	Error json.RawMessage
}

// Indexes of the known envelope members in memberNames.known.
const (
	memJSONRPC = iota
	memID
	memMethod
	memParams
	memResult
	memError
)

func envelopeMember(name []byte) int {
	switch string(name) {
	case "jsonrpc":
		return memJSONRPC
	case "id":
		return memID
	case "method":
		return memMethod
	case "params":
		return memParams
	case "result":
		return memResult
	case "error":
		return memError
	}
	return -1
}

// internMethod returns the method name in tok (a string token without
// escapes), reusing the constant for the methods this protocol defines.
func internMethod(inner []byte) string {
	switch string(inner) {
	case MethodIntercept:
		return MethodIntercept
	case MethodObserve:
		return MethodObserve
	case MethodCapabilities:
		return MethodCapabilities
	}
	return string(inner)
}

// Classify decodes the top-level members of one JSON-RPC message in a single
// pass and reports its kind.
//
// It returns an error wrapping [ErrParse] when data is not exactly one valid
// UTF-8 JSON text, and otherwise one of the sentinels that wrap
// [ErrInvalidRequest] when the text is not a valid JSON-RPC 2.0 envelope:
// [ErrBatch], [ErrNotObject], [ErrDuplicateMember], [ErrVersion],
// [ErrInvalidID], [ErrInvalidMethod], [ErrInvalidParamsType],
// [ErrResultAndError], [ErrMixedMembers], [ErrMissingMember] or
// [ErrInvalidErrorObject]. Syntax is always checked over the whole input
// before envelope rules, so a syntax error anywhere wins.
//
// Rules: "jsonrpc" must be the string "2.0"; "id" must be a non-empty string
// or an integer (null is allowed in responses only); "method" must be a
// non-empty string; "params" must be an object or an array (JSON-RPC 2.0; the
// AHP methods further require an object, checked by the method layer);
// "error" must be an object with an integer "code" and a string "message";
// a response has exactly one of "result" and "error"; member names must be
// unique, in the envelope, in its error object and at any depth below; unknown members are
// ignored (AHP-CORE-003). Nested params and result content is validated as
// JSON syntax, and a repeated member name anywhere in it (RFC 7493, I-JSON)
// is [ErrDuplicateMember] as in the envelope. Scanning is linear in the
// size of the message, whatever its members and nesting.
//
// On an envelope error the returned Envelope has Kind [KindInvalid] and, if
// the message had exactly one valid id member, that ID, so a server may echo
// it; its other fields are zero. On a parse error the Envelope is zero.
func Classify(data []byte) (Envelope, error) {
	return classify(data, nil)
}

// ClassifyContext is [Classify] within ctx: scanning stops soon after ctx
// ends (every few thousand values at most), and the error then wraps
// ctx.Err() instead of a classification. Nothing it starts outlives the
// call.
func ClassifyContext(ctx context.Context, data []byte) (Envelope, error) {
	if err := ctx.Err(); err != nil {
		return Envelope{}, err
	}
	var stop atomic.Bool
	done := make(chan struct{})
	release := context.AfterFunc(ctx, func() {
		stop.Store(true)
		close(done)
	})
	defer func() {
		if !release() {
			<-done
		}
	}()
	env, err := classify(data, &stop)
	if errors.Is(err, errStopped) {
		return Envelope{}, ctx.Err()
	}
	return env, err
}

// errStopped is what classify reports when its stop flag interrupted it.
var errStopped = errors.New("jsonrpc: scan stopped")

// classify is Classify, interrupted once stop (if not nil) is set.
func classify(data []byte, stop *atomic.Bool) (Envelope, error) {
	s := scanner{data: data}
	s.skipWS()
	if s.pos >= len(data) {
		return Envelope{}, parseError(s.pos)
	}
	// Values are scanned by the shared lexer, which also finds repeated
	// member names at any depth (RFC 7493) and observes stop.
	lx := getLexer()
	defer putLexer(lx)
	lx.Stop = stop
	if c := data[s.pos]; c != '{' {
		end, ok := lx.Value(data, s.pos, 0)
		if lx.Stopped() {
			return Envelope{}, errStopped
		}
		s.pos = end
		if !ok {
			return Envelope{}, parseError(s.pos)
		}
		s.skipWS()
		if s.pos != len(data) {
			return Envelope{}, parseError(s.pos)
		}
		if c == '[' {
			return Envelope{}, ErrBatch
		}
		return Envelope{}, ErrNotObject
	}
	s.pos++

	var c classifier
	s.skipWS()
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return Envelope{}, parseError(s.pos)
			}
			keyStart := s.pos
			escaped, ok := s.scanString()
			if !ok {
				return Envelope{}, parseError(s.pos)
			}
			key := data[keyStart:s.pos]
			s.skipWS()
			if s.peek() != ':' {
				return Envelope{}, parseError(s.pos)
			}
			s.pos++
			s.skipWS()
			valStart := s.pos
			end, ok := lx.Value(data, s.pos, 1)
			if lx.Stopped() {
				return Envelope{}, errStopped
			}
			if !ok {
				return Envelope{}, parseError(end)
			}
			s.pos = end
			val := data[valStart:s.pos]
			_, dup := lx.Dup()
			if dup {
				lx.Reset()
			}
			if escaped {
				c.member([]byte(decodeStringToken(key)), val, dup)
			} else {
				c.member(key[1:len(key)-1], val, dup)
			}

			s.skipWS()
			switch s.peek() {
			case ',':
				s.pos++
				s.skipWS()
				continue
			case '}':
				s.pos++
			default:
				return Envelope{}, parseError(s.pos)
			}
			break
		}
	}
	s.skipWS()
	if s.pos != len(data) {
		return Envelope{}, parseError(s.pos)
	}
	return c.finish()
}

// TopMember is one member of the top-level object of a message, as a
// tokenizer that has already checked the whole message found it: see
// [ClassifyScanned].
type TopMember struct {
	// Name is the decoded member name.
	Name []byte
	// Value is the member's JSON text, exactly as written.
	Value []byte
	// Repeat reports that Value holds an object with a repeated member
	// name (RFC 7493) whose repeat comes before any other in the message.
	Repeat bool
}

// ClassifyScanned is [Classify] of a message that a tokenizer has already
// checked, without scanning it again: data is exactly one valid UTF-8 JSON
// text (Classify would not report [ErrParse] for it) and, when it is an
// object, top lists its members in document order. The first repeated
// member name of the message, in document order, if it is inside a
// member's value, is marked on that member (Repeat); repeated top-level
// names are found here. The result is Classify's, error included.
func ClassifyScanned(data []byte, top []TopMember) (Envelope, error) {
	s := scanner{data: data}
	s.skipWS()
	switch s.peek() {
	case '{':
	case '[':
		return Envelope{}, ErrBatch
	default:
		return Envelope{}, ErrNotObject
	}
	// A member without a value breaks the contract above: no scan of a
	// JSON text yields one. It is malformed input, not a reason to panic.
	for i := range top {
		if len(top[i].Value) == 0 {
			return Envelope{}, parseError(0)
		}
	}
	var c classifier
	for i := range top {
		c.member(top[i].Name, top[i].Value, top[i].Repeat)
	}
	return c.finish()
}

// classifier applies the envelope rules to the members of a message, in
// document order.
type classifier struct {
	env     Envelope
	names   memberNames
	envErr  error // first envelope error, reported after syntax is checked
	idDup   bool
	version bool
}

func (c *classifier) note(err error) {
	if c.envErr == nil {
		c.envErr = err
	}
}

// member takes the member called name (decoded) whose value is val; dup
// reports a repeated member name inside val.
func (c *classifier) member(name, val []byte, dup bool) {
	if dup {
		c.note(ErrDuplicateMember)
	}
	env := &c.env
	member := envelopeMember(name)
	if member < 0 {
		if c.envErr == nil {
			if !c.names.addOther(string(name)) {
				c.note(ErrDuplicateMember)
			}
		}
		return
	}
	if !c.names.addKnown(member) {
		c.note(ErrDuplicateMember)
		if member == memID {
			c.idDup = true
		}
		return
	}
	switch member {
	case memJSONRPC:
		if string(val) == `"`+Version+`"` || (val[0] == '"' && stringTokenEquals(val, Version)) {
			c.version = true
		} else {
			c.note(ErrVersion)
		}
	case memID:
		if validIDToken(val, true) {
			env.ID = ID{raw: string(val)}
		} else {
			c.note(ErrInvalidID)
		}
	case memMethod:
		switch {
		case val[0] != '"' || len(val) == 2:
			c.note(ErrInvalidMethod)
		case string(val) == `"`+MethodIntercept+`"`:
			env.Method = MethodIntercept
		case hasBackslash(val):
			env.Method = decodeStringToken(val)
		default:
			env.Method = internMethod(val[1 : len(val)-1])
		}
	case memParams:
		if val[0] == '{' || val[0] == '[' {
			env.Params = val
		} else {
			c.note(ErrInvalidParamsType)
		}
	case memResult:
		env.Result = val
	case memError:
		if _, err := parseErrorObject(val, false); err != nil {
			c.note(err)
		} else {
			env.Error = val
		}
	}
}

// finish applies the rules on which members are present.
func (c *classifier) finish() (Envelope, error) {
	env, names, envErr := c.env, &c.names, c.envErr
	hasID := names.has(memID)
	hasMethod, hasParams := names.has(memMethod), names.has(memParams)
	hasResult, hasError := names.has(memResult), names.has(memError)
	if envErr == nil {
		switch {
		case !c.version:
			envErr = ErrVersion
		case hasMethod || hasParams:
			switch {
			case hasResult || hasError:
				envErr = ErrMixedMembers
			case !hasMethod:
				envErr = ErrMissingMember
			case !hasID:
				env.Kind = KindNotification
			case env.ID.IsNull():
				envErr = ErrInvalidID
			default:
				env.Kind = KindRequest
			}
		case hasResult && hasError:
			envErr = ErrResultAndError
		case !hasResult && !hasError:
			envErr = ErrMissingMember
		case !hasID:
			envErr = ErrMissingMember
		case hasResult:
			env.Kind = KindResponse
		default:
			env.Kind = KindErrorResponse
		}
	}
	if envErr != nil {
		id := env.ID
		if c.idDup {
			id = ID{}
		}
		return Envelope{ID: id}, envErr
	}
	return env, nil
}

func parseError(offset int) error {
	return fmt.Errorf("%w at byte offset %d", ErrParse, offset)
}

func hasBackslash(b []byte) bool {
	return bytes.IndexByte(b, '\\') >= 0
}

// DecodeError decodes the "error" member of an error response. Data in the
// result aliases the classified input. It returns [ErrInvalidErrorObject] (or
// [ErrDuplicateMember]) when the member is absent or malformed.
func (e Envelope) DecodeError() (*Error, error) {
	if len(e.Error) == 0 {
		return nil, ErrInvalidErrorObject
	}
	s := scanner{data: e.Error}
	if !s.skipValue(0) || s.pos != len(e.Error) {
		return nil, ErrInvalidErrorObject
	}
	out, err := parseErrorObject(e.Error, true)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Indexes of the known error-object members in memberNames.known.
const (
	errCode = iota
	errMessage
	errData
)

func errorMember(name string) int {
	switch name {
	case "code":
		return errCode
	case "message":
		return errMessage
	case "data":
		return errData
	}
	return -1
}

// stringTokenEquals reports whether the valid string token tok decodes to s.
func stringTokenEquals(tok []byte, s string) bool {
	if hasBackslash(tok) {
		return decodeStringToken(tok) == s
	}
	return len(tok) >= 2 && string(tok[1:len(tok)-1]) == s
}

// parseErrorObject validates raw, a syntactically valid JSON value, as a
// JSON-RPC error object and, if decode is set, returns its content.
func parseErrorObject(raw []byte, decode bool) (Error, error) {
	var out Error
	if len(raw) == 0 || raw[0] != '{' {
		return out, ErrInvalidErrorObject
	}
	s := scanner{data: raw, pos: 1}
	var names memberNames
	s.skipWS()
	for s.peek() == '"' {
		keyStart := s.pos
		escaped, ok := s.scanString()
		if !ok {
			return out, ErrInvalidErrorObject
		}
		key := raw[keyStart:s.pos]
		s.skipWS()
		s.pos++ // ':'
		s.skipWS()
		valStart := s.pos
		if !s.skipValue(1) {
			return out, ErrInvalidErrorObject
		}
		val := raw[valStart:s.pos]
		var (
			member int
			name   string
		)
		if escaped {
			name = decodeStringToken(key)
			member = errorMember(name)
		} else {
			member = errorMember(string(key[1 : len(key)-1]))
		}
		if member < 0 {
			if !escaped {
				name = string(key[1 : len(key)-1])
			}
			if !names.addOther(name) {
				return out, ErrDuplicateMember
			}
		} else if !names.addKnown(member) {
			return out, ErrDuplicateMember
		}
		switch member {
		case errCode:
			c := val[0]
			if (c != '-' && (c < '0' || c > '9')) || !isIntegerToken(val) {
				return out, ErrInvalidErrorObject
			}
			n, ok := parseInt64(val)
			if !ok || int64(int(n)) != n {
				return out, ErrInvalidErrorObject
			}
			out.Code = int(n)
		case errMessage:
			if val[0] != '"' {
				return out, ErrInvalidErrorObject
			}
			if decode {
				out.Message = decodeStringToken(val)
			}
		case errData:
			if decode {
				out.Data = val
			}
		}
		s.skipWS()
		if s.peek() == ',' {
			s.pos++
			s.skipWS()
		}
	}
	if !names.has(errCode) || !names.has(errMessage) {
		return out, ErrInvalidErrorObject
	}
	return out, nil
}
