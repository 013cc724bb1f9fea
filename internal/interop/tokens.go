package interop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

// PurposeWorkload is the purpose claim a workload assertion carries when
// the configuration names none.
const PurposeWorkload = "workload"

// maxTokenBytes bounds a bearer token the server is willing to parse.
const maxTokenBytes = 16 << 10

// ErrTokenRejected is every verification failure of a signed token. Its
// text is fixed: which check failed is never reported to the peer, and the
// token never appears.
var ErrTokenRejected = errors.New("signed token rejected")

// TokenVerifier checks the signed bearer tokens of the oauth and workload
// modes (CONTRACT.md: a local HS256 JWT checked for signature, issuer,
// audience, purpose and expiry against a fixed fixture clock).
type TokenVerifier struct {
	key      []byte
	issuer   string
	audience string
	purpose  string
	now      func() time.Time
	parser   *jwt.Parser
}

// purposeClaims is the claim set of an interop token: the registered
// claims plus the purpose.
type purposeClaims struct {
	Purpose string `json:"purpose"`
	jwt.RegisteredClaims
}

// NewTokenVerifier builds the verifier of a mode's auth object. The
// signing key is the UTF-8 bytes of signingKey; clock, when present, is the
// fixed time in Unix seconds against which exp (and nbf, iat) are checked.
func NewTokenVerifier(a AuthConfig, defaultPurpose string) (*TokenVerifier, error) {
	if a.SigningKey == "" || a.Issuer == "" || a.Audience == "" {
		return nil, fmt.Errorf("%w: auth %q needs signingKey, issuer and audience", ErrUsage, a.Mode)
	}
	purpose := a.Purpose
	if purpose == "" {
		purpose = defaultPurpose
	}
	if purpose == "" {
		return nil, fmt.Errorf("%w: auth %q needs purpose", ErrUsage, a.Mode)
	}
	now, err := fixtureClock(a.Clock)
	if err != nil {
		return nil, err
	}
	v := &TokenVerifier{key: []byte(a.SigningKey), issuer: a.Issuer, audience: a.Audience, purpose: purpose, now: now}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(a.Issuer),
		jwt.WithAudience(a.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(now),
		jwt.WithStrictDecoding(),
	)
	return v, nil
}

// fixtureClock returns the clock of the signed-token checks: the fixed
// Unix time clock (an integer, or a decimal that is truncated), or the
// system clock when clock is empty.
func fixtureClock(clock json.Number) (func() time.Time, error) {
	if clock == "" {
		return time.Now, nil
	}
	var at time.Time
	if n, err := strconv.ParseInt(string(clock), 10, 64); err == nil {
		at = time.Unix(n, 0)
	} else if f, err := strconv.ParseFloat(string(clock), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) < 1<<53 {
		at = time.Unix(int64(f), 0)
	} else {
		return nil, fmt.Errorf("%w: auth.clock must be Unix seconds", ErrUsage)
	}
	return func() time.Time { return at }, nil
}

// Verify checks token: a compact JWS whose protected header is exactly
// {"alg":"HS256","typ":"JWT"} (no other member, none repeated), signed
// with the key, with the configured issuer, audience and purpose, an exp
// after the clock, and no nbf or iat after it.
func (v *TokenVerifier) Verify(token string) error {
	if len(token) > maxTokenBytes {
		return ErrTokenRejected
	}
	head, rest, ok := strings.Cut(token, ".")
	if !ok || !exactHS256Header(head) {
		return ErrTokenRejected
	}
	if payload, _, ok := strings.Cut(rest, "."); !ok || !exactClaimNames(payload) {
		return ErrTokenRejected
	}
	var claims purposeClaims
	if _, err := v.parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return v.key, nil }); err != nil {
		return ErrTokenRejected // the library's text may quote claims
	}
	if claims.Purpose != v.purpose {
		return ErrTokenRejected
	}
	return nil
}

// checkedClaims are the claims verify reads. encoding/json matches member
// names case-insensitively and keeps the last of repeated members, so the
// payload is checked first: a claim spelled in another case ("EXP") or
// repeated would otherwise override the one the checks see.
var checkedClaims = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "purpose"}

// exactClaimNames reports whether the base64url segment seg is a JSON
// object with no repeated member name, no member whose name equals a
// checked claim only when case is ignored, and numeric exp, nbf and iat.
func exactClaimNames(seg string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil || len(raw) > maxTokenBytes || validate.UniqueMembers(raw) != nil {
		return false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return false
	}
	for name, value := range members {
		for _, c := range checkedClaims {
			if name != c && strings.EqualFold(name, c) {
				return false
			}
		}
		switch name {
		case "exp", "nbf", "iat":
			if len(value) == 0 || (value[0] != '-' && (value[0] < '0' || value[0] > '9')) {
				return false
			}
		}
	}
	return true
}

// exactHS256Header reports whether the base64url segment seg is a JSON
// object with exactly the members alg "HS256" and typ "JWT", each once.
func exactHS256Header(seg string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil || len(raw) > 256 {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		name, _ := k.(string)
		val, err := dec.Token()
		if err != nil {
			return false
		}
		s, isString := val.(string)
		if seen[name] || !isString {
			return false
		}
		seen[name] = true
		switch {
		case name == "alg" && s == "HS256", name == "typ" && s == "JWT":
		default:
			return false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return seen["alg"] && seen["typ"]
}
