package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
)

type fault struct {
	name      string
	binding   string
	transport func(t *testing.T, srvURL string) string
	timeoutMs int
	code      transport.Code
	reason    string
	preparer  hooks.Preparer
	maxBytes  int64
}

type failingPreparer struct{}

func (failingPreparer) Prepare(_ context.Context, d hooks.Delivery) (*gen.Event, error) {
	if d.BackendID == "com.example.faulty" {
		return nil, errors.New("upload failed: " + canary)
	}
	return d.Event, nil
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/ahp"
}

func faults() []fault {
	path := func(p string) func(*testing.T, string) string {
		return func(t *testing.T, u string) string { return httpTransport(u + p) }
	}
	stdio := func(mode string) func(*testing.T, string) string {
		return func(t *testing.T, _ string) string { return backendCmd(t, mode, "persistent") }
	}
	return []fault{
		{name: "timeout", binding: "http", transport: path("/timeout"), timeoutMs: 150, code: transport.CodeDeadlineExceeded},
		{name: "refused", binding: "http", transport: func(t *testing.T, _ string) string { return httpTransport(closedPort(t)) }, code: transport.CodeTransport, reason: "connect"},
		{name: "status 500", binding: "http", transport: path("/status500"), code: transport.CodeTransport, reason: "http_status"},
		{name: "connection reset", binding: "http", transport: path("/reset"), code: transport.CodeTransport, reason: "connect"},
		{name: "redirect", binding: "http", transport: path("/redirect"), code: transport.CodeTransport, reason: "http_status"},
		{name: "malformed", binding: "http", transport: path("/malformed"), code: transport.CodeProtocolRejection, reason: "malformed_json"},
		{name: "wrong media type", binding: "http", transport: path("/wrongtype"), code: transport.CodeProtocolRejection, reason: "content_type"},
		{name: "uncorrelated", binding: "http", transport: path("/mismatch"), code: transport.CodeProtocolRejection, reason: "id_mismatch"},
		{name: "json-rpc error", binding: "http", transport: path("/rpcerror"), code: transport.CodeRemoteRPC, reason: "jsonrpc_error"},
		{name: "ungranted effect", binding: "http", transport: path("/ungranted"), code: transport.CodeProtocolRejection, reason: "effect_not_granted"},
		{name: "too large", binding: "http", transport: path("/big"), maxBytes: 1024, code: transport.CodeCapacity, reason: "too_large"},
		{name: "preparation", binding: "http", transport: path("/deny"), preparer: failingPreparer{}, code: transport.CodePreparation, reason: "preparation"},
		{name: "timeout", binding: "stdio", transport: stdio("slow"), timeoutMs: 150, code: transport.CodeDeadlineExceeded},
		{name: "launch failure", binding: "stdio", transport: func(*testing.T, string) string {
			return `{"type":"stdio","command":"/nonexistent/ahp-backend","lifecycle":"persistent"}`
		}, code: transport.CodeTransport, reason: "launch"},
		{name: "child crash", binding: "stdio", transport: stdio("crash"), code: transport.CodeTransport, reason: "process_exit"},
		{name: "child crash per_event", binding: "stdio", transport: func(t *testing.T, _ string) string { return backendCmd(t, "crash", "per_event") }, code: transport.CodeTransport, reason: "process_exit"},
		{name: "malformed", binding: "stdio", transport: stdio("garbage"), code: transport.CodeProtocolRejection, reason: "not_response"},
		{name: "uncorrelated", binding: "stdio", transport: stdio("mismatch"), code: transport.CodeProtocolRejection, reason: "id_mismatch"},
		{name: "json-rpc error", binding: "stdio", transport: stdio("rpcerror"), code: transport.CodeRemoteRPC, reason: "jsonrpc_error"},
		{name: "ungranted effect", binding: "stdio", transport: stdio("ungranted"), code: transport.CodeProtocolRejection, reason: "effect_not_granted"},
		{name: "too large", binding: "stdio", transport: stdio("big"), maxBytes: 1024, code: transport.CodeCapacity, reason: "too_large"},
		{name: "too large per_event", binding: "stdio", transport: func(t *testing.T, _ string) string { return backendCmd(t, "big", "per_event") }, maxBytes: 1024, code: transport.CodeCapacity, reason: "too_large"},
	}
}

// TestFaultMatrix runs every fault kind under both failure policies, with an
// allowing interceptor after the faulty one: fail-open records the failure
// and continues (the second interceptor decides), fail-closed stops with a
// synthetic denial and the uncalled interceptor gets an owed observation.
func TestFaultMatrix(t *testing.T) {
	srv := faultServer(t)
	var mu sync.Mutex
	var table []string
	for _, f := range faults() {
		for _, policy := range []string{"fail-open", "fail-closed"} {
			t.Run(f.binding+"/"+f.name+"/"+policy, func(t *testing.T) {
				t.Parallel()
				rec := &recorder{effects: func(*gen.InterceptRequest) []gen.Effect { return []gen.Effect{allowEffect()} }}
				timeout := f.timeoutMs
				if timeout == 0 {
					timeout = 5000
				}
				reg := registration(
					backendJSON("com.example.faulty", f.transport(t, srv.URL), interceptSub(`"tool.before"`, timeout, policy)),
					backendJSON("com.example.second", httpTransport("http://127.0.0.1:9/unused"), interceptSub(`"tool.*"`, 5000, "fail-closed")),
				)
				logs := &capture{}
				cfg := hooks.Config{
					Source:           "urn:test:harness",
					Capabilities:     map[gen.EventName]hooks.Grant{gen.EventToolBefore: hooks.Intercept().Deny().Allow()},
					Transports:       map[string]transport.Transport{"com.example.second": transport.NewInProcess(rec.handler(), transport.InProcessOptions{})},
					Preparer:         f.preparer,
					MaxResponseBytes: f.maxBytes,
					Logger:           logs.logger(),
				}
				h, err := hooks.New(reg, cfg)
				require.NoError(t, err)
				defer h.Close()
				start := time.Now()
				res, err := h.ToolBefore(ctxTimeout(t, 10*time.Second), toolInput())
				require.NoError(t, err)
				elapsed := time.Since(start)
				require.Len(t, res.Diagnostics, 1, "%+v", res.Diagnostics)
				d := res.Diagnostics[0]
				require.Equal(t, f.code, d.Code)
				if f.reason != "" {
					require.Equal(t, f.reason, d.Reason)
				}
				require.Equal(t, "com.example.faulty", d.BackendID)
				require.Equal(t, 0, d.SubscriptionIndex)
				require.Equal(t, gen.ModeIntercept, d.Mode)
				require.Equal(t, hooks.FailurePolicy(policy), d.FailurePolicy)
				ic, oc := rec.counts()
				if policy == "fail-open" {
					require.Equal(t, gen.PermissionAllow, res.Permission)
					require.False(t, res.SyntheticDenial)
					require.False(t, d.SyntheticDenial)
					require.Equal(t, 1, ic)
					require.Equal(t, 0, oc)
				} else {
					require.Equal(t, gen.PermissionDeny, res.Permission)
					require.True(t, res.SyntheticDenial)
					require.True(t, d.SyntheticDenial)
					require.Equal(t, hooks.SyntheticDenialReason, res.DenyReason())
					require.Equal(t, 0, ic, "a fail-closed failure ends decision-making")
					require.Equal(t, 1, oc, "the uncalled interceptor is owed an observation")
				}
				require.NotContains(t, fmt.Sprintf("%+v", res.Diagnostics), canary)
				require.NotContains(t, logs.String(), canary)
				require.Contains(t, logs.String(), string(f.code))
				if f.code == transport.CodeDeadlineExceeded {
					require.Less(t, elapsed, 1500*time.Millisecond, "the subscription timeout bounds the delivery")
				}
				mu.Lock()
				table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %v |", f.binding, f.name, policy, d.Code, d.Stage, d.Reason, res.Permission))
				mu.Unlock()
			})
		}
	}
	t.Cleanup(func() {
		sort.Strings(table)
		t.Log("\n| binding | fault | policy | code | stage | reason | permission |\n|---|---|---|---|---|---|---|\n" + strings.Join(table, "\n"))
	})
}
