package gen_test

import (
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
)

const exampleRequest = `{"jsonrpc":"2.0","id":"evt-1","method":"hooks/intercept","params":{` +
	`"protocolVersion":"draft","event":{"id":"evt-1","source":"https://harness.example/runtime/42",` +
	`"type":"tool.before","time":"2026-08-24T08:51:14Z",` +
	`"tool":{"name":"write_file","input":{"path":"README.md","size":1.50},"origin":"native"},` +
	`"call":{"id":"call-1"},"path":"native","x-trace":{"span":7}},` +
	`"capabilities":{"effects":["deny"]}}}`

// ParseInterceptRequest validates a request against the canonical schema and
// decodes it; EncodeInterceptRequest writes it back. Members the schema does
// not name (here the event's "x-trace") are kept and re-emitted, and
// application JSON (the tool input, with its number 1.50) keeps its exact
// text, so the round trip is lossless.
func ExampleParseInterceptRequest() {
	req, err := gen.ParseInterceptRequest([]byte(exampleRequest))
	if err != nil {
		fmt.Println("rejected:", err)
		return
	}
	ev := req.Params.Event.ToolBefore
	fmt.Println("event:", ev.Type, ev.Tool.Name, ev.Call.ID)
	for _, m := range ev.Unknown {
		fmt.Println("unknown member:", m.Name, string(m.Value))
	}
	out, err := gen.EncodeInterceptRequest(req)
	if err != nil {
		fmt.Println("encode:", err)
		return
	}
	fmt.Println("lossless:", string(out) == exampleRequest)
	// Output:
	// event: tool.before write_file call-1
	// unknown member: x-trace {"span":7}
	// lossless: true
}

// A rejected document is a *ParseError naming the JSON pointer of the failing
// location and the schema keyword; it never carries the offending value,
// which may be a secret. Every such error matches ErrInvalid.
func ExampleParseError() {
	bad := `{"jsonrpc":"2.0","id":"evt-1","method":"hooks/intercept","params":{` +
		`"protocolVersion":"draft","event":{"id":"evt-1","source":"https://harness.example/runtime/42",` +
		`"type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"tool":{"name":"","input":{},"origin":"native"},` +
		`"call":{"id":"call-1"},"path":"native"},` +
		`"capabilities":{"effects":["deny"]}}}`
	_, err := gen.ParseInterceptRequest([]byte(bad))
	var pe *gen.ParseError
	if errors.As(err, &pe) {
		fmt.Println("pointer:", pe.Pointer)
		fmt.Println("keyword:", pe.Keyword)
	}
	fmt.Println("invalid:", errors.Is(err, gen.ErrInvalid))
	// Output:
	// pointer: /params/event/tool/name
	// keyword: minLength
	// invalid: true
}

// The event catalogue says, for each event, whether it can be intercepted and
// what its boundary can grant.
func ExampleLookupEvent() {
	for _, name := range []gen.EventName{gen.EventToolBefore, gen.EventSessionEnd} {
		info, ok := gen.LookupEvent(name)
		if !ok {
			continue
		}
		fmt.Println(info.Name, info.GoName, "interceptable:", info.Interceptable())
		if info.Interceptable() {
			fmt.Println("  effects:", info.EffectFamilies)
			fmt.Println("  modify:", info.ModifyTargets)
		}
	}
	_, ok := gen.LookupEvent("tool.unknown")
	fmt.Println("tool.unknown known:", ok)
	fmt.Println("events:", len(gen.Events()))
	// Output:
	// tool.before ToolBefore interceptable: true
	//   effects: [deny allow ask modify inject flow return message]
	//   modify: [input]
	// session.end SessionEnd interceptable: false
	// tool.unknown known: false
	// events: 32
}
