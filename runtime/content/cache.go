package content

import (
	"context"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
)

// Key identifies one upload of one attachment owner to one exact upload
// destination. A confirmed reference is reused only under the same key: the
// same immutable owner, the same subscription, and the same receiver
// authorization context, which is the exact endpoint and the exact auth
// binding the upload is sent under (the reference is valid only within the
// scope the receiver derived from that credential). Build keys with
// Job.Key.
type Key struct {
	// Attachment is the owner (compared by identity).
	Attachment *Attachment
	// BackendID is the registration id of the backend.
	BackendID string
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
	// Endpoint is the upload endpoint, exactly as configured.
	Endpoint string
	// Auth is the upload's auth binding in its canonical JSON encoding
	// (unknown members included), or empty when the subscription configures
	// none (the endpoint is tried without a credential, then discovery).
	Auth string
}

// Cache holds confirmed uploads by Key. Only UploadAll fills it, and only
// with confirmations, so a hit is always a verified reference. It is safe
// for concurrent use; the zero value is empty and ready. A cache is meant to
// live as long as one hook call (or the attachments it names).
//
// A cache belongs to the first Uploader whose UploadAll uses it: the
// uploader's credential provider is part of the authorization context, so
// UploadAll through another uploader neither reads nor fills it.
type Cache struct {
	mu    sync.Mutex
	owner *Uploader
	m     map[Key]Confirmation
}

// bind reports whether u may use the cache, binding it to u on first use.
func (c *Cache) bind(u *Uploader) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owner == nil {
		c.owner = u
	}
	return c.owner == u
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
	k, _ := j.key()
	return k
}

// key returns the job's cache key, and false when the job's auth binding
// has no canonical encoding (not exactly one arm set): such a job is never
// looked up, shared or stored, and its upload fails its configuration check.
func (j Job) key() (Key, bool) {
	d := j.Destination
	k := Key{Attachment: j.Attachment, BackendID: d.BackendID, SubscriptionIndex: d.SubscriptionIndex, Endpoint: d.Upload.Endpoint}
	if d.Upload.Auth == nil {
		return k, true
	}
	if !oneArm(*d.Upload.Auth) {
		return k, false
	}
	b, err := d.Upload.Auth.MarshalJSON()
	if err != nil {
		return k, false
	}
	k.Auth = string(b)
	return k, true
}

// oneArm reports whether exactly one arm of an auth binding is set.
func oneArm(a gen.Authentication) bool { return (a.Bearer == nil) != (a.Oauth == nil) }

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
// and returns one outcome per job, in order. Jobs whose key (Job.Key: the
// owner, the subscription, the exact endpoint and auth binding) is in cache
// reuse the stored confirmation; jobs repeating a key earlier in jobs share
// its outcome; new confirmations are stored in cache (which may be nil, and
// is not used when it belongs to another uploader). An
// attachment named by several jobs is read once, by whichever job reaches
// it first. When ctx ends, running uploads are cancelled, jobs not yet
// started fail with ctx's error, and UploadAll returns only after every
// upload it started has finished.
func (u *Uploader) UploadAll(ctx context.Context, cache *Cache, jobs []Job) []Outcome {
	out := make([]Outcome, len(jobs))
	first := make(map[Key]int, len(jobs))
	var dups [][2]int // {index, index of the first job with its key}
	var wg sync.WaitGroup
	if cache != nil && !cache.bind(u) {
		cache = nil
	}
	for i, j := range jobs {
		k, keyed := j.key()
		if p, ok := first[k]; ok && keyed {
			dups = append(dups, [2]int{i, p})
			continue
		}
		if keyed {
			first[k] = i
		}
		if cache != nil && keyed {
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
			if cache != nil && keyed {
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
