// Package roundtrip holds what the round-trip programs of internal/perf and
// the scale benchmarks share: the host of the stdio tool.before fixture-like
// call (hooks.New with one backend, a ToolBefore input), the exact request
// bytes that host sends, and the response every baseline backend writes.
package roundtrip

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// Response is the answer every baseline backend writes: an intercept result
// without effects, for the id of Input.
const Response = `{"jsonrpc":"2.0","id":"evt-bench","result":{"protocolVersion":"draft","effects":[]}}`

// BackendID is the registration id of the one backend.
const BackendID = "com.example.bench"

// Input is the call every host makes: a native read_file tool.before with a
// fixed event id, so that every request has the same size.
func Input() hooks.ToolBeforeInput { return InputID("evt-bench") }

// InputID is Input with the event id id: concurrent calls on one stdio
// backend need distinct ids (responses are correlated by id).
func InputID(id string) hooks.ToolBeforeInput {
	return hooks.ToolBeforeInput{ID: id, Name: "read_file", Input: map[string]any{"path": "/etc/hosts"},
		Origin: gen.ExecutionEventToolOriginNative, CallID: "call-1", Path: "native"}
}

// Config is the host configuration: tool.before intercepts granting deny
// and allow.
func Config() hooks.Config {
	return hooks.Config{Source: "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()}}
}

// Registration is a registration with the one backend on the transport
// given as JSON, subscribed to tool.before intercepts with a 120 s budget
// (generous: under valgrind on a loaded machine a child's start and first
// call take seconds).
func Registration(transportJSON string) []byte {
	return []byte(`{"protocolVersion":"draft","hooks":[{"id":"` + BackendID + `","transport":` + transportJSON + `,` +
		`"subscriptions":[{"events":["tool.before"],"mode":"intercept","timeoutMs":120000,"failurePolicy":"fail-closed","content":{"default":"body"}}]}]}`)
}

// StdioTransport is the transport JSON of a persistent stdio backend
// running command with args.
func StdioTransport(command string, args ...string) string {
	b, _ := json.Marshal(map[string]any{"type": "stdio", "command": command, "args": append([]string{}, args...), "lifecycle": "persistent"})
	return string(b)
}

// HTTPTransport is the transport JSON of an HTTP backend at url.
func HTTPTransport(url string) string {
	b, _ := json.Marshal(map[string]any{"type": "http", "url": url})
	return string(b)
}

// New is the host of every measurement, on the backend's transport JSON.
func New(transportJSON string) (*hooks.Hooks, error) {
	return hooks.New(Registration(transportJSON), Config())
}

// Call makes the call of Input and checks that it was allowed without
// diagnostics.
func Call(ctx context.Context, h *hooks.Hooks) error { return CallInput(ctx, h, Input()) }

// CallInput makes the call of in and checks that it was allowed without
// diagnostics.
func CallInput(ctx context.Context, h *hooks.Hooks, in hooks.ToolBeforeInput) error {
	res, err := h.ToolBefore(ctx, in)
	if err != nil {
		return err
	}
	if len(res.Diagnostics) != 0 {
		d := res.Diagnostics[0]
		return fmt.Errorf("roundtrip: call %s: diagnostic %s at %s (%s, status %d)", in.ID, d.Code, d.Stage, d.Reason, d.Status)
	}
	if res.Permission != gen.PermissionNone {
		return fmt.Errorf("roundtrip: call %s: unexpected permission %q", in.ID, res.Permission)
	}
	return nil
}

// capture records the body of the first request and answers Response.
type capture struct{ body []byte }

func (c *capture) Exchange(_ context.Context, msg transport.Message) ([]byte, error) {
	if c.body == nil {
		c.body = append([]byte(nil), msg.Body...)
	}
	return []byte(Response), nil
}
func (c *capture) Notify(context.Context, transport.Message) error { return nil }
func (c *capture) Close() error                                    { return nil }

// Request returns the exact bytes (without a newline) the host sends for
// Input, as the SDK encodes them now: the baselines send these.
func Request(ctx context.Context) ([]byte, error) {
	c := &capture{}
	cfg := Config()
	cfg.Transports = map[string]transport.Transport{BackendID: c}
	h, err := hooks.New(Registration(HTTPTransport("http://127.0.0.1:1/")), cfg)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := Call(ctx, h); err != nil {
		return nil, err
	}
	if c.body == nil {
		return nil, errors.New("roundtrip: no request sent")
	}
	return c.body, nil
}
