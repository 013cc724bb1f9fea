package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

// The upload tests' credentials: a bearer token per scope, and one token
// whose principal may not upload at all.
const (
	tokenA        = "token-of-principal-a"
	tokenB        = "token-of-principal-b"
	tokenOutsider = "token-of-an-outsider"
	scopeA        = "scope-a"
	scopeB        = "scope-b"
	// secretText is in every error that a failing hook or storage returns:
	// it must never reach a response or a log.
	secretText = "SECRET-backend-detail"
)

// bearerAuth is the test's Authorize hook.
func bearerAuth(r *http.Request) (string, error) {
	if r.Body != http.NoBody {
		return "", errors.New("Authorize was given the request body")
	}
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return "", server.ErrUnauthenticated
	}
	switch tok, _ := strings.CutPrefix(vals[0], "Bearer "); tok {
	case tokenA:
		return scopeA, nil
	case tokenB:
		return scopeB, nil
	case tokenOutsider:
		return "", fmt.Errorf("%w: %s", server.ErrForbidden, secretText)
	default:
		return "", fmt.Errorf("%w: %s", server.ErrUnauthenticated, secretText)
	}
}

// recordingStorage wraps a Storage, counts how its methods are called and
// injects failures. Its counters are read after the response arrived.
type recordingStorage struct {
	inner server.Storage

	createErr error
	writeErr  error
	commitErr error
	panicOn   string // "create", "write", "commit"

	mu      sync.Mutex
	creates int
	commits []server.UploadReceipt
	aborts  int
	written chan struct{} // closed at the first Write, if set
	aborted chan struct{} // closed at the first Abort, if set
}

func newRecording() *recordingStorage { return &recordingStorage{inner: &server.MemoryStorage{}} }

func (s *recordingStorage) Create(ctx context.Context, scope string, size int64) (server.Staged, error) {
	s.mu.Lock()
	s.creates++
	s.mu.Unlock()
	if s.panicOn == "create" {
		panic(secretText)
	}
	if s.createErr != nil {
		return nil, s.createErr
	}
	st, err := s.inner.Create(ctx, scope, size)
	if err != nil {
		return nil, err
	}
	return &recordingStaged{s: s, inner: st}, nil
}

func (s *recordingStorage) Open(ctx context.Context, scope, ref string) (io.ReadCloser, server.UploadReceipt, error) {
	return s.inner.Open(ctx, scope, ref)
}

func (s *recordingStorage) counts() (creates, commits, aborts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates, len(s.commits), s.aborts
}

type recordingStaged struct {
	s     *recordingStorage
	inner server.Staged
	wrote bool
}

func (st *recordingStaged) Write(p []byte) (int, error) {
	if !st.wrote {
		st.wrote = true
		if st.s.written != nil {
			close(st.s.written)
		}
	}
	if st.s.panicOn == "write" {
		panic(secretText)
	}
	if st.s.writeErr != nil {
		return 0, st.s.writeErr
	}
	return st.inner.Write(p)
}

func (st *recordingStaged) Commit(ctx context.Context, rc server.UploadReceipt) error {
	if st.s.panicOn == "commit" {
		panic(secretText)
	}
	if st.s.commitErr != nil {
		return st.s.commitErr
	}
	if err := st.inner.Commit(ctx, rc); err != nil {
		return err
	}
	st.s.mu.Lock()
	st.s.commits = append(st.s.commits, rc)
	st.s.mu.Unlock()
	return nil
}

func (st *recordingStaged) Abort() error {
	st.s.mu.Lock()
	st.s.aborts++
	first := st.s.aborts == 1
	st.s.mu.Unlock()
	if first && st.s.aborted != nil {
		close(st.s.aborted)
	}
	return st.inner.Abort()
}

// uploadEnv is a receiver on a real loopback server.
type uploadEnv struct {
	recv  *server.UploadReceiver
	store *recordingStorage
	logs  *syncBuffer
	srv   *httptest.Server
}

func newUploadEnv(t *testing.T, configure func(*server.UploadReceiver, *recordingStorage)) *uploadEnv {
	t.Helper()
	e := &uploadEnv{store: newRecording(), logs: &syncBuffer{}}
	e.recv = &server.UploadReceiver{
		Authorize: bearerAuth,
		Storage:   e.store,
		Logger:    slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if configure != nil {
		configure(e.recv, e.store)
	}
	require.NoError(t, e.recv.Validate())
	e.srv = httptest.NewServer(e.recv)
	t.Cleanup(e.srv.Close)
	return e
}

func sum256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// uploadRequest builds a correctly framed upload of body with token.
func uploadRequest(t *testing.T, url, token string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("AHP-Content-SHA256", sum256(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, data
}

// uploadOK uploads body into the scope of token and returns the receipt.
func (e *uploadEnv) uploadOK(t *testing.T, token string, body []byte) *gen.ContentUploadReceipt {
	t.Helper()
	resp, data := do(t, e.srv.Client(), uploadRequest(t, e.srv.URL, token, body))
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", data)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	rc, err := gen.ParseContentUploadReceipt(data)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(len(body)), rc.Size.String())
	require.Equal(t, sum256(body), rc.SHA256)
	return rc
}

// readUpload reads the bytes of ref in scope through the receiver.
func readUpload(t *testing.T, recv *server.UploadReceiver, scope, ref string) ([]byte, server.UploadReceipt) {
	t.Helper()
	rc, receipt, err := recv.Open(context.Background(), scope, ref)
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	return data, receipt
}

// rawExchange sends request bytes on a fresh connection to srv, then reads
// one response. halfClose closes the sending side after the request.
func rawExchange(t *testing.T, srv *httptest.Server, request string, halfClose bool) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	// A watchdog, not an ordering: a receiver that waited for body bytes
	// that never come would hang the test instead of failing it.
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, request)
	require.NoError(t, err)
	if halfClose {
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// rawUpload is the request text of an upload with the given extra header
// lines (each ending in CRLF) and body.
func rawUpload(headers string, body string) string {
	return "POST / HTTP/1.1\r\nHost: receiver\r\n" + headers + "\r\n" + body
}

func TestUploadReceiverAccepts(t *testing.T) {
	e := newUploadEnv(t, nil)
	for name, body := range map[string][]byte{
		"bytes":  {0x00, 0xff, 0x10, '\n', '\r', 0x80, 0xfe},
		"empty":  {},
		"abc":    []byte("abc"),
		"64 KiB": bytes.Repeat([]byte{0xa5, 0x5a, 0x00}, 64<<10/3),
	} {
		t.Run(name, func(t *testing.T) {
			rc := e.uploadOK(t, tokenA, body)
			data, receipt := readUpload(t, e.recv, scopeA, rc.Ref)
			require.Equal(t, body, data)
			require.Equal(t, server.UploadReceipt{Ref: rc.Ref, Size: int64(len(body)), SHA256: sum256(body)}, receipt)

			// Another scope cannot tell the reference exists.
			_, _, errOther := e.recv.Open(context.Background(), scopeB, rc.Ref)
			_, _, errUnknown := e.recv.Open(context.Background(), scopeB, "no-such-ref")
			require.ErrorIs(t, errOther, server.ErrNotFound)
			require.Equal(t, errUnknown, errOther)
		})
	}
	// The spec's example receipt.
	rc := e.uploadOK(t, tokenA, []byte("abc"))
	require.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", rc.SHA256)

	creates, commits, aborts := e.store.counts()
	require.Equal(t, 5, creates)
	require.Equal(t, 5, commits)
	require.Zero(t, aborts)
}

func TestUploadReceiverReceiptHeaders(t *testing.T) {
	e := newUploadEnv(t, nil)
	resp, data := do(t, e.srv.Client(), uploadRequest(t, e.srv.URL, tokenA, []byte("abc")))
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Empty(t, resp.Header.Get("Location"), "no retrieval route is introduced")
	// Canonical member order, compact, and exactly three members.
	rc, err := gen.ParseContentUploadReceipt(data)
	require.NoError(t, err)
	require.Equal(t, `{"ref":"`+rc.Ref+`","size":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`, string(data))
}

func TestUploadReceiverNewReferences(t *testing.T) {
	e := newUploadEnv(t, nil)
	body := []byte("the same bytes")
	first := e.uploadOK(t, tokenA, body)
	second := e.uploadOK(t, tokenA, body)
	require.NotEqual(t, first.Ref, second.Ref, "a retry allocates a new reference")
	other := e.uploadOK(t, tokenA, []byte("other bytes"))

	seen := map[string]bool{}
	for _, rc := range []*gen.ContentUploadReceipt{first, second, other} {
		require.False(t, seen[rc.Ref])
		seen[rc.Ref] = true
		// 128 random bits, not derived from the content.
		require.GreaterOrEqual(t, len(rc.Ref), 26)
		require.NotContains(t, rc.Ref, rc.SHA256[:16])
	}
	data, _ := readUpload(t, e.recv, scopeA, first.Ref)
	require.Equal(t, body, data, "the earlier reference's bytes are unchanged")
	data, _ = readUpload(t, e.recv, scopeA, second.Ref)
	require.Equal(t, body, data)
}

func TestUploadReceiverMethod(t *testing.T) {
	e := newUploadEnv(t, nil)
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		req := uploadRequest(t, e.srv.URL, tokenA, []byte("abc"))
		req.Method = m
		resp, data := do(t, e.srv.Client(), req)
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		require.Equal(t, "POST", resp.Header.Get("Allow"))
		require.Empty(t, data)
	}
	creates, _, _ := e.store.counts()
	require.Zero(t, creates)
}

func TestUploadReceiverFraming(t *testing.T) {
	e := newUploadEnv(t, nil)
	body := "abc"
	sum := sum256([]byte(body))
	auth := "Authorization: Bearer " + tokenA + "\r\n"
	ct := "Content-Type: application/octet-stream\r\n"
	cl := "Content-Length: 3\r\n"
	ds := "AHP-Content-SHA256: " + sum + "\r\n"

	for _, tc := range []struct {
		name    string
		headers string
		body    string
		want    int
	}{
		{"well framed", auth + ct + cl + ds, body, http.StatusCreated},
		{"media type in other case", auth + "Content-Type: Application/Octet-Stream\r\n" + cl + ds, body, http.StatusCreated},
		{"header names in other case", auth + "content-type: application/octet-stream\r\ncontent-length: 3\r\nahp-content-sha256: " + sum + "\r\n", body, http.StatusCreated},

		{"no hash", auth + ct + cl, body, http.StatusBadRequest},
		{"empty hash", auth + ct + cl + "AHP-Content-SHA256: \r\n", body, http.StatusBadRequest},
		{"uppercase hash", auth + ct + cl + "AHP-Content-SHA256: " + strings.ToUpper(sum) + "\r\n", body, http.StatusBadRequest},
		{"short hash", auth + ct + cl + "AHP-Content-SHA256: " + sum[:63] + "\r\n", body, http.StatusBadRequest},
		{"long hash", auth + ct + cl + "AHP-Content-SHA256: " + sum + "0\r\n", body, http.StatusBadRequest},
		{"non-hex hash", auth + ct + cl + "AHP-Content-SHA256: " + sum[:63] + "g\r\n", body, http.StatusBadRequest},
		{"prefixed hash", auth + ct + cl + "AHP-Content-SHA256: sha256:" + sum + "\r\n", body, http.StatusBadRequest},
		{"base64 hash", auth + ct + cl + "AHP-Content-SHA256: ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=\r\n", body, http.StatusBadRequest},
		{"two hash headers", auth + ct + cl + ds + ds, body, http.StatusBadRequest},
		{"two hashes in one header", auth + ct + cl + "AHP-Content-SHA256: " + sum + ", " + sum + "\r\n", body, http.StatusBadRequest},

		{"no content type", auth + cl + ds, body, http.StatusBadRequest},
		{"json content type", auth + "Content-Type: application/json\r\n" + cl + ds, body, http.StatusBadRequest},
		{"content type with a parameter", auth + "Content-Type: application/octet-stream; charset=utf-8\r\n" + cl + ds, body, http.StatusBadRequest},
		{"content type with an empty parameter", auth + "Content-Type: application/octet-stream;\r\n" + cl + ds, body, http.StatusBadRequest},
		{"two content types", auth + ct + ct + cl + ds, body, http.StatusBadRequest},
		{"multipart", auth + "Content-Type: multipart/form-data; boundary=x\r\n" + cl + ds, body, http.StatusBadRequest},

		{"no content length", auth + ct + ds, "", http.StatusBadRequest},
		{"chunked", auth + ct + ds + "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n", http.StatusBadRequest},
		{"chunked and a length", auth + ct + cl + ds + "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n", http.StatusBadRequest},
		{"two different lengths", auth + ct + cl + "Content-Length: 4\r\n" + ds, body, http.StatusBadRequest},
		{"gzip content encoding", auth + ct + cl + ds + "Content-Encoding: gzip\r\n", body, http.StatusBadRequest},
		{"identity content encoding", auth + ct + cl + ds + "Content-Encoding: identity\r\n", body, http.StatusBadRequest},

		// Framing is checked before credentials.
		{"no hash and no credentials", ct + cl, body, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _, _ := e.store.counts()
			resp := rawExchange(t, e.srv, rawUpload(tc.headers, tc.body), false)
			require.Equal(t, tc.want, resp.StatusCode)
			after, _, _ := e.store.counts()
			if tc.want != http.StatusCreated {
				require.Equal(t, before, after, "nothing is staged for a badly framed request")
			}
		})
	}
	require.NotContains(t, e.logs.String(), secretText)
}

func TestUploadReceiverChunkedClient(t *testing.T) {
	e := newUploadEnv(t, nil)
	body := []byte("abc")
	// A body of unknown length: net/http sends it chunked.
	req := uploadRequest(t, e.srv.URL, tokenA, body)
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = -1
	resp, data := do(t, e.srv.Client(), req)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Empty(t, data)
	creates, _, _ := e.store.counts()
	require.Zero(t, creates)
}

func TestUploadReceiverAuthorization(t *testing.T) {
	e := newUploadEnv(t, func(u *server.UploadReceiver, _ *recordingStorage) {
		u.Challenge = `Bearer resource_metadata="https://receiver.example/.well-known/oauth-protected-resource"`
	})
	body := []byte("abc")
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"no credentials", nil, http.StatusUnauthorized},
		{"unknown token", []string{"Bearer not-a-token"}, http.StatusUnauthorized},
		{"basic scheme", []string{"Basic dXNlcjpwYXNz"}, http.StatusUnauthorized},
		{"two credentials", []string{"Bearer " + tokenA, "Bearer " + tokenB}, http.StatusUnauthorized},
		{"principal outside any scope", []string{"Bearer " + tokenOutsider}, http.StatusForbidden},
		{"scope a", []string{"Bearer " + tokenA}, http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := uploadRequest(t, e.srv.URL, "", body)
			for _, v := range tc.header {
				req.Header.Add("Authorization", v)
			}
			resp, data := do(t, e.srv.Client(), req)
			require.Equal(t, tc.want, resp.StatusCode)
			if tc.want == http.StatusUnauthorized {
				require.Equal(t, e.recv.Challenge, resp.Header.Get("WWW-Authenticate"))
			} else {
				require.Empty(t, resp.Header.Get("WWW-Authenticate"))
			}
			if tc.want != http.StatusCreated {
				require.Empty(t, data)
			}
		})
	}
	creates, commits, _ := e.store.counts()
	require.Equal(t, 1, creates, "only the authorized upload reaches storage")
	require.Equal(t, 1, commits)
	require.NotContains(t, e.logs.String(), secretText)

	// The default challenge.
	d := newUploadEnv(t, nil)
	resp, _ := do(t, d.srv.Client(), uploadRequest(t, d.srv.URL, "", body))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
}

func TestUploadReceiverAuthorizeFailures(t *testing.T) {
	body := []byte("abc")
	for _, tc := range []struct {
		name string
		auth func(*http.Request) (string, error)
		want int
	}{
		{"unavailable", func(*http.Request) (string, error) {
			return "", fmt.Errorf("%w: %s", server.ErrUnavailable, secretText)
		}, http.StatusServiceUnavailable},
		{"other error", func(*http.Request) (string, error) { return "", errors.New(secretText) }, http.StatusInternalServerError},
		{"empty scope", func(*http.Request) (string, error) { return "", nil }, http.StatusInternalServerError},
		{"panic", func(*http.Request) (string, error) { panic(secretText) }, http.StatusInternalServerError},
		{"anonymous scope", func(*http.Request) (string, error) { return "anonymous-tests", nil }, http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUploadEnv(t, func(u *server.UploadReceiver, _ *recordingStorage) { u.Authorize = tc.auth })
			resp, data := do(t, e.srv.Client(), uploadRequest(t, e.srv.URL, "", body))
			require.Equal(t, tc.want, resp.StatusCode)
			require.NotContains(t, string(data), secretText)
			require.NotContains(t, e.logs.String(), secretText)
			creates, _, _ := e.store.counts()
			if tc.want != http.StatusCreated {
				require.Empty(t, data)
				require.Zero(t, creates)
			}
		})
	}
}

// TestUploadReceiverRefusesBeforeTheBody sends only the request head and
// reads the answer: a receiver that read (or asked for) the body first
// would never answer.
func TestUploadReceiverRefusesBeforeTheBody(t *testing.T) {
	e := newUploadEnv(t, func(u *server.UploadReceiver, _ *recordingStorage) { u.MaxBytes = 1 << 20 })
	sum := sum256(nil) // any well-formed digest
	head := func(auth string, length int64, expect bool) string {
		h := auth + "Content-Type: application/octet-stream\r\nContent-Length: " + strconv.FormatInt(length, 10) +
			"\r\nAHP-Content-SHA256: " + sum + "\r\n"
		if expect {
			h += "Expect: 100-continue\r\n"
		}
		return rawUpload(h, "")
	}
	authA := "Authorization: Bearer " + tokenA + "\r\n"
	for _, tc := range []struct {
		name    string
		request string
		want    int
	}{
		{"no credentials", head("", 1000, false), http.StatusUnauthorized},
		{"other scope", head("Authorization: Bearer "+tokenOutsider+"\r\n", 1000, false), http.StatusForbidden},
		{"over the limit", head(authA, 1<<20+1, false), http.StatusRequestEntityTooLarge},
		{"far over the limit", head(authA, 1<<62, false), http.StatusRequestEntityTooLarge},
		{"over the limit, expecting 100-continue", head(authA, 1<<30, true), http.StatusRequestEntityTooLarge},
		{"no credentials, expecting 100-continue", head("", 1<<30, true), http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawExchange(t, e.srv, tc.request, false)
			require.Equal(t, tc.want, resp.StatusCode, "the first response, not 100 Continue")
		})
	}
	creates, _, _ := e.store.counts()
	require.Zero(t, creates)
}

func TestUploadReceiverLimit(t *testing.T) {
	e := newUploadEnv(t, func(u *server.UploadReceiver, _ *recordingStorage) { u.MaxBytes = 1024 })
	e.uploadOK(t, tokenA, bytes.Repeat([]byte{7}, 1024))
	resp, data := do(t, e.srv.Client(), uploadRequest(t, e.srv.URL, tokenA, bytes.Repeat([]byte{7}, 1025)))
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Empty(t, data)
	creates, _, _ := e.store.counts()
	require.Equal(t, 1, creates)

	// The default is 4 MiB.
	d := newUploadEnv(t, nil)
	d.uploadOK(t, tokenA, make([]byte, server.DefaultMaxUploadBytes))
	resp, _ = do(t, d.srv.Client(), uploadRequest(t, d.srv.URL, tokenA, make([]byte, server.DefaultMaxUploadBytes+1)))
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// A storage quota refuses with ErrTooLarge.
	q := newUploadEnv(t, func(_ *server.UploadReceiver, s *recordingStorage) {
		s.createErr = fmt.Errorf("%w: %s", server.ErrTooLarge, secretText)
	})
	resp, data = do(t, q.srv.Client(), uploadRequest(t, q.srv.URL, tokenA, []byte("abc")))
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Empty(t, data)
	require.NotContains(t, q.logs.String(), secretText)
}

func TestUploadReceiverMismatch(t *testing.T) {
	auth := "Authorization: Bearer " + tokenA + "\r\nContent-Type: application/octet-stream\r\n"
	frame := func(length int, digestOf string) string {
		return auth + "Content-Length: " + strconv.Itoa(length) + "\r\nAHP-Content-SHA256: " + sum256([]byte(digestOf)) + "\r\n"
	}
	for _, tc := range []struct {
		name      string
		request   string
		halfClose bool
	}{
		{"digest of other bytes", rawUpload(frame(3, "abd"), "abc"), false},
		{"digest of the empty body", rawUpload(frame(3, ""), "abc"), false},
		{"empty body, digest of other bytes", rawUpload(frame(0, "abc"), ""), false},
		{"body shorter than declared", rawUpload(frame(10, "abcde"), "abcde"), true},
		{"body shorter than declared, digest of the declared length", rawUpload(frame(10, "abcdeabcde"), "abcde"), true},
		// net/http reads exactly Content-Length octets; the rest would be
		// the next request. The digest covers all the sender's bytes.
		{"body longer than declared", rawUpload(frame(3, "abcde"), "abcde"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUploadEnv(t, nil)
			resp := rawExchange(t, e.srv, tc.request, tc.halfClose)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			// The receiver aborts before it answers.
			creates, commits, aborts := e.store.counts()
			require.Equal(t, 1, creates)
			require.Zero(t, commits)
			require.Equal(t, 1, aborts)
			mem := e.store.inner.(*server.MemoryStorage)
			require.Zero(t, mem.Len(), "nothing committed")
			require.Zero(t, mem.Staging(), "nothing left staged")
		})
	}
}

// TestUploadReceiverLongBody gives the handler a body longer than its
// declared length, which net/http itself never does.
func TestUploadReceiverLongBody(t *testing.T) {
	store := newRecording()
	recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: store}
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("abcde"))
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Content-Length", "3")
	req.ContentLength = 3
	req.Header.Set("AHP-Content-SHA256", sum256([]byte("abc")))
	w := httptest.NewRecorder()
	recv.ServeHTTP(w, req)
	require.Equal(t, http.StatusBadRequest, w.Code)
	_, commits, aborts := store.counts()
	require.Zero(t, commits)
	require.Equal(t, 1, aborts)
}

func TestUploadReceiverClientGoesAway(t *testing.T) {
	written, aborted := make(chan struct{}), make(chan struct{})
	e := newUploadEnv(t, func(_ *server.UploadReceiver, s *recordingStorage) { s.written, s.aborted = written, aborted })
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	head := rawUpload("Authorization: Bearer "+tokenA+"\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n"+
		"AHP-Content-SHA256: "+sum256(nil)+"\r\n", "")
	_, err = io.WriteString(conn, head+strings.Repeat("x", 1000))
	require.NoError(t, err)
	<-written // the receiver is streaming the body
	require.NoError(t, conn.Close())
	select {
	case <-aborted:
	case <-time.After(10 * time.Second): // a watchdog, not an ordering
		t.Fatal("the upload was not aborted after the client went away")
	}
	_, commits, aborts := e.store.counts()
	require.Zero(t, commits)
	require.Equal(t, 1, aborts)
}

func TestUploadReceiverStorageFailures(t *testing.T) {
	body := []byte("abc")
	for _, tc := range []struct {
		name      string
		configure func(*recordingStorage)
		want      int
		aborts    int
	}{
		{"create fails", func(s *recordingStorage) { s.createErr = errors.New(secretText) }, http.StatusInternalServerError, 0},
		{"create unavailable", func(s *recordingStorage) { s.createErr = fmt.Errorf("%w: %s", server.ErrUnavailable, secretText) }, http.StatusServiceUnavailable, 0},
		{"create panics", func(s *recordingStorage) { s.panicOn = "create" }, http.StatusInternalServerError, 0},
		{"write fails", func(s *recordingStorage) { s.writeErr = errors.New(secretText) }, http.StatusInternalServerError, 1},
		{"write panics", func(s *recordingStorage) { s.panicOn = "write" }, http.StatusInternalServerError, 1},
		{"commit fails", func(s *recordingStorage) { s.commitErr = errors.New(secretText) }, http.StatusInternalServerError, 1},
		{"commit unavailable", func(s *recordingStorage) { s.commitErr = fmt.Errorf("%w: %s", server.ErrUnavailable, secretText) }, http.StatusServiceUnavailable, 1},
		{"commit panics", func(s *recordingStorage) { s.panicOn = "commit" }, http.StatusInternalServerError, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUploadEnv(t, func(_ *server.UploadReceiver, s *recordingStorage) { tc.configure(s) })
			resp, data := do(t, e.srv.Client(), uploadRequest(t, e.srv.URL, tokenA, body))
			require.Equal(t, tc.want, resp.StatusCode)
			require.Empty(t, data, "no reference, no error text")
			require.Empty(t, resp.Header.Get("Content-Type"))
			_, commits, aborts := e.store.counts()
			require.Zero(t, commits)
			require.Equal(t, tc.aborts, aborts)
			logs := e.logs.String()
			require.NotContains(t, logs, secretText)
			require.Contains(t, logs, "ahp upload: Storage")
			require.Zero(t, e.store.inner.(*server.MemoryStorage).Len())
		})
	}
}

// corruptingStorage returns stored bytes changed after the commit.
type corruptingStorage struct {
	server.MemoryStorage
	change func([]byte) []byte
}

func (c *corruptingStorage) Open(ctx context.Context, scope, ref string) (io.ReadCloser, server.UploadReceipt, error) {
	rc, receipt, err := c.MemoryStorage.Open(ctx, scope, ref)
	if err != nil {
		return nil, receipt, err
	}
	data, _ := io.ReadAll(rc)
	return io.NopCloser(bytes.NewReader(c.change(bytes.Clone(data)))), receipt, nil
}

func TestUploadReceiverOpenVerifies(t *testing.T) {
	body := []byte("attachment bytes")
	for name, change := range map[string]func([]byte) []byte{
		"flipped":   func(b []byte) []byte { b[3] ^= 1; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-1] },
		"extended":  func(b []byte) []byte { return append(b, '!') },
	} {
		t.Run(name, func(t *testing.T) {
			store := &corruptingStorage{change: change}
			recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: store}
			srv := httptest.NewServer(recv)
			defer srv.Close()
			resp, data := do(t, srv.Client(), uploadRequest(t, srv.URL, tokenA, body))
			require.Equal(t, http.StatusCreated, resp.StatusCode)
			rcpt, err := gen.ParseContentUploadReceipt(data)
			require.NoError(t, err)
			rc, _, err := recv.Open(context.Background(), scopeA, rcpt.Ref)
			require.NoError(t, err)
			defer rc.Close()
			_, err = io.ReadAll(rc)
			require.ErrorIs(t, err, server.ErrCorrupt)
		})
	}
	recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: &server.MemoryStorage{}}
	_, _, err := recv.Open(context.Background(), "", "x")
	require.ErrorIs(t, err, server.ErrNotFound)
	_, _, err = recv.Open(context.Background(), scopeA, "")
	require.ErrorIs(t, err, server.ErrNotFound)
}

func TestUploadReceiverHTTP2(t *testing.T) {
	store := newRecording()
	recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: store}
	srv := httptest.NewUnstartedServer(recv)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	body := bytes.Repeat([]byte{1, 2, 3}, 50000)
	resp, data := do(t, srv.Client(), uploadRequest(t, srv.URL, tokenA, body))
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	rc, err := gen.ParseContentUploadReceipt(data)
	require.NoError(t, err)
	got, _ := readUpload(t, recv, scopeA, rc.Ref)
	require.Equal(t, body, got)

	// Without a declared length (an HTTP/2 body of unknown size).
	req := uploadRequest(t, srv.URL, tokenA, body)
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = -1
	resp, _ = do(t, srv.Client(), req)
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestUploadReceiverValidate(t *testing.T) {
	store := &server.MemoryStorage{}
	require.NoError(t, (&server.UploadReceiver{Authorize: bearerAuth, Storage: store}).Validate())
	for name, u := range map[string]*server.UploadReceiver{
		"nil":                 nil,
		"no authorize":        {Storage: store},
		"no storage":          {Authorize: bearerAuth},
		"negative limit":      {Authorize: bearerAuth, Storage: store, MaxBytes: -1},
		"challenge with CRLF": {Authorize: bearerAuth, Storage: store, Challenge: "Bearer\r\nSet-Cookie: x=y"},
	} {
		require.Error(t, u.Validate(), name)
	}
	// An invalid receiver fails closed.
	srv := httptest.NewServer(&server.UploadReceiver{Storage: store})
	defer srv.Close()
	resp, _ := do(t, srv.Client(), uploadRequest(t, srv.URL, tokenA, []byte("abc")))
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Zero(t, store.Len())
}

// patternReader yields n bytes cycling through block, without allocating.
type patternReader struct {
	block []byte
	off   int
	n     int64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	k := 0
	for k < len(b) {
		c := copy(b[k:], p.block[p.off:])
		k += c
		p.off = (p.off + c) % len(p.block)
	}
	p.n -= int64(k)
	return k, nil
}

// hashingStorage keeps only the size and digest of what it is given: a
// storage that writes bytes elsewhere, so that the receiver's own memory
// use can be measured.
type hashingStorage struct {
	mu   sync.Mutex
	seen map[string]server.UploadReceipt
}

type hashingStaged struct {
	s *hashingStorage
	h hash.Hash
	n int64
}

func (s *hashingStorage) Create(context.Context, string, int64) (server.Staged, error) {
	return &hashingStaged{s: s, h: sha256.New()}, nil
}

func (s *hashingStorage) Open(context.Context, string, string) (io.ReadCloser, server.UploadReceipt, error) {
	return nil, server.UploadReceipt{}, server.ErrNotFound
}

func (st *hashingStaged) Write(p []byte) (int, error) {
	st.n += int64(len(p))
	return st.h.Write(p)
}

func (st *hashingStaged) Commit(_ context.Context, rc server.UploadReceipt) error {
	if st.n != rc.Size || hex.EncodeToString(st.h.Sum(nil)) != rc.SHA256 {
		return errors.New("committed bytes differ from the receipt")
	}
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	if st.s.seen == nil {
		st.s.seen = map[string]server.UploadReceipt{}
	}
	st.s.seen[rc.Ref] = rc
	return nil
}

func (st *hashingStaged) Abort() error { return nil }

func TestUploadReceiverStreams(t *testing.T) {
	const size = 64 << 20
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(i*7 + i>>8)
	}
	h := sha256.New()
	_, err := io.Copy(h, &patternReader{block: block, n: size})
	require.NoError(t, err)
	digest := hex.EncodeToString(h.Sum(nil))

	store := &hashingStorage{}
	recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: store, MaxBytes: 128 << 20}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	client := srv.Client()

	req, err := http.NewRequest(http.MethodPost, srv.URL, &patternReader{block: block, n: size})
	require.NoError(t, err)
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("AHP-Content-SHA256", digest)
	req.Header.Set("Authorization", "Bearer "+tokenA)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, data := do(t, client, req)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	rc, err := gen.ParseContentUploadReceipt(data)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(size), rc.Size.String())
	require.Equal(t, digest, rc.SHA256)

	// Everything allocated during the exchange, on both sides, is an upper
	// bound of the heap's peak growth.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("64 MiB upload: %d bytes allocated in total (%.4f of the body)", allocated, float64(allocated)/size)
	require.Less(t, allocated, uint64(size/16))
}

// FuzzUploadReceiver drives the receiver with arbitrary framing headers
// and bodies: it answers 201 only to a well framed, matching upload, and
// commits nothing otherwise.
func FuzzUploadReceiver(f *testing.F) {
	f.Add("application/octet-stream", sum256([]byte("abc")), "3", []byte("abc"))
	f.Add("application/octet-stream", sum256(nil), "0", []byte{})
	f.Add("APPLICATION/octet-stream", strings.ToUpper(sum256([]byte("abc"))), "3", []byte("abc"))
	f.Add("application/octet-stream; x=y", sum256([]byte("abc")), "03", []byte("abc"))
	f.Add(" application/octet-stream\t", sum256([]byte("ab")), "+2", []byte("ab"))
	f.Fuzz(func(t *testing.T, ct, digest, length string, body []byte) {
		store := &server.MemoryStorage{}
		recv := &server.UploadReceiver{
			Authorize: func(*http.Request) (string, error) { return scopeA, nil },
			Storage:   store,
			MaxBytes:  1 << 16,
		}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = http.Header{"Content-Type": {ct}, "Content-Length": {length}, "Ahp-Content-Sha256": {digest}}
		req.ContentLength = int64(len(body))
		if n, err := strconv.ParseInt(length, 10, 64); err == nil {
			req.ContentLength = n // what net/http would have derived
		}
		w := httptest.NewRecorder()
		recv.ServeHTTP(w, req)

		trimmed := strings.Trim(length, " \t")
		n, perr := strconv.ParseInt(trimmed, 10, 64)
		ok := strings.EqualFold(strings.Trim(ct, " \t"), "application/octet-stream") &&
			digest == sum256(body) &&
			trimmed != "" && strings.Trim(trimmed, "0123456789") == "" && perr == nil && n == int64(len(body)) &&
			len(body) <= 1<<16
		require.Equal(t, ok, w.Code == http.StatusCreated, "status %d: ct %q digest %q length %q", w.Code, ct, digest, length)
		if w.Code == http.StatusCreated {
			rc, err := gen.ParseContentUploadReceipt(w.Body.Bytes())
			require.NoError(t, err)
			got, _ := readUpload(t, recv, scopeA, rc.Ref)
			require.Equal(t, body, got)
			return
		}
		require.Zero(t, store.Len(), "committed a refused upload (status %d)", w.Code)
		require.Zero(t, store.Staging())
		require.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}, w.Code)
	})
}

// discardStorage accepts and forgets every upload.
type discardStorage struct{}

type discardStaged struct{}

func (discardStorage) Create(context.Context, string, int64) (server.Staged, error) {
	return discardStaged{}, nil
}

func (discardStorage) Open(context.Context, string, string) (io.ReadCloser, server.UploadReceipt, error) {
	return nil, server.UploadReceipt{}, server.ErrNotFound
}

func (discardStaged) Write(p []byte) (int, error)                        { return len(p), nil }
func (discardStaged) Commit(context.Context, server.UploadReceipt) error { return nil }
func (discardStaged) Abort() error                                       { return nil }

// BenchmarkUploadReceive posts 4 MiB uploads to the receiver over loopback
// HTTP, beside a baseline handler that only hashes the body and compares
// the digest.
func BenchmarkUploadReceive(b *testing.B) {
	body := make([]byte, 4<<20)
	for i := range body {
		body[i] = byte(i * 31)
	}
	digest := sum256(body)
	baseline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		if _, err := io.Copy(h, r.Body); err != nil || hex.EncodeToString(h.Sum(nil)) != r.Header.Get("AHP-Content-SHA256") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"ref":"r","size":4194304,"sha256":"`+digest+`"}`)
	})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"baseline-hash", baseline},
		{"receiver-discard", &server.UploadReceiver{Authorize: bearerAuth, Storage: discardStorage{}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := httptest.NewServer(bc.h)
			defer srv.Close()
			client := srv.Client()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/octet-stream")
				req.Header.Set("AHP-Content-SHA256", digest)
				req.Header.Set("Authorization", "Bearer "+tokenA)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Fatal(resp.Status)
				}
			}
		})
	}
}
