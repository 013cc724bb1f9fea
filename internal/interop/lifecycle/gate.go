package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// drainLimit bounds a retained drain future: an exchange whose caller gave
// up keeps waiting this long for its late response.
const drainLimit = 2 * time.Minute

// errGateClosed is returned to an exchange still waiting when its scenario
// ends.
var errGateClosed = errors.New("lifecycle: scenario ended")

// gate is the client's custom transport (hooks.Config.Transports) around
// the real one. It keeps a drain future for every exchange: when the SDK
// gives up on an exchange (a cancelled invocation, an interrupted call),
// the late response still arrives here and is discarded, never published
// (the drain step proves it). It marks every delivered notification
// emitted. Acquisition and acceptance are the SDK's (hooks.Invocation).
type gate struct {
	inner transport.Transport
	mu    sync.Mutex
	run   *scenarioRun
}

func (g *gate) current() *scenarioRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.run
}

func (g *gate) setRun(r *scenarioRun) {
	g.mu.Lock()
	g.run = r
	g.mu.Unlock()
}

// rawResult is what the real transport answered.
type rawResult struct {
	raw []byte
	err error
}

// exchange is one transport attempt of an invocation.
type exchange struct {
	msg transport.Message
	// got is closed once res is set (the response, or the error, arrived).
	got chan struct{}
	res rawResult
	// abandoned is set when the caller gave up before the response
	// arrived: the drain future still receives it, to be discarded.
	mu        sync.Mutex
	abandoned bool
}

// Exchange implements transport.Transport.
func (g *gate) Exchange(ctx context.Context, msg transport.Message) ([]byte, error) {
	run := g.current()
	var inv *invocation
	if run != nil {
		inv = run.byID(idString(msg.ID))
	}
	if inv == nil {
		return g.inner.Exchange(ctx, msg)
	}
	ex := &exchange{msg: msg, got: make(chan struct{})}
	inv.addExchange(ex)
	// The drain future: the real exchange runs on a context that the
	// caller's cancellation does not end, bounded by drainLimit and by the
	// scenario's end.
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), drainLimit)
	stop := context.AfterFunc(run.ctx, dcancel)
	run.wg.Add(1)
	go func() {
		defer run.wg.Done()
		defer stop()
		defer dcancel()
		raw, err := g.inner.Exchange(dctx, msg)
		ex.res = rawResult{raw: raw, err: err}
		close(ex.got)
	}()
	select {
	case <-ex.got:
	case <-ctx.Done():
		ex.mu.Lock()
		ex.abandoned = true
		ex.mu.Unlock()
		return nil, ctx.Err()
	case <-run.ctx.Done():
		return nil, errGateClosed
	}
	return ex.res.raw, ex.res.err
}

// Notify implements transport.Transport. A notification that the real
// transport delivered is marked emitted.
func (g *gate) Notify(ctx context.Context, msg transport.Message) error {
	err := g.inner.Notify(ctx, msg)
	if run := g.current(); run != nil && err == nil {
		if id, ok := observedEventID(msg.Body); ok {
			run.mark(ctx, KindEmitted, id)
		}
	}
	return err
}

// Close implements transport.Transport; the real transport is closed by
// the client.
func (g *gate) Close() error { return nil }

// idString returns a string id's value ("" for any other id).
func idString(id jsonrpc.ID) string {
	var s string
	if json.Unmarshal([]byte(id.String()), &s) != nil {
		return ""
	}
	return s
}

// observedEventID returns the event id of a hooks/observe notification.
func observedEventID(body []byte) (string, bool) {
	var n struct {
		Params struct {
			Event struct {
				ID string `json:"id"`
			} `json:"event"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &n) != nil || n.Params.Event.ID == "" {
		return "", false
	}
	return n.Params.Event.ID, true
}
