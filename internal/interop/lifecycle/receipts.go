package lifecycle

import (
	"context"
	"encoding/json"
	"sync"
)

// Receipt kinds. The server records received, replied, upload, observed
// and observer-blocked itself; the client posts the others with /mark.
const (
	KindReceived        = "received"
	KindReplied         = "replied"
	KindAcquired        = "acquired"
	KindAccepted        = "accepted"
	KindCancelled       = "cancelled"
	KindUpload          = "upload"
	KindObserved        = "observed"
	KindEmitted         = "emitted"
	KindDiscarded       = "discarded"
	KindChainSettled    = "chain-settled"
	KindObserverBlocked = "observer-blocked"
)

// markKinds are the kinds a client may post with /mark.
var markKinds = map[string]bool{
	KindAcquired: true, KindAccepted: true, KindCancelled: true, KindEmitted: true,
	KindDiscarded: true, KindChainSettled: true,
}

// Receipt is one entry of GET /receipts. Which members are present depends
// on Kind (LIFECYCLE.md, "Receipt shapes"):
//
//	received          {kind, id, message}
//	replied           {kind, id}
//	acquired, accepted, cancelled, emitted, discarded, chain-settled
//	                  {kind, id, scenario}  (client marks)
//	upload            {kind, subscription, ref, status, size, sha256}
//	observed          {kind, eventId, event, message}
//	observer-blocked  {kind, id}
type Receipt struct {
	Kind         string
	ID           string
	Scenario     string
	EventID      string
	Message      json.RawMessage
	Event        json.RawMessage
	Subscription *string
	Ref          *string
	Status       int
	Size         int64
	SHA256       string
}

// MarshalJSON writes the members of the receipt's kind, exactly.
func (r Receipt) MarshalJSON() ([]byte, error) {
	switch r.Kind {
	case KindReceived:
		return json.Marshal(struct {
			Kind    string          `json:"kind"`
			ID      string          `json:"id"`
			Message json.RawMessage `json:"message"`
		}{r.Kind, r.ID, r.Message})
	case KindReplied, KindObserverBlocked:
		return json.Marshal(struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		}{r.Kind, r.ID})
	case KindUpload:
		return json.Marshal(struct {
			Kind         string  `json:"kind"`
			Subscription *string `json:"subscription"`
			Ref          *string `json:"ref"`
			Status       int     `json:"status"`
			Size         int64   `json:"size"`
			SHA256       string  `json:"sha256"`
		}{r.Kind, r.Subscription, r.Ref, r.Status, r.Size, r.SHA256})
	case KindObserved:
		return json.Marshal(struct {
			Kind    string          `json:"kind"`
			EventID string          `json:"eventId"`
			Event   json.RawMessage `json:"event"`
			Message json.RawMessage `json:"message"`
		}{r.Kind, r.EventID, r.Event, r.Message})
	default:
		return json.Marshal(struct {
			Kind     string `json:"kind"`
			ID       string `json:"id"`
			Scenario string `json:"scenario"`
		}{r.Kind, r.ID, r.Scenario})
	}
}

// UnmarshalJSON reads any receipt shape.
func (r *Receipt) UnmarshalJSON(data []byte) error {
	var w struct {
		Kind         string          `json:"kind"`
		ID           string          `json:"id"`
		Scenario     string          `json:"scenario"`
		EventID      string          `json:"eventId"`
		Message      json.RawMessage `json:"message"`
		Event        json.RawMessage `json:"event"`
		Subscription *string         `json:"subscription"`
		Ref          *string         `json:"ref"`
		Status       int             `json:"status"`
		Size         int64           `json:"size"`
		SHA256       string          `json:"sha256"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = Receipt{Kind: w.Kind, ID: w.ID, Scenario: w.Scenario, EventID: w.EventID, Message: w.Message, Event: w.Event,
		Subscription: w.Subscription, Ref: w.Ref, Status: w.Status, Size: w.Size, SHA256: w.SHA256}
	return nil
}

// Receipts is the body of GET /receipts.
type Receipts struct {
	Entries []Receipt `json:"entries"`
}

// store is the server's ordered receipt list and its response barriers.
// Every append wakes the waiters, which re-check their condition under
// the lock.
type store struct {
	mu       sync.Mutex
	entries  []Receipt
	changed  chan struct{}
	released map[string]int
}

func newStore() *store {
	return &store{changed: make(chan struct{}), released: map[string]int{}}
}

// add records r before anything waits on its consequences.
func (s *store) add(r Receipt) {
	s.mu.Lock()
	s.entries = append(s.entries, r)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// count returns how many entries satisfy match.
func (s *store) countLocked(match func(*Receipt) bool) int {
	n := 0
	for i := range s.entries {
		if match(&s.entries[i]) {
			n++
		}
	}
	return n
}

// wait blocks until at least n entries satisfy match, or ctx ends.
func (s *store) wait(ctx context.Context, n int, match func(*Receipt) bool) error {
	for {
		s.mu.Lock()
		got := s.countLocked(match)
		ch := s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// snapshot returns a copy of the entries.
func (s *store) snapshot() Receipts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Receipts{Entries: append([]Receipt{}, s.entries...)}
}

// releasedUpTo is the number of arrivals of an id whose responses are
// released; sticky means all of them, later retries included.
const sticky = int(^uint(0) >> 1)

// waitRelease blocks until the n-th arrival (from 1) of id is released, or
// ctx ends.
func (s *store) waitRelease(ctx context.Context, id string, n int) error {
	for {
		s.mu.Lock()
		ok := s.released[id] >= n
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release releases the arrivals of id up to count, or (count 0) all of
// them for good: a sticky release answers a retry of the same id at once.
// A release never takes back an earlier one.
func (s *store) release(id string, count int) {
	if count <= 0 {
		count = sticky
	}
	s.mu.Lock()
	if count > s.released[id] {
		s.released[id] = count
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// addReceived records an intercept receipt and returns the number of
// intercept receipts of its id, this one included: the index (from 1) of
// its scripted response.
func (s *store) addReceived(r Receipt) int {
	s.mu.Lock()
	s.entries = append(s.entries, r)
	n := s.countLocked(func(e *Receipt) bool { return e.Kind == KindReceived && e.ID == r.ID })
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return n
}
