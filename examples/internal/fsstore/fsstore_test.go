package fsstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agenthooks/agenthooks-go/examples/internal/fsstore"
	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sum256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// scopeOf maps the bearer token to the scope of the same name.
func scopeOf(r *http.Request) (string, error) {
	tok, ok := bytes.CutPrefix([]byte(r.Header.Get("Authorization")), []byte("Bearer "))
	if !ok || len(tok) == 0 {
		return "", server.ErrUnauthenticated
	}
	return string(tok), nil
}

func upload(t *testing.T, url, token string, body []byte) (int, *gen.ContentUploadReceipt) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("AHP-Content-SHA256", sum256(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusCreated {
		return resp.StatusCode, nil
	}
	rc, err := gen.ParseContentUploadReceipt(data)
	require.NoError(t, err)
	return resp.StatusCode, rc
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestStoreWithReceiver(t *testing.T) {
	root := t.TempDir()
	store, err := fsstore.New(root)
	require.NoError(t, err)
	recv := &server.UploadReceiver{Authorize: scopeOf, Storage: store}
	require.NoError(t, recv.Validate())
	srv := httptest.NewServer(recv)
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()

	body := []byte{0, 1, 2, 0xff, '\n', 'x'}
	status, rc := upload(t, srv.URL, "alice", body)
	require.Equal(t, http.StatusCreated, status)
	status, again := upload(t, srv.URL, "alice", body)
	require.Equal(t, http.StatusCreated, status)
	require.NotEqual(t, rc.Ref, again.Ref)
	status, empty := upload(t, srv.URL, "alice", nil)
	require.Equal(t, http.StatusCreated, status)

	for _, c := range []struct {
		rc   *gen.ContentUploadReceipt
		want []byte
	}{{rc, body}, {again, body}, {empty, nil}} {
		r, receipt, err := recv.Open(context.Background(), "alice", c.rc.Ref)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.Equal(t, string(c.want), string(got))
		require.Equal(t, c.rc.SHA256, receipt.SHA256)
		require.Equal(t, c.rc.Size.String(), strconv.FormatInt(receipt.Size, 10))
	}

	// Other scopes and foreign names see nothing.
	for _, ref := range []string{rc.Ref, "../" + rc.Ref, rc.Ref + ".data", "", "x/y"} {
		_, _, err := recv.Open(context.Background(), "bob", ref)
		require.ErrorIs(t, err, server.ErrNotFound, ref)
	}
	for _, ref := range []string{"../scopes", rc.Ref + ".json", "nonexistent"} {
		_, _, err := recv.Open(context.Background(), "alice", ref)
		require.ErrorIs(t, err, server.ErrNotFound, ref)
	}

	// A mismatched upload leaves nothing behind.
	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("AHP-Content-SHA256", sum256([]byte("other")))
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	require.Empty(t, entries(t, filepath.Join(root, "staging")))
	scopes := entries(t, filepath.Join(root, "scopes"))
	require.Len(t, scopes, 1)
	require.Len(t, entries(t, filepath.Join(root, "scopes", scopes[0])), 6, "three uploads, two files each")
	info, err := os.Stat(filepath.Join(root, "scopes", scopes[0], rc.Ref+".data"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestStoreNeverRebinds(t *testing.T) {
	store, err := fsstore.New(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	put := func(ref string, data []byte) error {
		st, err := store.Create(ctx, "scope", int64(len(data)))
		require.NoError(t, err)
		_, err = st.Write(data)
		require.NoError(t, err)
		err = st.Commit(ctx, server.UploadReceipt{Ref: ref, Size: int64(len(data)), SHA256: sum256(data)})
		if err != nil {
			require.NoError(t, st.Abort())
		}
		return err
	}
	require.NoError(t, put("REF1", []byte("first")))
	require.Error(t, put("REF1", []byte("second")), "a bound reference is not replaced")
	require.Error(t, put("../escape", []byte("x")))
	r, receipt, err := store.Open(ctx, "scope", "REF1")
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, "first", string(got))
	require.Equal(t, sum256([]byte("first")), receipt.SHA256)

	// Nothing of an aborted upload is visible, before or after.
	st, err := store.Create(ctx, "scope", 3)
	require.NoError(t, err)
	_, err = st.Write([]byte("abc"))
	require.NoError(t, err)
	require.NoError(t, st.Abort())
	require.Error(t, st.Commit(ctx, server.UploadReceipt{Ref: "REF2", Size: 3, SHA256: sum256([]byte("abc"))}))
	_, _, err = store.Open(ctx, "scope", "REF2")
	require.True(t, errors.Is(err, server.ErrNotFound))
}
