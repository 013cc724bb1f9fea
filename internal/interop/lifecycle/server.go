package lifecycle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// Suites of the lifecycle commands' configuration.
const (
	SuiteLifecycle = "lifecycle"
	SuiteCatalogue = "catalogue"
)

// ServerConfig is the lifecycle server's configuration: the core
// contract's members plus suite and the independent upload trust
// (LIFECYCLE.md, "Raw upload configuration").
type ServerConfig struct {
	interop.ServerConfig
	Suite      string     `json:"suite,omitempty"`
	UploadAuth UploadAuth `json:"uploadAuth"`
}

// UploadAuth is the synthetic upload trust: the one upload bearer token and
// the subscription scope it is authorized for (LIFECYCLE.md: only "body").
type UploadAuth struct {
	Token         string   `json:"token"`
	Subscriptions []string `json:"subscriptions,omitempty"`
}

// String keeps the token out of formatting.
func (u UploadAuth) String() string { return "uploadAuth" }

// Watchdogs of the server: a control wait and a held request give up after
// holdLimit (bounded failures, never ordering).
const (
	holdLimit = 2 * time.Minute
	maxBody   = 4 << 20
	maxUpload = 1 << 20
)

// UnsolicitedObserverReply is the canonical intercept response the server
// returns to every observation (LIFECYCLE.md): a backend trying to decide
// from an observation. Clients must ignore it.
const UnsolicitedObserverReply = `{"jsonrpc":"2.0","id":"unsolicited-observer","result":{"protocolVersion":"draft","effects":[{"type":"deny","reason":"observer must not decide"}]}}`

// lcServer is the lifecycle receiver: scripted, held interception with
// receipts, observation receipts, and the content receiver.
type lcServer struct {
	ctx       context.Context // ends at shutdown
	log       *slog.Logger
	transport string
	st        *store
	// byID maps every request (and event) id of the fixture to its scenario.
	byID      map[string]*Scenario
	responses map[string][][]byte
	uploads   *server.UploadReceiver
	scope     string
}

func newServer(ctx context.Context, cfg *ServerConfig, f *File, log *slog.Logger) (*lcServer, error) {
	s := &lcServer{ctx: ctx, log: log, transport: cfg.Transport, st: newStore(), byID: map[string]*Scenario{}, responses: map[string][][]byte{}}
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		for _, raw := range sc.Requests {
			var head struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(raw, &head); err != nil {
				return nil, fmt.Errorf("%w: scenario %q: request is not JSON", ErrFixture, sc.ID)
			}
			var id string
			if err := json.Unmarshal(head.ID, &id); err != nil {
				return nil, fmt.Errorf("%w: scenario %q: request id is not a string", ErrFixture, sc.ID)
			}
			s.byID[id] = sc
		}
		for id := range sc.Responses {
			list, err := sc.responses(id)
			if err != nil {
				return nil, fmt.Errorf("%w: scenario %q: response of %q is not JSON", ErrFixture, sc.ID, id)
			}
			s.responses[id] = list
		}
	}
	subs := cfg.UploadAuth.Subscriptions
	if subs == nil {
		subs = []string{"body"}
	}
	token := []byte(cfg.UploadAuth.Token)
	if len(subs) > 0 {
		s.scope = subs[0]
	}
	s.uploads = &server.UploadReceiver{
		Storage:  &server.MemoryStorage{},
		MaxBytes: maxUpload,
		Logger:   log,
		Authorize: func(r *http.Request) (string, error) {
			tok, ok := interop.BearerToken(r.Header.Values("Authorization"))
			if !ok || len(token) == 0 || subtle.ConstantTimeCompare([]byte(tok), token) != 1 {
				return "", server.ErrUnauthenticated
			}
			if s.scope == "" {
				return "", server.ErrForbidden
			}
			return s.scope, nil
		},
	}
	if err := s.uploads.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// RunServer runs the lifecycle server until ctx ends, POST /shutdown, or
// (over stdio) the end of stdin.
func RunServer(ctx context.Context, cfg *ServerConfig, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if cfg.ReadinessFile == "" {
		return fmt.Errorf("%w: the lifecycle server needs readinessFile", interop.ErrUsage)
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	sa, err := interop.NewServerAuth(cfg.Transport, cfg.Auth)
	if err != nil {
		return err
	}
	f, err := Load(cfg.ScenarioFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := newServer(ctx, cfg, f, log)
	if err != nil {
		return err
	}
	var services []*interop.HTTPService
	stopAll := func() error {
		var errs []error
		for _, hs := range services {
			errs = append(errs, hs.Stop())
		}
		return errors.Join(errs...)
	}
	start := func(h http.Handler, useTLS bool) (*interop.HTTPService, error) {
		tlsCfg := sa.TLS
		if !useTLS {
			tlsCfg = nil
		}
		hs, err := interop.StartHTTP(ctx, h, tlsCfg, log)
		if err != nil {
			return nil, err
		}
		services = append(services, hs)
		return hs, nil
	}
	control, err := start(s.controlHandler(cancel), false)
	if err != nil {
		return err
	}
	upload, err := start(s.uploadHandler(), false)
	if err != nil {
		cancel()
		return errors.Join(err, stopAll())
	}
	rd := interop.Readiness{ControlEndpoint: control.URL, PID: os.Getpid()}
	up := upload.URL + "/upload"
	rd.UploadEndpoint = &up
	if cfg.Transport == interop.TransportHTTP {
		ahp, err := start(sa.Authenticate(log, s.eventHandler()), true)
		if err != nil {
			cancel()
			return errors.Join(err, stopAll())
		}
		ep := ahp.URL + "/intercept"
		rd.Endpoint = &ep
	}
	if err := interop.WriteReadiness(cfg.ReadinessFile, rd); err != nil {
		cancel()
		return errors.Join(err, stopAll())
	}
	log.Info("lifecycle server ready", "transport", cfg.Transport, "auth", cfg.Auth.Mode, "scenarios", len(f.Scenarios))
	var serveErr error
	if cfg.Transport == interop.TransportStdio {
		serveErr = s.serveStdio(ctx, cancel, stdin, stdout)
	} else {
		<-ctx.Done()
	}
	cancel()
	return errors.Join(serveErr, stopAll())
}

// outcome is the server's answer to one event message.
type outcome struct {
	// before are stdio frames written before reply (unsolicited frames).
	before [][]byte
	// reply is the JSON-RPC response, nil for none.
	reply []byte
	// after are stdio frames written after reply (the unsolicited
	// observer reply).
	after [][]byte
	// status is the HTTP status; 0 means 200 with reply, or 204 without.
	status int
}

// handle answers one message of the event binding.
func (s *lcServer) handle(body []byte) outcome {
	env, err := jsonrpc.Classify(body)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrParse) {
			return outcome{reply: jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError)), status: http.StatusOK}
		}
		return outcome{reply: jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest)), status: http.StatusOK}
	}
	switch {
	case env.Kind == jsonrpc.KindRequest && env.Method == jsonrpc.MethodIntercept:
		return s.intercept(env.ID, body)
	case env.Kind == jsonrpc.KindNotification && env.Method == jsonrpc.MethodObserve:
		return s.observe(body)
	case env.Kind == jsonrpc.KindRequest:
		return outcome{reply: jsonrpc.AppendErrorResponse(nil, env.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound)), status: http.StatusOK}
	default:
		// Another notification, or a response: nothing to answer.
		return outcome{status: http.StatusBadRequest}
	}
}

func invalidParams(id jsonrpc.ID) outcome {
	return outcome{reply: jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeInvalidParams)), status: http.StatusOK}
}

// intercept validates a request canonically and against the receiver's
// content, records it, holds it until its id is released and replies the
// scripted response of its arrival.
func (s *lcServer) intercept(id jsonrpc.ID, body []byte) outcome {
	req, err := gen.ParseInterceptRequest(body)
	if err != nil {
		s.log.Warn("intercept request refused", "error", err)
		return invalidParams(id)
	}
	rid, ok := req.ID.AsString()
	if !ok {
		return invalidParams(id)
	}
	if err := s.verifyRefs(req.Params.Event); err != nil {
		s.log.Warn("intercept request refers to content it cannot resolve", "id", rid, "error", err)
		out := invalidParams(id)
		out.status = http.StatusConflict
		return out
	}
	msg, err := interop.CompactJSON(body)
	if err != nil {
		return invalidParams(id)
	}
	n := s.st.addReceived(Receipt{Kind: KindReceived, ID: rid, Message: msg})
	list := s.responses[rid]
	if len(list) == 0 {
		s.log.Warn("no scripted response", "id", rid)
		return outcome{reply: jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeInternalError)), status: http.StatusOK}
	}
	reply := list[min(n, len(list))-1]
	hold, cancel := context.WithTimeout(s.ctx, holdLimit)
	defer cancel()
	if err := s.st.waitRelease(hold, rid, n); err != nil {
		return outcome{reply: jsonrpc.AppendErrorResponse(nil, id, jsonrpc.NewError(jsonrpc.CodeBackendUnavailable)), status: http.StatusOK}
	}
	var before [][]byte
	if sc := s.byID[rid]; sc != nil && n == 1 {
		for _, fr := range sc.Unsolicited[rid] {
			if c, err := interop.CompactJSON(fr); err == nil {
				before = append(before, c)
			}
		}
	}
	s.st.add(Receipt{Kind: KindReplied, ID: rid})
	return outcome{before: before, reply: reply, status: http.StatusOK}
}

// observe validates a notification, records it, and answers it with the
// unsolicited intercept response (stdio) or 204 (HTTP).
func (s *lcServer) observe(body []byte) outcome {
	n, err := gen.ParseObserveNotification(body)
	if err != nil {
		s.log.Warn("observation refused", "error", err)
		return outcome{status: http.StatusBadRequest}
	}
	if err := s.verifyRefs(n.Params.Event); err != nil {
		s.log.Warn("observation refers to content it cannot resolve", "error", err)
		return outcome{status: http.StatusConflict}
	}
	msg, err := interop.CompactJSON(body)
	if err != nil {
		return outcome{status: http.StatusBadRequest}
	}
	var env struct {
		Params struct {
			Event json.RawMessage `json:"event"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &env); err != nil {
		return outcome{status: http.StatusBadRequest}
	}
	evID := n.Params.Event.ID()
	s.st.add(Receipt{Kind: KindObserved, EventID: evID, Event: env.Params.Event, Message: msg})
	if sc := s.byID[evID]; sc != nil && sc.Chain != nil && sc.Chain.HoldObservers {
		s.st.add(Receipt{Kind: KindObserverBlocked, ID: evID})
		hold, cancel := context.WithTimeout(s.ctx, holdLimit)
		_ = s.st.waitRelease(hold, evID+"#observers", 1)
		cancel()
	}
	return outcome{after: [][]byte{[]byte(UnsolicitedObserverReply)}, status: http.StatusNoContent}
}

// verifyRefs checks every body reference of an event against the bytes the
// receiver holds in its scope: an unknown reference, or stored bytes that
// no longer match their receipt, is an error.
func (s *lcServer) verifyRefs(ev gen.Event) error {
	raw, err := gen.EncodeEvent(&ev)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	var refs []string
	collectRefs(doc, &refs)
	for _, ref := range refs {
		rc, rec, err := s.uploads.Open(s.ctx, s.scope, ref)
		if err != nil {
			return fmt.Errorf("reference not available: %w", err)
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		_ = rc.Close()
		if err != nil {
			return fmt.Errorf("stored bytes: %w", err)
		}
		if n != rec.Size || hex.EncodeToString(h.Sum(nil)) != rec.SHA256 {
			return errors.New("stored bytes differ from their receipt")
		}
	}
	return nil
}

// collectRefs appends the ref of every attachment part with a body.
func collectRefs(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if t["kind"] == "attachment" {
			if b, ok := t["body"].(map[string]any); ok {
				if ref, ok := b["ref"].(string); ok {
					*out = append(*out, ref)
				}
			}
		}
		for _, c := range t {
			collectRefs(c, out)
		}
	case []any:
		for _, c := range t {
			collectRefs(c, out)
		}
	}
}

// eventHandler is the HTTP event binding: every POST path is an AHP
// endpoint (the readiness endpoint is /intercept; /observe is accepted
// alike), told apart by method.
func (s *lcServer) eventHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "", http.StatusMethodNotAllowed)
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "", http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "", http.StatusRequestEntityTooLarge)
			return
		}
		out := s.handle(body)
		switch {
		case out.reply != nil && (out.status == 0 || out.status == http.StatusOK):
			interop.WriteJSON(w, http.StatusOK, out.reply)
		case out.status == http.StatusNoContent || out.status == 0:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(out.status)
		}
	})
}

// serveStdio reads one message per line and dispatches each on its own
// goroutine, so a held request never stops the next one from being read;
// frames are written whole, one at a time. It returns at the end of r (or
// when ctx ends) after every dispatched message has ended.
func (s *lcServer) serveStdio(ctx context.Context, cancel context.CancelFunc, r io.Reader, w io.Writer) error {
	if r == nil {
		return fmt.Errorf("%w: stdio server without stdin", interop.ErrUsage)
	}
	fw := jsonrpc.NewFrameWriter(w)
	var wmu sync.Mutex
	write := func(frames ...[]byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		for _, f := range frames {
			if err := fw.WriteFrame(f); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	var werr error
	var emu sync.Mutex
	fr := jsonrpc.NewFrameReader(r, maxBody)
	readDone := make(chan error, 1)
	go func() {
		for {
			data, err := fr.Next()
			if err != nil {
				if interop.RecoverableFrameError(err) {
					_ = write(jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError)))
					continue
				}
				readDone <- err
				return
			}
			msg := bytes.Clone(data)
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := s.handle(msg)
				var frames [][]byte
				frames = append(frames, out.before...)
				if out.reply != nil {
					frames = append(frames, out.reply)
				}
				frames = append(frames, out.after...)
				if err := write(frames...); err != nil {
					emu.Lock()
					werr = err
					emu.Unlock()
				}
			}()
		}
	}()
	var rerr error
	select {
	case rerr = <-readDone:
	case <-ctx.Done():
		if c, ok := r.(io.Closer); ok {
			_ = c.Close() // unblocks the reader
		}
		select {
		case rerr = <-readDone:
		case <-time.After(time.Second): // an uninterruptible read ends with the process
		}
	}
	s.log.Info("stdio input ended", "reason", errText(rerr))
	// The harness that would release held requests has gone: end them.
	cancel()
	wg.Wait()
	emu.Lock()
	defer emu.Unlock()
	if werr != nil && !errors.Is(werr, os.ErrClosed) {
		return fmt.Errorf("write stdout: %w", werr)
	}
	return nil
}

func errText(err error) string {
	switch {
	case err == nil:
		return "shutdown"
	case errors.Is(err, io.EOF):
		return "eof"
	default:
		return strconv.Quote(err.Error())
	}
}
