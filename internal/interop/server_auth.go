package interop

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
)

// ServerAuth is the scripted server's endpoint authentication: what it
// checks on every AHP request before anything is dispatched.
type ServerAuth struct {
	// Mode is the configured auth label.
	Mode   string
	token  []byte         // bearer
	tokens *TokenVerifier // oauth, workload
	// TLS is the listener's TLS configuration (mtls only).
	TLS *tls.Config
}

// NewServerAuth maps the configured auth label to what the server checks.
// Over stdio only none applies (process trust); every other label is
// inapplicable there (ErrUnsupported, exit status 3). transport is
// TransportHTTP or TransportStdio.
func NewServerAuth(transport string, a AuthConfig) (*ServerAuth, error) {
	switch a.Mode {
	case AuthNone, AuthBearer, AuthOAuth, AuthMTLS, AuthWorkload:
	default:
		return nil, fmt.Errorf("%w: unknown auth mode", ErrUsage)
	}
	if a.Mode != AuthNone && transport == TransportStdio {
		return nil, fmt.Errorf("%w: stdio runs on process trust; auth %q is inapplicable", ErrUnsupported, a.Mode)
	}
	sa := &ServerAuth{Mode: a.Mode}
	var err error
	switch a.Mode {
	case AuthBearer:
		if a.Token == "" {
			return nil, fmt.Errorf("%w: bearer auth needs auth.token", ErrUsage)
		}
		sa.token = []byte(a.Token)
	case AuthOAuth:
		sa.tokens, err = NewTokenVerifier(a, "")
	case AuthWorkload:
		sa.tokens, err = NewTokenVerifier(a, PurposeWorkload)
	case AuthMTLS:
		sa.TLS, err = serverTLS(a)
	}
	if err != nil {
		return nil, err
	}
	return sa, nil
}

// serverTLS is the mtls server configuration: the server's own certificate
// from certFile and keyFile, and a client certificate required and
// verified against caFile alone (not the system roots) during the
// handshake, before any HTTP request exists.
func serverTLS(a AuthConfig) (*tls.Config, error) {
	pool, cert, err := LoadTLSFiles(a)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// LoadTLSFiles reads the mtls fixture: the CA pool and this side's key
// pair. Errors name the member, never a path or the files' contents.
func LoadTLSFiles(a AuthConfig) (*x509.CertPool, tls.Certificate, error) {
	if a.CAFile == "" || a.CertFile == "" || a.KeyFile == "" {
		return nil, tls.Certificate{}, fmt.Errorf("%w: mtls auth needs caFile, certFile and keyFile", ErrUsage)
	}
	caPEM, err := os.ReadFile(a.CAFile)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.caFile unreadable", ErrUsage)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.caFile holds no PEM certificate", ErrUsage)
	}
	cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.certFile and auth.keyFile are not a usable key pair", ErrUsage)
	}
	return pool, cert, nil
}

// Advertised is the manifest's authentication list for the mode. The
// schema admits only the portable bindings (bearer, oauth); mTLS and
// workload identity are deployment-specific (capability-auth.md,
// AHP-AUTH-001) and are explained in a gap instead.
func (sa *ServerAuth) Advertised() (list []string, gap string) {
	switch sa.Mode {
	case AuthBearer:
		return []string{"bearer"}, ""
	case AuthOAuth:
		return []string{"oauth"}, ""
	case AuthWorkload:
		return []string{}, "workload identity is deployment-specific: a signed assertion presented as a bearer token"
	case AuthMTLS:
		return []string{}, "client certificates are deployment-specific TLS configuration"
	}
	return []string{}, ""
}

// BearerRealm is the challenge of the token modes.
const BearerRealm = `Bearer realm="ahp-interop"`

// Authenticate enforces the configured endpoint authentication before next
// runs: a request with more than one Authorization field is refused (400)
// in every mode; bearer compares the static token in constant time; oauth
// and workload verify a signed token; mtls relies on the handshake's
// verified client certificate and refuses a request without one. A refusal
// never reaches the scripted path, and nothing about the presented value
// is logged.
func (sa *ServerAuth) Authenticate(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := r.Header.Values("Authorization")
		if len(fields) > 1 {
			log.Warn("request refused", "reason", "duplicate Authorization fields")
			http.Error(w, "duplicate Authorization fields", http.StatusBadRequest)
			return
		}
		switch sa.Mode {
		case AuthNone:
		case AuthMTLS:
			if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
				log.Warn("request refused", "reason", "no verified client certificate")
				http.Error(w, "client certificate required", http.StatusUnauthorized)
				return
			}
		default:
			token, ok := BearerToken(fields)
			if ok && sa.Mode == AuthBearer {
				ok = subtle.ConstantTimeCompare([]byte(token), sa.token) == 1
			} else if ok {
				ok = sa.tokens.Verify(token) == nil
			}
			if !ok {
				log.Warn("request refused", "reason", "missing or invalid bearer credential")
				if len(fields) == 0 {
					w.Header().Set("WWW-Authenticate", BearerRealm)
				} else {
					w.Header().Set("WWW-Authenticate", BearerRealm+`, error="invalid_token"`)
				}
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// BearerToken returns the token of a single "Bearer TOKEN" field: scheme
// case-insensitive, one or more spaces, a non-empty token without spaces.
func BearerToken(fields []string) (string, bool) {
	if len(fields) != 1 {
		return "", false
	}
	scheme, rest, ok := strings.Cut(fields[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}
