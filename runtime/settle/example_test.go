package settle_test

import (
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
)

// Example settles a tool.before occurrence across three interceptors the
// way a harness does: send the effective event and state, apply each
// response, stop when decision-making ends.
func Example() {
	event, err := gen.ParseEvent([]byte(`{"id":"evt1","source":"urn:test:harness","time":"2026-09-15T12:00:00Z","type":"tool.before",
		"tool":{"name":"write_file","input":{"path":"README.md","content":"x"},"origin":"native"},"call":{"id":"c1"},"path":"example"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	granted, err := gen.ParseCapabilities([]byte(`{"effects":["deny","allow","modify","message"],"modify":{"input":{"replace":false,"merge":true}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	responses := []string{
		`{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"path":"docs/README.md"}},{"type":"message","text":"moved into docs/"}]}`,
		`{"protocolVersion":"draft","effects":[{"type":"return","value":"cached"}]}`, // return was not advertised
		`{"protocolVersion":"draft","effects":[{"type":"allow"}]}`,
	}

	occ, err := settle.New(event, settle.Initial{})
	if err != nil {
		fmt.Println(err) // invalid host input
		return
	}
	for _, raw := range responses {
		if occ.Done() {
			break
		}
		// A harness sends occ.Event() and occ.RequestState() here.
		var res gen.InterceptResponseResult
		if err := res.UnmarshalJSON([]byte(raw)); err != nil {
			fmt.Println("malformed:", err) // an operational failure, before settlement
			continue
		}
		if err := occ.Apply(*granted, &res); err != nil {
			fmt.Println("rejected:", err) // apply the subscription's failure policy once
		}
	}
	s := occ.State()
	fmt.Println(s.Permission, string(s.Input), s.Messages)
	// Output:
	// rejected: settle: response rejected: effect 0: effect_not_granted
	// allow {"path":"docs/README.md","content":"x"} [moved into docs/]
}
