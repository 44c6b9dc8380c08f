// Package oauth verifies OAuth 2.1 access tokens for MCP servers that are
// protected resources (mcp.AuthOptions). Its JWTVerifier checks JWT access
// tokens (RFC 9068) against the signing keys an authorization server
// publishes as a JWK Set: signature, issuer, audience, validity period and
// scopes.
//
// It uses github.com/golang-jwt/jwt/v5 for JWS parsing and signature
// verification; fetching, caching and refreshing the key set is done here
// with net/http.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpkit/mcpkit/mcp"
)

// JWTOptions configure a JWTVerifier.
type JWTOptions struct {
	// Issuer is the issuer identifier of the authorization server; a
	// token's "iss" must equal it. Required.
	Issuer string
	// Audience is the canonical URI of the MCP server (the same value as
	// mcp.AuthOptions.Resource); a token's "aud" must contain it.
	// Required: a token issued for another resource is never accepted.
	// Scheme and host compare case-insensitively, and a lone trailing
	// slash is ignored.
	Audience string
	// JWKSURL is where the authorization server publishes its signing
	// keys. When empty it is discovered from the issuer's authorization
	// server metadata (RFC 8414) or OpenID Connect discovery document.
	JWKSURL string
	// Algorithms are the accepted signature algorithms. Default: RS256,
	// RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512 and EdDSA.
	// Symmetric (HS*) algorithms and "none" are refused.
	Algorithms []string
	// Leeway is the clock skew allowed when checking "exp", "nbf" and
	// "iat". Default 30 seconds; a negative value allows none.
	Leeway time.Duration
	// HTTPClient fetches metadata and keys. Default: a client with a
	// 10-second timeout.
	HTTPClient *http.Client
	// RefreshInterval is how long a fetched key set is used before it is
	// fetched again in the background. Default one hour.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two fetches caused by
	// tokens that name an unknown key. Default one minute.
	MinRefreshInterval time.Duration
	// TokenTypes are the accepted values of the JOSE "typ" header,
	// compared without regard to case; the empty string admits a token
	// without "typ". A token of any other type is refused. Default
	// CompatibleTokenTypes, which admits the "JWT" (or absent) type that
	// many authorization servers still put on access tokens: the audience,
	// issuer and expiry checks keep ID tokens out. StrictTokenTypes is
	// RFC 9068's rule.
	TokenTypes []string
}

// CompatibleTokenTypes are the JWT "typ" values a JWTVerifier accepts by
// default: RFC 9068's access token type in both spellings, "JWT", and no
// "typ" at all.
var CompatibleTokenTypes = []string{"at+jwt", "application/at+jwt", "JWT", ""}

// StrictTokenTypes are the "typ" values RFC 9068 allows for JWT access
// tokens; set JWTOptions.TokenTypes to it to refuse every other token.
var StrictTokenTypes = []string{"at+jwt", "application/at+jwt"}

// JWTVerifier is an mcp.TokenVerifier for JWT access tokens signed with
// keys from a JWK Set. It is safe for concurrent use.
type JWTVerifier struct {
	issuer   string
	audience string
	types    []string
	parser   *jwt.Parser
	keys     *keySource
}

// DefaultAlgorithms are the signature algorithms a JWTVerifier accepts by
// default.
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// maxTokenBytes bounds the size of a token this package parses.
const maxTokenBytes = 16 << 10

// NewJWTVerifier returns a verifier configured by opts, which it copies.
// It fetches nothing yet: the key set is fetched on first use, or by
// Refresh. Issuer and Audience are required, so a nil opts is an error.
func NewJWTVerifier(o *JWTOptions) (*JWTVerifier, error) {
	var opts JWTOptions
	if o != nil {
		opts = *o
	}
	if opts.Issuer == "" {
		return nil, errors.New("oauth: JWTOptions.Issuer is required")
	}
	if err := checkEndpoint(opts.Issuer); err != nil {
		return nil, fmt.Errorf("oauth: JWTOptions.Issuer: %w", err)
	}
	if opts.Audience == "" {
		return nil, errors.New("oauth: JWTOptions.Audience is required (the canonical URI of this MCP server)")
	}
	if opts.JWKSURL != "" {
		if err := checkEndpoint(opts.JWKSURL); err != nil {
			return nil, fmt.Errorf("oauth: JWTOptions.JWKSURL: %w", err)
		}
	}
	algs := opts.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	for _, a := range algs {
		if !contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("oauth: algorithm %q is not supported; use asymmetric algorithms from DefaultAlgorithms", a)
		}
	}
	leeway := opts.Leeway
	switch {
	case leeway == 0:
		leeway = 30 * time.Second
	case leeway < 0:
		leeway = 0
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	v := &JWTVerifier{
		issuer:   opts.Issuer,
		audience: canonicalResource(opts.Audience),
		types:    append([]string(nil), cmpOr(opts.TokenTypes, CompatibleTokenTypes)...),
		parser: jwt.NewParser(
			jwt.WithValidMethods(algs),
			jwt.WithIssuer(opts.Issuer),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
			jwt.WithStrictDecoding(),
		),
		keys: &keySource{
			client:     client,
			issuer:     opts.Issuer,
			url:        opts.JWKSURL,
			refresh:    positive(opts.RefreshInterval, time.Hour),
			minRefresh: positive(opts.MinRefreshInterval, time.Minute),
		},
	}
	return v, nil
}

func cmpOr(a, def []string) []string {
	if len(a) > 0 {
		return a
	}
	return def
}

// checkHeader applies the JOSE header rules the JWT library leaves to its
// caller: "crit" (RFC 7515 section 4.1.11) names extensions the recipient
// must understand, and this verifier understands none, so any "crit" is
// refused; "typ" must be one of the accepted token types.
func (v *JWTVerifier) checkHeader(h map[string]any) error {
	if _, ok := h["crit"]; ok {
		return fmt.Errorf("the token's crit header names extensions this verifier does not understand (%v)", h["crit"])
	}
	typ, present := h["typ"]
	s, ok := typ.(string)
	if present && !ok {
		return errors.New("the token's typ header is not a string")
	}
	for _, t := range v.types {
		if strings.EqualFold(t, s) {
			return nil
		}
	}
	if !present {
		return errors.New("the token has no typ header, and untyped tokens are not accepted")
	}
	return fmt.Errorf("the token's type %q is not an accepted access token type", s)
}

func positive(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Refresh fetches the key set now (discovering its URL first when needed).
// Servers may call it at startup to find configuration problems early;
// verification works without it.
func (v *JWTVerifier) Refresh(ctx context.Context) error {
	k := v.keys
	k.mu.Lock()
	if k.inflight == nil {
		k.startLocked()
	}
	f := k.inflight
	k.mu.Unlock()
	if _, err := f.wait(ctx); err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	return nil
}

// VerifyToken implements mcp.TokenVerifier. It accepts a token only if its
// signature verifies with a key of the issuer's key set using an accepted
// algorithm matching the key's type, "iss" is the issuer, "aud" contains
// the audience, "exp" is present and not past, "nbf" and "iat" are not in
// the future (all with the leeway), and "sub" is present. Scopes come from
// "scope" (space-separated) or "scp" (a list or a string). A token with a
// "crit" header, or whose "typ" is not in JWTOptions.TokenTypes, is
// refused before its key is looked up. Errors wrap
// mcp.ErrInvalidToken, except when the key set could not be fetched.
// Error texts never contain the token.
func (v *JWTVerifier) VerifyToken(ctx context.Context, token string) (*mcp.Principal, error) {
	if len(token) > maxTokenBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", mcp.ErrInvalidToken, maxTokenBytes)
	}
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		if err := v.checkHeader(t.Header); err != nil {
			return nil, err
		}
		kid, _ := t.Header["kid"].(string)
		return v.keys.key(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		if errors.Is(err, errKeysUnavailable) {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		return nil, fmt.Errorf("%w: %w", mcp.ErrInvalidToken, err)
	}
	aud, err := claims.GetAudience()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", mcp.ErrInvalidToken, err)
	}
	if !v.audienceOK(aud) {
		return nil, fmt.Errorf("%w: the token was not issued for this resource (audience %q)", mcp.ErrInvalidToken, v.audience)
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, fmt.Errorf("%w: the token has no sub claim", mcp.ErrInvalidToken)
	}
	p := &mcp.Principal{Subject: sub, Issuer: v.issuer, Claims: claims}
	if c, ok := claims["client_id"].(string); ok {
		p.ClientID = c
	} else if c, ok := claims["azp"].(string); ok {
		p.ClientID = c
	}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		p.Expiry = exp.Time
	}
	p.Scopes, err = scopes(claims)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", mcp.ErrInvalidToken, err)
	}
	return p, nil
}

func (v *JWTVerifier) audienceOK(aud jwt.ClaimStrings) bool {
	for _, a := range aud {
		if canonicalResource(a) == v.audience {
			return true
		}
	}
	return false
}

// scopes reads the granted scopes: "scope" as a space-separated string
// (RFC 9068, RFC 8693), or "scp" as a list or a string (common in
// Microsoft Entra ID and Okta tokens).
func scopes(c jwt.MapClaims) ([]string, error) {
	if v, ok := c["scope"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, errors.New("the scope claim is not a string")
		}
		return strings.Fields(s), nil
	}
	switch v := c["scp"].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(v), nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("the scp claim is not a list of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errors.New("the scp claim is neither a string nor a list")
}

// canonicalResource normalizes a resource URI for comparison: scheme and
// host in lower case, and no trailing slash on an empty path.
func canonicalResource(r string) string {
	u, err := url.Parse(r)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return r
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if u.Path == "/" && u.RawQuery == "" {
		u.Path = ""
	}
	return u.String()
}

// checkEndpoint requires https for an authorization server endpoint, except
// on loopback hosts (local development and tests).
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	if strings.EqualFold(u.Scheme, "https") {
		return nil
	}
	if strings.EqualFold(u.Scheme, "http") {
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return nil
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%q must use https (http is allowed only on loopback hosts)", s)
}
