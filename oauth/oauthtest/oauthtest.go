// Package oauthtest is an OAuth 2.1 authorization server for tests, in the manner of
// net/http/httptest: NewServer starts one on 127.0.0.1 that serves its metadata (RFC 8414) and
// its JWK Set, registers clients (RFC 7591), approves every authorization request at once, and
// mints RFC 9068 JWT access tokens (typ "at+jwt") for the client-credentials grant, the
// authorization-code grant with PKCE (S256 only) and the refresh-token grant. A test sets the
// scopes it grants, the audience and the lifetime of its tokens, and can mint a token directly.
//
// With an MCP server it stands for the authorization server of a protected resource: give
// mcp.AuthOptions Server.Verifier(resource) and Server.URL, and a client/auth Transport either
// the pre-registered Server.ClientID and ClientSecret (client credentials) or
// Server.Interaction (authorization code).
//
// For the tests of a token verifier it also does what a real authorization server does to its
// resource servers: it signs with the algorithm a test chooses (Options.Algorithm: RSA, RSA-PSS,
// ECDSA or Ed25519), rotates and retires keys (RotateKey, RetireKey), mints tokens with any
// claims and header a test sets, including ones no honest server would (TokenOptions.Claims,
// Header, KeyID), and has a JWK Set endpoint that fails or is slow on demand (SetJWKSFailure,
// SetJWKSDelay). Transport reaches it without a connection, from inside a testing/synctest
// bubble.
//
// It is for tests and examples: it checks what a client sends as a strict server would (PKCE,
// redirect URI, client authentication, grant types) and answers with OAuth errors, but it keeps
// everything in memory and approves every user.
package oauthtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpkit/mcpkit/oauth"
)

// TB is the part of testing.TB that NewServer uses.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Options configure a Server. The zero value (or nil) grants every scope asked for, with
// tokens for the resource the client names that live an hour.
type Options struct {
	// Scopes are the scopes the server grants, and publishes as scopes_supported: a request
	// for others is granted without them (and the token response names what was granted, as
	// RFC 6749 §5.1 asks). A request that names no scope gets them all. Empty: every scope a
	// client asks for is granted.
	Scopes []string
	// Audience is the "aud" of every token, whatever resource the client asked for (to test a
	// token minted for another resource, say). Default: the resource parameter of the request
	// (RFC 8707), or the issuer when there is none.
	Audience string
	// Expiry is the lifetime of the access tokens ("exp" and expires_in). Default one hour.
	Expiry time.Duration
	// Subject is the "sub" of tokens from the authorization-code grant (the user who
	// approved). Default "oauthtest-user". Client-credentials tokens have the client ID.
	Subject string
	// NoRefreshTokens keeps the authorization-code grant from issuing refresh tokens.
	NoRefreshTokens bool
	// Wrap, when set, wraps the server's HTTP handler: a test can record the requests, or
	// answer or alter some of them itself (an error from the token endpoint, a redirect
	// without iss).
	Wrap func(http.Handler) http.Handler
	// Algorithm is the JWS algorithm of the first signing key, which the server generates:
	// RS256, RS384, RS512, PS256, PS384 or PS512 (an RSA key of 2048 bits), ES256, ES384 or
	// ES512 (an ECDSA key on P-256, P-384 or P-521), or EdDSA (an Ed25519 key), the algorithms
	// of oauth.DefaultAlgorithms. Default ES256, the quickest to generate. NewServer fails the
	// test, and Start returns an error, for any other.
	Algorithm string
}

// Server is a running authorization server. Its methods are safe for concurrent use.
type Server struct {
	// URL is the issuer identifier and base URL, http://127.0.0.1:PORT. The JWK Set is at
	// URL + "/jwks", and the metadata names it as jwks_uri.
	URL string
	// ClientID and ClientSecret are a pre-registered confidential client, for the
	// client-credentials grant (auth.Client{ID: s.ClientID, Secret: s.ClientSecret}).
	ClientID, ClientSecret string

	srv     *httptest.Server
	handler http.Handler // what srv serves: the mux, wrapped by Options.Wrap

	mu       sync.Mutex
	opts     Options
	keys     []*signingKey // every key the server has had, in the order made
	signer   *signingKey   // the key that signs tokens by default: the newest
	jwks     jwksBehaviour
	clients  map[string]*clientReg // client_id -> registration
	codes    map[string]*grant     // authorization code -> what it grants (used once)
	refresh  map[string]*grant     // refresh token -> what it grants
	nextID   int
	requests []url.Values // every token request's form, in order
}

// signingKey is one key pair of the server's.
type signingKey struct {
	kid       string
	method    jwt.SigningMethod
	private   crypto.Signer // *rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey
	published bool          // in the JWK Set; false once retired
}

// jwksBehaviour is what SetJWKSFailure and SetJWKSDelay set, and what the JWK Set endpoint
// counts.
type jwksBehaviour struct {
	status   int           // answer with this status instead of the keys; 0: the keys
	delay    time.Duration // wait this long before answering
	requests int           // requests so far
}

type clientReg struct {
	secret    string   // "" for a public client
	redirects []string // registered redirect URIs; empty: any loopback or https URI
}

type grant struct {
	clientID, redirect, challenge, resource string
	scopes                                  []string
	expires                                 time.Time
}

// NewServer starts a Server on 127.0.0.1 and stops it when the test ends; opts may be nil.
func NewServer(tb TB, opts *Options) *Server {
	tb.Helper()
	s, err := Start(opts)
	if err != nil {
		tb.Fatalf("%v", err) // Start's errors name the package
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a Server on 127.0.0.1, for a program rather than a test; Close stops it.
func Start(opts *Options) (*Server, error) {
	s := &Server{ClientID: "oauthtest-client", ClientSecret: randomString(),
		clients: map[string]*clientReg{}, codes: map[string]*grant{}, refresh: map[string]*grant{}}
	if opts != nil {
		s.opts = *opts
	}
	key, err := newSigningKey(cmpOr(s.opts.Algorithm, "ES256"))
	if err != nil {
		return nil, fmt.Errorf("oauthtest: Options.Algorithm: %w", err)
	}
	s.addKey(key)
	s.clients[s.ClientID] = &clientReg{secret: s.ClientSecret}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serveMetadata)
	mux.HandleFunc("GET /.well-known/openid-configuration", s.serveMetadata)
	mux.HandleFunc("GET /jwks", s.serveJWKS)
	mux.HandleFunc("POST /register", s.serveRegister)
	mux.HandleFunc("GET /authorize", s.serveAuthorize)
	mux.HandleFunc("POST /token", s.serveToken)
	s.handler = mux
	if s.opts.Wrap != nil {
		s.handler = s.opts.Wrap(mux)
	}
	s.srv = httptest.NewServer(s.handler) // 127.0.0.1, a free port
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// AddClient registers a confidential client (client_secret_basic or client_secret_post), as
// if it had been registered out of band.
func (s *Server) AddClient(id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = &clientReg{secret: secret}
}

// SetScopes replaces Options.Scopes for the requests that follow.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Scopes = slices.Clone(scopes)
}

// SetAudience replaces Options.Audience for the tokens that follow ("" for the default).
func (s *Server) SetAudience(aud string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Audience = aud
}

// SetExpiry replaces Options.Expiry for the tokens that follow (0 for the default).
func (s *Server) SetExpiry(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Expiry = d
}

// TokenRequests returns a copy of the form of every token request so far, in order.
func (s *Server) TokenRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]url.Values, len(s.requests))
	for i, r := range s.requests {
		out[i] = maps(r)
	}
	return out
}

func maps(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// Verifier returns a verifier of this server's tokens for the MCP server whose resource
// identifier (canonical URI, mcp.AuthOptions.Resource) is resource: RFC 9068's typ only.
func (s *Server) Verifier(resource string) *oauth.JWTVerifier {
	v, err := oauth.NewJWTVerifier(&oauth.JWTOptions{Issuer: s.URL, Audience: resource, JWKSURL: s.URL + "/jwks",
		TokenTypes: oauth.StrictTokenTypes})
	if err != nil {
		panic("oauthtest: " + err.Error()) // the issuer and JWKS URL are ours: cannot fail
	}
	return v
}

// Interaction returns a Browser: what client/auth calls an Interaction (Options.Interaction),
// standing for the user's browser against this server.
func (s *Server) Interaction() Browser { return Browser{} }

// Browser stands for the user's browser in the authorization-code grant: Authorize follows the
// authorization URL, which the server approves at once, and returns the query of the redirect
// to RedirectURL. It implements client/auth's Interaction (this package does not import
// client/auth, so that client/auth's own tests can use it).
type Browser struct{}

// RedirectURL is the redirect URI the client registers and sends; nothing listens on it.
func (Browser) RedirectURL() string { return "http://127.0.0.1:1/callback" }

// Authorize requests authURL and returns the query of the redirect it answers with.
func (Browser) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("oauthtest: the authorization request was refused: HTTP %d", resp.StatusCode)
	}
	return loc.Query(), nil
}

// TokenOptions describe a token Token mints. The zero value mints one as a grant would, with
// the default subject, client, audience and lifetime, and no scopes.
type TokenOptions struct {
	Subject  string   // "sub"; default Options.Subject's default
	ClientID string   // "client_id"; default Server.ClientID
	Scopes   []string // "scope"
	Audience string   // "aud"; default Options.Audience, else the issuer
	// Expiry is the token's lifetime; default Options.Expiry's. A negative value mints a token
	// that has already expired.
	Expiry time.Duration
	// KeyID names the key that signs the token: any key the server has had, the retired ones
	// included (a token a verifier must refuse once it knows the key is gone). Default: the
	// current signing key. Token panics when the server never had this key.
	KeyID string
	// Claims are set in the token's claims over the ones the fields above make ("iss", "sub",
	// "aud", "client_id", "scope", "iat", "exp", "jti"), for tokens a verifier must refuse or
	// must read in another form: another issuer, an "aud" list, "nbf" in the future, "scp"
	// instead of "scope", a claim of the wrong type. A nil value removes the claim. Token does
	// not keep the map.
	Claims map[string]any
	// Header is set in the JOSE header likewise, over "alg", "typ" ("at+jwt") and "kid" (the
	// signing key's): a test can leave "typ" out, name a key the server does not publish, or
	// add "crit". A nil value removes the member. The signature is made with the signing key's
	// algorithm whatever the header says.
	Header map[string]any
}

// Token mints an access token directly, without a grant: for a test that sends
// "Authorization: Bearer" itself, or that gives a verifier tokens to accept and to refuse.
// opts may be nil.
func (s *Server) Token(opts *TokenOptions) string {
	var o TokenOptions
	if opts != nil {
		o = *opts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.ClientID == "" {
		o.ClientID = s.ClientID
	}
	if o.Subject == "" {
		o.Subject = s.subject()
	}
	exp := o.Expiry
	if exp == 0 {
		exp = s.expiry()
	}
	key := s.signer
	if o.KeyID != "" {
		if key = s.key(o.KeyID); key == nil {
			panic(fmt.Sprintf("oauthtest: TokenOptions.KeyID %q is not a key of this server's", o.KeyID))
		}
	}
	return s.mint(key, o.Subject, o.ClientID, s.audience(o.Audience), o.Scopes, exp, o.Claims, o.Header)
}

func (s *Server) subject() string { return cmpOr(s.opts.Subject, "oauthtest-user") }

func (s *Server) expiry() time.Duration {
	if s.opts.Expiry > 0 {
		return s.opts.Expiry
	}
	return time.Hour
}

// audience is the "aud" of a token for resource.
func (s *Server) audience(resource string) string {
	return cmpOr(s.opts.Audience, resource, s.URL)
}

func cmpOr(v ...string) string {
	for _, x := range v {
		if x != "" {
			return x
		}
	}
	return ""
}

// mint signs an RFC 9068 access token with key, then sets extra claims and header members
// over the ones it made (nil removes one). s.mu is held.
func (s *Server) mint(key *signingKey, sub, clientID, aud string, scopes []string, life time.Duration, extra, header map[string]any) string {
	now := time.Now()
	s.nextID++
	claims := jwt.MapClaims{"iss": s.URL, "sub": sub, "aud": aud, "client_id": clientID,
		"iat": now.Unix(), "exp": now.Add(life).Unix(), "jti": fmt.Sprintf("at-%d", s.nextID)}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	t := jwt.NewWithClaims(key.method, claims)
	t.Header["typ"] = "at+jwt"
	t.Header["kid"] = key.kid
	set(claims, extra)
	set(t.Header, header)
	signed, err := t.SignedString(key.private)
	if err != nil {
		// A key of ours, of its method's type; only a value of Claims or Header that
		// encoding/json cannot encode gets here.
		panic("oauthtest: signing: " + err.Error())
	}
	return signed
}

// set sets every member of src in dst, and removes the ones whose value is nil.
func set(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
		} else {
			dst[k] = v
		}
	}
}

// granted is what a request for scopes gets. s.mu is held.
func (s *Server) granted(asked []string) []string {
	if len(s.opts.Scopes) == 0 {
		return asked
	}
	if len(asked) == 0 {
		return slices.Clone(s.opts.Scopes)
	}
	var out []string
	for _, sc := range asked {
		if slices.Contains(s.opts.Scopes, sc) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	scopes := slices.Clone(s.opts.Scopes)
	s.mu.Unlock()
	m := map[string]any{
		"issuer":                                         s.URL,
		"authorization_endpoint":                         s.URL + "/authorize",
		"token_endpoint":                                 s.URL + "/token",
		"registration_endpoint":                          s.URL + "/register",
		"jwks_uri":                                       s.URL + "/jwks",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "client_credentials", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"authorization_response_iss_parameter_supported": true,
	}
	if len(scopes) > 0 {
		m["scopes_supported"] = scopes
	}
	writeJSON(w, http.StatusOK, m)
}

// serveJWKS answers with the published keys, after SetJWKSDelay's delay, or with
// SetJWKSFailure's status.
func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.jwks.requests++
	delay := s.jwks.delay
	s.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return // the client is gone
		}
	}
	s.mu.Lock()
	status := s.jwks.status
	keys := []map[string]string{} // [] rather than null once every key is retired
	for _, k := range s.keys {
		if k.published {
			keys = append(keys, k.jwk())
		}
	}
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, "oauthtest: the JWK Set is unavailable (SetJWKSFailure)", status)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	json.NewEncoder(w).Encode(map[string]any{"keys": keys})
}

func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object")
		return
	}
	reg := &clientReg{redirects: req.RedirectURIs}
	method := cmpOr(req.AuthMethod, "client_secret_basic")
	switch method {
	case "none":
	case "client_secret_basic", "client_secret_post":
		reg.secret = randomString()
	default:
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unsupported token_endpoint_auth_method")
		return
	}
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf("client-%d", s.nextID)
	s.clients[id] = reg
	s.mu.Unlock()
	resp := map[string]any{"client_id": id, "token_endpoint_auth_method": method, "redirect_uris": req.RedirectURIs}
	if reg.secret != "" {
		resp["client_secret"] = reg.secret
	}
	if req.ClientName != "" {
		resp["client_name"] = req.ClientName
	}
	writeJSON(w, http.StatusCreated, resp)
}

// serveAuthorize approves every valid request at once: it redirects to the client's redirect
// URI with a code (and the state and iss parameters, RFC 9207).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	if c == nil {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if redirect == "" || (len(c.redirects) > 0 && !slices.ContainsFunc(c.redirects, func(r string) bool { return sameRedirect(r, redirect) })) {
		http.Error(w, "redirect_uri missing or not registered", http.StatusBadRequest)
		return
	}
	ru, err := url.Parse(redirect)
	if err != nil || !ru.IsAbs() {
		http.Error(w, "redirect_uri is not an absolute URI", http.StatusBadRequest)
		return
	}
	back := url.Values{"state": {q.Get("state")}, "iss": {s.URL}}
	switch {
	case q.Get("response_type") != "code":
		back.Set("error", "unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		back.Set("error", "invalid_request")
		back.Set("error_description", "PKCE with S256 is required")
	default:
		code := randomString()
		s.codes[code] = &grant{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scopes: s.granted(strings.Fields(q.Get("scope"))), expires: time.Now().Add(time.Minute)}
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, maps(f))
	clientID, err := s.authenticate(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauthtest"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	var g grant
	sub := clientID
	switch f.Get("grant_type") {
	case "client_credentials":
		if s.clients[clientID].secret == "" {
			oauthError(w, http.StatusBadRequest, "unauthorized_client", "a public client cannot use client_credentials")
			return
		}
		g = grant{clientID: clientID, resource: f.Get("resource"), scopes: s.granted(strings.Fields(f.Get("scope")))}
	case "authorization_code":
		code := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // used once
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case code == nil || time.Now().After(code.expires) || code.clientID != clientID:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
			return
		case code.redirect != f.Get("redirect_uri"):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(code.challenge)) != 1:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the PKCE code_verifier does not match the code_challenge")
			return
		}
		g, sub = *code, s.subject()
		if res := f.Get("resource"); res != "" {
			g.resource = res
		}
	case "refresh_token":
		rt := s.refresh[f.Get("refresh_token")]
		if rt == nil || rt.clientID != clientID {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		g, sub = *rt, s.subject()
		if asked := strings.Fields(f.Get("scope")); len(asked) > 0 {
			var narrowed []string
			for _, sc := range asked {
				if slices.Contains(rt.scopes, sc) {
					narrowed = append(narrowed, sc)
				}
			}
			g.scopes = narrowed
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	life := s.expiry()
	resp := map[string]any{
		"access_token": s.mint(s.signer, sub, clientID, s.audience(g.resource), g.scopes, life, nil, nil),
		"token_type":   "Bearer",
		"expires_in":   int(life / time.Second),
		"scope":        strings.Join(g.scopes, " "),
	}
	if f.Get("grant_type") != "client_credentials" && !s.opts.NoRefreshTokens {
		rt := randomString()
		s.refresh[rt] = &grant{clientID: clientID, resource: g.resource, scopes: g.scopes}
		resp["refresh_token"] = rt
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

// authenticate returns the client of a token request: client_secret_basic,
// client_secret_post, or a public client's client_id. s.mu is held.
func (s *Server) authenticate(r *http.Request) (string, error) {
	id, secret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id) // RFC 6749 §2.3.1 form-encodes both
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return "", errors.New("malformed Basic credentials")
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	switch {
	case id == "" || c == nil:
		return "", errors.New("unknown client")
	case c.secret == "" && secret == "":
		return id, nil // a public client
	case c.secret == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) != 1:
		return "", errors.New("wrong client secret")
	}
	return id, nil
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	m := map[string]string{"error": code}
	if desc != "" {
		m["error_description"] = desc
	}
	writeJSON(w, status, m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func randomString() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// sameRedirect reports whether the redirect URI a client asks for is the
// one it registered: the same string, or, for a loopback IP literal over
// http, the same but for the port, which a native app picks anew each time
// (RFC 8252, section 7.3).
func sameRedirect(registered, asked string) bool {
	if registered == asked {
		return true
	}
	r, err1 := url.Parse(registered)
	a, err2 := url.Parse(asked)
	if err1 != nil || err2 != nil || r.Scheme != "http" || a.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(r.Hostname())
	return ip != nil && ip.IsLoopback() && r.Hostname() == a.Hostname() && r.Path == a.Path && r.RawQuery == a.RawQuery
}
