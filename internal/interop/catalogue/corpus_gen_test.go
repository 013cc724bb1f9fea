package catalogue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	genpkg "github.com/agenthooks/agenthooks-go/gen"
)

// corpusPath is the committed catalogue corpus.
var corpusPath = filepath.Join("..", "..", "..", "testdata", "interop", "catalogue-scenarios.json")

// TestCorpusGenerated checks that the committed corpus is what this
// generator writes; CATALOGUE_CORPUS_UPDATE=1 rewrites it. The expected
// outcomes are written from the contracts (LIFECYCLE.md, the observe
// notification and registration schemas, base/registration.md), never
// from a run.
func TestCorpusGenerated(t *testing.T) {
	body := generateCorpus(t)
	if os.Getenv("CATALOGUE_CORPUS_UPDATE") == "1" {
		require.NoError(t, os.WriteFile(corpusPath, body, 0o644))
	}
	have, err := os.ReadFile(corpusPath)
	require.NoError(t, err)
	require.Equal(t, string(body), string(have), "run with CATALOGUE_CORPUS_UPDATE=1 to regenerate")
}

type corpusGen struct {
	t   *testing.T
	out []map[string]any
}

// obj decodes a JSON literal.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), s)
	return m
}

// prefixContentIDs gives the content items and parts of an example ids of
// their own (independent examples never share an item id in different
// roles).
func prefixContentIDs(v any, prefix string) {
	switch x := v.(type) {
	case map[string]any:
		_, role := x["role"]
		_, kind := x["kind"]
		_, parts := x["parts"]
		if id, ok := x["id"].(string); ok && (role || kind || parts) {
			x["id"] = prefix + id
		}
		for _, c := range x {
			prefixContentIDs(c, prefix)
		}
	case []any:
		for _, c := range x {
			prefixContentIDs(c, prefix)
		}
	}
}

// event is the base example of name with its id, source and content ids
// set.
func (g *corpusGen) event(name, id string) map[string]any {
	base, ok := baseEvents[name]
	require.True(g.t, ok, name)
	ev := obj(g.t, base)
	ev["id"] = id
	ev["source"] = Source
	prefixContentIDs(ev, id+"-")
	return ev
}

// observe is the canonical notification the harness sends for ev: the
// settled event, no id, no subscriptionId (observe-notification schema).
func observe(ev map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": "hooks/observe", "params": map[string]any{"protocolVersion": "draft", "event": ev}}
}

// scenario is a scenario under construction.
type scenario struct {
	id, description string
	steps           []map[string]any
	sent            []any
	regs            []map[string]bool
	receipts        []map[string]string
}

func (s *scenario) notify(ev map[string]any) *scenario {
	s.steps = append(s.steps, map[string]any{"op": OpNotify, "event": ev})
	s.sent = append(s.sent, observe(ev))
	s.receipts = append(s.receipts, map[string]string{"kind": KindObserved, "eventId": ev["id"].(string)})
	return s
}

func (s *scenario) rawMessage(msg any, errorKind string) *scenario {
	s.steps = append(s.steps, map[string]any{"op": OpRawNotify, "message": msg})
	s.sent = append(s.sent, msg)
	s.receipts = append(s.receipts, map[string]string{"kind": KindRejected, "errorKind": errorKind})
	return s
}

func (s *scenario) rawText(text, errorKind string) *scenario {
	s.steps = append(s.steps, map[string]any{"op": OpRawNotify, "raw": text})
	s.sent = append(s.sent, text)
	s.receipts = append(s.receipts, map[string]string{"kind": KindRejected, "errorKind": errorKind})
	return s
}

func (s *scenario) register(reg any, accepted bool) *scenario {
	s.steps = append(s.steps, map[string]any{"op": OpRegister, "registration": reg})
	s.regs = append(s.regs, map[string]bool{"accepted": accepted})
	return s
}

func (g *corpusGen) add(s *scenario) {
	sent := s.sent
	if sent == nil {
		sent = []any{}
	}
	regs := s.regs
	if regs == nil {
		regs = []map[string]bool{}
	}
	rc := s.receipts
	if rc == nil {
		rc = []map[string]string{}
	}
	g.out = append(g.out, map[string]any{
		"id": s.id, "description": s.description,
		"requests": map[string]any{}, "responses": map[string]any{},
		"steps":    s.steps,
		"expected": map[string]any{"sent": sent, "registrations": regs},
		"receipts": rc,
	})
}

// registration builds a one-backend registration document.
func registration(backend map[string]any) map[string]any {
	return map[string]any{"protocolVersion": "draft", "hooks": []any{backend}}
}

func httpBackend(id string, subs ...map[string]any) map[string]any {
	list := make([]any, len(subs))
	for i, s := range subs {
		list[i] = s
	}
	return map[string]any{"id": id, "transport": map[string]any{"type": "http", "url": "https://policy.example.com/agent-hooks"}, "subscriptions": list}
}

func observeSub(events ...string) map[string]any {
	return map[string]any{"events": events, "mode": "observe", "content": map[string]any{"default": "metadata"}}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
		} else {
			out[k] = kv[i+1]
		}
	}
	return out
}

func generateCorpus(t *testing.T) []byte {
	g := &corpusGen{t: t}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range baseEvents {
			if !yield(k) {
				return
			}
		}
	})
	require.Len(t, names, len(ObservedEvents()))
	for _, n := range ObservedEvents() {
		require.Contains(t, baseEvents, string(n))
	}

	// notify: every execution and lineage event once, in catalogue order.
	for _, n := range ObservedEvents() {
		name := string(n)
		id := "cat-notify-" + strings.ReplaceAll(name, ".", "-")
		g.add((&scenario{id: id, description: "observe " + name + " through the harness"}).notify(g.event(name, id)))
	}

	// notify: sequences on one connection with shared lineage.
	{
		s := &scenario{id: "cat-notify-turn-sequence", description: "turn.start, turn.progress, turn.end of one turn, in order"}
		start := g.event("turn.start", "cat-seq-turn-start")
		prog := g.event("turn.progress", "cat-seq-turn-progress")
		prog["parentEventId"] = "cat-seq-turn-start"
		end := g.event("turn.end", "cat-seq-turn-end")
		end["parentEventId"] = "cat-seq-turn-start"
		for _, ev := range []map[string]any{start, prog, end} {
			ev["turn"] = map[string]any{"id": "turn-seq"}
			ev["session"] = map[string]any{"id": "sess-catalogue"}
		}
		g.add(s.notify(start).notify(prog).notify(end))
	}
	{
		s := &scenario{id: "cat-notify-model-attempts", description: "a model request, its error, the retry's response"}
		req := g.event("model.request.before", "cat-attempt-request")
		errEv := g.event("model.error", "cat-attempt-error")
		errEv["parentEventId"] = "cat-attempt-request"
		resp := g.event("model.response.after", "cat-attempt-response")
		resp["attempt"] = map[string]any{"id": "attempt2", "number": 2}
		g.add(s.notify(req).notify(errEv).notify(resp))
	}
	{
		s := &scenario{id: "cat-notify-lineage-task-workspace", description: "task and workspace changes before and after, then a file change"}
		g.add(s.notify(g.event("task.change.before", "cat-lineage-task-before")).
			notify(g.event("task.change.after", "cat-lineage-task-after")).
			notify(g.event("workspace.change.before", "cat-lineage-ws-before")).
			notify(g.event("workspace.change.after", "cat-lineage-ws-after")).
			notify(g.event("file.changed", "cat-lineage-file")))
	}
	{
		ev := g.event("tool.progress", "cat-notify-native")
		ev["native"] = map[string]any{"vendor": "example", "sequence": 3}
		ev["session"] = map[string]any{"id": "sess-catalogue", "cwd": "/workspace"}
		g.add((&scenario{id: "cat-notify-native-session", description: "native and session members reach an includeNative observer unchanged"}).notify(ev))
	}
	{
		ev := g.event("context.compact.after", "cat-notify-gaps")
		ev["gaps"] = []any{map[string]any{"path": "/summary", "reason": "summary withheld by host policy"}}
		g.add((&scenario{id: "cat-notify-gaps", description: "an event that records a gap is observed with it"}).notify(ev))
	}

	// rawNotify: receiver negatives, each refused with its error kind.
	valid := func(id string) map[string]any { return observe(g.event("turn.end", id)) }
	g.add((&scenario{id: "cat-raw-not-json", description: "a truncated JSON text"}).
		rawText(`{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft"`, ErrorParse))
	g.add((&scenario{id: "cat-raw-jsonrpc-version", description: "jsonrpc 1.0 is not a JSON-RPC 2.0 envelope"}).
		rawMessage(with(valid("cat-raw-jsonrpc-version"), "jsonrpc", "1.0"), ErrorInvalidRequest))
	g.add((&scenario{id: "cat-raw-observe-with-id", description: "hooks/observe carrying an id (a request, not a notification)"}).
		rawMessage(with(valid("cat-raw-observe-with-id"), "id", "cat-raw-observe-with-id"), ErrorInvalidRequest))
	g.add((&scenario{id: "cat-raw-response-object", description: "a JSON-RPC response sent to the receiver"}).
		rawMessage(map[string]any{"jsonrpc": "2.0", "id": "cat-raw-response-object", "result": map[string]any{"protocolVersion": "draft", "effects": []any{}}}, ErrorInvalidRequest))
	g.add((&scenario{id: "cat-raw-unknown-method", description: "a notification of a method AHP does not define"}).
		rawMessage(with(valid("cat-raw-unknown-method"), "method", "hooks/notify"), ErrorMethodNotFound))
	{
		m := valid("cat-raw-protocol-version")
		m["params"].(map[string]any)["protocolVersion"] = "2024-01"
		g.add((&scenario{id: "cat-raw-protocol-version", description: "an unsupported protocolVersion"}).rawMessage(m, ErrorUnsupportedVersion))
	}
	{
		m := valid("cat-raw-unknown-event")
		m["params"].(map[string]any)["event"].(map[string]any)["type"] = "turn.begin"
		g.add((&scenario{id: "cat-raw-unknown-event", description: "an event type outside the catalogue"}).rawMessage(m, ErrorUnsupportedEvent))
	}
	{
		ev := obj(t, `{"id":"cat-raw-hook-failure","source":"urn:ahp:interop:catalogue","time":"2026-09-15T12:00:00Z","type":"hook.failure","failure":{"reason":"timeout","backendId":"com.example.policy","policy":"fail-open"},"parentEventId":"cat-notify-tool-progress"}`)
		g.add((&scenario{id: "cat-raw-hook-failure", description: "hook.failure is not offered by the catalogue receiver"}).rawMessage(observe(ev), ErrorUnsupportedEvent))
	}
	{
		ev := obj(t, `{"id":"cat-raw-session-end","source":"urn:ahp:interop:catalogue","time":"2026-09-15T12:00:00Z","type":"session.end","session":{"id":"sess-catalogue"},"outcome":"completed","reason":"user_exit"}`)
		g.add((&scenario{id: "cat-raw-session-end", description: "a core event the catalogue receiver does not offer"}).rawMessage(observe(ev), ErrorUnsupportedEvent))
	}
	g.add((&scenario{id: "cat-raw-missing-event", description: "params without event"}).
		rawMessage(map[string]any{"jsonrpc": "2.0", "method": "hooks/observe", "params": map[string]any{"protocolVersion": "draft"}}, ErrorInvalidParams))
	g.add((&scenario{id: "cat-raw-params-array", description: "positional params"}).
		rawMessage(map[string]any{"jsonrpc": "2.0", "method": "hooks/observe", "params": []any{"draft"}}, ErrorInvalidParams))
	{
		m := valid("cat-raw-missing-outcome")
		delete(m["params"].(map[string]any)["event"].(map[string]any), "outcome")
		g.add((&scenario{id: "cat-raw-missing-outcome", description: "turn.end without its required outcome"}).rawMessage(m, ErrorInvalidParams))
	}
	{
		ev := g.event("model.switch.after", "cat-raw-closed-member")
		ev["current"] = map[string]any{"id": "example", "provider": "example", "tier": "gold"}
		g.add((&scenario{id: "cat-raw-closed-member", description: "an unknown member inside a closed payload object"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		ev := g.event("task.change.after", "cat-raw-task-operation")
		ev["task"].(map[string]any)["operation"] = "rename"
		g.add((&scenario{id: "cat-raw-task-operation", description: "a task operation outside the enumeration"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		ev := g.event("model.error", "cat-raw-model-error-finish")
		ev["finishReason"] = "stop"
		g.add((&scenario{id: "cat-raw-model-error-finish", description: "model.error must not carry finishReason"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		ev := g.event("model.error", "cat-raw-attempt-zero")
		ev["attempt"] = map[string]any{"id": "attempt0", "number": 0}
		g.add((&scenario{id: "cat-raw-attempt-zero", description: "attempt numbers start at 1"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		ev := g.event("turn.end", "cat-raw-bad-time")
		ev["time"] = "yesterday"
		g.add((&scenario{id: "cat-raw-bad-time", description: "time is not an RFC 3339 date-time"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		ev := g.event("tool.permission.resolved", "cat-raw-missing-call")
		delete(ev, "call")
		g.add((&scenario{id: "cat-raw-missing-call", description: "tool.permission.resolved without call"}).rawMessage(observe(ev), ErrorInvalidParams))
	}
	{
		s := &scenario{id: "cat-mixed-valid-then-invalid", description: "a valid observation, a refused one, a valid one: each gets its own receipt"}
		bad := g.event("turn.progress", "cat-mixed-bad")
		delete(bad, "final")
		g.add(s.notify(g.event("turn.progress", "cat-mixed-first")).rawMessage(observe(bad), ErrorInvalidParams).notify(g.event("turn.end", "cat-mixed-last")))
	}

	// register: the SDK's load-time checks against the discovered manifest.
	reg := func(id, desc string, doc any, accepted bool) {
		g.add((&scenario{id: id, description: desc}).register(doc, accepted))
	}
	be := "com.example.catalogue"
	reg("cat-reg-observe-execution", "observe execution events the manifest offers", registration(httpBackend(be, observeSub("turn.start", "model.error", "tool.batch.after"))), true)
	reg("cat-reg-observe-lineage", "observe every lineage event", registration(httpBackend(be, observeSub("task.change.before", "task.change.after", "workspace.change.before", "workspace.change.after", "file.changed"))), true)
	reg("cat-reg-observe-star", "the * wildcard", registration(httpBackend(be, observeSub("*"))), true)
	reg("cat-reg-observe-family", "a whole-family wildcard", registration(httpBackend(be, observeSub("model.*"))), true)
	reg("cat-reg-scope-project", "project scope is honoured", registration(httpBackend(be, with(observeSub("turn.end"), "scope", "project"))), true)
	reg("cat-reg-scope-user", "user scope is honoured", registration(httpBackend(be, with(observeSub("turn.end"), "scope", "user"))), true)
	reg("cat-reg-stdio-backend", "a persistent stdio backend", registration(map[string]any{"id": be, "transport": map[string]any{"type": "stdio", "command": "catalogue-observer", "lifecycle": "persistent"}, "subscriptions": []any{observeSub("file.changed")}}), true)
	reg("cat-reg-content-categories", "explicit per-category content selection", registration(httpBackend(be, with(observeSub("turn.progress"), "content", map[string]any{"default": "omit", "text": "body", "reasoning": "metadata"}, "includeNative", true))), true)
	reg("cat-reg-bearer-token-env", "bearer credential by environment reference", registration(with(httpBackend(be, observeSub("turn.end")), "authentication", map[string]any{"type": "bearer", "tokenEnv": "AHP_CATALOGUE_TOKEN"})), true)
	reg("cat-reg-scope-managed", "managed scope while the manifest honours only user and project", registration(httpBackend(be, with(observeSub("turn.end"), "scope", "managed", "disableable", false))), false)
	reg("cat-reg-hook-failure", "hook.failure is not offered for observation", registration(httpBackend(be, observeSub("hook.failure"))), false)
	reg("cat-reg-core-event", "session.start is not offered", registration(httpBackend(be, observeSub("session.start"))), false)
	reg("cat-reg-intercept-not-advertised", "intercept of an event offered only for observation", registration(httpBackend(be, map[string]any{"events": []any{"turn.start"}, "mode": "intercept", "timeoutMs": 500, "failurePolicy": "fail-closed", "content": map[string]any{"default": "metadata"}})), false)
	reg("cat-reg-unknown-event", "an event name outside the catalogue", registration(httpBackend(be, observeSub("turn.begin"))), false)
	reg("cat-reg-unknown-family", "a wildcard of no catalogue family", registration(httpBackend(be, observeSub("widget.*"))), false)
	reg("cat-reg-partial-wildcard", "an arbitrary pattern instead of a whole family", registration(httpBackend(be, observeSub("turn.s*"))), false)
	reg("cat-reg-bad-mode", "mode is intercept or observe", registration(httpBackend(be, with(observeSub("turn.end"), "mode", "watch"))), false)
	reg("cat-reg-missing-content", "content is required", registration(httpBackend(be, with(observeSub("turn.end"), "content", nil))), false)
	reg("cat-reg-bad-content-value", "content values are body, metadata or omit", registration(httpBackend(be, with(observeSub("turn.end"), "content", map[string]any{"default": "full"}))), false)
	reg("cat-reg-content-no-default", "content selection needs default", registration(httpBackend(be, with(observeSub("turn.end"), "content", map[string]any{"text": "body"}))), false)
	reg("cat-reg-empty-events", "events is non-empty", registration(httpBackend(be, observeSub())), false)
	reg("cat-reg-duplicate-events", "events are unique", registration(httpBackend(be, observeSub("turn.end", "turn.end"))), false)
	reg("cat-reg-empty-hooks", "hooks is non-empty", map[string]any{"protocolVersion": "draft", "hooks": []any{}}, false)
	reg("cat-reg-protocol-version", "protocolVersion is the snapshot's", with(registration(httpBackend(be, observeSub("turn.end"))), "protocolVersion", "1.0"), false)
	reg("cat-reg-backend-id", "backend id is reverse-DNS", registration(with(httpBackend(be, observeSub("turn.end")), "id", "not a reverse dns")), false)
	reg("cat-reg-duplicate-backend", "backend ids are unique in the document", map[string]any{"protocolVersion": "draft", "hooks": []any{httpBackend(be, observeSub("turn.end")), httpBackend(be, observeSub("turn.start"))}}, false)
	reg("cat-reg-url-credentials", "credentials are never literal values in the URL", registration(with(httpBackend(be, observeSub("turn.end")), "transport", map[string]any{"type": "http", "url": "https://user:secret@policy.example.com/hooks"})), false)
	reg("cat-reg-url-scheme", "the HTTP transport URL is http(s)", registration(with(httpBackend(be, observeSub("turn.end")), "transport", map[string]any{"type": "http", "url": "ftp://policy.example.com/hooks"})), false)
	reg("cat-reg-stdio-lifecycle", "stdio lifecycle is persistent or per_event", registration(map[string]any{"id": be, "transport": map[string]any{"type": "stdio", "command": "catalogue-observer", "lifecycle": "forever"}, "subscriptions": []any{observeSub("file.changed")}}), false)
	reg("cat-reg-token-literal", "a bearer credential given as a literal token", registration(with(httpBackend(be, observeSub("turn.end")), "authentication", map[string]any{"type": "bearer", "token": "s3cr3t"})), false)
	// A pointer-like key is an unknown category: the schema admits any key
	// with a selection value and content-upload.md says unknown categories
	// use the default, so the registration loads; a bad value does not.
	reg("cat-reg-content-pointer-key", "a content selection keyed by a JSON pointer is an unknown category, which uses the default", registration(httpBackend(be, with(observeSub("turn.progress"), "content", map[string]any{"default": "metadata", "/delta/parts/0": "body"}))), true)
	reg("cat-reg-content-pointer-value", "a content selection whose value is a JSON pointer", registration(httpBackend(be, with(observeSub("turn.progress"), "content", map[string]any{"default": "metadata", "text": "/delta/parts/0"}))), false)
	{
		s := &scenario{id: "cat-reg-sequence", description: "three registrations evaluated independently: accept, reject, accept"}
		s.register(registration(httpBackend(be, observeSub("tool.progress"))), true).
			register(registration(httpBackend(be, observeSub("tool.before"))), false).
			register(registration(httpBackend(be, observeSub("context.*"))), true)
		g.add(s)
	}
	{
		s := &scenario{id: "cat-mixed-register-notify", description: "a registration verdict and an observation in one scenario"}
		s.register(registration(httpBackend(be, observeSub("workspace.change.after"))), true).
			notify(g.event("workspace.change.after", "cat-mixed-ws-after"))
		g.add(s)
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(map[string]any{"version": 1, "scenarios": g.out}))
	// A receiver negative for an event the receiver does not offer is
	// otherwise canonical, so the refusal is the offer's, not the schema's.
	for _, sc := range g.out {
		for i, r := range sc["receipts"].([]map[string]string) {
			st := sc["steps"].([]map[string]any)
			if r["errorKind"] != ErrorUnsupportedEvent || sc["id"] == "cat-raw-unknown-event" {
				continue
			}
			var msg any
			n := 0
			for _, s := range st {
				if s["op"] != OpRegister {
					if n == i {
						msg = s["message"]
					}
					n++
				}
			}
			raw, err := json.Marshal(msg)
			require.NoError(t, err)
			_, err = ParseObserve(raw)
			require.NoError(t, err, sc["id"])
		}
	}
	f, err := Parse(buf.Bytes())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(f.Scenarios), 40, fmt.Sprint(len(f.Scenarios)))
	return buf.Bytes()
}

// ParseObserve is the canonical observe-notification codec.
func ParseObserve(raw []byte) (any, error) { return genpkg.ParseObserveNotification(raw) }
