package elicitation

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/settle"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/server"
)

// Environment variables of the bearer tokens. The hooks token authorizes
// /hooks/intercept and /receipts; the upload token authorizes /upload only.
const (
	TokenEnv       = "AHP_ELICITATION_TOKEN"
	UploadTokenEnv = "AHP_ELICITATION_UPLOAD_TOKEN"
)

// maxMessage bounds one request body of the receiver.
const maxMessage = 4 << 20

// Check tokens of the receiver beyond settle's Check* constants.
const (
	checkCanonical = "canonical"       // the envelope fails canonical validation
	checkDuplicate = "duplicate"       // a live request identity is reused
	checkUnknown   = "unknown_request" // no pending request has the result's (source, parentEventId)
	checkEventType = "event_type"      // not an elicitation event
)

// pendingKey identifies a pending request: its source and event id, never
// its session alone.
type pendingKey struct{ source, id string }

// Receiver is the matrix's authenticated HTTP receiver: it validates
// canonical hooks/intercept envelopes and elicitation exchanges, accepts
// §4 uploads in the authenticated principal's scope, and keeps receipts.
type Receiver struct {
	principal   string
	hooksToken  []byte
	uploadToken []byte
	log         *slog.Logger

	handler *server.Handler
	upload  *server.UploadReceiver
	storage *server.MemoryStorage

	mu       sync.Mutex
	pending  map[pendingKey]*gen.UserElicitationRequestEvent
	receipts []json.RawMessage
	uploads  int
}

// NewReceiver returns a receiver whose bearer tokens authenticate
// principal: the identity comes from this configuration, never from event,
// source or server fields.
func NewReceiver(principal, hooksToken, uploadToken string, log *slog.Logger) (*Receiver, error) {
	if principal == "" || hooksToken == "" || uploadToken == "" {
		return nil, errors.New("receiver needs a principal and both tokens")
	}
	r := &Receiver{
		principal:   principal,
		hooksToken:  []byte(hooksToken),
		uploadToken: []byte(uploadToken),
		log:         log,
		storage:     &server.MemoryStorage{},
		pending:     map[pendingKey]*gen.UserElicitationRequestEvent{},
		receipts:    []json.RawMessage{},
	}
	r.handler = &server.Handler{
		InterceptEvents: []gen.EventName{gen.EventUserElicitationRequest, gen.EventUserElicitationResult},
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			return server.InterceptResult{}, nil
		},
		MaxBodyBytes: maxMessage,
		Logger:       log,
	}
	r.upload = &server.UploadReceiver{
		Authorize: func(req *http.Request) (string, error) {
			if !r.bearer(req, r.uploadToken) {
				return "", server.ErrUnauthenticated
			}
			return r.principal, nil
		},
		Storage: r.storage,
		Logger:  log,
	}
	if err := r.upload.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// bearer reports whether req carries exactly the token.
func (r *Receiver) bearer(req *http.Request, token []byte) bool {
	got, ok := interop.BearerToken(req.Header.Values("Authorization"))
	return ok && subtle.ConstantTimeCompare([]byte(got), token) == 1
}

// ServeHTTP routes /upload, /hooks/intercept and /receipts.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/upload":
		r.serveUpload(w, req)
	case "/hooks/intercept":
		if !r.bearer(req, r.hooksToken) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.serveIntercept(w, req)
	case "/receipts":
		if req.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !r.bearer(req, r.hooksToken) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.serveReceipts(w)
	default:
		http.NotFound(w, req)
	}
}

// capture records a handler's status and body.
type capture struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (c *capture) Header() http.Header { return c.h }
func (c *capture) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

// replay writes a captured response to w.
func (c *capture) replay(w http.ResponseWriter) {
	for k, v := range c.h {
		w.Header()[k] = v
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body.Bytes())
}

func (r *Receiver) serveUpload(w http.ResponseWriter, req *http.Request) {
	c := &capture{h: http.Header{}}
	r.upload.ServeHTTP(c, req)
	if c.status == http.StatusCreated {
		var rc struct {
			Ref    string      `json:"ref"`
			Size   json.Number `json:"size"`
			SHA256 string      `json:"sha256"`
		}
		if interop.DecodeJSON(c.body.Bytes(), &rc) == nil {
			r.record(map[string]any{"route": "/upload", "status": c.status, "principal": r.principal, "ref": rc.Ref, "size": rc.Size, "sha256": rc.SHA256}, func() { r.uploads++ })
		}
	}
	c.replay(w)
}

// receipt is one /hooks/intercept receipt.
type receipt struct {
	Route         string          `json:"route"`
	Status        int             `json:"status"`
	Principal     string          `json:"principal"`
	Accepted      bool            `json:"accepted"`
	Check         *string         `json:"check"`
	EventID       string          `json:"eventId,omitempty"`
	EventType     string          `json:"eventType,omitempty"`
	ParentEventID *string         `json:"parentEventId,omitempty"`
	Mode          string          `json:"mode,omitempty"`
	Action        string          `json:"action,omitempty"`
	RequestBody   string          `json:"requestBody,omitempty"`
	ResultBody    string          `json:"resultBody,omitempty"`
	Body          *string         `json:"body"`
	Result        json.RawMessage `json:"result"`
	Origin        string          `json:"origin,omitempty"`
	VerifiedHuman bool            `json:"verifiedHuman"`
	Completed     bool            `json:"completed"`
	Envelope      json.RawMessage `json:"envelope"`
}

func (r *Receiver) serveIntercept(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		r.handler.ServeHTTP(w, req)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxMessage))
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	rc := receipt{Route: "/hooks/intercept", Principal: r.principal, Result: json.RawMessage("null")}
	if json.Valid(body) {
		rc.Envelope = json.RawMessage(bytes.Clone(body))
	} else {
		rc.Envelope = json.RawMessage("null")
	}
	forward := func() *capture {
		fr := req.Clone(req.Context())
		fr.Body = io.NopCloser(bytes.NewReader(body))
		fr.ContentLength = int64(len(body))
		c := &capture{h: http.Header{}}
		r.handler.ServeHTTP(c, fr)
		return c
	}
	var ir *gen.InterceptRequest
	if validate.Default().Validate("intercept-request.schema.json", body) == nil {
		ir, _ = gen.ParseInterceptRequest(body)
	}
	if ir == nil {
		// The SDK's dispatcher answers what is wrong (parse, envelope,
		// version, event, params).
		c := forward()
		rc.Status, rc.Check = c.status, ptr(checkCanonical)
		r.record(rc, nil)
		c.replay(w)
		return
	}
	ev := &ir.Params.Event
	// One exchange at a time: the checks, the dispatcher's answer and the
	// state change are one step, so a duplicate identity cannot slip in
	// between.
	r.mu.Lock()
	defer r.mu.Unlock()
	check, commit := r.exchange(ev, ir.Params.Capabilities, &rc)
	if check != "" {
		rc.Check = ptr(check)
		rc.Status = http.StatusOK
		r.appendLocked(rc)
		writeInvalidParams(w, body, check)
		return
	}
	c := forward()
	rc.Status = c.status
	rc.Accepted = c.status == http.StatusOK && bytes.Contains(c.body.Bytes(), []byte(`"result"`))
	if rc.Accepted {
		commit()
	} else {
		rc.Check = ptr(checkCanonical)
	}
	r.appendLocked(rc)
	c.replay(w)
}

// exchange runs the elicitation checks of one canonical event under r.mu
// and fills rc. It returns a failed check, or the state change to commit
// once the event is accepted. A failed result check consumes nothing.
func (r *Receiver) exchange(ev *gen.Event, caps gen.Capabilities, rc *receipt) (string, func()) {
	switch {
	case ev.UserElicitationRequest != nil:
		q := ev.UserElicitationRequest
		rc.EventID, rc.EventType, rc.Mode = q.ID, string(gen.EventUserElicitationRequest), string(q.Elicitation.Mode)
		if err := settle.ValidateElicitationMode(settle.ModesOf(caps.Elicitation), q.Elicitation.Mode); err != nil {
			return checkOf(err), nil
		}
		x, err := settle.ValidateElicitationRequest(q)
		if err != nil {
			return checkOf(err), nil
		}
		k := pendingKey{q.Source, q.ID}
		if _, dup := r.pending[k]; dup {
			return checkDuplicate, nil
		}
		rc.RequestBody, rc.ResultBody = x.RequestBody, x.ResultBody
		if x.RequestBody == settle.BodyValidated {
			rc.Body = ptr(x.RequestText)
		}
		return "", func() { r.pending[k] = q }
	case ev.UserElicitationResult != nil:
		s := ev.UserElicitationResult
		rc.EventID, rc.EventType, rc.Mode, rc.Action = s.ID, string(gen.EventUserElicitationResult), string(s.Elicitation.Mode), string(s.Elicitation.Action)
		rc.ParentEventID = s.ParentEventID
		if s.ParentEventID == nil {
			return settle.CheckParent, nil
		}
		k := pendingKey{s.Source, *s.ParentEventID}
		q := r.pending[k]
		if q == nil {
			return checkUnknown, nil
		}
		x, err := settle.ValidateElicitationExchange(q, s)
		if err != nil {
			return checkOf(err), nil
		}
		rc.RequestBody, rc.ResultBody, rc.Origin = x.RequestBody, x.ResultBody, settle.OriginMCP
		if x.ResultBody == settle.BodyValidated {
			rc.Body = ptr(x.ResultText)
			rc.Result = json.RawMessage(x.ResultText)
		}
		// URL accept is consent to open the URL, never external completion.
		rc.Completed = false
		return "", func() { delete(r.pending, k) }
	}
	return checkEventType, nil
}

// checkOf returns the check token of an exchange error.
func checkOf(err error) string {
	var xe *settle.ExchangeError
	if errors.As(err, &xe) {
		return xe.Check
	}
	return checkCanonical
}

func ptr[T any](v T) *T { return &v }

// writeInvalidParams answers -32602 Invalid params with the failed check.
func writeInvalidParams(w http.ResponseWriter, body []byte, check string) {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	if len(env.ID) == 0 {
		env.ID = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32602, "message": "Invalid params", "data": map[string]string{"check": check}}})
	interop.WriteJSON(w, http.StatusOK, out)
}

// record appends one receipt and applies commit under the lock.
func (r *Receiver) record(v any, commit func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if commit != nil {
		commit()
	}
	r.appendLocked(v)
}

// appendLocked appends one receipt; r.mu is held.
func (r *Receiver) appendLocked(v any) {
	if b, err := json.Marshal(v); err == nil {
		r.receipts = append(r.receipts, b)
	}
}

func (r *Receiver) serveReceipts(w http.ResponseWriter) {
	r.mu.Lock()
	out, err := json.Marshal(map[string]any{"principal": r.principal, "uploads": r.uploads, "pending": len(r.pending), "receipts": r.receipts})
	r.mu.Unlock()
	if err != nil {
		http.Error(w, "receipts", http.StatusInternalServerError)
		return
	}
	interop.WriteJSON(w, http.StatusOK, out)
}
