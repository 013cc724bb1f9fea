package hooks

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// DefaultObserveTimeout caps one observation delivery inside the call budget
// when Config.ObserveTimeout is zero.
const DefaultObserveTimeout = 5 * time.Second

// Config configures a Hooks. Source is required; exactly one of Capabilities
// and Manifest must be set.
type Config struct {
	// Source is the stable, non-secret URI identifying this harness
	// installation; it becomes every event's source.
	Source string

	// Capabilities is the event-map shorthand: for each supported event the
	// grant the host can enforce. Events left out are not supported. The
	// derived manifest records a gap for each of them and for every host
	// facility the map cannot establish.
	Capabilities map[gen.EventName]Grant
	// Manifest is a complete static capability manifest, used exactly as
	// given (never augmented). Mutually exclusive with Capabilities.
	Manifest *gen.StaticCapabilityManifest

	// Transports overrides the registration's transport of the named
	// backends (keyed by backend id) with caller-owned transports, such as
	// transport.NewInProcess or a custom implementation. They are borrowed:
	// Close does not close them.
	//
	// A backend served only by such a transport may leave the "transport"
	// member out of its registration entry instead of naming a made-up URL
	// or command. Such a registration is the SDK's native configuration,
	// not a canonical AHP registration (the canonical schema requires a
	// transport; `ahp check` reports it), which a harness may use
	// (base/registration.md: a harness MAY translate the registration
	// model into its native configuration format). Everything else in it is
	// validated canonically; such an entry takes no authentication.
	Transports map[string]transport.Transport
	// HTTPClient is borrowed for HTTP backends' event endpoints; redirects
	// are never followed through it. It is never used for content uploads
	// (see UploadHTTPClient). Nil means a client owned by the Hooks.
	HTTPClient *http.Client
	// HTTPMaxIdleConnsPerHost sizes the idle connection pool of the client
	// the Hooks owns for each HTTP backend (HTTPClient nil) for the
	// concurrent calls expected on it, so that steady load reuses
	// connections; <= 0 means transport.DefaultMaxIdleConnsPerHost (64). A
	// borrowed HTTPClient keeps its own pool.
	HTTPMaxIdleConnsPerHost int
	// UploadHTTPClient is borrowed for content uploads to subscriptions'
	// upload endpoints (runtime/content.UploaderConfig.HTTPClient: its
	// transport, TLS client certificates included, serves every upload; its
	// cookie jar is never used; redirects are never followed). Nil means a
	// client owned by the Hooks, never HTTPClient: event authentication,
	// client certificates and cookies included, does not migrate to an
	// upload resource.
	UploadHTTPClient *http.Client
	// AuthProvider resolves the credentials of HTTP backends at delivery
	// time and is told of their 401 challenges; after a Bearer challenge to
	// an interception it may have the request replayed once, same id and
	// bytes, within the same budget (observations are never replayed). It
	// owns discovery, consent, token exchange, refresh and caching; see
	// runtime/auth. Nil means auth.EnvironmentProvider{}: bearer tokenEnv
	// only, so a tokenRef or OAuth binding is rejected by New. A provider
	// that implements auth.BindingChecker has every configured binding
	// checked by New. Borrowed.
	AuthProvider auth.Provider
	// AllowInsecureHTTP permits plain http:// endpoints on hosts other than
	// loopback (explicitly controlled local development only); for content
	// uploads it permits plain http on any host.
	AllowInsecureHTTP bool
	// AllowLoopbackHTTPUploads permits plain http:// upload endpoints on
	// loopback hosts: the explicitly configured loopback tests of the
	// content upload binding. Without it (or AllowInsecureHTTP) an upload
	// endpoint must be https, and a plain http one fails the upload.
	AllowLoopbackHTTPUploads bool
	// Preparer is an optional host step run before each delivery, after the
	// SDK has projected the event for the receiver's content selection; it
	// can only narrow that view. Nil delivers the SDK's view.
	Preparer Preparer

	// MaxConcurrentUploads bounds the content uploads in flight across all
	// calls (attachments given with WithAttachment); 0 means
	// content.DefaultMaxConcurrentUploads. Uploads use UploadHTTPClient,
	// AuthProvider (with auth.PurposeUpload and the subscription's upload
	// auth, never the event endpoint's), AllowLoopbackHTTPUploads and
	// AllowInsecureHTTP.
	MaxConcurrentUploads int

	// StdioEnv is the complete environment of stdio backends; nil means a
	// minimal one holding only PATH.
	StdioEnv []string
	// StdioStderr receives the bounded stderr of stdio backends; nil
	// discards it. It is never parsed or logged by the package. It is
	// written from the transport's own goroutines, one write at a time
	// across all backends of the Hooks.
	StdioStderr io.Writer
	// StdioCloseGrace is how long Close lets each persistent stdio backend
	// finish after its stdin is closed (it may still be working on a
	// request whose call has returned, or on observations) before it is
	// killed; Close takes up to this long while such a backend is busy.
	// Zero means transport.DefaultCloseGrace (2 s); a negative value kills
	// at once.
	StdioCloseGrace time.Duration
	// StdioMaxInFlight bounds the requests outstanding at once on one
	// persistent stdio backend, from concurrent calls (pipelining); <= 0
	// means transport.DefaultMaxInFlight (16), and 1 makes the calls take
	// turns. Responses are correlated by id, so a backend that answers
	// concurrently (such as server.ServeStdio) serves them together and
	// one that answers in turn still answers each. Waiting for a slot is
	// inside the call's budget.
	StdioMaxInFlight int
	// StdioMaxChildren bounds the children of one per_event stdio backend
	// running at once; <= 0 means transport.DefaultMaxChildren. Waiting for
	// a slot is inside the call's budget.
	StdioMaxChildren int
	// StdioRelaunchBackoff is the first delay before a persistent stdio
	// backend that failed to launch, or exited less than
	// transport.DefaultHealthyAfter after its launch (answers or not), is
	// relaunched; it doubles with each further such exit, up to
	// StdioMaxRelaunchBackoff, and only the exit of a backend that stayed
	// up that long resets it. Meanwhile its deliveries fail at once
	// (transport.CodeTransport, reason "relaunch_backoff") under their
	// failure policy. Zero means transport.DefaultRelaunchBackoff; a
	// negative value relaunches at once.
	StdioRelaunchBackoff time.Duration
	// StdioMaxRelaunchBackoff caps the relaunch delay; <= 0 means
	// transport.DefaultMaxRelaunchBackoff.
	StdioMaxRelaunchBackoff time.Duration
	// MaxResponseBytes bounds one response over any transport; <= 0 means
	// transport.DefaultMaxResponseBytes. A longer one fails its delivery
	// with transport.CodeCapacity, reason "too_large".
	MaxResponseBytes int64
	// ObserveTimeout caps each observation delivery, its preparation
	// included, within the call budget; <= 0 means DefaultObserveTimeout.
	// An observation owed to an uncalled interceptor is also capped by that
	// subscription's timeoutMs from its dispatch on (after preparation).
	// Observations run concurrently once the decision is settled, and the
	// call waits for all of them: after settlement it lasts at most the
	// least of the remaining ctx budget and this cap (an owed timeoutMs only
	// shortens its own delivery), plus the time the transports, in-process
	// handlers and the Preparer take to give up what was cut short.
	// Observations cannot change a settled decision: when ctx's deadline
	// passes first, they are cut short and recorded as observe diagnostics
	// (code deadline_exceeded, reason interrupted), and the call returns the
	// settled Result without error. A cancellation of ctx or Close cuts them
	// short as well (code cancelled) and interrupts the call.
	ObserveTimeout time.Duration
	// Logger receives delivery diagnostics (codes and identifiers only);
	// nil discards them.
	Logger *slog.Logger
}

// Preparer narrows one delivery further than the subscription's content
// selection, for instance to redact application JSON that the SDK treats
// as opaque (tool input, native payloads). The SDK has already projected
// every schema-owned content slot for the subscription (body, metadata or
// omit per category); the Preparer gets a private copy of that view and
// returns the event the receiver may see. Its result must be the same
// event with the same messages and parts, none more disclosed than in the
// view: a part may go from body to metadata or omit, never back, and
// carries size and digest only as the view states them; and for a
// subscription without includeNative it holds no native member at any depth
// (the SDK dropped them). A result that widens the view is not sent: it is charged to the subscription as a
// preparation failure (reason "widening") under its failure policy, like
// an error, whose text is never reported.
//
// Prepare must honour ctx and return promptly once it ends: ctx carries the
// call's deadline, for an observation also its budget
// (Config.ObserveTimeout), and the end of the call (cancellation, Close).
// The call waits for Prepare, so one that ignores ctx holds the call past
// its budget. A delivery whose call ended while it was prepared is not
// sent.
type Preparer interface {
	Prepare(ctx context.Context, d Delivery) (*gen.Event, error)
}

// Delivery describes one pending delivery to a Preparer.
type Delivery struct {
	// BackendID is the receiving backend.
	BackendID string
	// SubscriptionIndex is the subscription's index within the backend.
	SubscriptionIndex int
	// Mode is the delivery mode (observe also for a downgraded interceptor).
	Mode gen.Mode
	// Content is the subscription's content selection.
	Content gen.ContentSelection
	// Upload is the subscription's upload configuration, if any.
	Upload *gen.ContentUpload
	// Event is the receiver's view of the effective event: its content
	// slots projected for Content, native dropped unless the subscription
	// includes it. It is a copy the Preparer owns and may modify and return.
	Event *gen.Event
}

// Hooks is the harness side of AHP: it delivers each event occurrence to the
// backends of one registration and settles their responses. It is safe for
// concurrent use. Close releases it.
type Hooks struct {
	source   string
	manifest gen.StaticCapabilityManifest
	events   map[gen.EventName]*eventEntry
	backends []*backend
	cfg      Config
	log      *slog.Logger

	mu       sync.Mutex  // orders enter against Close; guards invocations
	closed   atomic.Bool // Close has begun: no call is admitted, and calls stop at their next step
	calls    sync.WaitGroup
	shutdown sync.Once
	done     chan struct{}
	timeouts timeouts // delivery deadlines
	clock    clock    // formats the times the SDK gives events
	uploader *content.Uploader
	// invocations are the begun, unfinished Invocations (Close ends them).
	invocations map[*Invocation]struct{}
}

// backend is one registration entry with its transport.
type backend struct {
	index int
	id    string
	tr    transport.Transport
	owned bool
	// entry is the backend's registration entry as the credential
	// provider sees it (auth.Request.Backend): shared by its event and
	// upload requests; nil when neither needs it.
	entry *gen.Backend
}

// subscription is one registration subscription.
type subscription struct {
	b         *backend
	index     int
	mode      gen.Mode
	selectors []string
	timeout   time.Duration
	policy    FailurePolicy
	native    bool
	content   gen.ContentSelection
	pol       *contentPolicy // content resolved for projection
	upload    *gen.ContentUpload
	kinds     []string
	paths     []string
}

// FailurePolicy is an intercept subscription's failure policy.
type FailurePolicy string

const (
	// FailOpen continues unchanged after an operational failure.
	FailOpen FailurePolicy = "fail-open"
	// FailClosed denies the operation after an operational failure.
	FailClosed FailurePolicy = "fail-closed"
)

// eventEntry is everything a call of one event needs, computed by New.
type eventEntry struct {
	info         gen.EventInfo
	declared     bool // the manifest declares the event
	intercept    bool // the manifest grants intercept mode
	observe      bool // the manifest offers observe mode
	caps         gen.Capabilities
	capsJSON     []byte // caps encoded, shared by calls that advertise caps unchanged
	interceptors []*subscription
	observers    []*subscription
	entryState   // the entry check of the event's payload
}

// Manifest returns a detached copy of the static capability manifest the
// harness advertises (the configured one, or the one derived from the
// shorthand).
func (h *Hooks) Manifest() gen.StaticCapabilityManifest { return cloneManifest(h.manifest) }

func cloneManifest(m gen.StaticCapabilityManifest) gen.StaticCapabilityManifest {
	data, err := json.Marshal(m)
	var out gen.StaticCapabilityManifest
	if err != nil || json.Unmarshal(data, &out) != nil {
		return gen.StaticCapabilityManifest{}
	}
	return out
}

// enter admits a call; it fails after Close.
func (h *Hooks) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		return false
	}
	h.calls.Add(1)
	return true
}

// Close stops admitting calls, cancels the calls in flight and waits for
// them (each returns ErrClosed with an interrupted Result, its pending
// deliveries and observations cut short), then closes the transports the
// Hooks owns, reaping their child processes. Borrowed transports and clients
// stay open. Close is idempotent and safe to call from many goroutines;
// every call returns once shutdown is complete.
func (h *Hooks) Close() error {
	h.shutdown.Do(func() {
		h.mu.Lock()
		h.closed.Store(true)
		h.mu.Unlock()
		h.timeouts.cancelAll(ErrClosed)
		h.endInvocations()
		h.calls.Wait()
		h.timeouts.close()
		var wg sync.WaitGroup
		for _, b := range h.backends {
			if b.owned {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = b.tr.Close()
				}()
			}
		}
		wg.Wait()
		h.uploader.CloseIdleConnections()
		close(h.done)
	})
	<-h.done
	return nil
}
