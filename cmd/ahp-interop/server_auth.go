package main

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// serverAuth is the scripted server's endpoint authentication: what it
// checks on every AHP request before anything is dispatched.
type serverAuth struct {
	mode   string
	token  []byte         // bearer
	tokens *tokenVerifier // oauth, workload
	tls    *tls.Config    // mtls
}

// newServerAuth maps the configured auth label to what the server checks.
// Over stdio only none applies (process trust); every other label is
// inapplicable there (errUnsupported, exit status 3).
func newServerAuth(cfg *serverConfig) (*serverAuth, error) {
	a := cfg.Auth
	switch a.Mode {
	case authNone, authBearer, authOAuth, authMTLS, authWorkload:
	default:
		return nil, fmt.Errorf("%w: unknown auth mode", errUsage)
	}
	if a.Mode != authNone && cfg.Transport == transportStdio {
		return nil, fmt.Errorf("%w: stdio runs on process trust; auth %q is inapplicable", errUnsupported, a.Mode)
	}
	sa := &serverAuth{mode: a.Mode}
	var err error
	switch a.Mode {
	case authBearer:
		if a.Token == "" {
			return nil, fmt.Errorf("%w: bearer auth needs auth.token", errUsage)
		}
		sa.token = []byte(a.Token)
	case authOAuth:
		sa.tokens, err = newTokenVerifier(a, "")
	case authWorkload:
		sa.tokens, err = newTokenVerifier(a, purposeWorkload)
	case authMTLS:
		sa.tls, err = serverTLS(a)
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
func serverTLS(a authConfig) (*tls.Config, error) {
	pool, cert, err := loadTLSFiles(a)
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

// loadTLSFiles reads the mtls fixture: the CA pool and this side's key
// pair. Errors name the member, never a path or the files' contents.
func loadTLSFiles(a authConfig) (*x509.CertPool, tls.Certificate, error) {
	if a.CAFile == "" || a.CertFile == "" || a.KeyFile == "" {
		return nil, tls.Certificate{}, fmt.Errorf("%w: mtls auth needs caFile, certFile and keyFile", errUsage)
	}
	caPEM, err := os.ReadFile(a.CAFile)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.caFile unreadable", errUsage)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.caFile holds no PEM certificate", errUsage)
	}
	cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("%w: auth.certFile and auth.keyFile are not a usable key pair", errUsage)
	}
	return pool, cert, nil
}

// advertised is the manifest's authentication list for the mode. The
// schema admits only the portable bindings (bearer, oauth); mTLS and
// workload identity are deployment-specific (capability-auth.md,
// AHP-AUTH-001) and are explained in a gap instead.
func (sa *serverAuth) advertised() (list []string, gap string) {
	switch sa.mode {
	case authBearer:
		return []string{"bearer"}, ""
	case authOAuth:
		return []string{"oauth"}, ""
	case authWorkload:
		return []string{}, "workload identity is deployment-specific: a signed assertion presented as a bearer token"
	case authMTLS:
		return []string{}, "client certificates are deployment-specific TLS configuration"
	}
	return []string{}, ""
}

// bearerRealm is the challenge of the token modes.
const bearerRealm = `Bearer realm="ahp-interop"`

// authenticate enforces the configured endpoint authentication before next
// runs: a request with more than one Authorization field is refused (400)
// in every mode; bearer compares the static token in constant time; oauth
// and workload verify a signed token; mtls relies on the handshake's
// verified client certificate and refuses a request without one. A refusal
// never reaches the scripted path, and nothing about the presented value
// is logged.
func (sa *serverAuth) authenticate(s *scriptServer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := r.Header.Values("Authorization")
		if len(fields) > 1 {
			s.log.Warn("request refused", "reason", "duplicate Authorization fields")
			http.Error(w, "duplicate Authorization fields", http.StatusBadRequest)
			return
		}
		switch sa.mode {
		case authNone:
		case authMTLS:
			if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
				s.log.Warn("request refused", "reason", "no verified client certificate")
				http.Error(w, "client certificate required", http.StatusUnauthorized)
				return
			}
		default:
			token, ok := bearerToken(fields)
			if ok && sa.mode == authBearer {
				ok = subtle.ConstantTimeCompare([]byte(token), sa.token) == 1
			} else if ok {
				ok = sa.tokens.verify(token) == nil
			}
			if !ok {
				s.log.Warn("request refused", "reason", "missing or invalid bearer credential")
				if len(fields) == 0 {
					w.Header().Set("WWW-Authenticate", bearerRealm)
				} else {
					w.Header().Set("WWW-Authenticate", bearerRealm+`, error="invalid_token"`)
				}
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken returns the token of a single "Bearer TOKEN" field: scheme
// case-insensitive, one or more spaces, a non-empty token without spaces.
func bearerToken(fields []string) (string, bool) {
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
