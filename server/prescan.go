package server

import (
	"bytes"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// paramsHead holds the members of params that the dispatcher reads before
// canonical validation, each exactly as [jsonrpc.Member] returns it: the raw
// value of the last occurrence, and whether there is one.
type paramsHead struct {
	version    []byte // params.protocolVersion
	hasVersion bool
	event      []byte // params.event
	hasEvent   bool
	typ        []byte // params.event.type, when params.event is an object
	hasType    bool
}

// readHead reads params.protocolVersion, params.event and params.event.type
// of a message that passed [jsonrpc.Classify]: one pass over params for the
// first two and one over the event for its type, instead of one
// [jsonrpc.Member] call (a whole pass) per member.
func readHead(params []byte) paramsHead {
	var p paramsHead
	var values [2][]byte
	var found [2]bool
	jsonrpc.Members(params, headNames[:], values[:], found[:])
	p.version, p.hasVersion = values[0], found[0]
	p.event, p.hasEvent = values[1], found[1]
	if p.hasEvent {
		p.typ, p.hasType = jsonrpc.Member(p.event, "type")
	}
	return p
}

// head is readHead of the request's params, read from the tokens of the
// message when it has them.
func (rq *request) head() paramsHead {
	params := rq.paramsAt()
	if params < 0 {
		return readHead(rq.env.Params)
	}
	d := rq.doc
	var p paramsHead
	if at, ok := d.Member(params, "protocolVersion"); ok {
		p.version, p.hasVersion = d.Raw(at), true
	}
	if at, ok := d.Member(params, "event"); ok {
		p.event, p.hasEvent = d.Raw(at), true
		if t, ok := d.Member(at, "type"); ok {
			p.typ, p.hasType = d.Raw(t), true
		}
	}
	return p
}

// unsupportedVersion is checkVersion of the request's params.
func (rq *request) unsupportedVersion() bool {
	params := rq.paramsAt()
	if params < 0 {
		return checkVersion(rq.env.Params)
	}
	at, ok := rq.doc.Member(params, "protocolVersion")
	if !ok {
		return false
	}
	return versionUnsupported(rq.doc.Raw(at), true)
}

// classifyDoc is jsonrpc.Classify of the message doc holds, from its
// tokens.
func classifyDoc(d *validate.Doc) (jsonrpc.Envelope, error) {
	src := d.Src()
	if d.First(0) != '{' {
		return jsonrpc.ClassifyScanned(src, nil)
	}
	dupAt, dup := d.Repeated()
	var buf [8]jsonrpc.TopMember
	top := buf[:0]
	for c, end := 1, d.End(0); c < end; c = d.End(c + 1) {
		v := c + 1
		top = append(top, jsonrpc.TopMember{
			Name:   d.Text(c),
			Value:  d.Raw(v),
			Repeat: dup && dupAt >= d.Pos(v) && dupAt < d.Stop(v),
		})
	}
	return jsonrpc.ClassifyScanned(src, top)
}

// headNames are the members of params that readHead reads.
var headNames = [2]string{"protocolVersion", "event"}

// unsupportedVersion reports whether params carries a protocolVersion other
// than the supported one. An absent member is left to schema validation.
func (p *paramsHead) unsupportedVersion() bool {
	return versionUnsupported(p.version, p.hasVersion)
}

// eventName returns params.event.type when it is a string.
func (p *paramsHead) eventName() (gen.EventName, bool) {
	if !p.hasType {
		return "", false
	}
	return eventName(p.typ)
}

// versionUnsupported reports whether raw, the protocolVersion member if ok,
// names a version other than the supported one.
func versionUnsupported(raw []byte, ok bool) bool {
	if !ok {
		return false
	}
	if string(raw) == `"`+gen.ProtocolVersion+`"` {
		return false
	}
	v, ok := jsonrpc.StringValue(raw)
	return !ok || v != gen.ProtocolVersion
}

// eventName decodes the string token t. The name of a catalogue event,
// written without escapes, is looked up without being copied.
func eventName(t []byte) (gen.EventName, bool) {
	if n := len(t); n >= 2 && t[0] == '"' && t[n-1] == '"' && bytes.IndexByte(t, '\\') < 0 {
		// A catalogue name holds no quote, backslash or control character,
		// so this token is the JSON string of that name.
		if info, known := eventInfos()[gen.EventName(t[1:n-1])]; known {
			return info.info.Name, true
		}
	}
	s, ok := jsonrpc.StringValue(t)
	return gen.EventName(s), ok
}
