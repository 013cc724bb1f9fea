// Command compaction runs host-side context compaction with
// hooks.Compactor. Before compaction, a summarizer backend on loopback
// HTTP (reached through hooks.DeliverCompaction, so the SDK projects,
// authenticates and admits its answer) returns the summary itself, which
// skips the host's generator but not the controls after it. After
// compaction, a host-owned redacting callback replaces secrets in the
// summary before anything is installed. The host installs a summary only
// when the result is Applied (CompactionResult.Downstream); a second
// occurrence, with the backend gone and its hook fail-closed, generates
// nothing and installs nothing.
//
//	go run ./examples/compaction
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/server"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compaction:", err)
		os.Exit(1)
	}
}

// summarizer is the backend: it answers context.compact.before with a
// summary of its own (a return effect) and a user-facing message.
func summarizer(_ context.Context, req *gen.InterceptRequest) (server.InterceptResult, error) {
	ev := req.Params.Event.ContextCompactBefore
	if ev == nil {
		return server.InterceptResult{}, errors.New("not a compaction")
	}
	sum := server.ReturnText(gen.TextParts{{Body: &gen.TextBodyPart{ID: "summary-1",
		Text: fmt.Sprintf("%d messages: the user deployed with key sk-live-51Hx9 and asked for a rollback plan.", len(ev.Items))}}})
	return server.InterceptResult{Effects: []gen.Effect{server.Message("summary provided by the summarizer"), sum}}, nil
}

// secret matches the API keys the redactor removes.
var secret = regexp.MustCompile(`sk-[A-Za-z0-9-]+`)

// redact is the host-owned after-compaction callback: it replaces every
// key in the summary, keeping each part's id.
func redact(_ context.Context, snap hooks.CompactionSnapshot) ([]gen.Effect, error) {
	sum := snap.Event.ContextCompactAfter.Summary
	out := make(gen.TextParts, len(sum))
	changed := false
	for i, p := range sum {
		if p.Body == nil {
			return nil, errors.New("summary text withheld from the redactor")
		}
		b := *p.Body
		b.Text = secret.ReplaceAllString(b.Text, "[redacted]")
		changed = changed || b.Text != p.Body.Text
		out[i] = gen.TextPart{Body: &b}
	}
	if !changed {
		return nil, nil
	}
	return []gen.Effect{server.ReplaceText(gen.ModifyTextEffectTargetSummary, out)}, nil
}

func run(ctx context.Context, out io.Writer) error {
	// The summarizer backend on loopback HTTP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	backend := &server.Handler{Intercept: summarizer, InterceptEvents: []gen.EventName{gen.EventContextCompactBefore}}
	if err := backend.Validate(); err != nil {
		return err
	}
	srv := server.NewHTTPServer(ln.Addr().String(), backend)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		err := srv.Shutdown(ctx)
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	}
	defer stop()

	// One harness per compaction subscription: DeliverCompaction sends each
	// snapshot as one hooks/intercept.
	registration := []byte(`{
	  "protocolVersion": "draft",
	  "hooks": [{
	    "id": "com.example.summarizer",
	    "transport": {"type": "http", "url": "http://` + ln.Addr().String() + `/ahp"},
	    "subscriptions": [{
	      "events": ["context.compact.before"], "mode": "intercept",
	      "timeoutMs": 10000, "failurePolicy": "fail-closed",
	      "content": {"default": "body"}
	    }]
	  }]
	}`)
	h, err := hooks.New(registration, hooks.Config{
		Source: "urn:example:compaction",
		Capabilities: map[gen.EventName]hooks.Grant{
			gen.EventContextCompactBefore: hooks.Intercept().Deny().Return().Message().ModifyInstructions(hooks.Replace),
		},
	})
	if err != nil {
		return err
	}
	defer h.Close()

	generated := 0
	c, err := hooks.NewCompactor(hooks.CompactionConfig{
		Hooks: []hooks.CompactionHook{
			{Supplier: "com.example.summarizer", Boundary: gen.EventContextCompactBefore, FailurePolicy: hooks.FailClosed,
				Callback: hooks.DeliverCompaction(h, gen.EventContextCompactBefore)},
			{Supplier: "host.redactor", Boundary: gen.EventContextCompactAfter, FailurePolicy: hooks.FailClosed, Callback: redact},
		},
		// The host's own generator (a model call in a real host); a
		// returned summary skips it.
		Generator: func(ctx context.Context, ev *gen.ContextCompactBeforeEvent) (gen.TextParts, error) {
			generated++
			return hooks.DefaultCompactionGenerator(ctx, ev)
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()

	in := hooks.CompactionInput{
		Source:  "urn:example:compaction",
		Trigger: "auto",
		Items: []gen.ModelVisibleItem{
			{ID: "m1", Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "p1", Text: "Deploy with sk-live-51Hx9."}}}},
			{ID: "m2", Role: gen.CanonicalMessageRoleAssistant, Parts: []gen.ContentItem{{TextBodyPart: &gen.TextBodyPart{ID: "p2", Text: "Deployed. Want a rollback plan?"}}}},
		},
		Instructions: gen.TextParts{{Body: &gen.TextBodyPart{ID: "i1", Text: "Keep decisions and open questions."}}},
		Removed:      []gen.ExecutionEventContextCompactAfterRemovedItem{{ID: "m1"}, {ID: "m2"}},
	}
	for round := 1; round <= 2; round++ {
		if round == 2 {
			// The summarizer goes away; its hook is fail-closed.
			if err := stop(); err != nil {
				return err
			}
		}
		res, err := c.Run(ctx, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "round %d: applied=%t generated=%t failedClosed=%t supplier=%s\n",
			round, res.Applied, res.Generated, res.FailedClosed, res.Provenance.Supplier)
		for _, s := range res.Trace {
			line := fmt.Sprintf("  %s %s: %s", strings.TrimPrefix(string(s.Boundary), "context.compact."), s.Supplier, s.Outcome)
			if s.Reason != "" {
				line += " (" + s.Reason + ")"
			}
			fmt.Fprintln(out, line)
		}
		for _, m := range res.Messages {
			fmt.Fprintf(out, "  message from %s: %s\n", m.Supplier, m.Text)
		}
		if sum, ok := res.Downstream(); ok {
			fmt.Fprintf(out, "  installed summary: %s\n", sum[0].Body.Text)
		} else {
			fmt.Fprintln(out, "  nothing installed")
		}
	}
	fmt.Fprintf(out, "generator calls: %d\n", generated)
	return nil
}
