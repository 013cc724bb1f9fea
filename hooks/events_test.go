package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/internal/fixtures"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

// sampleEvents returns one valid canonical event per catalogue event: from
// the protocol fixtures where one exists, else from hooks/testdata/events.
func sampleEvents(t *testing.T) map[gen.EventName]*gen.Event {
	out := map[gen.EventName]*gen.Event{}
	cases, err := fixtures.Load()
	require.NoError(t, err)
	for _, c := range cases {
		if !c.ExpectedValid || c.Binding == "registration-json" {
			continue
		}
		data, err := c.Read()
		require.NoError(t, err)
		for _, msg := range c.Messages(data) {
			var env struct {
				Params struct {
					Event json.RawMessage `json:"event"`
				} `json:"params"`
			}
			if json.Unmarshal(msg, &env) != nil || env.Params.Event == nil {
				continue
			}
			ev, err := gen.ParseEvent(env.Params.Event)
			if err != nil {
				continue
			}
			name := gen.EventName(ev.Type())
			if _, ok := out[name]; !ok {
				out[name] = ev
			}
		}
	}
	files, err := filepath.Glob("testdata/events/*.json")
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		ev, err := gen.ParseEvent(data)
		require.NoError(t, err, f)
		out[gen.EventName(ev.Type())] = ev
	}
	return out
}

// inputFor builds the generated <Event>Input of method goName from a
// canonical event by reflection: flattened tool.* and call.* members come
// from their wrappers.
func inputFor(t *testing.T, goName string, ev *gen.Event) reflect.Value {
	m, ok := reflect.TypeOf(&hooks.Hooks{}).MethodByName(goName)
	require.True(t, ok, goName)
	inType := m.Type.In(2)
	in := reflect.New(inType).Elem()
	payload := reflect.ValueOf(ev.Value()).Elem()
	for i := 0; i < inType.NumField(); i++ {
		f := inType.Field(i)
		dst := in.Field(i)
		switch f.Name {
		case "ID":
			dst.SetString(payload.FieldByName("ID").String())
			continue
		case "Time":
			tm, err := time.Parse(time.RFC3339Nano, payload.FieldByName("Time").String())
			require.NoError(t, err)
			dst.Set(reflect.ValueOf(tm))
			continue
		}
		src := payload.FieldByName(f.Name)
		if !src.IsValid() {
			if tool := payload.FieldByName("Tool"); tool.IsValid() {
				src = tool.FieldByName(f.Name)
			}
		}
		if !src.IsValid() && strings.HasPrefix(f.Name, "Call") {
			src = payload.FieldByName("Call").FieldByName(strings.TrimPrefix(f.Name, "Call"))
		}
		require.True(t, src.IsValid(), "%s.%s has no source", inType.Name(), f.Name)
		if f.Type.Kind() == reflect.Interface {
			dst.Set(reflect.ValueOf(json.RawMessage(src.Bytes())))
		} else {
			dst.Set(src)
		}
	}
	return in
}

func canonical(t *testing.T, ev *gen.Event, patch func(map[string]any)) string {
	data, err := gen.EncodeEvent(ev)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	delete(m, "native")
	if patch != nil {
		patch(m)
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return string(out)
}

// bodyView rewrites, in an encoded event, every content part given without
// its body (metadata or omit) as a body receiver gets it: a body gap.
func bodyView(v any) {
	switch x := v.(type) {
	case map[string]any:
		if k, _ := x["kind"].(string); k == "text" || k == "attachment" {
			if s := x["selection"]; s == "metadata" || s == "omit" {
				x["selection"] = "body"
				x["gap"] = map[string]any{"reason": "body unavailable"}
			}
		}
		for name, m := range x {
			if name != "input" && name != "extensions" {
				bodyView(m)
			}
		}
	case []any:
		for _, m := range x {
			bodyView(m)
		}
	}
}

// TestAllEventMethods calls each of the 32 generated methods with an input
// built from a canonical sample and checks that the backend receives exactly
// that canonical event (SDK-owned members filled in), by intercept request
// for interceptable events and by notification for all; a part the sample
// gives without its body reaches the body subscription as a body gap.
func TestAllEventMethods(t *testing.T) {
	samples := sampleEvents(t)
	grants := plainGrants()
	rec := &recorder{}
	reg := registration(backendJSON("com.example.all", httpTransport("http://127.0.0.1:9/x"),
		interceptSub(`"*"`, 5000, "fail-closed"), observeSub(`"*"`)))
	h, err := hooks.New(reg, hooks.Config{
		Source:       "urn:test:harness",
		Capabilities: grants,
		Transports:   map[string]transport.Transport{"com.example.all": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})},
	})
	require.NoError(t, err)
	defer h.Close()
	manifest, err := json.Marshal(h.Manifest())
	require.NoError(t, err)

	require.Len(t, gen.Events(), 32)
	for _, info := range gen.Events() {
		t.Run(string(info.Name), func(t *testing.T) {
			ev, ok := samples[info.Name]
			require.True(t, ok, "no sample for %s", info.Name)
			in := inputFor(t, info.GoName, ev)
			before, beforeObs := rec.counts()
			out := reflect.ValueOf(h).MethodByName(info.GoName).Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
			require.True(t, out[1].IsNil(), "%v", out[1])
			res := out[0].Interface().(*hooks.Result)
			require.Equal(t, gen.PermissionNone, res.Permission, "no effect is not permission")
			require.Empty(t, res.Diagnostics)
			want := canonical(t, ev, func(m map[string]any) {
				m["source"] = "urn:test:harness"
				if _, has := m["manifest"]; has {
					var mm any
					require.NoError(t, json.Unmarshal(manifest, &mm))
					m["manifest"] = mm
				}
			})
			view := canonical(t, ev, func(m map[string]any) {
				m["source"] = "urn:test:harness"
				if _, has := m["manifest"]; has {
					var mm any
					require.NoError(t, json.Unmarshal(manifest, &mm))
					m["manifest"] = mm
				}
				bodyView(m)
			})
			ic, oc := rec.counts()
			require.Equal(t, beforeObs+1, oc, "one observation")
			rec.mu.Lock()
			observed := rec.observed[oc-1]
			var intercepted *gen.InterceptRequest
			if ic > before {
				intercepted = rec.intercept[ic-1]
			}
			rec.mu.Unlock()
			require.JSONEq(t, view, canonical(t, &observed.Params.Event, nil))
			if info.Interceptable() {
				require.Equal(t, before+1, ic)
				require.JSONEq(t, view, canonical(t, &intercepted.Params.Event, nil))
				require.NotNil(t, intercepted.Params.Capabilities.Effects, "capabilities.effects is always present (AHP-CAP-002)")
				require.Equal(t, string(intercepted.ID), `"`+ev.ID()+`"`, "JSON-RPC id equals event id")
			} else {
				require.Equal(t, before, ic, "observe-only events are never intercepted")
			}
			require.JSONEq(t, want, canonical(t, res.Event(), nil))
		})
	}
}

// TestInputFillsSDKMembers: type, source and the session manifest come from
// the SDK; id and time are generated when absent; an explicit id wins.
func TestInputFillsSDKMembers(t *testing.T) {
	rec := &recorder{}
	reg := registration(backendJSON("com.example.all", httpTransport("http://127.0.0.1:9/x"), observeSub(`"session.*"`)))
	h, err := hooks.New(reg, hooks.Config{
		Source:       "urn:test:harness",
		Capabilities: map[gen.EventName]hooks.Grant{gen.EventSessionStart: hooks.Observe()},
		Transports:   map[string]transport.Transport{"com.example.all": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})},
	})
	require.NoError(t, err)
	defer h.Close()
	in := hooks.SessionStartInput{Session: gen.Session{ID: "s1"}, Trigger: gen.SessionStartEventTriggerStartup, Harness: gen.SessionStartEventHarness{Name: "h", Version: "1"}, PermissionMode: "default", Items: []gen.ModelVisibleItem{}}
	_, err = h.SessionStart(context.Background(), in)
	require.NoError(t, err)
	in.ID = "evt-explicit"
	_, err = h.SessionStart(context.Background(), in)
	require.NoError(t, err)
	_, err = h.SessionStart(context.Background(), in, hooks.WithEventID("evt-option"))
	require.NoError(t, err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.observed, 3)
	first := rec.observed[0].Params.Event.SessionStart
	require.Equal(t, "session.start", first.Type)
	require.Equal(t, "urn:test:harness", first.Source)
	require.NotEmpty(t, first.ID)
	_, err = time.Parse(time.RFC3339, first.Time)
	require.NoError(t, err)
	mj, _ := json.Marshal(first.Manifest)
	hj, _ := json.Marshal(h.Manifest())
	require.JSONEq(t, string(hj), string(mj))
	require.Equal(t, "evt-explicit", rec.observed[1].Params.Event.ID())
	require.Equal(t, "evt-option", rec.observed[2].Params.Event.ID())
	require.NotEqual(t, first.ID, rec.observed[0].Params.Event.ID()+"x")
}
