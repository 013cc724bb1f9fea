package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/content"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
	"github.com/agenthooks/agenthooks-go/server"
)

// TestUploadReceiverWithSDKUploader uploads through the harness side's
// uploader (runtime/content), which verifies the receipt, and resolves the
// reference on the backend side.
func TestUploadReceiverWithSDKUploader(t *testing.T) {
	store := &server.MemoryStorage{}
	recv := &server.UploadReceiver{Authorize: bearerAuth, Storage: store}
	srv := httptest.NewServer(recv)
	defer srv.Close()

	env := map[string]string{"UPLOAD_TOKEN": tokenA, "OUTSIDER_TOKEN": tokenOutsider, "WRONG_TOKEN": "not-a-token"}
	up, err := content.NewUploader(content.UploaderConfig{
		HTTPClient:        srv.Client(),
		AllowLoopbackHTTP: true, // a plain http loopback test receiver
		Credentials:       transport.EnvCredentials{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }},
	})
	require.NoError(t, err)
	dest := func(tokenEnv string) content.Destination {
		return content.Destination{BackendID: "guard", Upload: gen.ContentUpload{
			Endpoint:  srv.URL + "/upload?tenant=1",
			TimeoutMs: "5000",
			MaxBytes:  "1048576",
			Auth:      &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: &tokenEnv}},
		}}
	}

	for _, body := range [][]byte{{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0}, {}} {
		a, err := content.FromBytes("image/png", body)
		require.NoError(t, err)
		conf, err := up.Upload(context.Background(), a, dest("UPLOAD_TOKEN"))
		require.NoError(t, err)
		require.NoError(t, a.Close())

		rc, receipt, err := recv.Open(context.Background(), scopeA, conf.Reference.Ref)
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.True(t, bytes.Equal(body, got))
		require.Equal(t, conf.Receipt.SHA256, receipt.SHA256)
		_, _, err = recv.Open(context.Background(), scopeB, conf.Reference.Ref)
		require.ErrorIs(t, err, server.ErrNotFound)
	}

	for tokenEnv, want := range map[string]int{"WRONG_TOKEN": http.StatusUnauthorized, "OUTSIDER_TOKEN": http.StatusForbidden} {
		a, err := content.FromBytes("image/png", []byte{1, 2, 3})
		require.NoError(t, err)
		_, err = up.Upload(context.Background(), a, dest(tokenEnv))
		var se *content.StatusError
		require.True(t, errors.As(err, &se), "%v", err)
		require.Equal(t, want, se.Code)
		require.NoError(t, a.Close())
	}
	require.Equal(t, 2, store.Len())
	up.CloseIdleConnections()
}
