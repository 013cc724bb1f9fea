package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// manifestSchema is the canonical location of the static capability manifest.
const manifestSchema = "capabilities-response.schema.json#/allOf/1/properties/result/properties/manifest"

// New builds a Hooks from a registration document and cfg. It validates the
// registration canonically, then applies the harness's load-time checks
// (unique backend ids, intercept subscriptions only to events the manifest
// advertises as interceptable, timeouts within the manifest's limits,
// honoured managed scope, plain HTTP only to loopback) and the configuration
// (Source, exactly one of Capabilities and Manifest, grants compatible with
// their events). Every rejection is a *ValidationError naming the JSON
// pointer of the offending member and saying what is wrong with it. When
// the registration has several problems, New reports every one it finds
// (all schema failures, or else every load-time check that fails) as the
// errors.Join of their *ValidationErrors in document order; errors.As finds
// the first. All of them match ErrInvalidRegistration.
//
// New performs no I/O: no process is started and no connection is opened
// until a call needs them. A registration can launch processes; never load
// an untrusted one.
func New(registration []byte, cfg Config) (*Hooks, error) {
	if strings.TrimSpace(cfg.Source) == "" {
		return nil, configError("config", "/Source", "required", "Source is required")
	}
	if u, err := url.Parse(cfg.Source); err != nil || u.Scheme == "" {
		return nil, configError("config", "/Source", "format", "Source must be an absolute URI")
	}
	reg, err := parseRegistration(registration, cfg.Transports)
	if err != nil {
		return nil, err
	}
	manifest, err := buildManifest(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hooks{source: cfg.Source, manifest: manifest, cfg: cfg, log: log, events: map[gen.EventName]*eventEntry{}, done: make(chan struct{})}
	if h.cfg.StdioStderr != nil {
		// Every stdio backend writes it: one write at a time.
		h.cfg.StdioStderr = &lockedWriter{w: h.cfg.StdioStderr}
	}
	if h.cfg.ObserveTimeout <= 0 {
		h.cfg.ObserveTimeout = DefaultObserveTimeout
	}
	if h.uploader, err = content.NewUploader(content.UploaderConfig{HTTPClient: cfg.UploadHTTPClient, Credentials: cfg.AuthProvider,
		AllowInsecureHTTP: cfg.AllowInsecureHTTP, AllowLoopbackHTTP: cfg.AllowLoopbackHTTPUploads, MaxConcurrentUploads: cfg.MaxConcurrentUploads}); err != nil {
		return nil, configError("config", "/MaxConcurrentUploads", "minimum", "MaxConcurrentUploads must not be negative")
	}
	for _, info := range gen.Events() {
		h.events[info.Name] = &eventEntry{info: info}
	}
	for _, e := range manifest.Events {
		entry := h.events[gen.EventName(e.Event)]
		if entry == nil {
			continue // the manifest schema admits only catalogue names
		}
		entry.declared = true
		entry.observe = slices.Contains(e.Modes, gen.StaticCapabilityManifestEventModeObserve)
		if slices.Contains(e.Modes, gen.StaticCapabilityManifestEventModeIntercept) && e.Capabilities != nil {
			entry.intercept = true
			entry.caps = cloneCaps(*e.Capabilities)
			if data, err := entry.caps.MarshalJSON(); err == nil {
				entry.capsJSON = data
			}
		}
	}
	subs, err := h.loadRegistration(reg)
	if err != nil {
		return nil, err
	}
	for key := range cfg.Transports {
		if !slices.ContainsFunc(h.backends, func(b *backend) bool { return b.id == key }) {
			return nil, configError("config", "/Transports/"+escape(key), "backend", "no backend in the registration has this id")
		}
	}
	for _, e := range h.events {
		if !e.declared {
			continue
		}
		for _, s := range subs {
			if !s.matches(e) {
				continue
			}
			if s.mode == gen.ModeIntercept {
				e.interceptors = append(e.interceptors, s)
			} else {
				e.observers = append(e.observers, s)
			}
		}
	}
	return h, nil
}

// placeholderTransport stands, during canonical validation only, for the
// transport member a backend of Config.Transports leaves out; it is removed
// again before anything else sees the registration.
const placeholderTransport = `"transport":{"type":"http","url":"https://in-process.invalid/"},`

// withPlaceholders returns data with placeholderTransport inserted into
// every backend object of its "hooks" array that has no "transport" member
// and whose "id" is a key of transports, and the indices of those backends;
// nil when there is none or data is not shaped as a registration. Offsets
// are found with one streaming pass, so the rest of the document (member
// order, spelling) is unchanged.
func withPlaceholders(data []byte, transports map[string]transport.Transport) ([]byte, []int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	var at []int64 // offsets just after a backend's '{'
	var custom []int
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		if key != "hooks" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, nil
		}
		for i := 0; dec.More(); i++ {
			start := dec.InputOffset()
			var b map[string]json.RawMessage
			if dec.Decode(&b) != nil {
				return nil, nil
			}
			var id string
			if _, has := b["transport"]; has || json.Unmarshal(b["id"], &id) != nil || transports[id] == nil {
				continue
			}
			open := bytes.IndexByte(data[start:], '{')
			if open < 0 {
				return nil, nil
			}
			at = append(at, start+int64(open)+1)
			custom = append(custom, i)
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil
		}
	}
	if len(at) == 0 {
		return nil, nil
	}
	out := make([]byte, 0, len(data)+len(at)*len(placeholderTransport))
	prev := int64(0)
	for _, o := range at {
		out = append(out, data[prev:o]...)
		out = append(out, placeholderTransport...)
		prev = o
	}
	return append(out, data[prev:]...), custom
}

// parseRegistration parses and canonically validates a registration. A
// backend whose id has an entry in transports may leave out its transport
// member (see Config.Transports): it is validated as if it had an HTTP
// transport, and its parsed Transport is left zero (neither arm set), so
// that no URL is made up for it.
func parseRegistration(data []byte, transports map[string]transport.Transport) (*gen.Registration, error) {
	schemaErr := func(err error) error {
		return causeErrors(func() *ValidationError { return regError("", "schema", "") }, "", err)
	}
	reg, err := gen.ParseRegistration(data)
	if err == nil || len(transports) == 0 {
		if err != nil {
			return nil, schemaErr(err)
		}
		return reg, nil
	}
	// Validate the document with a placeholder in place of each transport
	// that Config supplies and the document leaves out.
	filled, custom := withPlaceholders(data, transports)
	if len(custom) == 0 {
		return nil, schemaErr(err)
	}
	if reg, err = gen.ParseRegistration(filled); err != nil {
		return nil, schemaErr(err)
	}
	for _, i := range custom {
		if reg.Hooks[i].Authentication != nil {
			// Authentication binds an HTTP endpoint (base/registration.md).
			return nil, regError(fmt.Sprintf("/hooks/%d/authentication", i), "transport", "a backend with a Config.Transports transport and no registered transport takes no authentication")
		}
		reg.Hooks[i].Transport = gen.Transport{}
	}
	return reg, nil
}

// loadRegistration checks the parsed registration and builds backends and
// subscriptions, in registration order.
func (h *Hooks) loadRegistration(reg *gen.Registration) ([]*subscription, error) {
	seen := map[string]int{}
	var subs []*subscription
	limits := h.manifest.Limits
	managed := slices.Contains(h.manifest.ManagedPolicy.Scopes, gen.StaticCapabilityManifestManagedPolicyScopeManaged)
	// Every failing check is collected: a problem ends the checks of its
	// subscription (or of the backend's transport), not the load, so that
	// one run reports all of them.
	var problems []error
	fail := func(err error) { problems = append(problems, err) }
	for i, b := range reg.Hooks {
		bp := fmt.Sprintf("/hooks/%d", i)
		id := string(b.ID)
		if j, dup := seen[id]; dup {
			fail(regError(bp+"/id", "unique", fmt.Sprintf("backend id already used by /hooks/%d", j)))
		} else {
			seen[id] = i
		}
		be := &backend{index: i, id: id}
		if tr, ok := h.cfg.Transports[id]; ok && tr != nil {
			be.tr = tr
		} else {
			tr, err := h.newTransport(be, b, bp)
			if err != nil {
				fail(err)
			} else {
				be.tr, be.owned = tr, true
			}
		}
		h.backends = append(h.backends, be)
		for j, s := range b.Subscriptions {
			h.loadSubscription(be, b, i, j, s, limits, managed, &subs, fail)
		}
	}
	if len(problems) == 1 {
		return nil, problems[0]
	}
	if len(problems) > 1 {
		return nil, errors.Join(problems...)
	}
	return subs, nil
}

// loadSubscription checks subscription j of backend i (b, built as be) and
// appends it to *subs. Each problem found is passed to fail; the checks go
// on past a problem wherever the later ones still make sense.
func (h *Hooks) loadSubscription(be *backend, b gen.Backend, i, j int, s gen.Subscription, limits gen.StaticCapabilityManifestLimits, managed bool, subs *[]*subscription, fail func(error)) {
	bp := fmt.Sprintf("/hooks/%d", i)
	id := be.id
	sp := fmt.Sprintf("%s/subscriptions/%d", bp, j)
	sub := &subscription{b: be, index: j}
	var scope *gen.SubscriptionScope
	var filters *gen.SubscriptionFilters
	switch {
	case s.Intercept != nil:
		x := s.Intercept
		sub.mode = gen.ModeIntercept
		sub.policy = FailurePolicy(x.FailurePolicy)
		ms, ok := settle.Integer(x.TimeoutMs)
		min, max := limitOf(limits.MinTimeoutMs), limitOf(limits.MaxTimeoutMs)
		switch {
		case !ok || ms < 1:
			fail(regError(sp+"/timeoutMs", "minimum", "timeoutMs must be a positive integer"))
		case min >= 0 && ms < min:
			fail(regError(sp+"/timeoutMs", "minimum", "below the manifest's limits.minTimeoutMs"))
		case max >= 0 && ms > max:
			fail(regError(sp+"/timeoutMs", "maximum", "above the manifest's limits.maxTimeoutMs"))
		}
		sub.timeout = time.Duration(min64(ms, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
		for k, sel := range x.Events {
			name := string(sel)
			sub.selectors = append(sub.selectors, name)
			if err := h.checkSelector(name, fmt.Sprintf("%s/events/%d", sp, k), gen.ModeIntercept); err != nil {
				fail(err)
			}
		}
		sub.native = x.IncludeNative != nil && *x.IncludeNative
		sub.content, sub.upload, scope, filters = x.Content, x.Upload, x.Scope, x.Filters
	case s.Observe != nil:
		x := s.Observe
		sub.mode = gen.ModeObserve
		for k, sel := range x.Events {
			name := string(sel)
			sub.selectors = append(sub.selectors, name)
			if err := h.checkSelector(name, fmt.Sprintf("%s/events/%d", sp, k), gen.ModeObserve); err != nil {
				fail(err)
			}
		}
		sub.native = x.IncludeNative != nil && *x.IncludeNative
		sub.content, sub.upload, scope, filters = x.Content, x.Upload, x.Scope, x.Filters
	default:
		fail(regError(sp, "oneOf", "subscription is neither intercept nor observe"))
		return
	}
	pol, err := newContentPolicy(sub.content)
	if err != nil {
		fail(regError(sp+"/content", "enum", "content selection values are body, metadata or omit"))
	}
	sub.pol = pol
	if scope != nil && *scope == gen.SubscriptionScopeManaged && !managed {
		fail(regError(sp+"/scope", "managedPolicy", "the manifest does not honour managed scope"))
	}
	if sub.upload != nil && sub.upload.Auth != nil {
		if err := h.checkBinding(*sub.upload.Auth, sp+"/upload/auth"); err != nil {
			fail(err)
		}
	}
	if sub.upload != nil {
		// The provider sees the backend's entry with its upload
		// requests, and the binding of the same copy.
		if be.entry == nil {
			be.entry = cloneBackend(b)
		}
		if c := be.entry.Subscriptions[j]; c.Intercept != nil && c.Intercept.Upload != nil {
			sub.upload = c.Intercept.Upload
		} else if c.Observe != nil && c.Observe.Upload != nil {
			sub.upload = c.Observe.Upload
		}
	}
	if filters != nil {
		sub.kinds, sub.paths = filters.ToolKinds, filters.Paths
	}
	for _, prev := range *subs {
		if prev.b == be && prev.mode == sub.mode && overlaps(prev.selectors, sub.selectors) {
			// Distinct subscriptions stay independent (base/composition.md,
			// base/failure.md): both are delivered; warn only.
			h.log.Warn("ahp: overlapping subscriptions on one backend", "backend", id, "subscription", j, "other", prev.index, "mode", string(sub.mode))
		}
	}
	*subs = append(*subs, sub)
}

// checkSelector rejects a subscription selector that selects nothing the
// host offers in mode: an exact event the manifest does not offer in that
// mode, or a wildcard for a family the catalogue does not have ("Wildcards
// are entire families (tool.*) or *", capability-auth.md). A wildcard of a
// known family selects only the events offered in the mode.
func (h *Hooks) checkSelector(name, pointer string, mode gen.Mode) error {
	if name == "*" {
		return nil
	}
	if fam, ok := strings.CutSuffix(name, ".*"); ok {
		for n := range h.events {
			if strings.HasPrefix(string(n), fam+".") {
				return nil
			}
		}
		return regError(pointer, "family", "no catalogue event belongs to this family")
	}
	e := h.events[gen.EventName(name)]
	switch {
	case mode == gen.ModeIntercept && (e == nil || !e.intercept):
		return regError(pointer, "advertised", "the manifest does not advertise this event as interceptable")
	case mode == gen.ModeObserve && (e == nil || !e.observe):
		return regError(pointer, "advertised", "the manifest does not offer this event for observation")
	}
	return nil
}

func (h *Hooks) newTransport(be *backend, b gen.Backend, bp string) (transport.Transport, error) {
	kind := gen.StaticCapabilityManifestTransportHTTP
	if b.Transport.Stdio != nil {
		kind = gen.StaticCapabilityManifestTransportStdio
	}
	// A manifest that records a gap for its transports (as the shorthand's
	// does) has not established them, so nothing is checked against it.
	established := !slices.ContainsFunc(h.manifest.Gaps, func(g gen.Gap) bool { return strings.TrimPrefix(g.Path, "/") == "transports" })
	if established && !slices.Contains(h.manifest.Transports, kind) {
		return nil, regError(bp+"/transport", "transports", "the manifest does not list this transport")
	}
	switch {
	case b.Transport.HTTP != nil:
		u, err := url.Parse(b.Transport.HTTP.URL)
		if err != nil || u.Host == "" {
			return nil, regError(bp+"/transport/url", "format", "not an absolute URL")
		}
		if u.User != nil {
			// "credentials are never literal values" (base/registration.md);
			// net/http would send them as Basic authentication.
			return nil, regError(bp+"/transport/url", "credentials", "the URL carries credentials; configure authentication instead")
		}
		if u.Scheme == "http" && !h.cfg.AllowInsecureHTTP && !isLoopback(u.Hostname()) {
			return nil, regError(bp+"/transport/url", "https", "plain http is allowed only for loopback endpoints")
		}
		if a := b.Authentication; a != nil {
			if err := h.checkBinding(*a, bp+"/authentication"); err != nil {
				return nil, err
			}
		}
		// The provider's own copy of the entry, shared by its requests.
		entry := cloneBackend(b)
		be.entry = entry
		return transport.NewHTTP(b.Transport.HTTP.URL, transport.HTTPOptions{
			BackendID:           be.id,
			Backend:             entry,
			Client:              h.cfg.HTTPClient,
			MaxIdleConnsPerHost: h.cfg.HTTPMaxIdleConnsPerHost,
			Authentication:      entry.Authentication,
			Credentials:         h.cfg.AuthProvider,
			MaxResponseBytes:    h.cfg.MaxResponseBytes,
		}), nil
	case b.Transport.Stdio != nil:
		s := b.Transport.Stdio
		dir := ""
		if s.Cwd != nil {
			dir = *s.Cwd
		}
		return transport.NewStdio(transport.StdioOptions{
			BackendID:     be.id,
			Command:       s.Command,
			Args:          append([]string(nil), s.Args...),
			Dir:           dir,
			Lifecycle:     s.Lifecycle,
			Env:           h.cfg.StdioEnv,
			Stderr:        h.cfg.StdioStderr,
			MaxFrameBytes: int(h.cfg.MaxResponseBytes),

			CloseGrace:         h.cfg.StdioCloseGrace,
			MaxInFlight:        h.cfg.StdioMaxInFlight,
			MaxChildren:        h.cfg.StdioMaxChildren,
			RelaunchBackoff:    h.cfg.StdioRelaunchBackoff,
			MaxRelaunchBackoff: h.cfg.StdioMaxRelaunchBackoff,
		}), nil
	}
	return nil, regError(bp+"/transport", "oneOf", "no supported transport")
}

// checkBinding rejects an authentication binding that the credential
// provider says it can never resolve (the default provider resolves only
// bearer tokenEnv): better now than at every delivery ("unsupported
// mechanisms fail explicitly", capability-auth.md).
func (h *Hooks) checkBinding(a gen.Authentication, pointer string) error {
	var p auth.Provider = auth.EnvironmentProvider{}
	msg := "only tokenEnv bearer bindings resolve without Config.AuthProvider"
	if h.cfg.AuthProvider != nil {
		p, msg = h.cfg.AuthProvider, "the configured AuthProvider does not support this binding"
	}
	if c, ok := p.(auth.BindingChecker); ok && c.CheckBinding(a) != nil {
		return regError(pointer, "credentials", msg)
	}
	return nil
}

// cloneBackend returns a deep copy of b (a copy through its own codec).
func cloneBackend(b gen.Backend) *gen.Backend {
	out := new(gen.Backend)
	data, err := b.MarshalJSON()
	if err != nil || out.UnmarshalJSON(data) != nil {
		*out = b // not reachable for a parsed registration: a shallow copy then
	}
	return out
}

// matches reports whether s selects the event of e in its own mode.
func (s *subscription) matches(e *eventEntry) bool {
	if s.mode == gen.ModeIntercept && !e.intercept {
		return false // intercept wildcards select only advertised interceptable boundaries
	}
	if s.mode == gen.ModeObserve && !e.observe {
		return false // and observe wildcards only the events offered for observation
	}
	name := string(e.info.Name)
	for _, sel := range s.selectors {
		if sel == name || sel == "*" {
			return true
		}
		if fam, ok := strings.CutSuffix(sel, ".*"); ok && strings.HasPrefix(name, fam+".") {
			return true
		}
	}
	return false
}

// accepts applies the subscription's optional filters: a delivery is
// skipped only when the event states a tool kind or path that the filter
// does not list; unknown or absent facts never drop a delivery.
func (s *subscription) accepts(kind, path *string) bool {
	if len(s.kinds) > 0 && kind != nil && !slices.Contains(s.kinds, *kind) {
		return false
	}
	if len(s.paths) > 0 && path != nil && !slices.Contains(s.paths, *path) {
		return false
	}
	return true
}

func isWildcard(s string) bool { return s == "*" || strings.HasSuffix(s, ".*") }

func overlaps(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || x == "*" || y == "*" {
				return true
			}
			fx, wx := strings.CutSuffix(x, ".*")
			fy, wy := strings.CutSuffix(y, ".*")
			if (wx && strings.HasPrefix(y, fx+".")) || (wy && strings.HasPrefix(x, fy+".")) {
				return true
			}
		}
	}
	return false
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// limitOf returns a manifest limit, or -1 when it is absent. The schema
// makes it a nonnegative integer, which JSON may spell 1000.0 or 1e3;
// values beyond int64 are clamped, so that a stated limit is never read as
// none ("absence never means unlimited", capability-auth.md).
func limitOf(n *json.Number) int64 {
	if n == nil {
		return -1
	}
	if v, err := n.Int64(); err == nil {
		return v
	}
	f, _, err := big.ParseFloat(n.String(), 10, 0, big.ToZero)
	if err != nil || f.Sign() < 0 {
		return 0
	}
	v, _ := f.Int64() // clamped to math.MaxInt64
	return v
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// buildManifest validates cfg's manifest or derives one from the shorthand.
func buildManifest(cfg Config) (gen.StaticCapabilityManifest, error) {
	switch {
	case cfg.Manifest != nil && cfg.Capabilities != nil:
		return gen.StaticCapabilityManifest{}, configError("config", "/Manifest", "oneOf", "Capabilities and Manifest are mutually exclusive")
	case cfg.Manifest != nil:
		m := cloneManifest(*cfg.Manifest)
		data, err := json.Marshal(m)
		if err == nil {
			err = validate.Default().Validate(manifestSchema, data)
		}
		if err != nil {
			return gen.StaticCapabilityManifest{}, configError("manifest", "", "schema", "").withCause("", err)
		}
		for i, e := range m.Events {
			info, ok := gen.LookupEvent(gen.EventName(e.Event))
			if !ok || !slices.Contains(e.Modes, gen.StaticCapabilityManifestEventModeIntercept) {
				continue
			}
			p := fmt.Sprintf("/events/%d/capabilities", i)
			if e.Capabilities == nil {
				return gen.StaticCapabilityManifest{}, configError("manifest", p, "required", "an intercept entry needs capabilities")
			}
			data, _ := gen.EncodeCapabilities(e.Capabilities)
			if err := validate.Default().Validate(info.CapabilitySchema, data); err != nil {
				return gen.StaticCapabilityManifest{}, configError("manifest", p, "schema", "capabilities exceed the event's bound").withCause(p, err)
			}
		}
		return m, nil
	case cfg.Capabilities != nil:
		return deriveManifest(cfg.Capabilities)
	}
	return gen.StaticCapabilityManifest{}, configError("config", "/Capabilities", "required", "one of Capabilities and Manifest is required")
}

// deriveManifest turns the event-map shorthand into a manifest that declares
// only the given events and modes and records a gap for every omitted event
// and for each host facility the map cannot establish.
func deriveManifest(grants map[gen.EventName]Grant) (gen.StaticCapabilityManifest, error) {
	for name := range grants {
		if _, ok := gen.LookupEvent(name); !ok {
			return gen.StaticCapabilityManifest{}, configError("capabilities", "/"+escape(string(name)), "enum", "not an event of the catalogue")
		}
	}
	m := gen.StaticCapabilityManifest{
		Events:                    []gen.StaticCapabilityManifestEvent{},
		Gaps:                      []gen.Gap{},
		Transports:                []gen.StaticCapabilityManifestTransport{},
		Authentication:            []gen.StaticCapabilityManifestAuthenticationItem{},
		ToolPaths:                 []string{},
		ContentCategories:         []string{},
		ManagedPolicy:             gen.StaticCapabilityManifestManagedPolicy{Scopes: []gen.StaticCapabilityManifestManagedPolicyScope{}},
		CorrelationIdentityFields: []string{"id", "source"},
	}
	for _, info := range gen.Events() {
		g, ok := grants[info.Name]
		if !ok {
			m.Gaps = append(m.Gaps, gen.Gap{Path: string(info.Name), Reason: "event not declared by the host"})
			continue
		}
		if err := g.check(info, "capabilities", "/"+escape(string(info.Name)), configError); err != nil {
			return gen.StaticCapabilityManifest{}, err
		}
		e := gen.StaticCapabilityManifestEvent{Event: gen.StaticCapabilityManifestEventEvent(info.Name)}
		if g.intercept {
			caps := g.capabilities(0)
			e.Modes = []gen.StaticCapabilityManifestEventMode{gen.StaticCapabilityManifestEventModeIntercept, gen.StaticCapabilityManifestEventModeObserve}
			e.Capabilities = &caps
		} else {
			e.Modes = []gen.StaticCapabilityManifestEventMode{gen.StaticCapabilityManifestEventModeObserve}
		}
		m.Events = append(m.Events, e)
	}
	for _, f := range []string{"transports", "authentication", "toolPaths", "contentCategories", "limits", "managedPolicy"} {
		m.Gaps = append(m.Gaps, gen.Gap{Path: f, Reason: "not established by the capabilities shorthand; configure a full manifest"})
	}
	return m, nil
}

// lockedWriter serializes the writes of several stdio backends to the one
// Config.StdioStderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
