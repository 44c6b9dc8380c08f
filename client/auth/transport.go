package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	iclient "github.com/mcpkit/mcpkit/internal/client"
)

// Options configure a [Transport].
type Options struct {
	// Base sends the requests to the MCP server; default http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient sends metadata, registration and token requests; default a
	// client on Base with a 30-second timeout. Redirects are never followed.
	HTTPClient *http.Client

	// Interaction is the user's step of the authorization code grant.
	// Without one, only the machine grants can obtain tokens.
	Interaction Interaction
	// Grant selects a machine grant; nil is the authorization code grant.
	Grant Grant
	// Client holds pre-registered client credentials, preferred over the
	// other ways to identify the client.
	Client *Client
	// ClientMetadataURL is the HTTPS URL of the client's Client ID Metadata
	// Document, used as its client_id with authorization servers that
	// support them. Without it the client falls back to dynamic registration.
	ClientMetadataURL string
	// ClientName is sent in dynamic registrations; default "mcpkit".
	ClientName string

	// Store keeps tokens and registrations; default a new [MemoryStore].
	Store TokenStore
	// StoreKey is this server's key in Store; default the server URL.
	StoreKey string

	// MaxStepUps bounds the step-up authorizations (after 403
	// insufficient_scope) for one request; default 2, negative for none.
	MaxStepUps int
	// NoOfflineAccess keeps the client from adding offline_access to the
	// scopes when the authorization server supports it.
	NoOfflineAccess bool
	// NoDPoP keeps the client from binding tokens to a DPoP key when the
	// authorization server supports DPoP.
	NoDPoP bool
	// Logger receives one line per authorization and refresh; never a
	// token or secret. Default: no logging.
	Logger *slog.Logger
}

// Transport is an [http.RoundTripper] that authorizes the requests to one
// MCP server. It is safe for concurrent use; concurrent requests share
// one authorization.
type Transport struct {
	server *url.URL
	opts   Options
	base   http.RoundTripper
	hc     *http.Client
	store  TokenStore
	key    string
	log    *slog.Logger
	nonces nonces

	flow sync.Mutex // serialises authorizations and refreshes

	mu     sync.Mutex
	loaded bool
	entry  Entry
	dpop   *dpopKey // the key of entry.Token, when DPoP-bound
	gen    int      // bumped whenever entry.Token changes
}

// refreshMargin is how long before expiry a token is refreshed.
const refreshMargin = 30 * time.Second

// NewTransport returns a transport for the MCP server at serverURL,
// configured by opts (nil means defaults), which it copies.
func NewTransport(serverURL string, o *Options) (*Transport, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	u, err := url.Parse(serverURL)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("auth: server URL must be an absolute http or https URL")
	}
	if u.Fragment != "" {
		return nil, errors.New("auth: server URL must not have a fragment")
	}
	if opts.ClientMetadataURL != "" {
		cu, err := url.Parse(opts.ClientMetadataURL)
		if err != nil || cu.Scheme != "https" || cu.Host == "" || strings.TrimSuffix(cu.Path, "/") == "" {
			return nil, errors.New("auth: ClientMetadataURL must be an https URL with a path")
		}
	}
	t := &Transport{server: u, opts: opts, base: opts.Base, store: opts.Store, key: opts.StoreKey, log: opts.Logger}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.store == nil {
		t.store = &MemoryStore{}
	}
	if t.key == "" {
		t.key = serverURL
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	hc := http.Client{Transport: t.base, Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.hc = &hc
	if t.opts.MaxStepUps == 0 {
		t.opts.MaxStepUps = 2
	}
	if t.opts.ClientName == "" {
		t.opts.ClientName = "mcpkit"
	}
	return t, nil
}

// resourceOf is the server URL without query, as a resource identifier.
func (t *Transport) resourceOf() string {
	u := *t.server
	u.RawQuery, u.ForceQuery = "", false
	return u.String()
}

// Client returns an *http.Client that uses the transport and follows no
// redirect out of the server's origin (scheme, host and port): the
// transport only authorizes requests to the server's origin, but other
// headers of the request would follow the redirect.
func (t *Transport) Client() *http.Client {
	return &http.Client{Transport: t, CheckRedirect: iclient.SameOriginRedirect}
}

// load reads the stored entry once. Call with t.mu held.
func (t *Transport) load(ctx context.Context) error {
	if t.loaded {
		return nil
	}
	e, err := t.store.Load(ctx, t.key)
	if err != nil {
		return err
	}
	if e != nil {
		t.entry = *e
		t.setDPoP()
	}
	t.loaded = true
	return nil
}

func (t *Transport) setDPoP() {
	t.dpop = nil
	if tok := t.entry.Token; tok != nil && strings.EqualFold(tok.TokenType, "DPoP") && len(tok.DPoPKey) > 0 {
		if k, err := loadDPoPKey(tok.DPoPKey); err == nil {
			t.dpop = k
		} else {
			t.entry.Token = nil // unusable without its key
		}
	}
}

// snapshot returns the current token, its DPoP key and generation.
func (t *Transport) snapshot(ctx context.Context) (*Token, *dpopKey, int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(ctx); err != nil {
		return nil, nil, 0, &Error{Op: "request", Code: "store", Description: "cannot read the token store", Err: err}
	}
	return t.entry.Token, t.dpop, t.gen, nil
}

// setToken replaces the token and saves the entry.
func (t *Transport) setToken(ctx context.Context, tok *Token, issuer string, reg *Registration) error {
	t.mu.Lock()
	t.entry.Token = tok
	if reg != nil {
		if t.entry.Registrations == nil {
			t.entry.Registrations = map[string]Registration{}
		}
		t.entry.Registrations[issuer] = *reg
	}
	t.setDPoP()
	t.gen++
	e := t.entry
	t.mu.Unlock()
	if err := t.store.Save(ctx, t.key, &e); err != nil {
		return &Error{Op: "token", Code: "store", Description: "cannot save the token", Err: err}
	}
	return nil
}

// Logout forgets the stored token and registrations of the server.
func (t *Transport) Logout(ctx context.Context) error {
	t.mu.Lock()
	t.entry = Entry{}
	t.dpop = nil
	t.loaded = true
	t.gen++
	t.mu.Unlock()
	return t.store.Delete(ctx, t.key)
}

// Token returns the current token, or nil before authorization.
func (t *Transport) Token(ctx context.Context) (*Token, error) {
	tok, _, _, err := t.snapshot(ctx)
	return tok, err
}

// RoundTrip sends the request, authorizing it when the server asks.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !iclient.SameOrigin(req.URL, t.server) {
		return t.base.RoundTrip(req)
	}
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	tok, dk, gen, err := t.usable(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, body, tok, dk)
	if err != nil {
		return nil, err
	}
	// Only the server's own endpoint (or what the token's resource covers)
	// is authorized; another path of the same origin is passed through.
	if !covers(t.resourceOf(), req.URL) && (tok == nil || !covers(tok.Resource, req.URL)) {
		return resp, nil
	}
	reauthorized, stepUps, nonceRetries := false, 0, 0
	for {
		ch, _ := authChallenge(ParseChallenges(resp.Header))
		switch {
		case resp.StatusCode == http.StatusUnauthorized && dk != nil && ch.Params["error"] == "use_dpop_nonce" &&
			resp.Header.Get("DPoP-Nonce") != "" && nonceRetries < 2:
			// RFC 9449 §9: retry with the nonce send recorded.
			nonceRetries++
			drain(resp)
		case resp.StatusCode == http.StatusUnauthorized:
			if reauthorized {
				drain(resp)
				return nil, &Error{Op: "request", Code: CodeUnauthorized, Status: 401, Description: challengeText(ch, "the server refused the new token")}
			}
			reauthorized = true
			drain(resp)
			if tok, dk, err = t.authorize(ctx, ch, gen, tok, false); err != nil {
				return nil, err
			}
			_, _, gen, _ = t.snapshot(ctx)
		case resp.StatusCode == http.StatusForbidden && ch.Params["error"] == "insufficient_scope":
			drain(resp)
			if stepUps >= t.opts.MaxStepUps {
				return nil, scopeError(ch, tok, "step-up authorization did not grant it")
			}
			stepUps++
			prev := tok
			if tok, dk, err = t.authorize(ctx, ch, gen, tok, true); err != nil {
				return nil, err
			}
			if prev != nil && containsAll(prev.Scopes, tok.Scopes) {
				// The authorization server granted nothing the refused token did not
				// have: asking again would get the same answer.
				return nil, scopeError(ch, tok, "the authorization server granted no new scope")
			}
			_, _, gen, _ = t.snapshot(ctx)
		default:
			return resp, nil
		}
		if resp, err = t.send(req, body, tok, dk); err != nil {
			return nil, err
		}
	}
}

// scopeError is the error of a request the server refused with
// insufficient_scope: it names the scopes the challenge asks for that tok
// lacks, and why no step-up helps.
func scopeError(ch Challenge, tok *Token, why string) *Error {
	var have []string
	if tok != nil {
		have = tok.Scopes
	}
	var missing []string
	for _, sc := range ch.Scopes() {
		if !slices.Contains(have, sc) {
			missing = append(missing, clean(sc))
		}
	}
	desc := "the server did not say which scope it needs"
	if len(missing) > 0 {
		desc = fmt.Sprintf("the server needs scope %q", strings.Join(missing, " "))
	}
	desc += fmt.Sprintf(", and %s (the token has %q)", why, strings.Join(have, " "))
	if d := ch.Params["error_description"]; d != "" {
		desc += ": " + clean(d)
	}
	return &Error{Op: "request", Code: "insufficient_scope", Status: 403, MissingScopes: missing, Description: desc}
}

func challengeText(ch Challenge, def string) string {
	if d := ch.Params["error_description"]; d != "" {
		return clean(d)
	}
	return def
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// replayable returns a function producing fresh copies of the body.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		req.Body.Close()
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// usable returns the token to send, refreshing it when it is about to
// expire. An expired token that cannot be refreshed is not sent.
func (t *Transport) usable(ctx context.Context) (*Token, *dpopKey, int, error) {
	tok, dk, gen, err := t.snapshot(ctx)
	if err != nil || tok == nil {
		return nil, nil, gen, err
	}
	if !covers(tok.Resource, t.server) {
		return nil, nil, gen, nil
	}
	if tok.Expiry.IsZero() || time.Until(tok.Expiry) > refreshMargin {
		return tok, dk, gen, nil
	}
	if tok.RefreshToken != "" {
		t.flow.Lock()
		cur, ck, g, _ := t.snapshot(ctx)
		if g != gen && cur != nil {
			t.flow.Unlock() // another request renewed it meanwhile
			return cur, ck, g, nil
		}
		nt, nk, ok := t.refresh(ctx, tok)
		t.flow.Unlock()
		if ok {
			_, _, gen, _ = t.snapshot(ctx)
			return nt, nk, gen, nil
		}
	}
	if time.Now().After(tok.Expiry) {
		return nil, nil, gen, nil
	}
	return tok, dk, gen, nil
}

// send sends one attempt, with the token when it covers the request URL.
func (t *Transport) send(req *http.Request, body func() (io.ReadCloser, error), tok *Token, dk *dpopKey) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		b, err := body()
		if err != nil {
			return nil, err
		}
		r.Body = b
		r.GetBody = body
	}
	if tok != nil && covers(tok.Resource, r.URL) {
		if dk != nil {
			p, err := dk.proof(r.Method, r.URL, t.nonces.get(r.URL), tok.AccessToken)
			if err != nil {
				return nil, err
			}
			r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
			r.Header.Set("DPoP", p)
		} else {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && dk != nil {
		t.nonces.update(r.URL, resp.Header)
	}
	return resp, err
}

// refresh renews tok with its refresh token. Call with t.flow held.
func (t *Transport) refresh(ctx context.Context, tok *Token) (*Token, *dpopKey, bool) {
	if tok.TokenURL == "" {
		return nil, nil, false
	}
	ca, err := t.refreshClient(tok)
	if err != nil {
		return nil, nil, false
	}
	var dk *dpopKey
	if len(tok.DPoPKey) > 0 {
		if dk, err = loadDPoPKey(tok.DPoPKey); err != nil {
			return nil, nil, false
		}
	}
	params := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "resource": {tok.Resource}}
	ot, err := tokenRequest(t.tokenContext(ctx, dk), "refresh", tok.TokenURL, tok.Issuer, ca, params, nil)
	if err != nil {
		t.log.Info("token refresh failed", "server", safeURL(t.server), "issuer", tok.Issuer, "error", err)
		return nil, nil, false
	}
	nt, err := t.makeToken(ot, tok.Issuer, tok.Resource, tok.TokenURL, ca.id, tok.Scopes, dk)
	if err != nil {
		return nil, nil, false
	}
	if err := t.setToken(ctx, nt, tok.Issuer, nil); err != nil {
		return nil, nil, false
	}
	t.log.Info("token refreshed", "server", safeURL(t.server), "issuer", tok.Issuer)
	_, nk, _, _ := t.snapshot(ctx)
	return nt, nk, true
}

// refreshClient finds the client a token was issued to.
func (t *Transport) refreshClient(tok *Token) (*clientAuth, error) {
	if c := t.opts.Client; c != nil && c.ID == tok.ClientID && (c.Issuer == "" || c.Issuer == tok.Issuer) {
		return t.preRegistered(c, &ServerMetadata{Issuer: tok.Issuer}), nil
	}
	t.mu.Lock()
	reg, ok := t.entry.Registrations[tok.Issuer]
	t.mu.Unlock()
	if ok && reg.ClientID == tok.ClientID {
		return &clientAuth{id: reg.ClientID, secret: reg.ClientSecret, method: regMethod(reg)}, nil
	}
	if tok.ClientID != "" && tok.ClientID == t.opts.ClientMetadataURL {
		return &clientAuth{id: tok.ClientID, method: AuthNone}, nil
	}
	return nil, errors.New("no client")
}

func regMethod(r Registration) string {
	if r.AuthMethod != "" {
		return r.AuthMethod
	}
	if r.ClientSecret != "" {
		return AuthSecretBasic
	}
	return AuthNone
}

func (t *Transport) preRegistered(c *Client, m *ServerMetadata) *clientAuth {
	method := c.AuthMethod
	if method == "" {
		method = chooseMethod(m, c.Secret, c.PrivateKey)
	}
	return &clientAuth{id: c.ID, secret: c.Secret, method: method, key: c.PrivateKey, alg: c.SigningAlg, kid: c.KeyID}
}

// tokenContext carries the HTTP client for golang.org/x/oauth2, with DPoP
// proofs when dk is set.
func (t *Transport) tokenContext(ctx context.Context, dk *dpopKey) context.Context {
	c := t.hc
	if dk != nil {
		cc := *t.hc
		base := cc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		cc.Transport = &dpopTransport{base: base, key: dk, nonces: &t.nonces}
		c = &cc
	}
	return context.WithValue(ctx, oauth2.HTTPClient, c)
}

// authorize obtains a new token after a 401 (stepUp false) or a 403
// insufficient_scope (stepUp true) with challenge ch.
func (t *Transport) authorize(ctx context.Context, ch Challenge, gen int, prev *Token, stepUp bool) (*Token, *dpopKey, error) {
	t.flow.Lock()
	defer t.flow.Unlock()
	if cur, dk, g, err := t.snapshot(ctx); err != nil {
		return nil, nil, err
	} else if g != gen && cur != nil && (!stepUp || containsAll(cur.Scopes, ch.Scopes())) {
		return cur, dk, nil // another request authorized meanwhile
	}

	prm, err := discoverResource(ctx, t.hc, t.server, ch.Params["resource_metadata"])
	if err != nil {
		return nil, nil, err
	}
	issuer := prm.AuthorizationServers[0]
	if c := t.opts.Client; c != nil && c.Issuer != "" && slices.Contains(prm.AuthorizationServers, c.Issuer) {
		issuer = c.Issuer
	}
	asm, err := discoverServer(ctx, t.hc, issuer)
	if err != nil {
		return nil, nil, err
	}

	// A rejected token from the same authorization server is refreshed first.
	if !stepUp && prev != nil && prev.RefreshToken != "" && prev.Issuer == asm.Issuer && prev.Resource == prm.Resource {
		if nt, nk, ok := t.refresh(ctx, prev); ok {
			return nt, nk, nil
		}
	}

	scopes := ch.Scopes()
	if len(scopes) == 0 && !stepUp {
		scopes = prm.ScopesSupported
	}
	if prev != nil && prev.Issuer == asm.Issuer {
		scopes = union(prev.Scopes, scopes)
	}
	if t.opts.Grant == nil && !t.opts.NoOfflineAccess && slices.Contains(asm.ScopesSupported, "offline_access") {
		scopes = union(scopes, []string{"offline_access"})
	}

	var dk *dpopKey
	if !t.opts.NoDPoP && slices.Contains(asm.DPoPSigningAlgValuesSupported, "ES256") {
		if dk, err = newDPoPKey(); err != nil {
			return nil, nil, err
		}
	}
	t.log.Info("authorizing", "server", safeURL(t.server), "issuer", asm.Issuer, "resource", prm.Resource,
		"scopes", strings.Join(scopes, " "), "step_up", stepUp, "dpop", dk != nil)

	var (
		ot  *oauth2.Token
		ca  *clientAuth
		reg *Registration
	)
	tctx := t.tokenContext(ctx, dk)
	switch g := t.opts.Grant.(type) {
	case nil:
		ca, reg, err = t.identify(ctx, asm, true)
		if err == nil {
			ot, err = t.authCode(ctx, tctx, asm, ca, prm.Resource, scopes)
		}
	case ClientCredentialsGrant:
		ca, reg, err = t.identify(ctx, asm, false)
		if err == nil {
			ot, err = tokenRequest(tctx, "token", asm.TokenEndpoint, asm.Issuer, ca, url.Values{"resource": {prm.Resource}}, scopes)
		}
	case JWTBearerGrant:
		ca = &clientAuth{method: AuthNone}
		if c := t.opts.Client; c != nil {
			ca = t.preRegistered(c, asm)
		}
		ot, err = t.jwtBearer(ctx, tctx, asm, ca, g, prm.Resource, scopes)
	case EnterpriseGrant:
		ca, reg, err = t.identify(ctx, asm, false)
		if err == nil {
			ot, err = t.enterprise(ctx, tctx, asm, ca, g, prm.Resource, scopes)
		}
	default:
		err = errf("token", CodeNoClient, "unsupported grant %T", g)
	}
	if err != nil {
		t.log.Info("authorization failed", "server", safeURL(t.server), "issuer", asm.Issuer, "error", err)
		return nil, nil, err
	}
	nt, err := t.makeToken(ot, asm.Issuer, prm.Resource, asm.TokenEndpoint, ca.id, scopes, dk)
	if err != nil {
		return nil, nil, err
	}
	if err := t.setToken(ctx, nt, asm.Issuer, reg); err != nil {
		return nil, nil, err
	}
	t.log.Info("authorized", "server", safeURL(t.server), "issuer", asm.Issuer, "token_type", nt.TokenType)
	_, nk, _, _ := t.snapshot(ctx)
	return nt, nk, nil
}

// makeToken validates a token response and builds the stored token.
func (t *Transport) makeToken(ot *oauth2.Token, issuer, resource, tokenURL, clientID string, scopes []string, dk *dpopKey) (*Token, error) {
	// RFC 6749 §5.1: the response names the granted scope when it differs
	// from the requested one.
	if granted, ok := ot.Extra("scope").(string); ok {
		scopes = strings.Fields(granted)
	}
	nt := &Token{AccessToken: ot.AccessToken, RefreshToken: ot.RefreshToken, Expiry: ot.Expiry,
		Scopes: scopes, Issuer: issuer, Resource: resource, TokenURL: tokenURL, ClientID: clientID}
	switch {
	case ot.TokenType == "" || strings.EqualFold(ot.TokenType, "bearer"):
		nt.TokenType = "Bearer"
	case strings.EqualFold(ot.TokenType, "dpop") && dk != nil:
		nt.TokenType = "DPoP"
		nt.DPoPKey = dk.marshal()
	default:
		return nil, errf("token", CodeInvalidResponse, "unsupported token_type %q", clean(ot.TokenType))
	}
	if len(nt.AccessToken) > MaxDocumentBytes {
		return nil, errf("token", CodeInvalidResponse, "access token too long")
	}
	return nt, nil
}

// identify finds or creates the client's identity at the authorization
// server: pre-registered credentials, then a Client ID Metadata Document
// (authorization code grant only), then a stored or new dynamic
// registration. A new registration is returned to be saved.
func (t *Transport) identify(ctx context.Context, asm *ServerMetadata, interactive bool) (*clientAuth, *Registration, error) {
	if c := t.opts.Client; c != nil && (c.Issuer == "" || c.Issuer == asm.Issuer) {
		return t.preRegistered(c, asm), nil, nil
	}
	if interactive && asm.ClientIDMetadataDocumentSupported && t.opts.ClientMetadataURL != "" {
		return &clientAuth{id: t.opts.ClientMetadataURL, method: AuthNone}, nil, nil
	}
	t.mu.Lock()
	reg, ok := t.entry.Registrations[asm.Issuer]
	t.mu.Unlock()
	if ok {
		return &clientAuth{id: reg.ClientID, secret: reg.ClientSecret, method: regMethod(reg)}, nil, nil
	}
	if asm.RegistrationEndpoint != "" && interactive {
		r, err := t.register(ctx, asm)
		if err != nil {
			return nil, nil, err
		}
		return &clientAuth{id: r.ClientID, secret: r.ClientSecret, method: regMethod(*r)}, r, nil
	}
	return nil, nil, errf("register", CodeNoClient, "no client credentials for %s, and it supports neither Client ID Metadata Documents (with Options.ClientMetadataURL) nor dynamic registration", safeString(asm.Issuer))
}

// register performs dynamic client registration (RFC 7591).
func (t *Transport) register(ctx context.Context, asm *ServerMetadata) (*Registration, error) {
	const op = "register"
	if t.opts.Interaction == nil {
		return nil, errf(op, CodeInteractionRequired, "the authorization code grant needs an Interaction")
	}
	redirect := t.opts.Interaction.RedirectURL()
	if err := checkRedirect(redirect); err != nil {
		return nil, err
	}
	method := ""
	sup := asm.TokenEndpointAuthMethodsSupported
	switch {
	case len(sup) == 0 || slices.Contains(sup, AuthNone):
		method = AuthNone
	case slices.Contains(sup, AuthSecretBasic):
		method = AuthSecretBasic
	case slices.Contains(sup, AuthSecretPost):
		method = AuthSecretPost
	}
	appType := "web"
	if ru, err := url.Parse(redirect); err == nil && (isLoopback(ru.Hostname()) || (ru.Scheme != "http" && ru.Scheme != "https")) {
		appType = "native"
	}
	reqBody := map[string]any{
		"client_name":      t.opts.ClientName,
		"redirect_uris":    []string{redirect},
		"grant_types":      []string{"authorization_code", "refresh_token"},
		"response_types":   []string{"code"},
		"application_type": appType,
	}
	if method != "" {
		reqBody["token_endpoint_auth_method"] = method
	}
	b, _ := json.Marshal(reqBody)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, asm.RegistrationEndpoint, bytes.NewReader(b))
	if err != nil {
		return nil, errf(op, CodeInvalidResponse, "bad registration endpoint")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, &Error{Op: op, Code: CodeDiscovery, Err: err}
	}
	defer resp.Body.Close()
	body, err := readBody(op, resp)
	if err != nil {
		return nil, err
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &r)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		e := &Error{Op: op, Code: clean(r.Error), Description: clean(r.Description), Status: resp.StatusCode}
		if e.Code == "" {
			e.Code = CodeInvalidResponse
		}
		return nil, e
	}
	if jerr != nil || r.ClientID == "" {
		return nil, errf(op, CodeInvalidResponse, "registration response has no client_id")
	}
	switch r.AuthMethod {
	case "", AuthNone, AuthSecretBasic, AuthSecretPost:
	default:
		return nil, errf(op, CodeInvalidResponse, "registered token_endpoint_auth_method %q is not supported", clean(r.AuthMethod))
	}
	reg := &Registration{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: r.AuthMethod}
	if reg.AuthMethod == "" {
		reg.AuthMethod = chooseMethod(asm, reg.ClientSecret, nil)
	}
	t.log.Info("registered client", "issuer", asm.Issuer, "client_id", reg.ClientID)
	return reg, nil
}

func randomString() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authCode runs the authorization code grant with PKCE.
func (t *Transport) authCode(ctx, tctx context.Context, asm *ServerMetadata, ca *clientAuth, resource string, scopes []string) (*oauth2.Token, error) {
	const op = "authorize"
	if t.opts.Interaction == nil {
		return nil, errf(op, CodeInteractionRequired, "the server needs the authorization code grant, which needs an Interaction")
	}
	if asm.AuthorizationEndpoint == "" {
		return nil, errf(op, CodeDiscovery, "the authorization server has no authorization_endpoint")
	}
	if !asm.supportsPKCE() {
		return nil, errf(op, CodeDiscovery, "the authorization server does not advertise PKCE with S256 (code_challenge_methods_supported)")
	}
	redirect := t.opts.Interaction.RedirectURL()
	if err := checkRedirect(redirect); err != nil {
		return nil, err
	}
	params := url.Values{}
	style, secret, err := ca.authParams(asm.Issuer, params)
	if err != nil {
		return nil, err
	}
	cfg := oauth2.Config{
		ClientID:     ca.id,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, AuthStyle: style},
		RedirectURL:  redirect,
		Scopes:       scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	q, err := t.opts.Interaction.Authorize(ctx, authURL)
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, &Error{Op: op, Code: "interaction_failed", Err: err}
	}
	// RFC 9207 §2.4, before anything in the response is acted on.
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != asm.Issuer {
			return nil, errf(op, CodeIssuerMismatch, "the authorization response comes from issuer %s, not %s", safeString(strings.Join(iss, ",")), safeString(asm.Issuer))
		}
	} else if asm.IssParameterSupported {
		return nil, errf(op, CodeIssuerMismatch, "the authorization response has no iss, which the authorization server advertises")
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
		return nil, errf(op, CodeStateMismatch, "the authorization response does not carry the state of the request")
	}
	if e := q.Get("error"); e != "" {
		return nil, &Error{Op: op, Code: clean(e), Description: clean(q.Get("error_description"))}
	}
	code := q.Get("code")
	if code == "" || len(code) > 4096 {
		return nil, errf(op, CodeInvalidResponse, "the authorization response has no usable code")
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource)}
	for k := range params {
		opts = append(opts, oauth2.SetAuthURLParam(k, params.Get(k)))
	}
	ot, err := cfg.Exchange(tctx, code, opts...)
	if err != nil {
		return nil, tokenError("token", err)
	}
	return ot, nil
}

// jwtBearer presents a workload's JWT (RFC 7523 §2.1).
func (t *Transport) jwtBearer(ctx, tctx context.Context, asm *ServerMetadata, ca *clientAuth, g JWTBearerGrant, resource string, scopes []string) (*oauth2.Token, error) {
	if g.Assertion == nil {
		return nil, errf("token", CodeNoClient, "JWTBearerGrant has no Assertion")
	}
	a, err := g.Assertion(ctx)
	if err != nil {
		return nil, &Error{Op: "token", Code: "assertion_unavailable", Err: err}
	}
	params := url.Values{"grant_type": {GrantJWTBearer}, "assertion": {a}, "resource": {resource}}
	return tokenRequest(tctx, "token", asm.TokenEndpoint, asm.Issuer, ca, params, scopes)
}

// enterprise exchanges the user's ID token for an ID-JAG at the identity
// provider, then the ID-JAG for an access token.
func (t *Transport) enterprise(ctx, tctx context.Context, asm *ServerMetadata, ca *clientAuth, g EnterpriseGrant, resource string, scopes []string) (*oauth2.Token, error) {
	if g.IDToken == nil {
		return nil, errf("token", CodeNoClient, "EnterpriseGrant has no IDToken")
	}
	if _, err := checkEndpoint("token", "identity provider token endpoint", g.TokenURL); err != nil {
		return nil, err
	}
	idt, err := g.IDToken(ctx)
	if err != nil {
		return nil, &Error{Op: "token", Code: "assertion_unavailable", Err: err}
	}
	idp := &clientAuth{id: g.ClientID, secret: g.ClientSecret, method: AuthNone}
	if g.ClientSecret != "" {
		idp.method = AuthSecretBasic
	}
	params := url.Values{
		"grant_type":           {GrantTokenExchange},
		"requested_token_type": {TokenTypeIDJAG},
		"subject_token":        {idt},
		"subject_token_type":   {TokenTypeIDToken},
		"audience":             {asm.Issuer},
		"resource":             {resource},
	}
	ictx := context.WithValue(ctx, oauth2.HTTPClient, t.hc)
	jag, err := tokenRequest(ictx, "token_exchange", g.TokenURL, "", idp, params, scopes)
	if err != nil {
		return nil, err
	}
	if tt, _ := jag.Extra("issued_token_type").(string); tt != TokenTypeIDJAG {
		return nil, errf("token_exchange", CodeInvalidResponse, "the identity provider issued %q, not an ID-JAG", clean(tt))
	}
	params = url.Values{"grant_type": {GrantJWTBearer}, "assertion": {jag.AccessToken}}
	return tokenRequest(tctx, "token", asm.TokenEndpoint, asm.Issuer, ca, params, scopes)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// checkRedirect validates the Interaction's redirect URI (OAuth 2.1 §2.3.1,
// RFC 8252 §7): absolute, no fragment, and plain http only to a loopback host.
func checkRedirect(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Fragment != "" || u.User != nil {
		return errf("authorize", CodeInvalidResponse, "the redirect URL %s is not an absolute URL without fragment", safeString(s))
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return errf("authorize", CodeInsecureEndpoint, "the redirect URL %s is plain http to a host that is not loopback", safeURL(u))
	}
	if u.Scheme == "https" && u.Host == "" {
		return errf("authorize", CodeInvalidResponse, "the redirect URL %s has no host", safeURL(u))
	}
	return nil
}
