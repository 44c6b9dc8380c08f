package auth

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): an authentication scheme and its parameters.
type Challenge struct {
	// Scheme is the authentication scheme in lower case ("bearer", "dpop").
	Scheme string
	// Params holds the auth-params, names in lower case. When a name
	// repeats, the first value is kept.
	Params map[string]string
}

// Scopes returns the challenge's scope parameter split on spaces.
func (c Challenge) Scopes() []string { return strings.Fields(c.Params["scope"]) }

// ParseChallenges parses the WWW-Authenticate header values of a response.
// Malformed parts are skipped; it never fails.
func ParseChallenges(h http.Header) []Challenge {
	var out []Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		out = append(out, parseChallenges(v)...)
	}
	return out
}

// maxChallenges bounds the number of challenges kept from one response.
const maxChallenges = 16

func parseChallenges(s string) []Challenge {
	p := &challengeParser{s: s}
	var out []Challenge
	for len(out) < maxChallenges {
		p.skip(" \t,")
		if p.i >= len(p.s) {
			break
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		ch := Challenge{Scheme: strings.ToLower(scheme), Params: map[string]string{}}
		p.params(ch.Params)
		out = append(out, ch)
	}
	return out
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

func (p *challengeParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// params reads the auth-params of one challenge, stopping before the
// scheme of the next challenge. A token68 credential is left for the caller,
// which reads it as a scheme of its own (harmless: only Bearer and DPoP
// challenges are acted on).
func (p *challengeParser) params(into map[string]string) {
	for {
		p.skip(" \t")
		start := p.i
		name := p.token()
		p.skip(" \t")
		if name == "" || p.i >= len(p.s) || p.s[p.i] != '=' {
			p.i = start
			if name == "" {
				// Junk: drop it up to the next comma.
				for p.i < len(p.s) && p.s[p.i] != ',' {
					p.i++
				}
			}
			return
		}
		p.i++ // '='
		p.skip(" \t")
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			val = p.quoted()
		} else {
			val = p.token()
		}
		key := strings.ToLower(name)
		if _, dup := into[key]; !dup && len(into) < 32 {
			into[key] = val
		}
		// Anything up to the next comma is junk.
		for p.i < len(p.s) && p.s[p.i] != ',' {
			p.i++
		}
		if p.i >= len(p.s) {
			return
		}
		p.skip(" \t,")
	}
}

func (p *challengeParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '\\':
			if p.i+1 < len(p.s) {
				b.WriteByte(p.s[p.i+1])
				p.i += 2
				continue
			}
			p.i++
		case '"':
			p.i++
			return b.String()
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String()
}

// authChallenge picks the challenge the transport acts on: a Bearer or
// DPoP challenge, preferring one that carries resource_metadata.
func authChallenge(chs []Challenge) (Challenge, bool) {
	var found Challenge
	ok := false
	for _, c := range chs {
		if c.Scheme != "bearer" && c.Scheme != "dpop" {
			continue
		}
		if !ok || (found.Params["resource_metadata"] == "" && c.Params["resource_metadata"] != "") {
			found, ok = c, true
		}
	}
	return found, ok
}
