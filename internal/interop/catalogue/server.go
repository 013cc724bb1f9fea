package catalogue

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// ServerConfig is the catalogue server's configuration: the core contract's
// members plus suite and the lifecycle suite's independent upload trust.
// The catalogue scenarios upload nothing, but the readiness keeps the
// lifecycle shape, so the upload endpoint is served all the same.
type ServerConfig struct {
	interop.ServerConfig
	Suite      string     `json:"suite,omitempty"`
	UploadAuth UploadAuth `json:"uploadAuth"`
}

// UploadAuth is the synthetic upload trust: the one upload bearer token and
// the subscription scope it authorizes (LIFECYCLE.md: only "body").
type UploadAuth struct {
	Token         string   `json:"token"`
	Subscriptions []string `json:"subscriptions,omitempty"`
}

// String keeps the token out of formatting.
func (u UploadAuth) String() string { return "uploadAuth" }

// uploadReceiver is the content receiver of the readiness' uploadEndpoint:
// server.UploadReceiver behind the upload token, scoped to the first
// configured subscription ("body" by default), in memory.
func uploadReceiver(ua UploadAuth, log *slog.Logger) (http.Handler, error) {
	subs := ua.Subscriptions
	if subs == nil {
		subs = []string{"body"}
	}
	scope := ""
	if len(subs) > 0 {
		scope = subs[0]
	}
	token := []byte(ua.Token)
	u := &server.UploadReceiver{
		Storage: &server.MemoryStorage{},
		Logger:  log,
		Authorize: func(r *http.Request) (string, error) {
			tok, ok := interop.BearerToken(r.Header.Values("Authorization"))
			if !ok || len(token) == 0 || subtle.ConstantTimeCompare([]byte(tok), token) != 1 {
				return "", server.ErrUnauthenticated
			}
			if scope == "" {
				return "", server.ErrForbidden
			}
			return scope, nil
		},
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/upload", u)
	return mux, nil
}

// Receipt kinds of the catalogue suite.
const (
	// KindDiscovery is the one capability discovery: {kind, request,
	// response}.
	KindDiscovery = "discovery"
	// KindObserved is a canonical observation the receiver accepted:
	// {kind, eventId, event, message}.
	KindObserved = "observed"
	// KindRejected is a message the receiver refused: {kind, errorKind,
	// message}; message is the JSON value received, or the received text
	// as a JSON string when it was not JSON.
	KindRejected = "rejected"
)

// Error kinds of rejected receipts: the names of the JSON-RPC and AHP
// error codes (base/errors.md) the refusal corresponds to. A notification
// is never answered on the wire; the kind is the receiver's evidence.
const (
	ErrorParse              = "parse_error"
	ErrorInvalidRequest     = "invalid_request"
	ErrorMethodNotFound     = "method_not_found"
	ErrorInvalidParams      = "invalid_params"
	ErrorUnsupportedVersion = "unsupported_protocol_version"
	ErrorUnsupportedEvent   = "unsupported_event"
)

// Receipt is one entry of GET /receipts.
type Receipt struct {
	Kind      string          `json:"kind"`
	EventID   string          `json:"eventId,omitempty"`
	ErrorKind string          `json:"errorKind,omitempty"`
	Event     json.RawMessage `json:"event,omitempty"`
	Message   json.RawMessage `json:"message,omitempty"`
	Request   json.RawMessage `json:"request,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
}

// Receipts is the body of GET /receipts.
type Receipts struct {
	Entries []Receipt `json:"entries"`
}

// Watchdogs and bounds.
const (
	waitLimit = 2 * time.Minute
	maxBody   = 4 << 20
)

// ObservedEvents are the events the catalogue server offers for
// observation: every execution and lineage event (execution-event and
// task-workspace-event schemas), in catalogue order. hook.failure is not
// among them.
func ObservedEvents() []gen.EventName {
	var out []gen.EventName
	for _, info := range gen.Events() {
		if lineageOrExecution(info) {
			out = append(out, info.Name)
		}
	}
	return out
}

// lineageOrExecution reports the events of execution-event.schema.json and
// task-workspace-event.schema.json.
func lineageOrExecution(info gen.EventInfo) bool {
	switch info.Name {
	case gen.EventTurnStart, gen.EventTurnFinishBefore, gen.EventTurnEnd, gen.EventTurnProgress,
		gen.EventModelRequestBefore, gen.EventModelResponseAfter, gen.EventModelError,
		gen.EventModelSwitchBefore, gen.EventModelSwitchAfter,
		gen.EventToolPermissionRequest, gen.EventToolPermissionResolved, gen.EventToolProgress, gen.EventToolBatchAfter,
		gen.EventContextCompactBefore, gen.EventContextCompactAfter,
		gen.EventTaskChangeBefore, gen.EventTaskChangeAfter,
		gen.EventWorkspaceChangeBefore, gen.EventWorkspaceChangeAfter, gen.EventFileChanged:
		return true
	}
	return false
}

// Manifest is the catalogue server's static capability manifest: observe
// for every execution and lineage event, both transports, managed-policy
// scopes user and project, and the endpoint authentication advertised by
// auth.
func Manifest(sa *interop.ServerAuth) (*gen.StaticCapabilityManifest, error) {
	type entry struct {
		Event string   `json:"event"`
		Modes []string `json:"modes"`
	}
	entries := []entry{}
	for _, name := range ObservedEvents() {
		entries = append(entries, entry{Event: string(name), Modes: []string{"observe"}})
	}
	authn, authGap := sa.Advertised()
	gaps := []map[string]string{
		{"path": "limits", "reason": "the catalogue test server enforces no limits"},
	}
	if authGap != "" {
		gaps = append(gaps, map[string]string{"path": "authentication", "reason": authGap})
	}
	doc := map[string]any{
		"events":                    entries,
		"gaps":                      gaps,
		"transports":                []string{"http", "stdio"},
		"authentication":            authn,
		"toolPaths":                 []string{"native"},
		"contentCategories":         []string{"text"},
		"limits":                    map[string]any{},
		"managedPolicy":             map[string]any{"scopes": []string{"user", "project"}, "disableable": true},
		"correlationIdentityFields": []string{"id", "source", "session.id", "turn.id", "call.id"},
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	var m gen.StaticCapabilityManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	return &m, nil
}

// catServer is the catalogue receiver: the SDK's server.Handler (discovery
// from the manifest, canonical validation and delivery of observations)
// behind a classifier that records one receipt per message.
type catServer struct {
	ctx     context.Context
	log     *slog.Logger
	backend *server.Handler

	mu      sync.Mutex
	entries []Receipt
	changed chan struct{}
}

type bodyKey struct{}

func newServer(ctx context.Context, sa *interop.ServerAuth, log *slog.Logger) (*catServer, error) {
	m, err := Manifest(sa)
	if err != nil {
		return nil, err
	}
	s := &catServer{ctx: ctx, log: log, changed: make(chan struct{})}
	s.backend = &server.Handler{
		Manifest:      m,
		ObserveEvents: ObservedEvents(),
		Logger:        log,
		Observe: func(ctx context.Context, n *gen.ObserveNotification) error {
			body, _ := ctx.Value(bodyKey{}).([]byte)
			msg, err := interop.CompactJSON(body)
			if err != nil {
				return err
			}
			var env struct {
				Params struct {
					Event json.RawMessage `json:"event"`
				} `json:"params"`
			}
			if err := json.Unmarshal(msg, &env); err != nil {
				return err
			}
			s.add(Receipt{Kind: KindObserved, EventID: n.Params.Event.ID(), Event: env.Params.Event, Message: msg})
			return nil
		},
	}
	if err := s.backend.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *catServer) add(r Receipt) {
	s.mu.Lock()
	s.entries = append(s.entries, r)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// waitMessages blocks until n observed or rejected receipts exist.
func (s *catServer) waitMessages(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got := 0
		for i := range s.entries {
			if k := s.entries[i].Kind; k == KindObserved || k == KindRejected {
				got++
			}
		}
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

func (s *catServer) snapshot() Receipts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Receipts{Entries: append([]Receipt{}, s.entries...)}
}

// asMessage is the receipt form of received bytes: compact JSON, or the
// text as a JSON string.
func asMessage(body []byte) json.RawMessage {
	if c, err := interop.CompactJSON(body); err == nil {
		return c
	}
	s, _ := json.Marshal(string(body))
	return s
}

func (s *catServer) reject(body []byte, kind string) (reply []byte, status int) {
	s.log.Warn("message rejected", "errorKind", kind)
	s.add(Receipt{Kind: KindRejected, ErrorKind: kind, Message: asMessage(body)})
	return nil, http.StatusBadRequest
}

// delegate has the SDK's server.Handler answer one message.
func (s *catServer) delegate(body []byte) (reply []byte, status int) {
	ctx := context.WithValue(s.ctx, bodyKey{}, body)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytesReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.backend.ServeHTTP(rec, req)
	if rec.Body.Len() > 0 {
		return rec.Body.Bytes(), rec.Code
	}
	return nil, rec.Code
}

// handle answers one message of the event binding: the reply (nil for
// none) and the HTTP status.
func (s *catServer) handle(body []byte) (reply []byte, status int) {
	env, err := jsonrpc.Classify(body)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrParse) {
			return s.reject(body, ErrorParse)
		}
		return s.reject(body, ErrorInvalidRequest)
	}
	switch {
	case env.Kind == jsonrpc.KindRequest && env.Method == jsonrpc.MethodCapabilities:
		reply, status := s.delegate(body)
		s.add(Receipt{Kind: KindDiscovery, Request: asMessage(body), Response: asMessage(reply)})
		return reply, status
	case env.Method == jsonrpc.MethodObserve && env.Kind == jsonrpc.KindNotification:
		return s.observe(body, env)
	case env.Method == jsonrpc.MethodObserve:
		// hooks/observe must be a notification (an id makes it a request).
		return s.reject(body, ErrorInvalidRequest)
	case env.Kind == jsonrpc.KindRequest || env.Kind == jsonrpc.KindNotification:
		return s.reject(body, ErrorMethodNotFound)
	default:
		// A response sent to a backend answers nothing it asked.
		return s.reject(body, ErrorInvalidRequest)
	}
}

// observe classifies a hooks/observe notification and hands a canonical
// one to the SDK's handler, whose Observe callback records it.
func (s *catServer) observe(body []byte, env jsonrpc.Envelope) (reply []byte, status int) {
	var head struct {
		ProtocolVersion *string `json:"protocolVersion"`
		Event           *struct {
			Type *string `json:"type"`
		} `json:"event"`
	}
	if json.Unmarshal(env.Params, &head) != nil {
		return s.reject(body, ErrorInvalidParams)
	}
	if head.ProtocolVersion != nil && *head.ProtocolVersion != gen.ProtocolVersion {
		return s.reject(body, ErrorUnsupportedVersion)
	}
	if head.Event != nil && head.Event.Type != nil {
		info, ok := gen.LookupEvent(gen.EventName(*head.Event.Type))
		if !ok || !lineageOrExecution(info) {
			return s.reject(body, ErrorUnsupportedEvent)
		}
	}
	if _, err := gen.ParseObserveNotification(body); err != nil {
		s.log.Warn("observation is not canonical", "error", err)
		return s.reject(body, ErrorInvalidParams)
	}
	_, status = s.delegate(body)
	if status != http.StatusNoContent {
		return s.reject(body, ErrorInvalidParams)
	}
	return nil, http.StatusNoContent
}

// eventHandler is the HTTP event binding: every POST path is the AHP
// endpoint.
func (s *catServer) eventHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "", http.StatusRequestEntityTooLarge)
			return
		}
		reply, status := s.handle(body)
		if reply != nil {
			interop.WriteJSON(w, status, reply)
			return
		}
		w.WriteHeader(status)
	})
}

var okBody = []byte(`{"ok":true}`)

// controlHandler is the loopback test control: GET /health, GET /receipts,
// POST /wait-messages {count} (blocks until count observed or rejected
// receipts), POST /shutdown.
func (s *catServer) controlHandler(stop func()) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		interop.WriteJSON(w, http.StatusOK, []byte(`{"ready":true}`))
	})
	mux.HandleFunc("GET /receipts", func(w http.ResponseWriter, _ *http.Request) {
		body, err := json.Marshal(s.snapshot())
		if err != nil {
			http.Error(w, "", http.StatusInternalServerError)
			return
		}
		interop.WriteJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /wait-messages", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Count int `json:"count"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil || in.Count < 0 {
			http.Error(w, "body must be {count}", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, waitLimit)
		defer cancel()
		stopReq := context.AfterFunc(r.Context(), cancel)
		defer stopReq()
		if err := s.waitMessages(ctx, in.Count); err != nil {
			http.Error(w, "wait gave up", http.StatusGatewayTimeout)
			return
		}
		interop.WriteJSON(w, http.StatusOK, okBody)
	})
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		interop.WriteJSON(w, http.StatusOK, okBody)
		stop()
	})
	return mux
}

// RunServer runs the catalogue server until ctx ends, POST /shutdown, or
// (over stdio) the end of stdin.
func RunServer(ctx context.Context, cfg *ServerConfig, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if cfg.ReadinessFile == "" {
		return fmt.Errorf("%w: the catalogue server needs readinessFile", interop.ErrUsage)
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	sa, err := interop.NewServerAuth(cfg.Transport, cfg.Auth)
	if err != nil {
		return err
	}
	if cfg.ScenarioFile != "" {
		// The server needs nothing from the scenarios; a broken file still
		// fails the run.
		if _, err := Load(cfg.ScenarioFile); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := newServer(ctx, sa, log)
	if err != nil {
		return err
	}
	control, err := interop.StartHTTP(ctx, s.controlHandler(cancel), nil, log)
	if err != nil {
		return err
	}
	services := []*interop.HTTPService{control}
	stopAll := func() error {
		var errs []error
		for _, hs := range services {
			errs = append(errs, hs.Stop())
		}
		return errors.Join(errs...)
	}
	uh, err := uploadReceiver(cfg.UploadAuth, log)
	if err != nil {
		cancel()
		return errors.Join(err, stopAll())
	}
	upload, err := interop.StartHTTP(ctx, uh, nil, log)
	if err != nil {
		cancel()
		return errors.Join(err, stopAll())
	}
	services = append(services, upload)
	up := upload.URL + "/upload"
	rd := interop.Readiness{ControlEndpoint: control.URL, UploadEndpoint: &up, PID: os.Getpid()}
	if cfg.Transport == interop.TransportHTTP {
		ahp, err := interop.StartHTTP(ctx, sa.Authenticate(log, s.eventHandler()), sa.TLS, log)
		if err != nil {
			cancel()
			return errors.Join(err, stopAll())
		}
		services = append(services, ahp)
		ep := ahp.URL + "/intercept"
		rd.Endpoint = &ep
	}
	if err := interop.WriteReadiness(cfg.ReadinessFile, rd); err != nil {
		cancel()
		return errors.Join(err, stopAll())
	}
	log.Info("catalogue server ready", "transport", cfg.Transport, "auth", cfg.Auth.Mode)
	var serveErr error
	if cfg.Transport == interop.TransportStdio {
		serveErr = s.serveStdio(ctx, stdin, stdout)
	} else {
		<-ctx.Done()
	}
	cancel()
	return errors.Join(serveErr, stopAll())
}

// serveStdio handles one message per line, in order; rejected messages
// and observations get no frame (notifications are never answered). The
// reader goroutine is joined before return.
func (s *catServer) serveStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	if r == nil {
		return fmt.Errorf("%w: stdio server without stdin", interop.ErrUsage)
	}
	type frame struct {
		data []byte
		err  error
	}
	frames := make(chan frame)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fr := jsonrpc.NewFrameReader(r, maxBody)
		for {
			data, err := fr.Next()
			var f frame
			if err != nil {
				f.err = err
			} else {
				f.data = append([]byte(nil), data...)
			}
			select {
			case frames <- f:
			case <-quit:
				return
			}
			if err != nil && !interop.RecoverableFrameError(err) {
				return
			}
		}
	}()
	defer func() {
		close(quit)
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
		wg.Wait()
	}()
	fw := jsonrpc.NewFrameWriter(w)
	for {
		select {
		case <-ctx.Done():
			return nil
		case f := <-frames:
			if f.err != nil {
				if interop.RecoverableFrameError(f.err) {
					s.reject(nil, ErrorParse)
					continue
				}
				if errors.Is(f.err, io.EOF) {
					return nil
				}
				return fmt.Errorf("read stdin: %w", f.err)
			}
			reply, _ := s.handle(f.data)
			if reply != nil {
				if err := fw.WriteFrame(reply); err != nil {
					return fmt.Errorf("write stdout: %w", err)
				}
			}
		}
	}
}
