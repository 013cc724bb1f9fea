package transport_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// TestOwnedClientRequests: the owned client (which sends straight to its
// transport, sharing one read-only header among token-less requests) sends
// what the http.Client path sends: POST, the JSON media types, the body
// with its length, the bearer token when there is one and the basic
// credentials of a URL's user information; it does not follow redirects;
// concurrent requests do not disturb each other's headers.
func TestOwnedClientRequests(t *testing.T) {
	type seen struct {
		method, ctype, accept, auth, body string
		length                            int64
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/", http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Authorization"), string(b), r.ContentLength})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{}}`))
	}))
	defer srv.Close()
	ctx := context.Background()

	plain := transport.NewHTTP(srv.URL, transport.HTTPOptions{})
	defer plain.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := plain.Exchange(ctx, req("1"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	body := string(req("1").Body)
	require.Len(t, got, 8)
	for _, s := range got {
		require.Equal(t, seen{http.MethodPost, "application/json", "", "", body, int64(len(body))}, s)
	}

	got = nil
	bearer := transport.NewHTTP(srv.URL, transport.HTTPOptions{Credentials: &hostProvider{tokens: []string{"tok-123"}}})
	defer bearer.Close()
	_, err := bearer.Exchange(ctx, req("1"))
	require.NoError(t, err)
	require.Equal(t, "Bearer tok-123", got[0].auth)

	got = nil
	user := transport.NewHTTP(strings.Replace(srv.URL, "http://", "http://alice:pw@", 1), transport.HTTPOptions{})
	defer user.Close()
	_, err = user.Exchange(ctx, req("1"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got[0].auth, "Basic "), "the user information of the URL is sent as the client sends it")

	redirect := transport.NewHTTP(srv.URL+"/redirect", transport.HTTPOptions{})
	defer redirect.Close()
	_, err = redirect.Exchange(ctx, req("1"))
	requireStatus(t, err, http.StatusTemporaryRedirect)
}
