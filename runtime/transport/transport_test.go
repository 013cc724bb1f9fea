package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-child" {
		os.Exit(child(os.Args[2]))
	}
	goleak.VerifyTestMain(m)
}

// child answers each request line with a response echoing its id; in mode
// "late" the first answer is delayed past the caller's deadline.
func child(mode string) int {
	sc := bufio.NewScanner(os.Stdin)
	first := true
	for sc.Scan() {
		env, err := jsonrpc.Classify(sc.Bytes())
		if err != nil || env.Kind != jsonrpc.KindRequest {
			continue
		}
		if mode == "late" && first {
			time.Sleep(300 * time.Millisecond)
		}
		first = false
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"draft","effects":[]}}`+"\n", env.ID)
	}
	return 0
}

func req(id string) transport.Message {
	return transport.Message{ID: jsonrpc.StringID(id), Method: jsonrpc.MethodIntercept, Body: []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{}}`)}
}

func stdio(t *testing.T, mode string, lc gen.StdioTransportLifecycle) *transport.Stdio {
	exe, err := os.Executable()
	require.NoError(t, err)
	s := transport.NewStdio(transport.StdioOptions{Command: exe, Args: []string{"-child", mode}, Lifecycle: lc})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStdioPersistentCorrelatesAndDropsLateReplies(t *testing.T) {
	s := stdio(t, "late", gen.StdioTransportLifecyclePersistent)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := s.Exchange(ctx, req("a"))
	cancel()
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeDeadlineExceeded, te.Code)
	// The late reply to "a" is discarded; "b" gets its own answer.
	out, err := s.Exchange(context.Background(), req("b"))
	require.NoError(t, err)
	require.Contains(t, string(out), `"id":"b"`)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Exchange(context.Background(), req("c"))
	require.ErrorIs(t, err, transport.ErrClosed)
}

func TestStdioPerEvent(t *testing.T) {
	s := stdio(t, "echo", gen.StdioTransportLifecyclePerEvent)
	out, err := s.Exchange(context.Background(), req("x"))
	require.NoError(t, err)
	require.Contains(t, string(out), `"id":"x"`)
	require.NoError(t, s.Notify(context.Background(), transport.Message{Body: []byte(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`)}))
}

func TestHTTPRules(t *testing.T) {
	var gotAuth string
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/observe", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()
	tokenEnv := "AHP_TRANSPORT_TEST_TOKEN"
	t.Setenv(tokenEnv, "s3cret")
	auth := &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &tokenEnv}}

	tr := transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, Authentication: auth})
	out, err := tr.Exchange(context.Background(), req("1"))
	require.NoError(t, err)
	require.Equal(t, `{"ok":true}`, string(out))
	require.Equal(t, "Bearer s3cret", gotAuth)
	require.Nil(t, client.CheckRedirect, "the borrowed client is not modified")

	_, err = transport.NewHTTP(srv.URL+"/redirect", transport.HTTPOptions{Client: client}).Exchange(context.Background(), req("1"))
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, http.StatusFound, te.Status, "redirects are not followed")

	require.NoError(t, transport.NewHTTP(srv.URL+"/observe", transport.HTTPOptions{Client: client}).Notify(context.Background(), req("1")))
	require.ErrorIs(t, transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client}).Notify(context.Background(), req("1")), transport.ErrStatus)

	_, err = transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, MaxResponseBytes: 4}).Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrTooLarge)

	missing := "AHP_TRANSPORT_TEST_MISSING"
	gotAuth = "unset"
	_, err = transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{Client: client, Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &missing}}}).Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrCredential)
	require.Equal(t, "unset", gotAuth, "no request without the configured credential")
	require.NotContains(t, err.Error(), srv.URL)

	owned := transport.NewHTTP(srv.URL+"/ok", transport.HTTPOptions{})
	_, err = owned.Exchange(context.Background(), req("1"))
	require.NoError(t, err)
	require.NoError(t, owned.Close())
}

func TestInProcess(t *testing.T) {
	tr := transport.NewInProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "panic") {
			panic("boom")
		}
		w.WriteHeader(http.StatusAccepted)
	}), transport.InProcessOptions{})
	require.NoError(t, tr.Notify(context.Background(), req("1")))
	_, err := tr.Exchange(context.Background(), req("1"))
	require.ErrorIs(t, err, transport.ErrStatus)
	p := transport.NewInProcess(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), transport.InProcessOptions{})
	_, err = p.Exchange(context.Background(), req("1"))
	var te *transport.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, transport.CodeTransport, te.Code)
	require.NoError(t, tr.Close())
	require.NoError(t, p.Close())
	_, err = tr.Exchange(context.Background(), req("1"))
	require.True(t, errors.Is(err, transport.ErrClosed))
}
