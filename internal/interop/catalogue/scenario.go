package catalogue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// File is the catalogue fixture document (LIFECYCLE.md, "Catalogue adapter
// extension"): {version:1, scenarios:[{id, steps, expected, requests:{},
// responses:{}}]}. The request and response maps are empty: the catalogue
// suite intercepts nothing.
type File struct {
	Version   int        `json:"version"`
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one catalogue scenario.
type Scenario struct {
	ID          string                     `json:"id"`
	Description string                     `json:"description,omitempty"`
	Requests    map[string]json.RawMessage `json:"requests"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Steps       []Step                     `json:"steps"`
	// Expected is the exact actual object of the report:
	// {sent:[...], registrations:[{accepted}]}.
	Expected json.RawMessage `json:"expected"`
	// Receipts is what the verifier checks in the server's receipts,
	// independently of the report: one entry per sent message, in order.
	// The client never reads it.
	Receipts []ReceiptProof `json:"receipts"`
}

// ReceiptProof is the expected receipt of one sent message: observed (with
// the event id) or rejected (with the error kind).
type ReceiptProof struct {
	Kind      string `json:"kind"`
	EventID   string `json:"eventId,omitempty"`
	ErrorKind string `json:"errorKind,omitempty"`
}

// Step ops, executed by the client in order. Any other op fails the
// scenario.
const (
	// OpNotify delivers Event (a canonical event) as an observation
	// through the SDK's harness (hooks.Hooks.Dispatch, observe
	// subscription): the harness builds and sends the hooks/observe
	// notification.
	OpNotify = "notify"
	// OpRawNotify sends Message (any JSON value) or Raw (any text, one
	// line) to the receiver's event binding unchanged: a receiver
	// negative that the harness would never build.
	OpRawNotify = "rawNotify"
	// OpRegister evaluates Registration with the SDK's own load-time
	// checks (hooks.New against the discovered manifest).
	OpRegister = "register"
)

// Step is one scripted action.
type Step struct {
	Op           string          `json:"op"`
	Event        json.RawMessage `json:"event,omitempty"`
	Message      json.RawMessage `json:"message,omitempty"`
	Raw          *string         `json:"raw,omitempty"`
	Registration json.RawMessage `json:"registration,omitempty"`
}

// ErrFixture marks a scenario file this adapter cannot run.
var ErrFixture = errors.New("catalogue fixture")

const maxFile = 32 << 20

// Load reads and checks a scenario file.
func Load(path string) (*File, error) {
	data, err := interop.ReadBounded(path, maxFile)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	return Parse(data)
}

// Parse decodes and checks a scenario document: version 1, unique ids, and
// steps with their members. Unknown ops are left to the run, where they fail
// their scenario.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", ErrFixture, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%w: version must be 1", ErrFixture)
	}
	seen := map[string]bool{}
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		if sc.ID == "" || seen[sc.ID] {
			return nil, fmt.Errorf("%w: scenario %d: missing or repeated id", ErrFixture, i)
		}
		seen[sc.ID] = true
	}
	return &f, nil
}
