package content

import (
	"context"
	"fmt"
)

// DefaultMaxConcurrentUploads is the default bound on concurrent uploads.
const DefaultMaxConcurrentUploads = 8

// Limiter bounds how many uploads run at once. It is safe for concurrent use
// and may be shared by several uploaders (a harness shares one across all
// its calls).
type Limiter struct {
	sem chan struct{}
}

// NewLimiter returns a limiter admitting n concurrent holders; n must be
// positive.
func NewLimiter(n int) (*Limiter, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: MaxConcurrentUploads must be positive", ErrInvalid)
	}
	return &Limiter{sem: make(chan struct{}, n)}, nil
}

// Acquire waits for a permit or for ctx to end; the error then wraps
// ctx.Err(). A context that has already ended never gets a permit.
func (l *Limiter) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("content: upload queue: %w", err)
	}
	select {
	case l.sem <- struct{}{}:
		if err := ctx.Err(); err != nil { // both were ready: the end wins
			<-l.sem
			return fmt.Errorf("content: upload queue: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("content: upload queue: %w", ctx.Err())
	}
}

// Release returns a permit obtained by Acquire.
func (l *Limiter) Release() { <-l.sem }

// Limit returns the number of concurrent holders admitted.
func (l *Limiter) Limit() int { return cap(l.sem) }

// InUse returns the number of permits currently held.
func (l *Limiter) InUse() int { return len(l.sem) }
