package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agenthooks/agenthooks-go/internal/interop"
)

// File is the lifecycle fixture document (LIFECYCLE.md, "Fixtures /
// control"): {version:1, scenarios:[...]}.
type File struct {
	Version   int        `json:"version"`
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one lifecycle or chain scenario. Requests are canonical
// hooks/intercept envelopes by key; the client takes their params.event
// and params.state, the server checks that what it receives carries the
// same event. Responses are indexed by request id: one canonical response
// envelope, or a list of them given to the successive arrivals of that id
// (the interceptors of a chain, serially, or the attempts of a retry), the
// last one repeating. Scripted responses are replied unchanged, invalid or
// mis-correlated ones included.
type Scenario struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Transports limits the scenario to these event transports (a stdio
	// framing case); empty means both.
	Transports []string `json:"transports,omitempty"`
	// Chain is the subscriptions of the scenario's registration; nil means
	// the default single body-selecting fail-closed interceptor.
	Chain *Chain `json:"chain,omitempty"`

	Requests  map[string]json.RawMessage `json:"requests"`
	Responses map[string]json.RawMessage `json:"responses"`
	// Unsolicited holds, by request id, stdio frames the server writes
	// before its reply to that id (stale or unknown ids the client must
	// discard without consuming the live request). HTTP ignores them.
	Unsolicited map[string][]json.RawMessage `json:"unsolicited,omitempty"`

	Steps []Step `json:"steps"`
	// Expected is the exact actual object of the report.
	Expected json.RawMessage `json:"expected"`
	// Proof is what the verifier checks in the server's receipts,
	// independently of the client's report.
	Proof Proof `json:"proof"`
}

// Chain is the registration of a scenario: subscriptions in registration
// order (interceptors run serially in this order), and whether the server
// holds observation notifications until released.
type Chain struct {
	Subscriptions []Subscription `json:"subscriptions"`
	// HoldObservers makes the server hold every observation of the
	// scenario (recording observer-blocked) until /release of
	// "EVENTID#observers".
	HoldObservers bool `json:"holdObservers,omitempty"`
}

// Subscription is one chain subscription.
type Subscription struct {
	Name string `json:"name"`
	// Mode is intercept or observe.
	Mode string `json:"mode"`
	// FailurePolicy is fail-open or fail-closed (intercept only).
	FailurePolicy string `json:"failurePolicy,omitempty"`
	// Content is the canonical content selection; nil means body.
	Content json.RawMessage `json:"content,omitempty"`
	// NoUpload leaves the subscription without an upload endpoint, so a
	// selected attachment body becomes a content gap.
	NoUpload bool `json:"noUpload,omitempty"`
}

// Step ops, executed by the client in order.
const (
	// OpBegin starts the host call of Request (its params.event through
	// hooks.Hooks.Deliver). Hold gates each response until OpAccept.
	OpBegin = "begin"
	// OpWait blocks on the server until Count intercept receipts of ID.
	OpWait = "wait"
	// OpRelease releases the server's response barrier of ID: for good
	// (sticky), or with Count only its first Count arrivals.
	OpRelease = "release"
	// OpAcquire waits until the held call of Request has received and
	// canonically validated its next response, and marks acquired.
	OpAcquire = "acquire"
	// OpAccept hands the acquired response to the SDK, which evaluates and
	// publishes it atomically; once the call returns it marks accepted.
	OpAccept = "accept"
	// OpCancel cancels the call of Request (logical cancellation), waits
	// for it to return and marks cancelled; a retained response is
	// discarded (marked discarded). After publication it changes nothing.
	OpCancel = "cancel"
	// OpDrain waits until the late response of a cancelled exchange of
	// Request has arrived and been discarded.
	OpDrain = "drain"
	// OpDuplicate sends a second transport attempt of Request's current
	// exchange (same id and bytes) and discards its answer.
	OpDuplicate = "duplicate"
	// OpAwait waits for the call of Request to return (an unheld call).
	OpAwait = "await"
	// OpUpload sends raw octets to the upload endpoint, with the framing
	// and credential the step declares, and records the receiver's status.
	OpUpload = "upload"
	// OpObserve delivers Request's event as an observation only (every
	// matching subscription gets hooks/observe), with Items replacing
	// event.items when given.
	OpObserve = "observe"
	// OpWaitObserved blocks on the server until Count observation
	// receipts of ID (an event id).
	OpWaitObserved = "waitObserved"
)

// Step is one scripted action.
type Step struct {
	Op      string `json:"op"`
	Request string `json:"request,omitempty"`
	ID      string `json:"id,omitempty"`
	Count   int    `json:"count,omitempty"`
	// Hold gates the responses of a begun call until accept.
	Hold bool `json:"hold,omitempty"`
	// Attachments are owned attachment bodies of the call, bound to the
	// event's attachment parts of the same part id.
	Attachments []AttachmentSpec `json:"attachments,omitempty"`
	// Items replaces event.items for an observe step.
	Items json.RawMessage `json:"items,omitempty"`

	// Upload probe members: the body, the declared framing (the actual
	// values when absent) and the credential: "upload" (the configured
	// upload token, the default), "invalid" or "none".
	BodyBase64     string `json:"bodyBase64,omitempty"`
	DeclaredSize   *int64 `json:"declaredSize,omitempty"`
	DeclaredSHA256 string `json:"declaredSha256,omitempty"`
	Credential     string `json:"credential,omitempty"`
}

// AttachmentSpec is an attachment body of a call.
type AttachmentSpec struct {
	PartID     string `json:"partId"`
	MediaType  string `json:"mediaType"`
	BodyBase64 string `json:"bodyBase64,omitempty"`
	// Source names a file of the client config's contentSources instead.
	Source string `json:"source,omitempty"`
}

// Proof is the receipt evidence of a scenario.
type Proof struct {
	// Counts is the exact number of receipts of each "kind:id" of the
	// scenario's ids (the ids of its requests and events); kinds absent
	// here must not occur for those ids.
	Counts map[string]int `json:"counts"`
	// Before lists ordered pairs of "kind:id": the first receipt of the
	// first precedes the first receipt of the second.
	Before [][2]string `json:"before,omitempty"`
	// Observed is the multiset of observed events (params.event) of the
	// scenario.
	Observed []json.RawMessage `json:"observed,omitempty"`
	// Uploads are the upload receipts of the scenario, in order, without
	// their receiver-allocated refs.
	Uploads []UploadProof `json:"uploads,omitempty"`
}

// UploadProof is an expected upload receipt.
type UploadProof struct {
	Subscription *string `json:"subscription"`
	Status       int     `json:"status"`
	Size         int64   `json:"size"`
	SHA256       string  `json:"sha256"`
}

// maxFile bounds a scenario file.
const maxFile = 32 << 20

// ErrFixture marks a scenario file this adapter cannot run.
var ErrFixture = errors.New("lifecycle fixture")

// Load reads and checks a scenario file: version 1, unique ids, known ops,
// steps that name known requests.
func Load(path string) (*File, error) {
	data, err := interop.ReadBounded(path, maxFile)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	return Parse(data)
}

// Parse decodes and checks a scenario document.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", ErrFixture, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrFixture, f.Version)
	}
	seen := map[string]bool{}
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		if sc.ID == "" || seen[sc.ID] {
			return nil, fmt.Errorf("%w: scenario %d: missing or repeated id", ErrFixture, i)
		}
		seen[sc.ID] = true
		if err := sc.check(); err != nil {
			return nil, fmt.Errorf("%w: scenario %q: %w", ErrFixture, sc.ID, err)
		}
	}
	return &f, nil
}

func (sc *Scenario) check() error {
	for _, t := range sc.Transports {
		if t != interop.TransportHTTP && t != interop.TransportStdio {
			return fmt.Errorf("unknown transport %q", t)
		}
	}
	if sc.Chain != nil {
		if len(sc.Chain.Subscriptions) == 0 {
			return errors.New("chain without subscriptions")
		}
		names := map[string]bool{}
		for _, s := range sc.Chain.Subscriptions {
			if s.Name == "" || names[s.Name] {
				return errors.New("chain subscription without a unique name")
			}
			names[s.Name] = true
			switch s.Mode {
			case "intercept":
				if s.FailurePolicy != "fail-open" && s.FailurePolicy != "fail-closed" {
					return fmt.Errorf("subscription %q: intercept needs a failure policy", s.Name)
				}
			case "observe":
				if s.FailurePolicy != "" {
					return fmt.Errorf("subscription %q: observe takes no failure policy", s.Name)
				}
			default:
				return fmt.Errorf("subscription %q: unknown mode %q", s.Name, s.Mode)
			}
		}
	}
	for i, st := range sc.Steps {
		switch st.Op {
		case OpBegin, OpAcquire, OpAccept, OpCancel, OpDrain, OpDuplicate, OpAwait, OpObserve:
			if _, ok := sc.Requests[st.Request]; !ok {
				return fmt.Errorf("step %d (%s): unknown request %q", i, st.Op, st.Request)
			}
		case OpWait, OpRelease, OpWaitObserved:
			if st.ID == "" {
				return fmt.Errorf("step %d (%s): no id", i, st.Op)
			}
		case OpUpload:
			switch st.Credential {
			case "", "upload", "invalid", "none":
			default:
				return fmt.Errorf("step %d: unknown credential %q", i, st.Credential)
			}
		default:
			return fmt.Errorf("step %d: unknown op %q", i, st.Op)
		}
	}
	if len(sc.Expected) == 0 {
		return errors.New("no expected actual")
	}
	return nil
}

// Runs reports whether the scenario runs over transport.
func (sc *Scenario) Runs(transport string) bool {
	return len(sc.Transports) == 0 || slices.Contains(sc.Transports, transport)
}

// responses returns the scripted responses of a request id in arrival
// order.
func (sc *Scenario) responses(id string) ([][]byte, error) {
	raw, ok := sc.Responses[id]
	if !ok {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	var list []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
	} else {
		list = []json.RawMessage{raw}
	}
	out := make([][]byte, 0, len(list))
	for _, r := range list {
		c, err := interop.CompactJSON(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
