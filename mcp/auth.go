package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file makes a Server an OAuth 2.1 protected resource on Streamable
// HTTP (MCP basic/authorization): bearer tokens are checked by a
// TokenVerifier before a request reaches Handle, Protected Resource
// Metadata (RFC 9728) tells clients where to get tokens, and the verified
// Principal reaches handlers in RequestInfo. stdio is never authenticated
// here: a stdio server takes its credentials from its environment.

// Principal is the authenticated caller of a request: whom an access token
// was issued to and what it allows. A TokenVerifier returns a new Principal
// for every verified token; from then on it is read-only, and handlers see
// it as RequestInfo.Principal.
type Principal struct {
	// Subject identifies the resource owner the token was issued for (the
	// "sub" claim of a JWT). Together with Issuer it is a stable identity:
	// bind per-caller state (sealed requestState, task ids) to ID().
	Subject string
	// Issuer is the authorization server that issued the token ("iss").
	Issuer string
	// ClientID identifies the OAuth client the token was issued to
	// ("client_id" or "azp"), when known.
	ClientID string
	// Scopes are the scopes granted to the token.
	Scopes []string
	// Expiry is when the token expires; zero when unknown.
	Expiry time.Time
	// Claims holds every claim of the token as decoded JSON (a JWT's
	// payload), for application-specific decisions. It must not be
	// modified.
	Claims map[string]any

	// includes is AuthOptions.ScopeIncludes, set by the server.
	includes func(granted, required string) bool
}

// ID returns a stable identifier of the principal, made of Issuer and
// Subject, for binding state to a caller. Two principals with the same ID
// are the same resource owner as seen by the same authorization server.
func (p *Principal) ID() string {
	return p.Issuer + " " + p.Subject
}

// HasScope reports whether the token grants scope, directly or, when the
// server's AuthOptions.ScopeIncludes says so, through a broader scope.
func (p *Principal) HasScope(scope string) bool {
	if p == nil {
		return false
	}
	for _, g := range p.Scopes {
		if g == scope || (p.includes != nil && p.includes(g, scope)) {
			return true
		}
	}
	return false
}

// hasScopes reports whether the principal holds every one of scopes.
func (p *Principal) hasScopes(scopes []string) bool {
	for _, sc := range scopes {
		if !p.HasScope(sc) {
			return false
		}
	}
	return true
}

// TokenVerifier checks the bearer access tokens presented to a protected
// Server. VerifyToken must confirm that token was issued for this resource
// (audience binding: a token for any other resource is invalid here), by a
// trusted authorization server, and is currently valid; it returns the
// caller as a new Principal. Its error must wrap ErrInvalidToken when the
// token is not acceptable (HTTP 401), or ErrInsufficientScope (for example
// through InsufficientScope) when the token is valid but not enough (HTTP
// 403). Any other error means the token could not be checked at all (for
// example, the key set is unreachable) and gets HTTP 503. Error texts are
// logged, so they must not contain the token. VerifyToken is called
// concurrently.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (*Principal, error)
}

// TokenVerifierFunc adapts a function to the TokenVerifier interface.
type TokenVerifierFunc func(ctx context.Context, token string) (*Principal, error)

// VerifyToken calls f.
func (f TokenVerifierFunc) VerifyToken(ctx context.Context, token string) (*Principal, error) {
	return f(ctx, token)
}

// Errors a TokenVerifier wraps to classify a rejected token.
var (
	// ErrInvalidToken: the token is malformed, expired, not yet valid,
	// issued by an untrusted issuer, for another audience, or its
	// signature does not verify. The request gets 401 invalid_token.
	ErrInvalidToken = errors.New("invalid access token")
	// ErrInsufficientScope: the token is valid but lacks a scope the
	// request needs. The request gets 403 insufficient_scope.
	ErrInsufficientScope = errors.New("insufficient scope")
)

// scopeError carries the scopes a forbidden operation needs.
type scopeError struct{ scopes []string }

func (e *scopeError) Error() string {
	return "insufficient scope: requires " + strings.Join(e.scopes, " ")
}

func (e *scopeError) Is(target error) bool { return target == ErrInsufficientScope }

// InsufficientScope returns the protocol error for a caller whose token
// lacks scopes: on Streamable HTTP it is sent with status 403 and a
// WWW-Authenticate challenge with error="insufficient_scope" and
// scope="<scopes>", so that the client can ask its authorization server for
// them (step-up authorization). scopes should name every scope the
// operation needs, not only the missing ones. Tool handlers may return it
// for scope decisions that depend on the arguments; it matches
// ErrInsufficientScope with errors.Is.
func InsufficientScope(scopes ...string) *Error {
	scopes = slices.Clone(scopes)
	return &Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: "Forbidden: insufficient scope; this operation requires scope " + strings.Join(scopes, " "),
		Data:    map[string]string{"error": "insufficient_scope", "scope": strings.Join(scopes, " ")},
		Err:     &scopeError{scopes: scopes},
		status:  http.StatusForbidden,
	}
}

// AuthOptions make a Server an OAuth 2.1 protected resource on Streamable
// HTTP: every request must carry an access token in an "Authorization:
// Bearer" header that Verifier accepts, except server/discover, which stays
// public unless DiscoverRequiresAuth is set. stdio is not affected.
type AuthOptions struct {
	// Verifier checks bearer tokens. Required.
	Verifier TokenVerifier
	// Resource is the canonical URI of this MCP server (RFC 8707), as
	// clients name it in the resource parameter and authorization servers
	// put it in the token audience, for example
	// "https://mcp.example.com/mcp". Required: an absolute http(s) URI
	// without query or fragment. It is the "resource" of the Protected
	// Resource Metadata, which is served at
	// /.well-known/oauth-protected-resource followed by its path.
	Resource string
	// AuthorizationServers are the issuer identifiers of the authorization
	// servers that issue tokens for this server. At least one is required.
	AuthorizationServers []string
	// ScopesSupported is the scopes_supported of the Protected Resource
	// Metadata: the minimal set of scopes for basic use of this server.
	// Default: RequiredScopes.
	ScopesSupported []string
	// RequiredScopes are scopes every authenticated request needs. They
	// are also the scope of the 401 challenge. Per-tool scopes (Tool.Scopes)
	// come on top.
	RequiredScopes []string
	// DiscoverRequiresAuth makes server/discover require a token too. By
	// default it is public, and it never lists primitives either way.
	DiscoverRequiresAuth bool
	// ScopeIncludes, when set, tells whether a granted scope implies a
	// required one (a scope hierarchy such as "files" implying
	// "files:read"). It is consulted only when the two differ and must be
	// safe for concurrent use.
	ScopeIncludes func(granted, required string) bool
	// ResourceName is the human-readable resource_name of the metadata.
	// Default: ServerOptions.Info.Title, else ServerOptions.Info.Name.
	ResourceName string
	// ResourceDocumentation is an optional URL of human-readable
	// documentation, sent as resource_documentation.
	ResourceDocumentation string
}

// wellKnownPRM is the well-known path prefix of RFC 9728.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// authState is everything about authorization that NewServer computes once.
type authState struct {
	opts         *AuthOptions // nil: the server is not protected
	required     []string
	metadata     []byte // the Protected Resource Metadata document
	metadataURL  string // absolute URL of the metadata, for challenges
	metadataPath string // the path part of metadataURL
	challenge    string // the parameters of the 401 challenge besides error
}

// initAuth is called by NewServer after the cache hint is built. It panics
// on programmer errors in ServerOptions.Auth.
func (s *Server) initAuth() {
	ao := s.opts.Auth
	if ao == nil {
		return
	}
	fail := func(format string, args ...any) {
		panic("mcp.NewServer: Auth: " + fmt.Sprintf(format, args...))
	}
	if ao.Verifier == nil {
		fail("missing Verifier")
	}
	u, err := parseResource(ao.Resource)
	if err != nil {
		fail("Resource %q: %v", ao.Resource, err)
	}
	if len(ao.AuthorizationServers) == 0 {
		fail("at least one AuthorizationServers entry is required")
	}
	for _, as := range ao.AuthorizationServers {
		if au, err := url.Parse(as); err != nil || !au.IsAbs() || au.Host == "" {
			fail("AuthorizationServers entry %q is not an absolute URL", as)
		}
	}
	for _, list := range [][]string{ao.ScopesSupported, ao.RequiredScopes} {
		for _, sc := range list {
			if err := checkScope(sc); err != nil {
				fail("%v", err)
			}
		}
	}
	a := &s.auth
	a.opts = ao
	a.required = slices.Clone(ao.RequiredScopes)
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	a.metadataPath = wellKnownPRM + path
	a.metadataURL = strings.ToLower(u.Scheme) + "://" + u.Host + a.metadataPath
	a.challenge = `resource_metadata="` + a.metadataURL + `"`
	if len(a.required) > 0 {
		a.challenge += `, scope="` + strings.Join(a.required, " ") + `"`
	}
	name := cmp.Or(ao.ResourceName, s.opts.Info.Title, s.opts.Info.Name)
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name,omitempty"`
		ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
	}{
		Resource:               ao.Resource,
		AuthorizationServers:   ao.AuthorizationServers,
		ScopesSupported:        cmpOrSlice(ao.ScopesSupported, ao.RequiredScopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           name,
		ResourceDocumentation:  ao.ResourceDocumentation,
	}
	a.metadata = mustMarshal(doc)
}

func cmpOrSlice(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// parseResource checks a resource identifier by RFC 8707 and the MCP rules
// for canonical server URIs.
func parseResource(r string) (*url.URL, error) {
	if r == "" {
		return nil, errors.New("missing (the canonical URI of this MCP server, such as https://mcp.example.com/mcp)")
	}
	u, err := url.Parse(r)
	if err != nil {
		return nil, err
	}
	switch {
	case !strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http"):
		return nil, errors.New("must be an absolute http or https URI")
	case u.Host == "":
		return nil, errors.New("has no host")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("must not have a query")
	case u.Fragment != "" || strings.Contains(r, "#"):
		return nil, errors.New("must not have a fragment")
	case strings.ContainsAny(r, "\"\\ {}"):
		return nil, errors.New("contains a character that is not allowed")
	}
	return u, nil
}

// checkScope checks one scope token (RFC 6749 section 3.3: printable ASCII
// except space, '"' and '\').
func checkScope(sc string) error {
	if sc == "" {
		return errors.New("empty scope")
	}
	for i := 0; i < len(sc); i++ {
		c := sc[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Errorf("scope %q: a scope may contain only printable ASCII without space, '\"' and '\\'", sc)
		}
	}
	return nil
}

// ProtectedResourceMetadataPath returns the URL path at which the Protected
// Resource Metadata (RFC 9728) of a protected server belongs, derived from
// AuthOptions.Resource ("/.well-known/oauth-protected-resource/mcp" for
// "https://example.com/mcp"), or "" when the server has no AuthOptions.
func (s *Server) ProtectedResourceMetadataPath() string {
	return s.auth.metadataPath
}

// ProtectedResourceMetadata returns an http.Handler that serves the
// Protected Resource Metadata document (RFC 9728) of the server: resource,
// authorization_servers, scopes_supported and bearer_methods_supported. It
// is public, cacheable and readable cross-origin. NewHTTPServer mounts it
// at ProtectedResourceMetadataPath and at the root well-known path
// /.well-known/oauth-protected-resource; mount it yourself when you build
// your own mux. Without AuthOptions it answers 404.
func (s *Server) ProtectedResourceMetadata() http.Handler {
	return http.HandlerFunc(s.serveMetadata)
}

var errNoMetadata = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Not Found: this server is not a protected resource", status: http.StatusNotFound}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", protocol.HeaderProtocolVersion)
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeHTTPError(w, jsonrpc.ID{}, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Method Not Allowed: the metadata accepts GET only", status: http.StatusMethodNotAllowed})
		return
	}
	if s.auth.opts == nil {
		writeHTTPError(w, jsonrpc.ID{}, errNoMetadata)
		return
	}
	h["Content-Type"] = jsonContentType
	h.Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(s.auth.metadata)
	}
}

// mountAuth adds the metadata routes of a protected server to mux.
func (s *Server) mountAuth(mux *http.ServeMux) {
	if s.auth.opts == nil {
		return
	}
	mux.Handle(s.auth.metadataPath, s.ProtectedResourceMetadata())
	if s.auth.metadataPath != wellKnownPRM {
		mux.Handle(wellKnownPRM, s.ProtectedResourceMetadata())
	}
}

// authenticate enforces AuthOptions on one decoded Streamable HTTP request.
// It returns the caller's Principal (nil when the server is not protected
// or the request is public server/discover), or ok == false after it has
// written the 400, 401, 403 or 503 response. The Authorization header is
// removed from the request, so that no handler can see, log or pass on the
// token.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) (p *Principal, ok bool) {
	a := &s.auth
	if a.opts == nil {
		return nil, true
	}
	authz := r.Header["Authorization"]
	delete(r.Header, "Authorization")
	if msg.Method == "server/discover" && !a.opts.DiscoverRequiresAuth {
		return nil, true
	}
	token, malformed := bearerToken(authz)
	if token == "" {
		if malformed {
			s.denyAuth(w, msg.ID, http.StatusBadRequest, "invalid_request", "Bad Request: malformed Authorization header; send exactly one \"Authorization: Bearer TOKEN\" header")
		} else {
			s.denyAuth(w, msg.ID, http.StatusUnauthorized, "", "Unauthorized: this server requires an OAuth bearer access token; see "+a.metadataURL)
		}
		return nil, false
	}
	p, err := a.opts.Verifier.VerifyToken(r.Context(), token)
	switch {
	case err == nil && p == nil:
		s.log.Error("mcp: TokenVerifier returned neither a principal nor an error")
		writeHTTPError(w, msg.ID, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
		return nil, false
	case errors.Is(err, ErrInsufficientScope):
		s.log.Debug("mcp: access token lacks scope", "method", logField(msg.Method), "err", logText(scrub(err, token)))
		var se *scopeError
		scopes := a.required
		if errors.As(err, &se) {
			scopes = se.scopes
		}
		s.denyScope(w, msg.ID, scopes)
		return nil, false
	case errors.Is(err, ErrInvalidToken):
		s.log.Debug("mcp: access token rejected", "method", logField(msg.Method), "remote", logField(r.RemoteAddr), "err", logText(scrub(err, token)))
		s.denyAuth(w, msg.ID, http.StatusUnauthorized, "invalid_token", "Unauthorized: the access token is invalid or expired")
		return nil, false
	case err != nil && r.Context().Err() != nil:
		return nil, false // the client went away while its token was checked
	case err != nil:
		s.log.Warn("mcp: access token could not be verified", "method", logField(msg.Method), "err", logText(scrub(err, token)))
		writeHTTPError(w, msg.ID, &Error{Code: jsonrpc.CodeInternalError, Message: "Service Unavailable: the access token could not be verified; try again later", status: http.StatusServiceUnavailable})
		return nil, false
	}
	pp := *p
	pp.includes = a.opts.ScopeIncludes
	if !pp.hasScopes(a.required) {
		s.log.Debug("mcp: access token lacks a required scope", "method", logField(msg.Method), "subject", logField(pp.Subject))
		s.denyScope(w, msg.ID, a.required)
		return nil, false
	}
	return &pp, true
}

// scrub returns the text of err with any copy of token replaced, so that a
// verifier that quotes the token cannot leak it into the logs.
func scrub(err error, token string) string {
	return strings.ReplaceAll(err.Error(), token, "[token]")
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
// malformed is set for a Bearer header without a token and for more than
// one Authorization header; another scheme counts as no token at all.
func bearerToken(h []string) (token string, malformed bool) {
	if len(h) == 0 {
		return "", false
	}
	if len(h) > 1 {
		return "", true
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if rest == "" || strings.ContainsAny(rest, " \t") {
		return "", true
	}
	return rest, false
}

// denyAuth writes a 400 or 401 response with its WWW-Authenticate
// challenge and a JSON-RPC error body.
func (s *Server) denyAuth(w http.ResponseWriter, id jsonrpc.ID, status int, oauthErr, msg string) {
	c := "Bearer " + s.auth.challenge
	e := &Error{Code: jsonrpc.CodeInvalidRequest, Message: msg, status: status}
	if oauthErr != "" {
		c = `Bearer error="` + oauthErr + `", ` + s.auth.challenge
		e.Data = map[string]string{"error": oauthErr}
	}
	w.Header().Set("WWW-Authenticate", c)
	writeHTTPError(w, id, e)
}

// denyScope writes a 403 insufficient_scope response.
func (s *Server) denyScope(w http.ResponseWriter, id jsonrpc.ID, scopes []string) {
	w.Header().Set("WWW-Authenticate", s.scopeChallenge(scopes))
	writeHTTPError(w, id, InsufficientScope(scopes...))
}

// scopeChallenge is the WWW-Authenticate value of a 403 for scopes.
func (s *Server) scopeChallenge(scopes []string) string {
	var b strings.Builder
	b.WriteString(`Bearer error="insufficient_scope"`)
	if len(scopes) > 0 {
		b.WriteString(`, scope="`)
		for i, sc := range scopes {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(quotedSafe(sc))
		}
		b.WriteByte('"')
	}
	if s.auth.metadataURL != "" {
		b.WriteString(`, resource_metadata="`)
		b.WriteString(s.auth.metadataURL)
		b.WriteByte('"')
	}
	b.WriteString(`, error_description="The access token lacks a scope this operation requires"`)
	return b.String()
}

// quotedSafe drops the characters that cannot appear in a quoted-string
// scope (scopes from handlers are not checked at registration).
func quotedSafe(sc string) string {
	if checkScope(sc) == nil {
		return sc
	}
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, sc)
}

// challengeFor gives the HTTP transport the WWW-Authenticate header of an
// insufficient-scope error that a method handler returned, in either era
// (a legacy session's request answered with JSON, too, so that legacy
// clients can step up). It does nothing on other transports, for other
// errors, and once an SSE stream has begun.
func (s *Server) challengeFor(n Notifier, e *Error) {
	var se *scopeError
	if !errors.As(e, &se) {
		return
	}
	if w, ok := n.(*sessionWrapper); ok {
		n = w.n
	}
	switch h := n.(type) {
	case *httpSink:
		h.mu.Lock()
		defer h.mu.Unlock()
		if !h.sse {
			h.w.Header().Set("WWW-Authenticate", s.scopeChallenge(se.scopes))
		}
	case *sseStream:
		h.mu.Lock()
		defer h.mu.Unlock()
		if c := h.conn; c != nil && !c.sse {
			c.w.Header().Set("WWW-Authenticate", s.scopeChallenge(se.scopes))
		}
	}
}

// requireScopes is the per-primitive authorization check of a request: a
// caller with a Principal must hold every one of scopes. A request without
// a Principal (stdio, or a server without AuthOptions) passes: its
// transport vouches for it. Prompts and resources call it with their own
// scopes once they declare some.
func (x *exchange) requireScopes(scopes []string) error {
	p := x.info.Principal
	if p == nil || len(scopes) == 0 || p.hasScopes(scopes) {
		return nil
	}
	all := make([]string, 0, len(x.s.auth.required)+len(scopes))
	all = append(all, x.s.auth.required...)
	for _, sc := range scopes {
		if !slices.Contains(all, sc) {
			all = append(all, sc)
		}
	}
	return InsufficientScope(all...)
}

// checkScopes checks the scopes declared at registration of the named
// item, panicking with the registration function's name on a bad one.
func checkScopes(fn, name string, scopes []string) {
	for _, sc := range scopes {
		if err := checkScope(sc); err != nil {
			panic(fmt.Sprintf("%s %q: %v", fn, name, err))
		}
	}
}
