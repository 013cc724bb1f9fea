package interop

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// ErrUnsupported reports a configuration this adapter does not run (any
// auth but none over stdio, which runs on process trust); the process exits
// with status 3 and writes no readiness file.
var ErrUnsupported = errors.New("unsupported configuration")

// MaxBody bounds one request body or stdio frame.
const MaxBody = 4 << 20

// shutdownGrace bounds the graceful part of an HTTP shutdown.
const shutdownGrace = 5 * time.Second

// heldWriteTimeout is the write deadline of the HTTP servers, longer than
// the runner's longest wait.
const heldWriteTimeout = 5 * time.Minute

// scriptedRow is one scenario as the scripted server sees it.
type scriptedRow struct {
	id       string
	barrier  string
	request  any    // decoded request, for the equality diagnostic
	response []byte // compact scripted response, replied unchanged
}

// receipt is one validated request as reported by GET /receipts. Message is
// the exact request envelope received (the contract's "message wrapper");
// no header, credential or address is ever recorded.
type receipt struct {
	ID        string          `json:"id"`
	Method    string          `json:"method"`
	Accepted  bool            `json:"accepted"`
	Transport string          `json:"transport"`
	Auth      string          `json:"auth"`
	Message   json.RawMessage `json:"message"`
}

// scriptServer is the scripted AHP backend of the interop contract: it
// validates each incoming request canonically, matches it to its scenario by
// request id and event id, records a receipt, and replies with the
// scenario's scripted response byte for byte (after whitespace compaction),
// whether or not that response is valid.
type scriptServer struct {
	log       *slog.Logger
	transport string
	auth      *ServerAuth
	rows      map[string]*scriptedRow
	// backend is the SDK's real server.Handler. It answers every message
	// that is not a scripted hooks/intercept request: discovery
	// (hooks/capabilities, from the manifest below), notifications, unknown
	// methods and malformed envelopes. server.Handler admits and encodes its
	// own typed effects, so it cannot reply a scripted (possibly invalid)
	// response unchanged; that path is this file's.
	backend *server.Handler

	mu       sync.Mutex
	receipts []receipt
	barriers map[string]chan struct{}
}

// newScriptServer builds the scripted server for a loaded scenario file.
func newScriptServer(log *slog.Logger, transport string, auth *ServerAuth, f *ScenarioFile) (*scriptServer, error) {
	s := &scriptServer{
		log:       log,
		transport: transport,
		auth:      auth,
		rows:      make(map[string]*scriptedRow, len(f.Scenarios)),
		barriers:  map[string]chan struct{}{},
	}
	events := map[string]bool{}
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		resp, err := CompactJSON(sc.Response)
		if err != nil {
			return nil, fmt.Errorf("scenario %q: response is not JSON: %w", sc.ID, err)
		}
		var reqVal any
		if err := DecodeJSON(sc.Request, &reqVal); err != nil {
			return nil, fmt.Errorf("scenario %q: request is not JSON: %w", sc.ID, err)
		}
		s.rows[sc.ID] = &scriptedRow{id: sc.ID, barrier: sc.Barrier, request: reqVal, response: resp}
		var ev struct {
			Params struct {
				Event struct {
					Type string `json:"type"`
				} `json:"event"`
			} `json:"params"`
		}
		if err := json.Unmarshal(sc.Request, &ev); err == nil && ev.Params.Event.Type != "" {
			events[ev.Params.Event.Type] = true
		}
	}
	manifest, err := discoveryManifest(events, transport, auth, 0)
	if err != nil {
		return nil, err
	}
	s.backend = &server.Handler{Manifest: manifest, Logger: log, MaxConcurrency: 1}
	if err := s.backend.Validate(); err != nil {
		return nil, fmt.Errorf("discovery handler: %w", err)
	}
	return s, nil
}

// discoveryManifest builds the manifest served by hooks/capabilities: it
// declares interception of the scenario boundaries with every capability the
// boundary can grant (the replies are scripted, so nothing is enforced
// locally), checked against the canonical capabilities-response schema.
// allowance is the continuation allowance advertised where continue is
// granted (the scripted server advertises 0; the client's harness a large
// one).
func discoveryManifest(events map[string]bool, transport string, auth *ServerAuth, allowance int) (*gen.StaticCapabilityManifest, error) {
	type entry struct {
		Event        string         `json:"event"`
		Modes        []string       `json:"modes"`
		Capabilities map[string]any `json:"capabilities"`
	}
	var entries []entry
	for _, info := range gen.Events() {
		if !events[string(info.Name)] || !info.Interceptable() {
			continue
		}
		caps := map[string]any{"effects": info.EffectFamilies}
		if len(info.ModifyTargets) > 0 {
			m := map[string]any{}
			for _, t := range info.ModifyTargets {
				m[string(t)] = map[string]bool{"replace": true, "merge": true}
			}
			caps["modify"] = m
		}
		if len(info.FlowOperations) > 0 {
			f := map[string]any{"operations": info.FlowOperations}
			for _, op := range info.FlowOperations {
				if op == "continue" {
					f["remainingContinuations"] = allowance
					f["continuationCount"] = 0
				}
			}
			caps["flow"] = f
		}
		for _, fam := range info.EffectFamilies {
			if fam == "inject" {
				caps["inject"] = map[string]any{"context": map[string]any{"append": true, "deliverAt": []string{"now", "next_turn"}}}
			}
		}
		entries = append(entries, entry{Event: string(info.Name), Modes: []string{"intercept"}, Capabilities: caps})
	}
	if entries == nil {
		entries = []entry{}
	}
	authn, authGap := auth.Advertised()
	gaps := []map[string]string{
		{"path": "*", "reason": "scripted interop server: every reply is fixed by the scenario file"},
		{"path": "limits", "reason": "no limits are enforced by the scripted server"},
	}
	if authGap != "" {
		gaps = append(gaps, map[string]string{"path": "authentication", "reason": authGap})
	}
	result := map[string]any{
		"protocolVersion": "draft",
		"manifest": map[string]any{
			"events":                    entries,
			"gaps":                      gaps,
			"transports":                []string{transport},
			"authentication":            authn,
			"toolPaths":                 []string{"native"},
			"contentCategories":         []string{"text"},
			"limits":                    map[string]any{},
			"managedPolicy":             map[string]any{"scopes": []string{"user"}, "disableable": true},
			"correlationIdentityFields": []string{"id", "source", "session.id", "turn.id", "call.id"},
		},
	}
	body, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	codec, ok := gen.LookupRoot("capabilities-response.schema.json")
	if !ok {
		return nil, errors.New("no codec for capabilities-response.schema.json")
	}
	if _, err := codec.Parse(jsonrpc.AppendResponse(nil, jsonrpc.StringID("check"), body)); err != nil {
		return nil, fmt.Errorf("manifest is not canonical: %w", err)
	}
	var doc struct {
		Manifest gen.StaticCapabilityManifest `json:"manifest"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	return &doc.Manifest, nil
}

// isIntercept reports a hooks/intercept request, the only message the
// scripted path answers.
func isIntercept(body []byte) (jsonrpc.ID, bool) {
	env, err := jsonrpc.Classify(body)
	if err != nil || env.Kind != jsonrpc.KindRequest || env.Method != jsonrpc.MethodIntercept {
		return jsonrpc.ID{}, false
	}
	return env.ID, true
}

// handle answers one JSON-RPC message as the stdio binding does; it returns
// nil when no reply is due (a notification).
func (s *scriptServer) handle(ctx context.Context, body []byte) []byte {
	if id, ok := isIntercept(body); ok {
		return s.intercept(ctx, id, body)
	}
	return s.delegate(ctx, body)
}

// delegate has the SDK's server.Handler answer one message, through
// server.ServeStdio over a one-message stream.
func (s *scriptServer) delegate(ctx context.Context, body []byte) []byte {
	line, err := CompactJSON(body)
	if err != nil {
		// Not JSON at all: the parse error a stdio frame gets.
		return jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError))
	}
	var out bytes.Buffer
	if err := server.ServeStdio(ctx, bytes.NewReader(append(line, '\n')), &out, s.backend); err != nil && ctx.Err() == nil {
		s.log.Warn("discovery handler failed", "error", err)
		return jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeInternalError))
	}
	reply := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	if len(reply) == 0 {
		return nil
	}
	return reply
}

func (s *scriptServer) intercept(ctx context.Context, id jsonrpc.ID, body []byte) []byte {
	var head struct {
		Params struct {
			ProtocolVersion *string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &head); err == nil && head.Params.ProtocolVersion != nil && *head.Params.ProtocolVersion != gen.ProtocolVersion {
		s.log.Warn("intercept request refused", "reason", "unsupported protocol version")
		e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion)
		e.Data = json.RawMessage(`{"supported":["draft"]}`)
		return jsonrpc.AppendErrorResponse(nil, id, e)
	}
	req, err := gen.ParseInterceptRequest(body)
	if err != nil {
		// A *gen.ParseError names pointer and keyword, never values.
		s.log.Warn("intercept request refused", "error", err)
		return jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeInvalidParams))
	}
	rpcID, ok := req.ID.AsString()
	if !ok || rpcID != req.Params.Event.ID() {
		s.log.Warn("intercept request refused", "reason", "request id and event id differ")
		return jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeInvalidParams))
	}
	row := s.rows[rpcID]
	if row == nil {
		s.log.Warn("intercept request refused", "reason", "no scenario with this id")
		return jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeInvalidParams))
	}
	var got any
	if err := DecodeJSON(body, &got); err == nil && !reflect.DeepEqual(got, row.request) {
		s.log.Warn("request differs from the scenario's request", "scenario", row.id)
	}
	msg, err := CompactJSON(body)
	if err != nil {
		return jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeParseError))
	}
	s.mu.Lock()
	s.receipts = append(s.receipts, receipt{ID: row.id, Method: jsonrpc.MethodIntercept, Accepted: true, Transport: s.transport, Auth: s.auth.Mode, Message: msg})
	s.mu.Unlock()
	if row.barrier != "" {
		select {
		case <-s.barrierChan(row.barrier):
		case <-ctx.Done():
			return jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeBackendUnavailable))
		}
	}
	return row.response
}

// barrierChan returns the channel closed when the named barrier is released.
func (s *scriptServer) barrierChan(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.barriers[name]
	if !ok {
		ch = make(chan struct{})
		s.barriers[name] = ch
	}
	return ch
}

// release opens a barrier; releasing it again is a no-op.
func (s *scriptServer) release(name string) {
	ch := s.barrierChan(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *scriptServer) receiptsJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reqs := s.receipts
	if reqs == nil {
		reqs = []receipt{}
	}
	return json.Marshal(map[string]any{"requests": reqs})
}

// ahpHandler is the HTTP binding: POST /intercept (and POST / for clients
// that use the endpoint as given), POST /capabilities and GET /capabilities
// for discovery, all behind the configured endpoint authentication
// (serverAuth.authenticate; for mtls also the TLS handshake). Scripted
// interception is answered here; every other message by server.Handler.
func (s *scriptServer) ahpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", s.serveRPC)
	mux.HandleFunc("POST /intercept", s.serveRPC)
	mux.HandleFunc("POST /capabilities", s.serveRPC)
	mux.HandleFunc("GET /capabilities", s.serveDiscovery)
	return s.auth.Authenticate(s.log, mux)
}

func (s *scriptServer) serveRPC(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "content type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		http.Error(w, "request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	if id, ok := isIntercept(body); ok {
		WriteJSON(w, http.StatusOK, s.intercept(r.Context(), id, body))
		return
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	s.backend.ServeHTTP(w, r2)
}

// serveDiscovery answers GET /capabilities with the response to a
// hooks/capabilities request (id "capabilities"), built by server.Handler.
func (s *scriptServer) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	req := jsonrpc.AppendRequest(nil, jsonrpc.StringID("capabilities"), jsonrpc.MethodCapabilities, []byte(`{"protocolVersion":"draft"}`))
	reply := s.delegate(r.Context(), req)
	if reply == nil {
		http.Error(w, "discovery unavailable", http.StatusInternalServerError)
		return
	}
	WriteJSON(w, http.StatusOK, reply)
}

// controlHandler is the contract's control endpoint: GET /health, GET
// /receipts, POST /release {barrier}, POST /shutdown (which calls stop).
func (s *scriptServer) controlHandler(stop func()) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, []byte(`{"ready":true}`))
	})
	mux.HandleFunc("GET /receipts", func(w http.ResponseWriter, _ *http.Request) {
		body, err := s.receiptsJSON()
		if err != nil {
			http.Error(w, "receipts unavailable", http.StatusInternalServerError)
			return
		}
		WriteJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Barrier string `json:"barrier"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil || in.Barrier == "" {
			http.Error(w, "body must be {\"barrier\": NAME}", http.StatusBadRequest)
			return
		}
		s.release(in.Barrier)
		body, _ := json.Marshal(map[string]any{"released": in.Barrier})
		WriteJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, []byte(`{"shutdown":true}`))
		stop()
	})
	return mux
}

func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// HTTPService is one loopback HTTP server with its serving goroutine.
type HTTPService struct {
	srv *http.Server
	// URL is the service's base URL (scheme://127.0.0.1:PORT).
	URL  string
	done chan error
}

// StartHTTP listens on 127.0.0.1 port 0, over TLS when tlsCfg is set, and
// serves h until shutdown. Request contexts derive from base, so cancelling base releases handlers blocked on
// a barrier.
func StartHTTP(base context.Context, h http.Handler, tlsCfg *tls.Config, log *slog.Logger) (*HTTPService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	scheme := "http"
	if tlsCfg != nil {
		// Every connection is a TLS server connection: the handshake (and,
		// for mtls, the client certificate's verification) completes before
		// net/http reads a request.
		ln = tls.NewListener(ln, tlsCfg)
		scheme = "https"
	}
	srv := server.NewHTTPServer(ln.Addr().String(), h)
	// A scripted request can be held on a barrier for as long as the
	// runner's watchdog allows (its default is 120 seconds), so its answer
	// gets a longer write deadline than the default.
	srv.WriteTimeout = heldWriteTimeout
	srv.BaseContext = func(net.Listener) context.Context { return base }
	srv.ErrorLog = stdlog.New(WithheldWriter{log}, "", 0)
	hs := &HTTPService{srv: srv, URL: scheme + "://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		hs.done <- err
	}()
	return hs, nil
}

// WithheldWriter reports net/http's internal errors without their text,
// which can name peer addresses and their ephemeral ports.
type WithheldWriter struct{ log *slog.Logger }

func (w WithheldWriter) Write(p []byte) (int, error) {
	w.log.Warn("http server error (details withheld)")
	return len(p), nil
}

// Stop shuts the server down gracefully, then forcibly, and joins its
// serving goroutine.
func (hs *HTTPService) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, hs.srv.Close())
	}
	return errors.Join(err, <-hs.done)
}

// Readiness is the contract's readiness document. Endpoint is null over
// stdio. UploadEndpoint is the lifecycle server's content receiver, omitted
// by the core server.
type Readiness struct {
	Endpoint        *string `json:"endpoint"`
	ControlEndpoint string  `json:"controlEndpoint"`
	UploadEndpoint  *string `json:"uploadEndpoint,omitempty"`
	PID             int     `json:"pid"`
}

// WriteReadiness writes rd to path atomically (WriteFileAtomic), so the
// runner never reads a partial document.
func WriteReadiness(path string, rd Readiness) error {
	body, err := json.Marshal(rd)
	if err != nil {
		return fmt.Errorf("encode readiness: %w", err)
	}
	if err := WriteFileAtomic(path, body); err != nil {
		return fmt.Errorf("write readiness: %w", err)
	}
	return nil
}

// RunServer runs the scripted server until ctx ends, POST /shutdown, or (over
// stdio) the end of stdin.
func RunServer(ctx context.Context, cfg *ServerConfig, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	sa, err := NewServerAuth(cfg.Transport, cfg.Auth)
	if err != nil {
		return err
	}
	f, err := LoadScenarios(cfg.ScenarioFile)
	if err != nil {
		return err
	}
	s, err := newScriptServer(log, cfg.Transport, sa, f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var control *HTTPService
	if cfg.ReadinessFile != "" {
		control, err = StartHTTP(ctx, s.controlHandler(cancel), nil, log)
		if err != nil {
			return err
		}
	}
	var ahp *HTTPService
	if cfg.Transport == TransportHTTP {
		ahp, err = StartHTTP(ctx, s.ahpHandler(), sa.TLS, log)
		if err != nil {
			cancel()
			if control != nil {
				err = errors.Join(err, control.Stop())
			}
			return err
		}
	}
	stopAll := func() error {
		var errs []error
		if ahp != nil {
			errs = append(errs, ahp.Stop())
		}
		if control != nil {
			errs = append(errs, control.Stop())
		}
		return errors.Join(errs...)
	}
	if control != nil {
		rd := Readiness{ControlEndpoint: control.URL, PID: os.Getpid()}
		if ahp != nil {
			ep := ahp.URL + "/intercept"
			rd.Endpoint = &ep
		}
		if err := WriteReadiness(cfg.ReadinessFile, rd); err != nil {
			cancel()
			return errors.Join(err, stopAll())
		}
	}
	log.Info("scripted server ready", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "scenarios", len(f.Scenarios))

	var serveErr error
	if cfg.Transport == TransportStdio {
		serveErr = s.serveStdio(ctx, stdin, stdout)
	} else {
		<-ctx.Done()
	}
	cancel()
	return errors.Join(serveErr, stopAll())
}

// serveStdio serves full JSON-RPC envelopes, one compact value per line, on
// r and w until EOF or ctx ends. Replies are written in request order. The
// reader goroutine is owned: on return r is closed (when it is an io.Closer)
// and the goroutine joined.
func (s *scriptServer) serveStdio(ctx context.Context, r io.Reader, w io.Writer) error {
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
		fr := jsonrpc.NewFrameReader(r, MaxBody)
		for {
			data, err := fr.Next()
			select {
			case frames <- frame{data: bytes.Clone(data), err: err}:
			case <-quit:
				return
			}
			if err != nil && !RecoverableFrameError(err) {
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
		var fm frame
		select {
		case <-ctx.Done():
			return nil
		case fm = <-frames:
		}
		var reply []byte
		switch {
		case fm.err == nil:
			reply = s.handle(ctx, fm.data)
		case errors.Is(fm.err, io.EOF):
			return nil
		case RecoverableFrameError(fm.err) || errors.Is(fm.err, jsonrpc.ErrUnterminatedFrame):
			s.log.Warn("malformed stdio frame", "error", fm.err)
			reply = jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError))
		default:
			return fmt.Errorf("read stdin: %w", fm.err)
		}
		if reply != nil {
			if err := fw.WriteFrame(reply); err != nil {
				return fmt.Errorf("write stdout: %w", err)
			}
		}
		if errors.Is(fm.err, jsonrpc.ErrUnterminatedFrame) {
			return nil
		}
	}
}

// RecoverableFrameError reports frame errors after which the reader is at
// the start of the next line.
func RecoverableFrameError(err error) bool {
	return errors.Is(err, jsonrpc.ErrFrameTooLarge) || errors.Is(err, jsonrpc.ErrEmptyFrame) || errors.Is(err, jsonrpc.ErrCRLF)
}

// DecodeJSON decodes one JSON value keeping numbers as json.Number.
func DecodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}
