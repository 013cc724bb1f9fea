package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ScenarioFile is the language-neutral scenario document of the interop
// contract (interop/README.md): {version:1, scenarios:[...]}.
type ScenarioFile struct {
	Version   int        `json:"version"`
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one row. Request and Response are full canonical JSON-RPC
// envelopes kept as raw bytes: the server must reply with Response unchanged
// and the receipts must hold the exact request.
type Scenario struct {
	ID          string          `json:"id"`
	Tags        []string        `json:"tags,omitempty"`
	Description string          `json:"description,omitempty"`
	Barrier     string          `json:"barrier,omitempty"`
	Request     json.RawMessage `json:"request"`
	Response    json.RawMessage `json:"response"`
	Expected    json.RawMessage `json:"expected,omitempty"`
	ExpectError bool            `json:"expectError,omitempty"`
	// HostExpected is this SDK's addition for negative rows: the partial host
	// state that must survive the rejected response unchanged. The client
	// never reads it; our tests assert it.
	HostExpected json.RawMessage `json:"hostExpected,omitempty"`
}

// maxScenarioFile bounds the scenario file read by both roles.
const maxScenarioFile = 64 << 20

// LoadScenarios reads and checks a scenario file: version 1, unique
// non-empty ids, request and response present, and exactly one of expected
// or expectError.
func LoadScenarios(path string) (*ScenarioFile, error) {
	data, err := ReadBounded(path, maxScenarioFile)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var f ScenarioFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode scenario file: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("scenario file: unsupported version %d", f.Version)
	}
	seen := make(map[string]bool, len(f.Scenarios))
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		if sc.ID == "" {
			return nil, fmt.Errorf("scenario file: scenario %d has no id", i)
		}
		if seen[sc.ID] {
			return nil, fmt.Errorf("scenario file: duplicate id %q", sc.ID)
		}
		seen[sc.ID] = true
		if len(sc.Request) == 0 || len(sc.Response) == 0 {
			return nil, fmt.Errorf("scenario file: %q lacks request or response", sc.ID)
		}
		hasExpected := len(sc.Expected) > 0 && !bytes.Equal(bytes.TrimSpace(sc.Expected), []byte("null"))
		if hasExpected == sc.ExpectError {
			return nil, fmt.Errorf("scenario file: %q needs exactly one of expected and expectError", sc.ID)
		}
	}
	return &f, nil
}

// ReadBounded reads a whole file, refusing files larger than limit.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, errors.New("file too large")
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, errors.New("file too large")
	}
	return buf.Bytes(), nil
}

// CompactJSON returns the compact single-line form of a JSON value, keeping
// member order and number text exactly (json.Compact only drops
// insignificant whitespace).
func CompactJSON(raw json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
