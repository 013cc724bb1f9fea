package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// WithAttachment gives the SDK the bytes of the event's attachment part
// partID: a body-selected attachment part of the input with that id, its
// media type either empty (the attachment's is used) or the attachment's,
// and an empty body reference. The SDK uploads the bytes to the upload
// endpoint of each subscription that selects the part's body and gives each
// of them only its own receiver's {"ref"}: the uploads of every matched
// subscription (interceptors and observers) start together before serial
// interception, and each delivery waits only for its own subscription's
// uploads, so that a slow or failing upload delays and fails that
// subscription alone. A subscription that selects metadata or omit gets
// the part without a reference and never causes the source to be read; one
// that selects the body but has no upload endpoint, or whose upload
// failed, gets a content gap (and a failed upload is a preparation failure
// of an interceptor under its failure policy, a diagnostic of an
// observer). The call reads the attachment at most once, and no upload
// outlives it: the end of the call cancels and joins those still running.
//
// Ownership passes to the call: the caller must not use or close a for
// itself once the method is called. When the call returns a Result without
// error, the Result owns a (Result.Attachments: readable after Hooks.Close,
// until Result.Close, which the caller must call). When the call returns an
// error (invalid input, ErrClosed, the end of ctx), it has closed a before
// returning, with an interrupted Result if there is one. Either way a is
// closed exactly once, whether its source was read or not. Create a new
// attachment for each call.
//
// In the Result, and in the effects it reports, such a part carries the
// reference AttachmentRef(partID) ("ahp:attachment:" followed by partID),
// which AttachmentPartID maps back; no backend ever sees it: an input that
// carries a reference with that prefix (for example another Result's
// content) is invalid input (ErrInvalidInput), and a backend response that
// carries one is refused. A backend
// that repeats its own reference in a message-list effect repeats that
// part.
func WithAttachment(partID string, a *content.Attachment) CallOption {
	return optionFunc(func(o *callOptions) {
		o.attachments = append(o.attachments, attachmentOption{partID: partID, a: a})
	})
}

type attachmentOption struct {
	partID string
	a      *content.Attachment
}

// attachmentRefPrefix starts the reference of an attachment part whose
// bytes the SDK uploads, in the canonical event.
const attachmentRefPrefix = "ahp:attachment:"

// attached is one attachment part of a call.
type attached struct {
	partID string
	a      *content.Attachment
	ref    string // its reference in the canonical event
}

// attachments are the attachment parts of one call and their uploads.
//
// list and byRef never change once bound; groups and started are written
// only by startUploads, before any delivery. The upload groups and the
// concurrent observations read and write the rest, under mu.
type attachments struct {
	list    []*attached          // in option order
	byRef   map[string]*attached // canonical reference → part
	groups  map[*subscription]*uploadGroup
	started []*uploadGroup // every group started, joined before the call returns

	cache content.Cache // the call's upload confirmations, shared by its groups

	mu      sync.Mutex
	uploads map[uploadKey]uploadResult
	issued  map[*subscription]map[string][]*attached // receiver's reference → the parts it stands for
}

type uploadKey struct {
	s  *subscription
	at *attached
}

// uploadResult is a subscription's body of one attachment part.
type uploadResult struct {
	ref     gen.ContentReference // confirmed
	err     error                // the upload failed
	noDest  bool                 // the subscription has no upload endpoint
	pending bool                 // planned, its outcome not collected yet
}

// bindAttachments puts the canonical references of the call's attachment
// parts into ev (a copy of what changes).
func (c *call) bindAttachments(ev *gen.Event) (*gen.Event, error) {
	o := c.options()
	if o == nil || len(o.attachments) == 0 {
		reserved := false
		walkEvent(partVisitor{part: func(a parts) {
			if a.attBody != nil && strings.HasPrefix(a.attBody.Body.Ref, attachmentRefPrefix) {
				reserved = true
			}
		}, onMessage: func(*gen.CanonicalMessage) {}}, ev)
		if reserved { // the placeholder of another call's attachment: never sent
			return nil, inputError("event", "", "attachment", "an attachment reference uses the SDK's reserved prefix")
		}
		return ev, nil
	}
	att := &attachments{byRef: map[string]*attached{}, groups: map[*subscription]*uploadGroup{}, uploads: map[uploadKey]uploadResult{},
		issued: map[*subscription]map[string][]*attached{}}
	byPart := map[string]*attached{}
	for _, o := range o.attachments {
		if o.partID == "" || o.a == nil {
			return nil, inputError("attachments", "", "attachment", "an attachment needs a part id and an attachment")
		}
		if byPart[o.partID] != nil {
			return nil, inputError("attachments", "", "attachment", "two attachments for one part id")
		}
		at := &attached{partID: o.partID, a: o.a, ref: attachmentRefPrefix + o.partID}
		byPart[o.partID] = at
		att.list = append(att.list, at)
		att.byRef[at.ref] = at
	}
	var bad string
	found := map[string]bool{}
	bind := &partRewriter{fn: func(a parts) (parts, bool) {
		id := a.id()
		at := byPart[id]
		// A part of a given attachment may already carry its own
		// placeholder, AttachmentRef(partID): a canonical event document
		// (Deliver) cannot leave a body reference empty. Any other use of
		// the reserved prefix is refused.
		own := at != nil && a.attBody != nil && a.attBody.Body.Ref == at.ref
		if a.attBody != nil && strings.HasPrefix(a.attBody.Body.Ref, attachmentRefPrefix) && !own {
			bad = "an attachment reference uses the SDK's reserved prefix"
		}
		if at == nil || id == "" {
			return a, false
		}
		if found[id] {
			bad = "two parts have the id of an attachment"
			return a, false
		}
		found[id] = true
		if a.attBody == nil || (a.attBody.Body.Ref != "" && !own) {
			bad = "an attachment's part is not an attachment body part without a reference"
			return a, false
		}
		p := *a.attBody
		switch {
		case p.MediaType == "":
			p.MediaType = at.a.MediaType()
		case !strings.EqualFold(p.MediaType, at.a.MediaType()):
			bad = "an attachment's part has another media type"
			return a, false
		}
		p.Body = gen.ContentReference{Ref: at.ref}
		return parts{attBody: &p}, true
	}}
	out, _ := walkEvent(bind, ev)
	if bad != "" {
		return nil, inputError("event", "", "attachment", bad)
	}
	if len(found) != len(byPart) {
		return nil, inputError("event", "", "attachment", "an attachment's part id is not a part of the event")
	}
	c.att = att
	return out, nil
}

// uploadGroup is the uploads of the attachment parts whose bodies one
// subscription selects. The groups of every matched subscription start
// together before serial interception (startUploads) and run concurrently,
// bounded together by the Hooks' upload limit; a delivery waits only for
// its own subscription's group (awaitUploads), so that a failure or a
// stall in one group reaches only that subscription, under its failure
// policy, when its turn comes. Every group is joined before the call
// returns (joinUploads).
type uploadGroup struct {
	s     *subscription
	needs []*attached
	ctx   *deliveryContext
	done  chan struct{}     // closed when every upload of the group has ended
	outs  []content.Outcome // one per need, written before done is closed
	once  sync.Once         // collect
}

// jobs returns the group's upload jobs, one per need.
func (g *uploadGroup) jobs() []content.Job {
	jobs := make([]content.Job, len(g.needs))
	s := g.s
	for i, at := range g.needs {
		jobs[i] = content.Job{Attachment: at.a, Destination: content.Destination{BackendID: s.b.id, Backend: s.b.entry, SubscriptionIndex: s.index, Upload: *s.upload}}
	}
	return jobs
}

// collect records the group's outcomes as the uploads of its subscription,
// once; the group has ended.
func (g *uploadGroup) collect(att *attachments) {
	g.once.Do(func() {
		att.mu.Lock()
		defer att.mu.Unlock()
		for i, at := range g.needs {
			r := uploadResult{ref: g.outs[i].Confirmation.Reference}
			if err := g.outs[i].Err; err != nil {
				r = uploadResult{err: err}
			}
			att.uploads[uploadKey{g.s, at}] = r
		}
	})
}

// planUploads records, for every subscription of first and then of rest, the
// attachment parts of the effective event whose body it selects and that
// no earlier plan covered: pending when it has an upload endpoint (the
// groups returned, one per subscription with something to upload, in
// order), without a destination otherwise. Metadata and omit selections
// never read the source and plan nothing.
func (c *call) planUploads(first, rest []*subscription) []*uploadGroup {
	subs := [2][]*subscription{first, rest}
	att := c.att
	att.mu.Lock()
	defer att.mu.Unlock()
	var of map[*subscription]*uploadGroup
	walkEvent(partVisitor{part: func(a parts) {
		if a.attBody == nil {
			return
		}
		at := att.byRef[a.attBody.Body.Ref]
		if at == nil {
			return
		}
		for _, list := range subs {
			for _, s := range list {
				if s.pol.forPart(a.attBody.Category, false, a.attBody.MediaType) != levelBody {
					continue
				}
				k := uploadKey{s, at}
				if _, planned := att.uploads[k]; planned {
					continue
				}
				if s.upload == nil {
					att.uploads[k] = uploadResult{noDest: true}
					continue
				}
				att.uploads[k] = uploadResult{pending: true}
				if of == nil {
					of = map[*subscription]*uploadGroup{}
				}
				g := of[s]
				if g == nil {
					g = &uploadGroup{s: s}
					of[s] = g
				}
				g.needs = append(g.needs, at)
			}
		}
	}, onMessage: func(*gen.CanonicalMessage) {}}, c.cur)
	if len(of) == 0 {
		return nil
	}
	// In subscription order (the walk met them in part order), so that
	// earlier subscriptions ask for upload permits first.
	var groups []*uploadGroup
	for _, list := range subs {
		for _, s := range list {
			if g := of[s]; g != nil {
				groups = append(groups, g)
				delete(of, s)
			}
		}
	}
	return groups
}

// startUploads starts, before serial interception, the upload group of
// every matched interceptor, then of every matched observer, that selects
// the body of an attachment part and has an upload endpoint. Each group
// runs in a goroutine of its own within the call's budget (and Close);
// each upload is also bounded by its own upload.timeoutMs. It runs once
// per call, before any delivery: the groups it records are read, never
// written, afterwards.
func (c *call) startUploads(interceptors, observers []*subscription) {
	if c.att == nil {
		return
	}
	// Observers' uploads are best effort, never an execution gate
	// (content-upload.md): while interceptors' uploads of the call run,
	// observers' uploads never hold every upload permit, so that a stalled
	// observer's upload cannot hold the one an interceptor's waits for
	// (observerUploads).
	var first []chan struct{}
	var share chan struct{}
	if n := c.h.uploader.Limiter().Limit(); n > 1 {
		share = make(chan struct{}, n-1)
	}
	for _, g := range c.planUploads(interceptors, observers) {
		g.ctx = c.h.timeouts.start(c.ctx, 0)
		g.done = make(chan struct{})
		c.att.groups[g.s] = g
		c.att.started = append(c.att.started, g)
		jobs := g.jobs()
		if g.s.mode == gen.ModeIntercept { // planUploads returns the interceptors' groups first
			first = append(first, g.done)
			go func() {
				defer close(g.done)
				g.outs = c.h.uploader.UploadAll(g.ctx, &c.att.cache, jobs)
			}()
			continue
		}
		after := first
		go func() {
			defer close(g.done)
			g.outs = c.observerUploads(g.ctx, jobs, after, share)
		}()
	}
}

// observerUploads runs an observer group's upload jobs. While an
// interceptor's group of the call (after) runs, the observer's uploads
// run one at a time, each holding a slot of the call's observer share
// (one less than the upload limit; none with a limit of 1, when they wait
// for those groups to end); then the rest run together. An ended ctx
// fails what is not cached.
func (c *call) observerUploads(ctx context.Context, jobs []content.Job, after []chan struct{}, share chan struct{}) []content.Outcome {
	outs := make([]content.Outcome, 0, len(jobs))
	for len(jobs) > 0 {
		slot := false
	wait:
		for len(after) > 0 {
			select {
			case <-after[0]:
				after = after[1:]
			case share <- struct{}{}: // a nil share is never ready
				slot = true
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		if !slot { // the interceptors' groups have ended (or ctx has)
			return append(outs, c.h.uploader.UploadAll(ctx, &c.att.cache, jobs)...)
		}
		outs = append(outs, c.h.uploader.UploadAll(ctx, &c.att.cache, jobs[:1])...)
		jobs = jobs[1:]
		<-share
	}
	return outs
}

// awaitUploads waits for s's upload group to end, or for ctx to end, which
// cancels the group and joins it. Then it uploads, within ctx, what s
// selects in the effective event that its group did not cover (parts an
// accepted modification brought into s's selection), so that every
// upload s's view refers to has ended when awaitUploads returns; their
// outcomes are s's uploads.
func (c *call) awaitUploads(ctx context.Context, s *subscription) {
	if c.att == nil {
		return
	}
	if g := c.att.groups[s]; g != nil {
		select {
		case <-g.done:
		case <-ctx.Done():
			g.ctx.cancel(context.Cause(ctx))
			<-g.done
		}
		g.collect(c.att)
	}
	for _, g := range c.planUploads([]*subscription{s}, nil) {
		uctx := c.h.timeouts.start(ctx, 0)
		g.outs = c.h.uploader.UploadAll(uctx, &c.att.cache, g.jobs())
		c.h.timeouts.release(uctx)
		g.collect(c.att)
	}
}

// joinUploads cancels the upload groups still running (their
// subscriptions' deliveries were not reached: the call ended) and waits
// for every group, so that no upload outlives the call.
func (c *call) joinUploads() {
	if c.att == nil {
		return
	}
	for _, g := range c.att.started {
		c.h.timeouts.release(g.ctx)
		<-g.done
	}
}

// uploadFailed reports whether an upload failed for an attachment part
// whose body s selects in the effective event: a part an accepted edit
// removed affects no delivery of s (content-upload.md, Upload before
// publication), whatever became of its upload.
func (c *call) uploadFailed(s *subscription) bool {
	if c.att == nil {
		return false
	}
	failed := false
	walkEvent(partVisitor{part: func(a parts) {
		if failed || a.attBody == nil {
			return
		}
		at := c.att.byRef[a.attBody.Body.Ref]
		if at == nil || s.pol.forPart(a.attBody.Category, false, a.attBody.MediaType) != levelBody {
			return
		}
		c.att.mu.Lock()
		failed = c.att.uploads[uploadKey{s, at}].err != nil
		c.att.mu.Unlock()
	}, onMessage: func(*gen.CanonicalMessage) {}}, c.cur)
	return failed
}

// withAttachments gives the attachment parts of view, s's projected view,
// the reference of s's receiver, or a gap when s has none.
func (c *call) withAttachments(view *gen.Event, s *subscription) *gen.Event {
	if c.att == nil {
		return view
	}
	out, _ := walkEvent(c.attachRewriter(s), view)
	return out
}

// attachRewriter is the rewriter of withAttachments.
func (c *call) attachRewriter(s *subscription) *partRewriter {
	return &partRewriter{fn: func(a parts) (parts, bool) {
		if a.attBody == nil {
			return a, false
		}
		at := c.att.byRef[a.attBody.Body.Ref]
		if at == nil {
			return a, false
		}
		p := a.attBody
		c.att.mu.Lock()
		defer c.att.mu.Unlock()
		r, ok := c.att.uploads[uploadKey{s, at}]
		if ok && r.err == nil && !r.noDest && !r.pending {
			q := *p
			q.Body = gen.ContentReference{Ref: r.ref.Ref}
			if c.att.issued[s] == nil {
				c.att.issued[s] = map[string][]*attached{}
			}
			// One reference can stand for several parts (one owner given for
			// two part ids, or a content-addressed receiver's equal bytes).
			ats := c.att.issued[s][r.ref.Ref]
			dup := false
			for _, x := range ats {
				dup = dup || x == at
			}
			if !dup {
				c.att.issued[s][r.ref.Ref] = append(ats, at)
			}
			return parts{attBody: &q}, true
		}
		reason := "body unavailable"
		switch {
		case r.noDest:
			reason = "no upload endpoint"
		case r.err != nil:
			reason = "upload failed"
		}
		return parts{attGap: &gen.AttachmentGapPart{ID: p.ID, MediaType: p.MediaType, Gap: gen.GapPartGap{Reason: reason}, Category: p.Category, Synthesized: p.Synthesized}}, true
	}}
}

// canonicalRefs maps the receiver references that s repeats in the
// message lists of its response back to the canonical references of their
// parts, so that settlement recognizes the attachments it established. A
// reference s was not given stays, and settlement rejects it. A canonical
// reference is reached only through a reference issued to s: a response
// that carries the SDK's reserved prefix itself (which no backend is ever
// given) is refused, and canonicalRefs reports false.
func (c *call) canonicalRefs(s *subscription, r *gen.InterceptResponseResult) bool {
	if len(r.Effects) == 0 {
		return true // no effect, no reference
	}
	var issued map[string][]*attached
	if c.att != nil {
		c.att.mu.Lock()
		issued = c.att.issued[s] // written only by s's own views, never concurrently with its response
		c.att.mu.Unlock()
	}
	forged := false
	back := &partRewriter{fn: func(a parts) (parts, bool) {
		if a.attBody == nil {
			return a, false
		}
		if strings.HasPrefix(a.attBody.Body.Ref, attachmentRefPrefix) {
			forged = true
			return a, false
		}
		ats := issued[a.attBody.Body.Ref]
		if len(ats) == 0 {
			return a, false
		}
		at := ats[0] // the part of the same id, when the reference stands for several
		for _, x := range ats {
			if x.partID == a.attBody.ID {
				at = x
				break
			}
		}
		q := *a.attBody
		q.Body = gen.ContentReference{Ref: at.ref}
		return parts{attBody: &q}, true
	}}
	for i := range r.Effects {
		e := &r.Effects[i]
		switch {
		case e.ModifyMessages != nil:
			if v, ok := back.messages(e.ModifyMessages.Value); ok {
				e.ModifyMessages.Value = v
			}
		case e.Inject != nil:
			if v, ok := back.messages(e.Inject.Value); ok {
				e.Inject.Value = v
			}
		case e.ReturnTool != nil:
			var ms gen.CanonicalMessages // a returned message list, if it is one
			if json.Unmarshal(e.ReturnTool.Value, &ms) != nil {
				continue
			}
			if v, ok := back.messages(ms); ok {
				if b, err := json.Marshal(gen.CanonicalMessages(v)); err == nil {
					e.ReturnTool.Value = b
				}
			}
		}
	}
	return !forged
}

// uploadError is the failure of a delivery whose upload failed.
func uploadError() *transport.Error {
	return &transport.Error{Code: transport.CodePreparation, Stage: transport.StagePrepare, Reason: "upload"}
}

// release closes the attachments of a call that returns an error: those of
// its options and, through res, the interrupted Result's. Their cleanup
// errors are dropped: the call's error is what the caller gets.
func (c *call) release(res *Result) {
	if opts := c.options(); opts != nil {
		for _, o := range opts.attachments {
			if o.a != nil {
				_ = o.a.Close()
			}
		}
	}
	if res != nil {
		_ = res.attachments.Close()
	}
}
