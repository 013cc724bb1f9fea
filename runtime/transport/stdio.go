package transport

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/framebatch"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
)

// Defaults of StdioOptions.
const (
	// DefaultCloseGrace is how long Close waits for a persistent child to
	// exit after its stdin is closed before killing it.
	DefaultCloseGrace = 2 * time.Second
	// DefaultMaxMalformed is how many consecutive malformed frames a
	// persistent child may emit before it is terminated (it is restarted
	// on next use).
	DefaultMaxMalformed = 3
	// DefaultMaxStderrBytes bounds what is forwarded from one child's
	// stderr to StdioOptions.Stderr; the rest is drained and dropped.
	DefaultMaxStderrBytes = 64 << 10
	// DefaultMaxInFlight is how many requests may be outstanding on a
	// persistent child at once. Responses are matched to requests by id
	// (base/transports/stdio.md), so a backend that answers one request at
	// a time serves them in turn, and one that answers concurrently (such
	// as server.ServeStdio, which dispatches up to 16 at once by default)
	// serves them together.
	DefaultMaxInFlight = 16
	// DefaultMaxChildren is how many per_event children of one backend may
	// run at once.
	DefaultMaxChildren = 16
	// DefaultRelaunchBackoff is the first delay before a persistent child
	// that ended before it had proven healthy is relaunched; it doubles
	// with every further such child, up to DefaultMaxRelaunchBackoff.
	DefaultRelaunchBackoff = 100 * time.Millisecond
	// DefaultMaxRelaunchBackoff caps the relaunch delay.
	DefaultMaxRelaunchBackoff = 30 * time.Second
	// DefaultHealthyAfter is how long a persistent child must stay up to
	// prove healthy and reset the relaunch backoff.
	DefaultHealthyAfter = 10 * time.Second
)

// StdioOptions configures a stdio transport. Every limit has a default that
// its zero value selects.
type StdioOptions struct {
	// BackendID is the registration id of the backend.
	BackendID string
	// Command is the executable, run directly without a shell.
	Command string
	// Args are its arguments.
	Args []string
	// Dir is its working directory; empty means the current one.
	Dir string
	// Lifecycle is persistent (one child reused) or per_event (one child
	// per message).
	Lifecycle gen.StdioTransportLifecycle
	// Env is the child's complete environment. Nil means a minimal one
	// holding only PATH: the harness's own variables (and the secrets they
	// may hold) are not inherited.
	Env []string
	// Stderr receives the child's stderr, at most MaxStderrBytes per child;
	// the rest is drained. Nil discards it. It is never parsed as protocol.
	// The children of one Stdio write it one at a time; a writer shared
	// with other transports must be safe for concurrent use.
	Stderr io.Writer
	// MaxStderrBytes bounds forwarded stderr; <= 0 means
	// DefaultMaxStderrBytes.
	MaxStderrBytes int64
	// MaxFrameBytes bounds one stdout frame; <= 0 means
	// DefaultMaxResponseBytes. A longer response fails its delivery with
	// CodeCapacity, reason "too_large", as over HTTP.
	MaxFrameBytes int
	// CloseGrace is how long Close lets a persistent child finish after its
	// stdin is closed (a backend may still be working on a request whose
	// caller gave up, or on notifications) before it is killed. Zero means
	// DefaultCloseGrace; a negative value kills it at once.
	CloseGrace time.Duration
	// MaxMalformed is the consecutive malformed-frame limit of a persistent
	// child; <= 0 means DefaultMaxMalformed.
	MaxMalformed int
	// DiscardUncorrelated makes a persistent child's response whose id
	// matches no pending (or abandoned) request an unsolicited frame that
	// is skipped, consuming no live request, for backends that may write
	// stale or unsolicited responses (an observer answering a
	// notification; the lifecycle interop contract). By default such a
	// response fails the pending requests with reason id_mismatch, since it
	// may be their mis-correlated answer.
	DiscardUncorrelated bool
	// MaxInFlight bounds the requests outstanding on a persistent child at
	// once (pipelining); <= 0 means DefaultMaxInFlight (16), and 1 makes
	// the calls take turns. Responses are correlated by id, in whatever
	// order they come; a response whose id matches no outstanding request
	// is handled as DiscardUncorrelated says. Further requests wait for a slot
	// within their deadline. Notifications are not counted.
	MaxInFlight int
	// MaxChildren bounds the per_event children running at once; <= 0
	// means DefaultMaxChildren. Further messages wait for a slot within
	// their deadline.
	MaxChildren int
	// RelaunchBackoff is the first delay before a persistent child that
	// failed to launch, or that ended (exited or was killed) less than
	// HealthyAfter after its launch, is relaunched, whether or not it
	// answered requests meanwhile. Each further such child doubles it, up
	// to MaxRelaunchBackoff; only a child that stayed up at least
	// HealthyAfter resets it, so a child that answers one request and then
	// crashes is held back like one that never answers. During the delay
	// deliveries fail at once with CodeTransport, reason
	// "relaunch_backoff". Zero means DefaultRelaunchBackoff; a negative
	// value relaunches at once.
	RelaunchBackoff time.Duration
	// MaxRelaunchBackoff caps the relaunch delay; <= 0 means
	// DefaultMaxRelaunchBackoff.
	MaxRelaunchBackoff time.Duration
	// HealthyAfter is how long a persistent child must stay up, from its
	// launch to its end, to prove healthy: its end then resets the
	// relaunch backoff and the next child is launched at once. <= 0 means
	// DefaultHealthyAfter.
	HealthyAfter time.Duration
}

// Stdio is the stdio binding over owned child processes.
//
// Process hygiene. On Unix each child runs in a process group of its own,
// which is killed when the child exits, when its delivery is cancelled, and
// at Close, so that the processes it started go with it. A child's output
// ends when the child exits: what it wrote before exiting is read, and a
// process it left behind that still holds its stdout or stderr holds
// neither an exchange nor Close open (elsewhere such output is read for at
// most CloseGrace after the exit). On Linux, a process that left the group
// (with setsid or setpgid) but kept one of the child's stdio pipes is then
// found by that pipe under /proc and killed; it is signalled through a
// pidfd after a second check, so that a recycled pid is never hit. Not
// reached: a descendant that left the group and closed or replaced all
// three pipes (a daemon that detached on purpose), and, outside Linux, any
// descendant that left the group. A host that must contain those runs the
// backend under a supervisor that owns a cgroup or a PID namespace, named
// as the registration's command.
//
// Making the host a child subreaper (PR_SET_CHILD_SUBREAPER) is not done:
// it is process-wide state that changes the host for every other library,
// and would leave the host to reap every orphan of its descendants. Nor is
// the parent-pid chain followed: it breaks exactly when the child exits,
// since its orphans are reparented at once; cgroups and namespaces need
// privileges or a delegation a library cannot assume.
type Stdio struct {
	opts        StdioOptions
	backoffBase time.Duration // 0: no relaunch backoff
	backoffMax  time.Duration

	mu       sync.Mutex
	closed   bool
	closing  chan struct{} // closed by Close
	child    *child        // persistent only
	retired  []*child      // replaced persistent children still in use by an Exchange
	failures int           // consecutive persistent children that ended before HealthyAfter
	retryAt  time.Time     // no relaunch before
	live     map[*exec.Cmd]struct{}
	wg       sync.WaitGroup // per-event children and persistent reapers
	sem      chan struct{}  // in-flight requests of the persistent child
	slots    chan struct{}  // running per_event children

	stderrMu sync.Mutex // one write at a time to opts.Stderr, from any child
}

// NewStdio returns a stdio transport. It starts nothing: a persistent child
// is launched on first use and relaunched after it exits.
func NewStdio(opts StdioOptions) *Stdio {
	if opts.MaxStderrBytes <= 0 {
		opts.MaxStderrBytes = DefaultMaxStderrBytes
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxResponseBytes
	}
	switch {
	case opts.CloseGrace == 0:
		opts.CloseGrace = DefaultCloseGrace
	case opts.CloseGrace < 0:
		opts.CloseGrace = 0
	}
	if opts.MaxMalformed <= 0 {
		opts.MaxMalformed = DefaultMaxMalformed
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.MaxChildren <= 0 {
		opts.MaxChildren = DefaultMaxChildren
	}
	if opts.RelaunchBackoff == 0 {
		opts.RelaunchBackoff = DefaultRelaunchBackoff
	}
	if opts.MaxRelaunchBackoff <= 0 {
		opts.MaxRelaunchBackoff = DefaultMaxRelaunchBackoff
	}
	if opts.HealthyAfter <= 0 {
		opts.HealthyAfter = DefaultHealthyAfter
	}
	if opts.Env == nil {
		opts.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	t := &Stdio{
		opts:    opts,
		closing: make(chan struct{}),
		live:    map[*exec.Cmd]struct{}{},
		sem:     make(chan struct{}, opts.MaxInFlight),
		slots:   make(chan struct{}, opts.MaxChildren),
	}
	if opts.RelaunchBackoff > 0 {
		t.backoffBase = opts.RelaunchBackoff
		t.backoffMax = max(opts.MaxRelaunchBackoff, opts.RelaunchBackoff)
	}
	return t
}

// relaunchDelay is the delay after n consecutive persistent children that
// failed to launch or ended before proving healthy: base doubled n-1 times, at most limit; 0 when base is.
func relaunchDelay(n int, base, limit time.Duration) time.Duration {
	if base <= 0 || n <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// proc is one started child and the harness's ends of its pipes. All three
// of the child's standard files are pipes created here (stderr is
// /dev/null when StdioOptions.Stderr is nil), so that cmd.Wait returns as
// soon as the child exits, whatever processes it started still hold them.
type proc struct {
	cmd     *exec.Cmd
	grace   time.Duration // post-exit read bound where output cannot end at exit
	stdin   *os.File
	stdout  *outPipe
	stderr  *outPipe      // nil: not forwarded
	drained chan struct{} // closed when the stderr drain has ended
	pipes   []pipeID      // identities of the three pipes, to find their holders
}

// launch starts the child in a process group of its own. The caller holds
// t.mu when it must not race Close.
func (t *Stdio) launch() (*proc, error) {
	cmd := exec.Command(t.opts.Command, t.opts.Args...)
	cmd.Dir = t.opts.Dir
	cmd.Env = append([]string(nil), t.opts.Env...)
	ownGroup(cmd)
	var parent, child []*os.File // our ends and the child's
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	// pipe returns our end of a new pipe and sets *theirs to the child's;
	// out says which end is the child's write end.
	pipe := func(theirs **os.File, out bool) (*os.File, bool) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, false
		}
		ours, their := w, r
		if out {
			ours, their = r, w
		}
		parent, child = append(parent, ours), append(child, their)
		*theirs = their
		return ours, true
	}
	var childIn, childOut, childErr *os.File
	p := &proc{cmd: cmd, grace: t.opts.CloseGrace}
	var stdout, stderr *os.File
	var ok bool
	if p.stdin, ok = pipe(&childIn, false); ok {
		stdout, ok = pipe(&childOut, true)
	}
	if ok && t.opts.Stderr != nil {
		stderr, ok = pipe(&childErr, true)
	}
	if ok {
		cmd.Stdin, cmd.Stdout = childIn, childOut
		if childErr != nil {
			cmd.Stderr = childErr
		}
		ok = cmd.Start() == nil
	}
	closeAll(child)
	if !ok {
		closeAll(parent)
		return nil, fail(CodeTransport, StageSend, "launch", ErrUnreachable)
	}
	for _, f := range parent {
		if id, ok := pipeIdentity(f); ok {
			p.pipes = append(p.pipes, id)
		}
	}
	p.stdout = newOutPipe(stdout)
	if stderr != nil {
		p.stderr = newOutPipe(stderr)
		p.drained = make(chan struct{})
		w := &boundedWriter{mu: &t.stderrMu, w: t.opts.Stderr, left: t.opts.MaxStderrBytes}
		go func() {
			defer close(p.drained)
			_, _ = io.Copy(w, p.stderr)
		}()
	}
	return p, nil
}

// wait reaps the child, kills what is left of its process group and the
// processes that escaped it but still hold its pipes, ends its output
// (what it wrote before exiting stays readable) and the stderr drain. It
// returns cmd.Wait's error.
func (p *proc) wait() error {
	err := p.cmd.Wait()
	killGroup(p.cmd.Process)
	held := pipeHeld(p.stdout.f)
	if p.stderr != nil {
		held = held || pipeHeld(p.stderr.f)
	}
	if held {
		killHolders(p.pipes)
	}
	p.stdout.exit(p.grace)
	if p.stderr != nil {
		p.stderr.exit(p.grace)
		<-p.drained
		_ = p.stderr.f.Close()
	}
	return err
}

// Exchange implements Transport.
func (t *Stdio) Exchange(ctx context.Context, msg Message) ([]byte, error) {
	if t.opts.Lifecycle == gen.StdioTransportLifecyclePerEvent {
		return t.perEvent(ctx, msg, true)
	}
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxFail(ctx, StageSend)
	case <-t.closing:
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	defer func() { <-t.sem }()
	t.mu.Lock()
	c, err := t.persistent()
	if err == nil {
		c.users++
	}
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	defer t.leave(c)
	return c.exchange(ctx, msg)
}

// Notify implements Transport.
func (t *Stdio) Notify(ctx context.Context, msg Message) error {
	if t.opts.Lifecycle == gen.StdioTransportLifecyclePerEvent {
		_, err := t.perEvent(ctx, msg, false)
		return err
	}
	t.mu.Lock()
	c, err := t.persistent()
	t.mu.Unlock()
	if err != nil {
		return err
	}
	return c.notify(ctx, msg.Body)
}

// Close implements Transport: it closes a persistent child's stdin, waits
// up to CloseGrace for it to exit, kills it otherwise, kills running
// per-event children, and reaps them all. Messages waiting for a slot end
// with ErrClosed.
func (t *Stdio) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.wg.Wait()
		return nil
	}
	t.closed = true
	close(t.closing)
	c := t.child
	retired := t.retired
	t.retired = nil
	for cmd := range t.live {
		killGroup(cmd.Process)
	}
	t.mu.Unlock()
	if c != nil {
		c.stop(t.opts.CloseGrace)
		c.release()
	}
	for _, r := range retired {
		r.release()
	}
	t.wg.Wait()
	return nil
}

// persistent returns the running child, launching one if needed and the
// relaunch backoff allows it. The caller holds t.mu.
func (t *Stdio) persistent() (*child, error) {
	if t.closed {
		return nil, fail(CodeCancelled, StageSend, "closed", ErrClosed)
	}
	if c := t.child; c != nil && c.gone() {
		t.retire(c)
	}
	if t.child != nil {
		return t.child, nil
	}
	now := time.Now()
	if now.Before(t.retryAt) {
		return nil, fail(CodeTransport, StageSend, "relaunch_backoff", ErrUnreachable)
	}
	p, err := t.launch()
	if err != nil {
		t.failures++
		t.retryAt = now.Add(relaunchDelay(t.failures, t.backoffBase, t.backoffMax))
		return nil, err
	}
	c := &child{
		proc:      p,
		startedAt: time.Now(),

		fr:           jsonrpc.NewFrameReader(p.stdout, t.opts.MaxFrameBytes),
		done:         make(chan struct{}),
		reading:      make(chan struct{}, 1),
		maxMalformed: t.opts.MaxMalformed,
		multiplexed:  t.opts.MaxInFlight > 1,

		discardUncorrelated: t.opts.DiscardUncorrelated,
	}
	if !c.multiplexed {
		c.solo.fired = make(chan struct{}, 1)
		c.solo.interrupt = func() { c.interrupt(&c.solo) }
		c.solo.armRead = func() {
			c.solo.mu.Lock()
			c.solo.arm()
			c.solo.mu.Unlock()
		}
	}
	c.w = framebatch.New(newInPipe(p.stdin, c))
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		c.reap()
	}()
	t.child = c
	return c, nil
}

// retire replaces a child that exited or was killed. A child that stayed
// up at least HealthyAfter resets the relaunch backoff; any other is
// charged to it, answers or not: answering once proves nothing about a
// child that then crashes. Its stdout is closed once no Exchange uses it.
// The caller holds t.mu.
func (t *Stdio) retire(c *child) {
	t.child = nil
	if end := c.endTime(); end.Sub(c.startedAt) >= t.opts.HealthyAfter {
		t.failures, t.retryAt = 0, time.Time{}
	} else {
		t.failures++
		t.retryAt = end.Add(relaunchDelay(t.failures, t.backoffBase, t.backoffMax))
	}
	if c.users == 0 {
		c.release()
		return
	}
	c.retired = true
	t.retired = append(t.retired, c)
}

// leave ends an Exchange's use of c.
func (t *Stdio) leave(c *child) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.users--
	if c.users == 0 && c.retired {
		c.release()
		for i, r := range t.retired {
			if r == c {
				t.retired = append(t.retired[:i], t.retired[i+1:]...)
				break
			}
		}
	}
}

// boundedWriter forwards at most left bytes and silently drops the rest, so
// the child's stderr pipe is always drained.
type boundedWriter struct {
	mu   *sync.Mutex // shared by the children of one Stdio
	w    io.Writer
	left int64
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left > 0 {
		q := p
		if int64(len(q)) > b.left {
			q = q[:b.left]
		}
		b.left -= int64(len(q))
		_, _ = b.w.Write(q)
	}
	return len(p), nil
}
