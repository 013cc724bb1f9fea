package hooks_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
	"github.com/stretchr/testify/require"
)

// The private content of the selection tests: inline text, reasoning, and
// an attachment reference. None may reach a receiver whose selection
// withholds it.
const (
	secretText      = "CANARY-SECRET-TEXT"
	secretReasoning = "CANARY-SECRET-REASONING"
	secretRef       = "ref-CANARY-SECRET-IMAGE"
)

// secretItems is a turn.start prompt holding the three secrets.
func secretItems(t testing.TB) []gen.ModelVisibleItem {
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[
		{"id":"m1","role":"user","parts":[
			{"id":"m1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"`+secretText+`"},
			{"id":"m1-i","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"`+secretRef+`"}}]},
		{"id":"m2","role":"assistant","parts":[
			{"id":"m2-r","kind":"text","mediaType":"text/plain","selection":"body","category":"reasoning","text":"`+secretReasoning+`"}]}]`), &items))
	return items
}

func turnStart(items []gen.ModelVisibleItem) hooks.TurnStartInput {
	return hooks.TurnStartInput{Items: items, Turn: gen.ExecutionEventTurn{ID: "t1"}, Trigger: gen.ExecutionEventTurnStartTriggerUser}
}

func selectionConfig() hooks.Config {
	return hooks.Config{Source: "urn:test:harness", Capabilities: map[gen.EventName]hooks.Grant{
		gen.EventTurnStart: hooks.Intercept().Deny().ModifyPrompt(hooks.Merge),
	}}
}

func interceptContent(content string) string {
	return `{"events":["turn.start"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":` + content + `}`
}

func observeContent(content string) string {
	return `{"events":["turn.start"],"mode":"observe","content":` + content + `}`
}

// rawBodies records the request bodies each backend receives, before its
// handler reads them.
type rawBodies struct {
	mu sync.Mutex
	m  map[string][][]byte
}

func (b *rawBodies) wrap(id string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		if b.m == nil {
			b.m = map[string][][]byte{}
		}
		b.m[id] = append(b.m[id], data)
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(data))
		h.ServeHTTP(w, r)
	})
}

func (b *rawBodies) of(id string) [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[id]
}

// answerHandler is a backend that denies every interception, or answers
// none.
func answerHandler(deny bool) *server.Handler {
	return &server.Handler{
		Intercept: func(context.Context, *gen.InterceptRequest) (server.InterceptResult, error) {
			if deny {
				return server.InterceptResult{Effects: []gen.Effect{server.Deny("denied")}}, nil
			}
			return server.InterceptResult{}, nil
		},
		Observe: func(context.Context, *gen.ObserveNotification) error { return nil },
	}
}

// selectionBackend is one backend of TestSelectionNeverLeaks.
type selectionBackend struct {
	id     string
	sub    string
	deny   bool
	level  string // the selection of every category
	method string // what it receives: hooks/intercept or hooks/observe
}

// TestSelectionNeverLeaks: a metadata or omit subscription never receives
// the inline text, reasoning or attachment reference of the event, over
// HTTP, stdio and in process, whether it intercepts, observes, or is owed
// an observation after an earlier interceptor denied; a body subscription
// of the same registration receives them. The host writes no content code
// (AHP-CONTENT-002).
func TestSelectionNeverLeaks(t *testing.T) {
	backends := []selectionBackend{
		{id: "com.example.meta-called", sub: interceptContent(`{"default":"metadata"}`), level: "metadata", method: "hooks/intercept"},
		{id: "com.example.omit-called", sub: interceptContent(`{"default":"omit"}`), level: "omit", method: "hooks/intercept"},
		{id: "com.example.body-denies", sub: interceptContent(`{"default":"body"}`), deny: true, level: "body", method: "hooks/intercept"},
		{id: "com.example.meta-owed", sub: interceptContent(`{"default":"metadata"}`), level: "metadata", method: "hooks/observe"},
		{id: "com.example.omit-owed", sub: interceptContent(`{"default":"omit","text":"omit","reasoning":"omit","images":"omit"}`), level: "omit", method: "hooks/observe"},
		{id: "com.example.body-owed", sub: interceptContent(`{"default":"body"}`), level: "body", method: "hooks/observe"},
		{id: "com.example.meta-observer", sub: observeContent(`{"default":"omit","text":"metadata","reasoning":"metadata","images":"metadata"}`), level: "metadata", method: "hooks/observe"},
		{id: "com.example.omit-observer", sub: observeContent(`{"default":"omit"}`), level: "omit", method: "hooks/observe"},
		{id: "com.example.body-observer", sub: observeContent(`{"default":"body"}`), level: "body", method: "hooks/observe"},
	}
	sum := sha256.Sum256([]byte(secretText))
	textDigest := hex.EncodeToString(sum[:])

	for _, kind := range []string{"http", "stdio", "inprocess"} {
		t.Run(kind, func(t *testing.T) {
			cfg := selectionConfig()
			var recorded rawBodies
			files := map[string]string{}
			var regs []string
			var srv *httptest.Server
			if kind == "http" {
				mux := http.NewServeMux()
				for _, b := range backends {
					mux.Handle("/"+b.id, recorded.wrap(b.id, answerHandler(b.deny)))
				}
				srv = httptest.NewServer(mux)
				defer srv.Close()
			}
			if kind == "inprocess" {
				cfg.Transports = map[string]transport.Transport{}
			}
			dir := t.TempDir()
			for _, b := range backends {
				var tr string
				switch kind {
				case "http":
					tr = httpTransport(srv.URL + "/" + b.id)
				case "stdio":
					files[b.id] = filepath.Join(dir, b.id+".jsonl")
					answer := "none"
					if b.deny {
						answer = "deny"
					}
					tr = backendCmd(t, "tee:"+answer+":"+files[b.id], "persistent")
				case "inprocess":
					tr = httpTransport("http://127.0.0.1:1/unused")
					cfg.Transports[b.id] = transport.NewInProcess(recorded.wrap(b.id, answerHandler(b.deny)), transport.InProcessOptions{})
				}
				regs = append(regs, backendJSON(b.id, tr, b.sub))
			}
			h, err := hooks.New(registration(regs...), cfg)
			require.NoError(t, err)
			res, err := h.TurnStart(ctxTimeout(t, time.Minute), turnStart(secretItems(t)))
			require.NoError(t, err)
			require.NoError(t, h.Close()) // stdio children have read everything once reaped
			require.Empty(t, res.Diagnostics)
			require.Equal(t, gen.PermissionDeny, res.Permission)
			canonical, err := gen.EncodeEvent(res.Event())
			require.NoError(t, err)
			require.Contains(t, string(canonical), secretText, "the host's Result keeps the full event")

			for _, b := range backends {
				var got [][]byte
				if kind == "stdio" {
					data, err := os.ReadFile(files[b.id])
					require.NoError(t, err)
					for _, line := range bytes.Split(data, []byte("\n")) {
						if len(bytes.TrimSpace(line)) > 0 {
							got = append(got, line)
						}
					}
				} else {
					got = recorded.of(b.id)
				}
				require.Len(t, got, 1, b.id)
				body := string(got[0])
				var env struct {
					Method string `json:"method"`
				}
				require.NoError(t, json.Unmarshal(got[0], &env), b.id)
				require.Equal(t, b.method, env.Method, b.id)
				for _, s := range []string{secretText, secretReasoning, secretRef} {
					if b.level == "body" {
						require.Contains(t, body, s, b.id)
					} else {
						require.NotContains(t, body, s, b.id)
					}
				}
				switch b.level {
				case "metadata":
					// The size of the text, not its digest: a SHA-256 of
					// short text confirms a guess of it.
					require.Contains(t, body, `"selection":"metadata","size":18}`, b.id)
					require.NotContains(t, body, textDigest, b.id)
					require.NotContains(t, body, `"selection":"body"`, b.id)
				case "omit":
					require.NotContains(t, body, `"sha256"`, b.id)
					require.NotContains(t, body, `"size"`, b.id)
					require.Equal(t, 3, strings.Count(body, `"selection":"omit"`), b.id)
				}
			}
		})
	}
}

// viewParts returns the parts of each message of the prompt a recorder
// received first, as JSON objects.
func viewParts(t *testing.T, items []gen.ModelVisibleItem) []map[string]any {
	var out []map[string]any
	for _, m := range items {
		for _, p := range m.Parts {
			b, err := p.MarshalJSON()
			require.NoError(t, err)
			var v map[string]any
			require.NoError(t, json.Unmarshal(b, &v))
			out = append(out, v)
		}
	}
	return out
}

// TestSelectionPerCategory: category keys override the default; an
// explicit part category overrides the media-derived one; a category the
// selection does not name uses the default. The view of each receiver is
// its own, and the next interceptor's view is made from the canonical
// event, not from the previous receiver's.
func TestSelectionPerCategory(t *testing.T) {
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[
		{"id":"m1","role":"user","parts":[
			{"id":"t","kind":"text","mediaType":"text/plain","selection":"body","text":"plain text"},
			{"id":"img","kind":"attachment","mediaType":"IMAGE/png","selection":"body","body":{"ref":"ref-img"}},
			{"id":"snd","kind":"attachment","mediaType":"audio/ogg","selection":"body","body":{"ref":"ref-snd"}},
			{"id":"doc","kind":"attachment","mediaType":"application/pdf","selection":"body","body":{"ref":"ref-doc"}},
			{"id":"tagged","kind":"attachment","mediaType":"image/jpeg","selection":"body","category":"files","body":{"ref":"ref-tagged"}},
			{"id":"tool","kind":"text","mediaType":"text/plain","selection":"body","category":"tool_result","text":"tool output"}]},
		{"id":"m2","role":"assistant","parts":[
			{"id":"r","kind":"text","mediaType":"text/plain","selection":"body","category":"reasoning","text":"thinking"},
			{"id":"a","kind":"text","mediaType":"text/plain","selection":"body","text":"answer"}]}]`), &items))
	mixed, body := &recorder{}, &recorder{}
	h := inproc(t, selectionConfig(), map[string]*recorder{"com.example.mixed": mixed, "com.example.body": body}, registration(
		backendJSON("com.example.mixed", httpTransport("http://127.0.0.1:1/x"),
			interceptContent(`{"default":"metadata","reasoning":"omit","text":"body","files":"omit","audio":"body"}`)),
		backendJSON("com.example.body", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"body"}`))))
	res, err := h.TurnStart(context.Background(), turnStart(items))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)

	require.Len(t, mixed.intercept, 1)
	got := map[string]string{}
	for _, p := range viewParts(t, mixed.intercept[0].Params.Event.TurnStart.Items) {
		got[p["id"].(string)] = p["selection"].(string)
		if p["selection"] != "body" {
			require.NotContains(t, p, "text")
			require.NotContains(t, p, "body")
		}
	}
	require.Equal(t, map[string]string{
		"t":      "body",     // text: body
		"img":    "metadata", // images (media type, any case): the default
		"snd":    "body",     // audio: body
		"doc":    "omit",     // files: omit
		"tagged": "omit",     // the explicit category files wins over image/*
		"tool":   "metadata", // an unknown category: the default
		"r":      "omit",     // reasoning: omit
		"a":      "body",
	}, got)

	// The body interceptor after it gets the whole canonical event.
	require.Len(t, body.intercept, 1)
	for _, p := range viewParts(t, body.intercept[0].Params.Event.TurnStart.Items) {
		require.Equal(t, "body", p["selection"], p["id"])
	}
	// And the host's input was not touched.
	require.NotNil(t, items[0].Parts[1].AttachmentBodyPart)
	require.Equal(t, "plain text", items[0].Parts[0].TextBodyPart.Text)
}

// TestSynthesizedIDs: the SDK supplies a missing message or part id,
// marked synthesized: true, unique within the event (also against given
// ids) and the same in every receiver's view, in owed observations and in
// the Result; given ids stay as they are, and the host's values are not
// modified.
func TestSynthesizedIDs(t *testing.T) {
	items := []gen.ModelVisibleItem{
		{Role: gen.CanonicalMessageRoleUser, Parts: []gen.ContentItem{
			{TextBodyPart: &gen.TextBodyPart{Text: "first"}},
			{TextBodyPart: &gen.TextBodyPart{ID: "kept", Text: "second"}},
		}},
		{ID: "msg-1", Role: gen.CanonicalMessageRoleAssistant, Parts: []gen.ContentItem{ // takes the first synthesized id
			{TextBodyPart: &gen.TextBodyPart{Text: "third"}},
		}},
	}
	deny := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Deny("no")} }}
	meta, owed, observer := &recorder{}, &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, selectionConfig(), map[string]*recorder{"com.example.meta": meta, "com.example.deny": deny, "com.example.owed": owed, "com.example.observer": observer}, registration(
		backendJSON("com.example.meta", u, interceptContent(`{"default":"metadata"}`)),
		backendJSON("com.example.deny", u, interceptContent(`{"default":"body"}`)),
		backendJSON("com.example.owed", u, interceptContent(`{"default":"omit"}`)),
		backendJSON("com.example.observer", u, observeContent(`{"default":"body"}`))))
	res, err := h.TurnStart(context.Background(), turnStart(items))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)

	type ident struct {
		id          string
		synthesized bool
	}
	idsOf := func(ms []gen.ModelVisibleItem) []ident {
		var out []ident
		for _, m := range ms {
			out = append(out, ident{m.ID, m.Synthesized != nil && *m.Synthesized})
			for _, p := range viewParts(t, []gen.ModelVisibleItem{m}) {
				s, _ := p["synthesized"].(bool)
				out = append(out, ident{p["id"].(string), s})
			}
		}
		return out
	}
	want := []ident{{"msg-1-2", true}, {"msg-1-2.part-0", true}, {"kept", false}, {"msg-1", false}, {"msg-1.part-0", true}}
	require.Equal(t, want, idsOf(res.Event().TurnStart.Items))
	require.Len(t, meta.intercept, 1)
	require.Equal(t, want, idsOf(meta.intercept[0].Params.Event.TurnStart.Items))
	require.Len(t, deny.intercept, 1)
	require.Equal(t, want, idsOf(deny.intercept[0].Params.Event.TurnStart.Items))
	require.Len(t, owed.observed, 1)
	require.Equal(t, want, idsOf(owed.observed[0].Params.Event.TurnStart.Items))
	require.Len(t, observer.observed, 1)
	require.Equal(t, want, idsOf(observer.observed[0].Params.Event.TurnStart.Items))

	require.Empty(t, items[0].ID, "the host's values are not modified")
	require.Empty(t, items[0].Parts[0].TextBodyPart.ID)
	require.Nil(t, items[0].Parts[0].TextBodyPart.Synthesized)
}

// widening is a Preparer that gives a metadata receiver its body back.
type widening struct{}

func (widening) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	for i := range d.Event.TurnStart.Items {
		for j := range d.Event.TurnStart.Items[i].Parts {
			if p := &d.Event.TurnStart.Items[i].Parts[j]; p.TextMetadataPart != nil {
				*p = gen.ContentItem{TextBodyPart: &gen.TextBodyPart{ID: p.TextMetadataPart.ID, Category: p.TextMetadataPart.Category, Text: secretText}}
			}
		}
	}
	return d.Event, nil
}

// narrowing is a Preparer that withholds more than the selection: every
// text body becomes metadata without size or digest, and the turn id is
// redacted (application data the SDK does not project).
type narrowing struct{}

func (narrowing) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	for i := range d.Event.TurnStart.Items {
		for j := range d.Event.TurnStart.Items[i].Parts {
			if p := &d.Event.TurnStart.Items[i].Parts[j]; p.TextBodyPart != nil {
				*p = gen.ContentItem{TextMetadataPart: &gen.TextMetadataPart{ID: p.TextBodyPart.ID, Category: p.TextBodyPart.Category}}
			}
		}
	}
	d.Event.TurnStart.Turn.ID = "redacted"
	return d.Event, nil
}

// TestPreparerCannotWiden: a Preparer runs after the SDK's projection; a
// result that discloses more than the view is not sent (a preparation
// failure under the subscription's policy), for interception and
// observation alike; one that narrows further is sent as it is.
func TestPreparerCannotWiden(t *testing.T) {
	t.Run("widening", func(t *testing.T) {
		var recorded rawBodies
		cfg := selectionConfig()
		cfg.Preparer = widening{}
		cfg.Transports = map[string]transport.Transport{
			"com.example.i": transport.NewInProcess(recorded.wrap("i", answerHandler(false)), transport.InProcessOptions{}),
			"com.example.o": transport.NewInProcess(recorded.wrap("o", answerHandler(false)), transport.InProcessOptions{}),
		}
		u := httpTransport("http://127.0.0.1:1/x")
		h, err := hooks.New(registration(
			backendJSON("com.example.i", u, interceptContent(`{"default":"metadata"}`)),
			backendJSON("com.example.o", u, observeContent(`{"default":"metadata"}`))), cfg)
		require.NoError(t, err)
		defer h.Close()
		res, err := h.TurnStart(context.Background(), turnStart(secretItems(t)))
		require.NoError(t, err)
		require.Empty(t, recorded.of("i"))
		require.Empty(t, recorded.of("o"))
		require.Len(t, res.Diagnostics, 2)
		for _, d := range res.Diagnostics {
			require.Equal(t, transport.CodePreparation, d.Code)
			require.Equal(t, "widening", d.Reason)
		}
		require.True(t, res.SyntheticDenial, "the fail-closed interceptor's preparation failed")
	})
	t.Run("narrowing", func(t *testing.T) {
		var recorded rawBodies
		cfg := selectionConfig()
		cfg.Preparer = narrowing{}
		cfg.Transports = map[string]transport.Transport{
			"com.example.i": transport.NewInProcess(recorded.wrap("i", answerHandler(false)), transport.InProcessOptions{}),
		}
		h, err := hooks.New(registration(backendJSON("com.example.i", httpTransport("http://127.0.0.1:1/x"), interceptContent(`{"default":"body"}`))), cfg)
		require.NoError(t, err)
		defer h.Close()
		res, err := h.TurnStart(context.Background(), turnStart(secretItems(t)))
		require.NoError(t, err)
		require.Empty(t, res.Diagnostics)
		got := recorded.of("i")
		require.Len(t, got, 1)
		require.NotContains(t, string(got[0]), secretText)
		require.NotContains(t, string(got[0]), secretReasoning)
		require.Contains(t, string(got[0]), secretRef, "the attachment was left as it was")
		require.Contains(t, string(got[0]), `"turn":{"id":"redacted"`)
		require.Equal(t, "t1", res.Event().TurnStart.Turn.ID, "the canonical event is the host's")
	})
}

// TestSelectionWithholdsReplaceFromView: the receiver whose selection
// withholds prompt text is not offered replace; the body receiver after
// it still is (its view withholds nothing).
func TestSelectionWithholdsReplaceFromView(t *testing.T) {
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().ModifyPrompt(hooks.Replace, hooks.Merge)
	meta, body := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.meta": meta, "com.example.body": body}, registration(
		backendJSON("com.example.meta", u, interceptContent(`{"default":"body","reasoning":"metadata"}`)),
		backendJSON("com.example.body", u, interceptContent(`{"default":"body"}`))))
	_, err := h.TurnStart(context.Background(), turnStart(secretItems(t)))
	require.NoError(t, err)
	require.Len(t, meta.intercept, 1)
	require.False(t, meta.intercept[0].Params.Capabilities.Modify.Prompt.Replace)
	require.Len(t, body.intercept, 1)
	require.True(t, body.intercept[0].Params.Capabilities.Modify.Prompt.Replace)
	require.True(t, body.intercept[0].Params.Capabilities.Modify.Prompt.Merge)
}

// TestSelectionCoversInjectedContext: context messages that an earlier
// interceptor injected travel in the next request's state; a receiver
// whose selection withholds text gets them projected like the event, so a
// copy of private text cannot reach it through an injection.
func TestSelectionCoversInjectedContext(t *testing.T) {
	var value gen.CanonicalMessages
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"c1","role":"developer","parts":[{"id":"c1-t","kind":"text","mediaType":"text/plain","selection":"body","text":"`+secretText+`"}]}]`), &value))
	injects := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{server.Inject(gen.DeliverAtNow, value)} }}
	meta, body := &recorder{}, &recorder{}
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventTurnStart] = hooks.Intercept().Deny().Inject(gen.DeliverAtNow)
	u := httpTransport("http://127.0.0.1:1/x")
	h := inproc(t, cfg, map[string]*recorder{"com.example.injects": injects, "com.example.meta": meta, "com.example.body": body}, registration(
		backendJSON("com.example.injects", u, interceptContent(`{"default":"body"}`)),
		backendJSON("com.example.meta", u, interceptContent(`{"default":"metadata"}`)),
		backendJSON("com.example.body", u, interceptContent(`{"default":"body"}`))))
	var items []gen.ModelVisibleItem
	require.NoError(t, json.Unmarshal([]byte(`[{"id":"m","role":"user","parts":[{"id":"p","kind":"text","mediaType":"text/plain","selection":"body","text":"hello"}]}]`), &items))
	res, err := h.TurnStart(context.Background(), turnStart(items))
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, res.Injections, 1)

	encode := func(r *recorder) string {
		require.Len(t, r.intercept, 1)
		b, err := gen.EncodeInterceptRequest(r.intercept[0])
		require.NoError(t, err)
		return string(b)
	}
	m := encode(meta)
	require.NotContains(t, m, secretText)
	require.Contains(t, m, `"injections":[{"type":"inject","target":"context","operation":"append","deliverAt":"now","value":[{"id":"c1","role":"developer","parts":[{"id":"c1-t","kind":"text","mediaType":"text/plain","selection":"metadata","size":18}]}]}]`)
	require.Contains(t, encode(body), secretText)
}

// TestSelectionWithholdsAnswerModification: modify(content) at
// user.elicitation.result needs the body of the result; a receiver whose
// selection withholds it is not offered the target, a body receiver is.
func TestSelectionWithholdsAnswerModification(t *testing.T) {
	var el gen.InteractionEventUserElicitationResultElicitation
	require.NoError(t, json.Unmarshal([]byte(`{"server":"example","mode":"form","action":"accept",
		"result":{"id":"r","kind":"text","mediaType":"text/plain","selection":"body","text":"{\"action\":\"accept\",\"content\":{\"answer\":\"`+secretText+`\"}}"}}`), &el))
	cfg := selectionConfig()
	cfg.Capabilities[gen.EventUserElicitationResult] = hooks.Intercept().Message().ModifyContent(hooks.Replace, hooks.Merge)
	meta, body := &recorder{}, &recorder{}
	u := httpTransport("http://127.0.0.1:1/x")
	sub := func(content string) string {
		return `{"events":["user.elicitation.result"],"mode":"intercept","timeoutMs":20000,"failurePolicy":"fail-closed","content":` + content + `}`
	}
	h := inproc(t, cfg, map[string]*recorder{"com.example.meta": meta, "com.example.body": body}, registration(
		backendJSON("com.example.meta", u, sub(`{"default":"metadata"}`)),
		backendJSON("com.example.body", u, sub(`{"default":"body"}`))))
	res, err := h.UserElicitationResult(context.Background(), hooks.UserElicitationResultInput{Elicitation: el})
	require.NoError(t, err)
	require.Empty(t, res.Diagnostics)
	require.Len(t, meta.intercept, 1)
	caps := meta.intercept[0].Params.Capabilities
	require.Nil(t, caps.Modify)
	require.Equal(t, []gen.EffectFamily{gen.EffectFamilyMessage}, caps.Effects)
	require.NotNil(t, meta.intercept[0].Params.Event.UserElicitationResult.Elicitation.Result.Metadata)
	require.Len(t, body.intercept, 1)
	require.NotNil(t, body.intercept[0].Params.Capabilities.Modify.Content)
}
