package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/server"
)

// isFraming reports whether f is a line of the stdio framing fixture.
func (f requestFixture) isFraming() bool { return f.method == "" }

// expectedCode returns the error code an invalid request fixture must get,
// or 0 with noReply set for a notification that is never answered.
func (f requestFixture) expected(t *testing.T) (code int, noReply bool) {
	t.Helper()
	if f.c.ExpectedValid {
		if f.method == jsonrpc.MethodObserve {
			return 0, true
		}
		return 0, false
	}
	if c, ok := invalidRequestCodes[f.c.ID]; ok {
		return c, false
	}
	require.False(t, f.hasID, "invalid request fixture %s has no expected error code", f.c.ID)
	return 0, true
}

func TestFixturesHTTP(t *testing.T) {
	rec := &recorder{}
	h := fixtureHandler(rec, testManifest(t))
	srv := httptest.NewServer(h)
	defer srv.Close()

	framingDone := false
	for _, f := range requestFixtures(t) {
		if f.isFraming() {
			if framingDone {
				continue
			}
			framingDone = true
			// Over HTTP the framing fixture is one pretty-printed body:
			// line breaks are JSON whitespace there.
			body := readFixture(t, f.c.Path[len("fixtures/draft/"):])
			before, _ := rec.counts()
			raw, status := post(t, srv.URL, "application/json", body)
			require.Equal(t, http.StatusOK, status)
			reply := decodeReply(t, raw)
			require.Zero(t, reply.code(), f.c.ID)
			checkResponse(t, reply, compact(t, body))
			after, _ := rec.counts()
			require.Equal(t, before+1, after)
			continue
		}
		t.Run(f.c.ID, func(t *testing.T) {
			code, noReply := f.expected(t)
			ni, no := rec.counts()
			raw, status := post(t, srv.URL, "application/json", f.msg)
			ni2, no2 := rec.counts()
			switch {
			case noReply && f.c.ExpectedValid:
				require.Equal(t, http.StatusNoContent, status)
				require.Equal(t, no+1, no2, "Observe called once")
				rec.mu.Lock()
				n := rec.observes[len(rec.observes)-1]
				rec.mu.Unlock()
				checkTyped(t, f.c.ID, &n.Params.Event, f.msg)
			case noReply:
				require.Equal(t, http.StatusBadRequest, status)
				require.Equal(t, no, no2, "Observe not called for an invalid notification")
			case code != 0:
				require.Equal(t, http.StatusOK, status)
				reply := decodeReply(t, raw)
				require.Equal(t, code, reply.code())
				env, err := jsonrpc.Classify(f.msg)
				if err == nil {
					require.Equal(t, env.ID.String(), string(reply.ID))
				}
				require.Equal(t, ni, ni2, "Intercept not called for an invalid request")
			default:
				require.Equal(t, http.StatusOK, status)
				reply := decodeReply(t, raw)
				require.Zero(t, reply.code())
				if f.method == jsonrpc.MethodCapabilities {
					resp, err := gen.ParseCapabilitiesResponse(raw)
					require.NoError(t, err)
					require.Equal(t, gen.ProtocolVersion, resp.Result.ProtocolVersion)
					return
				}
				checkResponse(t, reply, f.msg)
				require.Equal(t, ni+1, ni2, "Intercept called once")
				rec.mu.Lock()
				req := rec.intercepts[len(rec.intercepts)-1]
				rec.mu.Unlock()
				checkTyped(t, f.c.ID, &req.Params.Event, f.msg)
				want, err := gen.ParseInterceptRequest(f.msg)
				require.NoError(t, err)
				require.Equal(t, want, req, "the callback gets the canonical typed request")
			}
		})
	}
}

func TestFixturesStdio(t *testing.T) {
	rec := &recorder{}
	h := fixtureHandler(rec, testManifest(t))
	var framing []byte
	var framingCodes []int
	for _, f := range requestFixtures(t) {
		if f.isFraming() {
			framing = append(append(framing, f.msg...), '\n')
			framingCodes = append(framingCodes, frameCode(f.msg))
			continue
		}
		t.Run(f.c.ID, func(t *testing.T) {
			code, noReply := f.expected(t)
			ni, no := rec.counts()
			raw, _ := viaStdio(t, h, compact(t, f.msg))
			ni2, no2 := rec.counts()
			switch {
			case noReply:
				require.Nil(t, raw, "notifications are never answered")
				if f.c.ExpectedValid {
					require.Equal(t, no+1, no2)
					rec.mu.Lock()
					n := rec.observes[len(rec.observes)-1]
					rec.mu.Unlock()
					checkTyped(t, f.c.ID, &n.Params.Event, f.msg)
				} else {
					require.Equal(t, no, no2)
				}
			case code != 0:
				require.NotNil(t, raw)
				require.Equal(t, code, decodeReply(t, raw).code())
				require.Equal(t, ni, ni2)
			default:
				require.NotNil(t, raw)
				reply := decodeReply(t, raw)
				require.Zero(t, reply.code())
				if f.method == jsonrpc.MethodCapabilities {
					return
				}
				checkResponse(t, reply, f.msg)
				require.Equal(t, ni+1, ni2)
				rec.mu.Lock()
				req := rec.intercepts[len(rec.intercepts)-1]
				rec.mu.Unlock()
				checkTyped(t, f.c.ID, &req.Params.Event, f.msg)
			}
		})
	}
	t.Run("stdio.intercept-request-multiline.invalid", func(t *testing.T) {
		require.NotEmpty(t, framing)
		ni, _ := rec.counts()
		lines := outputLines(t, serveStdio(t, h, framing))
		var got []int
		for _, l := range lines {
			r := decodeReply(t, l)
			require.Equal(t, "null", string(r.ID))
			got = append(got, r.code())
		}
		sort.Ints(got)
		sort.Ints(framingCodes)
		require.Equal(t, framingCodes, got, "every line of a pretty-printed message is answered as malformed")
		ni2, _ := rec.counts()
		require.Equal(t, ni, ni2)
	})
}

// TestFixturesStdioSubprocess runs the test binary itself as a persistent
// stdio backend over real process pipes and sends it every request fixture
// in one session.
func TestFixturesStdioSubprocess(t *testing.T) {
	var input []byte
	var want []string // "id code" for every message that gets a reply
	for _, f := range requestFixtures(t) {
		if f.isFraming() {
			input = append(append(input, f.msg...), '\n')
			want = append(want, "null "+strconv.Itoa(frameCode(f.msg)))
			continue
		}
		code, noReply := f.expected(t)
		input = append(append(input, compact(t, f.msg)...), '\n')
		if noReply {
			continue
		}
		env, err := jsonrpc.Classify(f.msg)
		id := env.ID.String()
		if err != nil || env.ID.IsZero() {
			id = "null"
		}
		want = append(want, id+" "+strconv.Itoa(code))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioServerEnv+"=1")
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())

	var got []string
	for _, line := range outputLines(t, stdout.Bytes()) {
		r := decodeReply(t, line)
		got = append(got, string(r.ID)+" "+strconv.Itoa(r.code()))
		if r.code() == 0 && r.Result != nil {
			require.NotContains(t, string(r.Result), `"manifest"`+":null")
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
	// Diagnostics went to stderr, never to stdout.
	require.Contains(t, stderr.String(), "notification dropped")
	require.NotContains(t, stdout.String(), "notification dropped")
	require.True(t, slices.ContainsFunc(bytes.Split(stderr.Bytes(), []byte("\n")), func(l []byte) bool {
		return json.Valid(l) && bytes.Contains(l, []byte(`"level"`))
	}))
}

// TestFixtureDenyIsAdmitted checks that the fixture handler's deny reaches
// the wire for a request that advertises deny (AHP-DEC-002).
func TestFixtureDenyIsAdmitted(t *testing.T) {
	h := fixtureHandler(&recorder{}, nil)
	body := readFixture(t, "http/intercept-request.valid.json")
	for name, ex := range map[string]exchange{"http": viaHTTP, "stdio": viaStdio} {
		t.Run(name, func(t *testing.T) {
			raw, _ := ex(t, h, compact(t, body))
			resp, err := gen.ParseInterceptResponse(raw)
			require.NoError(t, err)
			require.Len(t, resp.Result.Effects, 1)
			require.NotNil(t, resp.Result.Effects[0].Deny)
			require.Equal(t, "blocked by the fixture handler", resp.Result.Effects[0].Deny.Reason)
			_ = server.Deny
		})
	}
}
