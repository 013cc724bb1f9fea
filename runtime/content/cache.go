package content

import (
	"context"
	"sync"
)

// Key identifies one upload of one attachment owner to one subscription.
// A confirmed reference is reused only under the same key: the same
// immutable owner and the same receiver authorization context.
type Key struct {
	// Attachment is the owner (compared by identity).
	Attachment *Attachment
	// BackendID is the registration id of the backend.
	BackendID string
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
}

// Cache holds confirmed uploads by Key. Only UploadAll fills it, and only
// with confirmations, so a hit is always a verified reference. It is safe
// for concurrent use; the zero value is empty and ready. A cache is meant to
// live as long as one hook call (or the attachments it names).
type Cache struct {
	mu sync.Mutex
	m  map[Key]Confirmation
}

// Lookup returns the confirmation stored for k.
func (c *Cache) Lookup(k Key) (Confirmation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Len returns the number of confirmations held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Cache) store(k Key, v Confirmation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[Key]Confirmation)
	}
	if _, ok := c.m[k]; !ok { // the first confirmation stays
		c.m[k] = v
	}
}

// Job is one attachment to upload to one destination.
type Job struct {
	// Attachment is the owner of the bytes.
	Attachment *Attachment
	// Destination is the subscription's upload endpoint.
	Destination Destination
}

// Key returns the job's cache key.
func (j Job) Key() Key {
	return Key{Attachment: j.Attachment, BackendID: j.Destination.BackendID, SubscriptionIndex: j.Destination.SubscriptionIndex}
}

// Outcome is the result of one Job.
type Outcome struct {
	// Confirmation is set when Err is nil.
	Confirmation Confirmation
	// Err is the job's failure; failures of one job do not affect others.
	Err error
	// Cached reports a confirmation taken from the cache (nothing was sent).
	Cached bool
}

// UploadAll runs jobs concurrently, at most the limiter's bound at a time,
// and returns one outcome per job, in order. Jobs whose key is in cache
// reuse the stored confirmation; jobs repeating a key earlier in jobs share
// its outcome; new confirmations are stored in cache (which may be nil). An
// attachment named by several jobs is read once, by whichever job reaches
// it first. When ctx ends, running uploads are cancelled, jobs not yet
// started fail with ctx's error, and UploadAll returns only after every
// upload it started has finished.
func (u *Uploader) UploadAll(ctx context.Context, cache *Cache, jobs []Job) []Outcome {
	out := make([]Outcome, len(jobs))
	first := make(map[Key]int, len(jobs))
	var dups [][2]int // {index, index of the first job with its key}
	var wg sync.WaitGroup
	for i, j := range jobs {
		k := j.Key()
		if p, ok := first[k]; ok {
			dups = append(dups, [2]int{i, p})
			continue
		}
		first[k] = i
		if cache != nil {
			if c, ok := cache.Lookup(k); ok {
				out[i] = Outcome{Confirmation: c, Cached: true}
				continue
			}
		}
		if err := u.lim.Acquire(ctx); err != nil {
			out[i].Err = err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer u.lim.Release()
			c, err := u.upload(ctx, j.Attachment, j.Destination)
			if err != nil {
				out[i].Err = err
				return
			}
			out[i].Confirmation = c
			if cache != nil {
				cache.store(k, c)
			}
		}()
	}
	wg.Wait()
	for _, d := range dups {
		out[d[0]] = out[d[1]]
	}
	return out
}
