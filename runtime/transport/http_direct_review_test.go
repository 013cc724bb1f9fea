package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// alternatingProvider hands out no credential and a bearer token in turn.
type alternatingProvider struct{ n atomic.Int64 }

func (p *alternatingProvider) Credential(context.Context, auth.Request) (auth.Credential, error) {
	n := p.n.Add(1)
	if n%2 == 0 {
		return auth.Credential{}, nil
	}
	return auth.Bearer(fmt.Sprintf("tok-%d", n), "a"), nil
}

func (p *alternatingProvider) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return nil
}

// TestOwnedClientSharedHeaderMixedTokens: token-less requests of the owned
// client share one header; concurrent requests with and without a token on
// one transport never see each other's Authorization, and every request
// carries exactly one value of each header it sends (run with -race: the
// shared header is only read).
func TestOwnedClientSharedHeaderMixedTokens(t *testing.T) {
	var mu sync.Mutex
	var withToken, without int
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		switch a := r.Header.Values("Authorization"); {
		case len(a) == 0:
			without++
		case len(a) == 1 && len(a[0]) > len("Bearer tok-") && a[0][:len("Bearer tok-")] == "Bearer tok-":
			withToken++
		default:
			bad = append(bad, fmt.Sprint(a))
		}
		if len(r.Header.Values("Content-Type")) != 1 || len(r.Header.Values("Accept")) != 0 {
			bad = append(bad, fmt.Sprint(r.Header))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{}}`))
	}))
	defer srv.Close()
	tr := transport.NewHTTP(srv.URL, transport.HTTPOptions{Credentials: &alternatingProvider{}})
	defer tr.Close()
	const callers, rounds = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, callers*rounds)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				_, err := tr.Exchange(context.Background(), req("1"))
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Empty(t, bad)
	require.Equal(t, callers*rounds/2, withToken)
	require.Equal(t, callers*rounds/2, without)
}
