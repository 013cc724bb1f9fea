package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Bounds of ParseWWWAuthenticate. A header beyond them is refused whole:
// it is not a challenge the harness acts on.
const (
	// MaxChallengeBytes bounds the WWW-Authenticate field values of one
	// response, all field lines together.
	MaxChallengeBytes = 16 << 10
	// MaxChallenges bounds the challenges of one response.
	MaxChallenges = 32
	// MaxChallengeParams bounds the auth-params of one challenge.
	MaxChallengeParams = 32
)

// Errors of ParseWWWAuthenticate.
var (
	// ErrChallengeSyntax reports a WWW-Authenticate value that does not
	// follow RFC 9110 section 11 (auth-scheme, then a token68 or a list of
	// auth-params), or one that repeats a parameter name in a challenge.
	ErrChallengeSyntax = errors.New("auth: malformed WWW-Authenticate")
	// ErrChallengeLimit reports a WWW-Authenticate header beyond
	// MaxChallengeBytes, MaxChallenges or MaxChallengeParams.
	ErrChallengeLimit = errors.New("auth: WWW-Authenticate beyond the parser's bounds")
)

// Param is one auth-param of a challenge. Value is unquoted: a
// quoted-string's escapes are resolved.
type Param struct {
	// Name is the parameter name as sent; names compare case-insensitively.
	Name string
	// Value is the parameter value, a token or an unescaped quoted-string.
	Value string
}

// SchemeChallenge is one challenge of a WWW-Authenticate header: an
// auth-scheme with either a token68 or a list of auth-params (RFC 9110
// section 11.2; RFC 6750 section 3 for Bearer).
type SchemeChallenge struct {
	// Scheme is the auth-scheme as sent (for example "Bearer"); schemes
	// compare case-insensitively.
	Scheme string
	// Token68 is the challenge's token68, when it has one instead of
	// parameters.
	Token68 string
	// Params are the challenge's auth-params in the order sent; names are
	// unique (case-insensitively).
	Params []Param
}

// IsBearer reports whether the challenge's scheme is Bearer.
func (c SchemeChallenge) IsBearer() bool { return strings.EqualFold(c.Scheme, "Bearer") }

// Param returns the value of the named parameter (compared
// case-insensitively) and whether it is present.
func (c SchemeChallenge) Param(name string) (string, bool) {
	for _, p := range c.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value, true
		}
	}
	return "", false
}

// String renders the challenge in the canonical form of RFC 9110: the
// scheme, then the token68 or the parameters with every value as a
// quoted-string. ParseWWWAuthenticate reads it back as the same challenge.
func (c SchemeChallenge) String() string {
	var b strings.Builder
	b.WriteString(c.Scheme)
	if c.Token68 != "" {
		b.WriteByte(' ')
		b.WriteString(c.Token68)
		return b.String()
	}
	for i, p := range c.Params {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		b.WriteString(`="`)
		for j := 0; j < len(p.Value); j++ {
			if ch := p.Value[j]; ch == '"' || ch == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(p.Value[j])
		}
		b.WriteByte('"')
	}
	return b.String()
}

// BearerChallenge returns the first Bearer challenge of h's
// WWW-Authenticate fields, and whether there is one. A header that
// ParseWWWAuthenticate refuses has none.
func BearerChallenge(h http.Header) (SchemeChallenge, bool) {
	cs, err := ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return SchemeChallenge{}, false
	}
	for _, c := range cs {
		if c.IsBearer() {
			return c, true
		}
	}
	return SchemeChallenge{}, false
}

// ParseWWWAuthenticate parses the WWW-Authenticate field values of one
// response (several field lines form one comma-separated list, RFC 9110
// section 5.3) into their challenges:
//
//	challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param = token BWS "=" BWS ( token / quoted-string )
//
// Empty list elements are ignored. It reads each byte once, in time linear
// in the input; the input is refused before any parsing when it exceeds
// MaxChallengeBytes, and parsing stops at MaxChallenges challenges or
// MaxChallengeParams parameters of one challenge (ErrChallengeLimit). A
// parameter name repeated within a challenge is an error. Errors carry a
// byte offset, never the input. No values refers to no challenge.
func ParseWWWAuthenticate(values []string) ([]SchemeChallenge, error) {
	n := 0
	for _, v := range values {
		n += len(v) + 2
		if n > MaxChallengeBytes+2 {
			return nil, ErrChallengeLimit
		}
	}
	s := strings.Join(values, ", ")
	p := parser{s: s}
	return p.parse()
}

type parser struct {
	s   string
	i   int
	out []SchemeChallenge
}

func (p *parser) fail() error { return fmt.Errorf("%w at byte %d", ErrChallengeSyntax, p.i) }

func (p *parser) parse() ([]SchemeChallenge, error) {
	s := p.s
	for {
		p.skipListSeparators()
		if p.i == len(s) {
			return p.out, nil
		}
		start := p.i
		end := scanToken(s, start)
		if end == start {
			return nil, p.fail()
		}
		after := skipOWS(s, end)
		if after < len(s) && s[after] == '=' {
			// token BWS "=": a parameter of the current challenge, which
			// must exist and must not have a token68.
			if len(p.out) == 0 || p.out[len(p.out)-1].Token68 != "" {
				return nil, p.fail()
			}
			if err := p.param(start, end, after); err != nil {
				return nil, err
			}
			continue
		}
		// A new challenge.
		if len(p.out) == MaxChallenges {
			return nil, ErrChallengeLimit
		}
		p.out = append(p.out, SchemeChallenge{Scheme: s[start:end]})
		p.i = end
		if p.i == len(s) || s[p.i] == ',' {
			continue
		}
		if !isOWS(s[p.i]) {
			return nil, p.fail()
		}
		p.i = skipOWS(s, p.i)
		if p.i == len(s) || s[p.i] == ',' {
			continue
		}
		// A token68, or the first auth-param.
		t := p.i
		for t < len(s) && isToken68(s[t]) {
			t++
		}
		e := t
		for e < len(s) && s[e] == '=' {
			e++
		}
		if f := skipOWS(s, e); t > p.i && (f == len(s) || s[f] == ',') {
			p.out[len(p.out)-1].Token68 = s[p.i:e]
			p.i = f
			continue
		}
		start = p.i
		end = scanToken(s, start)
		if end == start {
			return nil, p.fail()
		}
		after = skipOWS(s, end)
		if after == len(s) || s[after] != '=' {
			return nil, p.fail()
		}
		if err := p.param(start, end, after); err != nil {
			return nil, err
		}
	}
}

// param reads an auth-param whose name is s[start:end] and whose "=" is at
// eq into the last challenge, up to the end of its list element.
func (p *parser) param(start, end, eq int) error {
	s := p.s
	c := &p.out[len(p.out)-1]
	name := s[start:end]
	for _, q := range c.Params {
		if strings.EqualFold(q.Name, name) {
			p.i = start
			return p.fail()
		}
	}
	if len(c.Params) == MaxChallengeParams {
		return ErrChallengeLimit
	}
	p.i = skipOWS(s, eq+1)
	var value string
	if p.i < len(s) && s[p.i] == '"' {
		v, err := p.quoted()
		if err != nil {
			return err
		}
		value = v
	} else {
		e := scanToken(s, p.i)
		if e == p.i {
			return p.fail()
		}
		value, p.i = s[p.i:e], e
	}
	p.i = skipOWS(s, p.i)
	if p.i < len(s) && s[p.i] != ',' {
		return p.fail()
	}
	c.Params = append(c.Params, Param{Name: name, Value: value})
	return nil
}

// quoted reads the quoted-string at p.i and returns its unescaped content.
func (p *parser) quoted() (string, error) {
	s := p.s
	i := p.i + 1
	first := i
	var b []byte // nil until the first escape
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			if b == nil {
				return s[first:i], nil
			}
			return string(b), nil
		case c == '\\':
			if i+1 == len(s) || !isQuotedPair(s[i+1]) {
				p.i = i
				return "", p.fail()
			}
			if b == nil {
				// Grows with the content, never sized by the input.
				b = append(make([]byte, 0, i-first+8), s[first:i]...)
			}
			b = append(b, s[i+1])
			i += 2
		case isQDText(c):
			if b != nil {
				b = append(b, c)
			}
			i++
		default:
			p.i = i
			return "", p.fail()
		}
	}
	p.i = i
	return "", p.fail() // unterminated
}

// skipListSeparators skips OWS and commas: empty list elements.
func (p *parser) skipListSeparators() {
	for p.i < len(p.s) && (isOWS(p.s[p.i]) || p.s[p.i] == ',') {
		p.i++
	}
}

func skipOWS(s string, i int) int {
	for i < len(s) && isOWS(s[i]) {
		i++
	}
	return i
}

func scanToken(s string, i int) int {
	for i < len(s) && isTChar(s[i]) {
		i++
	}
	return i
}

// Character classes of RFC 9110 (and token68), one table lookup each.
const (
	classOWS    = 1 << iota // SP, HTAB
	classTChar              // tchar, section 5.6.2
	classT68                // token68 before its trailing "="
	classQDText             // qdtext, section 5.6.4
	classPair               // the escaped octet of a quoted-pair
)

// classes is a constant table: it is computed once and never written.
var classes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if b == ' ' || b == '\t' {
			t[c] |= classOWS
		}
		if alnum || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0 {
			t[c] |= classTChar
		}
		if alnum || strings.IndexByte("-._~+/", b) >= 0 {
			t[c] |= classT68
		}
		if b == '\t' || b == ' ' || b == 0x21 || (0x23 <= b && b <= 0x5b) || (0x5d <= b && b <= 0x7e) || b >= 0x80 {
			t[c] |= classQDText
		}
		if b == '\t' || b == ' ' || (0x21 <= b && b <= 0x7e) || b >= 0x80 {
			t[c] |= classPair
		}
	}
	return t
}()

func isOWS(c byte) bool        { return classes[c]&classOWS != 0 }
func isTChar(c byte) bool      { return classes[c]&classTChar != 0 }
func isToken68(c byte) bool    { return classes[c]&classT68 != 0 }
func isQDText(c byte) bool     { return classes[c]&classQDText != 0 }
func isQuotedPair(c byte) bool { return classes[c]&classPair != 0 }
