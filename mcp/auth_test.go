package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/mcp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The tokens testVerifier knows. Any other token is invalid, and the
// verifier's error quotes it, so that tests can check that the server keeps
// tokens out of its logs even then.
const (
	aliceToken  = "alice-token-0123456789" // scope mcp
	adminToken  = "admin-token-0123456789" // scopes mcp admin
	bareToken   = "bare-token-0123456789"  // no scopes
	brokenToken = "broken-token-012345678" // the verifier cannot check it
	stepUpToken = "stepup-token-012345678" // the verifier says: needs mcp premium
)

var testVerifier = mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
	switch token {
	case aliceToken:
		return &mcp.Principal{Subject: "alice", Issuer: "https://auth.example.com", Scopes: []string{"mcp"}}, nil
	case adminToken:
		return &mcp.Principal{Subject: "root", Issuer: "https://auth.example.com", Scopes: []string{"mcp", "admin"}}, nil
	case bareToken:
		return &mcp.Principal{Subject: "bob", Issuer: "https://auth.example.com"}, nil
	case brokenToken:
		return nil, fmt.Errorf("key set unreachable while checking %s", token)
	case stepUpToken:
		return nil, mcp.InsufficientScope("mcp", "premium")
	}
	return nil, fmt.Errorf("%w: unknown token %s", mcp.ErrInvalidToken, token)
})

// testAuthOptions are the AuthOptions of the wire tests with "option auth
// MODE": "on" keeps server/discover public, "discover" protects it too.
func testAuthOptions(mode string) *mcp.AuthOptions {
	return &mcp.AuthOptions{
		Verifier:             testVerifier,
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		RequiredScopes:       []string{"mcp"},
		DiscoverRequiresAuth: mode == "discover",
	}
}

// addScopedTools registers the tools of the authorization tests.
func addScopedTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "admin_only", Description: "Needs the admin scope.", Scopes: []string{"admin"}},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "admin things done by " + req.Info.Principal.Subject, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says who the caller is."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			p := req.Info.Principal
			if p == nil {
				return "anonymous", nil
			}
			return fmt.Sprintf("%s scopes=%v admin=%v authorization-header-visible=%v", p.Subject, p.Scopes, p.HasScope("admin"), req.Info.Header.Get("Authorization") != ""), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "premium", Description: "Decides its scopes itself."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			if !req.Info.Principal.HasScope("premium") {
				return "", mcp.InsufficientScope("mcp", "premium")
			}
			return "premium", nil
		})
}

// authServer is a protected server on a loopback listener with the tools
// of addScopedTools, logging into logs at debug level.
func authServer(t *testing.T, opts *mcp.ServerOptions, logs io.Writer) (*mcp.Server, string) {
	t.Helper()
	o := mcp.ServerOptions{Info: mcp.Implementation{Name: "auth-test", Version: "1.0.0"}, Auth: testAuthOptions("on")}
	if opts != nil {
		o = *opts
	}
	if logs == nil {
		logs = io.Discard
	}
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := mcp.NewServer(&o)
	addScopedTools(s)
	ts := httptest.NewServer(s.NewHTTPServer("", "/mcp").Handler)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// rpc is one JSON-RPC request over Streamable HTTP.
type rpc struct {
	method, name, token string
	params              string // members besides _meta, e.g. `"name":"x","arguments":{}`
	notification        bool
	header              http.Header
}

type httpResult struct {
	status int
	header http.Header
	body   string
}

func (q rpc) do(t *testing.T, url string) httpResult {
	t.Helper()
	h := http.Header{}
	if q.token != "" {
		h.Set("Authorization", "Bearer "+q.token)
	}
	for k, v := range q.header {
		h[k] = v
	}
	r := mcpwire.Request{ID: "7", Notification: q.notification, Method: q.method, Name: q.name, Params: "{" + q.params + "}", Header: h}
	req, err := r.NewRequest(context.Background(), url+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) httpResult {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpResult{resp.StatusCode, resp.Header, string(b)}
}

const (
	challenge401   = `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"`
	challengeAdmin = `Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"`
)

// TestAuthStatusAndChallenge checks the status, WWW-Authenticate header and
// JSON-RPC error body of every way a request can fail or pass
// authorization.
func TestAuthStatusAndChallenge(t *testing.T) {
	_, url := authServer(t, nil, nil)
	premium := `Bearer error="insufficient_scope", scope="mcp premium", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"`
	tests := []struct {
		name      string
		q         rpc
		status    int
		challenge string
		code      int // JSON-RPC error code, 0 for a result
	}{
		{"discover is public", rpc{method: "server/discover"}, 200, "", 0},
		{"discover ignores a bad token", rpc{method: "server/discover", token: "garbage"}, 200, "", 0},
		{"no token", rpc{method: "tools/list"}, 401, challenge401, -32600},
		{"other scheme", rpc{method: "tools/list", header: http.Header{"Authorization": {"Basic YWxpY2U6c2VjcmV0"}}}, 401, challenge401, -32600},
		{"invalid token", rpc{method: "tools/list", token: "garbage"}, 401, `Bearer error="invalid_token", ` + challenge401[len("Bearer "):], -32600},
		{"empty bearer", rpc{method: "tools/list", header: http.Header{"Authorization": {"Bearer "}}}, 400, `Bearer error="invalid_request", ` + challenge401[len("Bearer "):], -32600},
		{"two headers", rpc{method: "tools/list", header: http.Header{"Authorization": {"Bearer " + aliceToken, "Bearer " + adminToken}}}, 400, `Bearer error="invalid_request", ` + challenge401[len("Bearer "):], -32600},
		{"lowercase scheme", rpc{method: "tools/list", header: http.Header{"Authorization": {"bearer " + aliceToken}}}, 200, "", 0},
		{"verifier down", rpc{method: "tools/list", token: brokenToken}, 503, "", -32603},
		{"lacks required scope", rpc{method: "tools/list", token: bareToken}, 403, `Bearer error="insufficient_scope", scope="mcp", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"`, -32600},
		{"verifier says insufficient", rpc{method: "tools/list", token: stepUpToken}, 403, premium, -32600},
		{"valid", rpc{method: "tools/list", token: aliceToken}, 200, "", 0},
		{"tool scope missing", rpc{method: "tools/call", name: "admin_only", token: aliceToken, params: `"name":"admin_only"`}, 403, challengeAdmin, -32600},
		{"tool scope held", rpc{method: "tools/call", name: "admin_only", token: adminToken, params: `"name":"admin_only"`}, 200, "", 0},
		{"handler asks for scope", rpc{method: "tools/call", name: "premium", token: aliceToken, params: `"name":"premium"`}, 403, premium, -32600},
		{"notification without token", rpc{method: "notifications/cancelled", notification: true, params: `"requestId":1`}, 401, challenge401, -32600},
		{"notification with token", rpc{method: "notifications/cancelled", notification: true, token: aliceToken, params: `"requestId":1`}, 202, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.q.do(t, url)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %s", r.status, tt.status, r.body)
			}
			if got := r.header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate:\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.status == 202 {
				return
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var msg struct {
				ID    json.RawMessage `json:"id"`
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.body), &msg); err != nil {
				t.Fatalf("body is not JSON-RPC: %v: %s", err, r.body)
			}
			code := 0
			if msg.Error != nil {
				code = msg.Error.Code
			}
			if code != tt.code {
				t.Errorf("error code %d, want %d: %s", code, tt.code, r.body)
			}
			wantID := "7"
			if tt.q.notification {
				wantID = "null"
			}
			if string(msg.ID) != wantID {
				t.Errorf("id %s, want %s", msg.ID, wantID)
			}
		})
	}
}

// TestAuthDiscoverRequiresAuth checks the opt-in protection of
// server/discover.
func TestAuthDiscoverRequiresAuth(t *testing.T) {
	o := &mcp.ServerOptions{Auth: testAuthOptions("discover")}
	_, url := authServer(t, o, nil)
	if r := (rpc{method: "server/discover"}).do(t, url); r.status != 401 || r.header.Get("WWW-Authenticate") != challenge401 {
		t.Errorf("without a token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	if r := (rpc{method: "server/discover", token: aliceToken}).do(t, url); r.status != 200 {
		t.Errorf("with a token: %d %s", r.status, r.body)
	}
}

// TestAuthDiscoverRevealsNoTools checks that public discover describes the
// server without naming any tool, protected or not.
func TestAuthDiscoverRevealsNoTools(t *testing.T) {
	_, url := authServer(t, nil, nil)
	r := rpc{method: "server/discover"}.do(t, url)
	for _, name := range []string{"admin_only", "whoami", "premium"} {
		if strings.Contains(r.body, name) {
			t.Errorf("discover names tool %q: %s", name, r.body)
		}
	}
	if !strings.Contains(r.body, `"cacheScope":"public"`) {
		t.Errorf("discover is not public: %s", r.body)
	}
}

type listResult struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
	CacheScope string `json:"cacheScope"`
}

func toolsList(t *testing.T, url, token, cursor string) listResult {
	t.Helper()
	q := rpc{method: "tools/list", token: token}
	if cursor != "" {
		q.params = `"cursor":"` + cursor + `"`
	}
	r := q.do(t, url)
	if r.status != 200 {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}
	var msg struct {
		Result listResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.body), &msg); err != nil {
		t.Fatal(err)
	}
	return msg.Result
}

// TestAuthToolsListFiltered checks that tools/list hides the tools a
// caller lacks scopes for, on every page, and marks every page private.
func TestAuthToolsListFiltered(t *testing.T) {
	o := &mcp.ServerOptions{Auth: testAuthOptions("on"), PageSize: 1}
	_, url := authServer(t, o, nil)
	tests := []struct {
		token string
		want  []string
	}{
		{aliceToken, []string{"premium", "whoami"}},
		{adminToken, []string{"admin_only", "premium", "whoami"}},
	}
	for _, tt := range tests {
		var names []string
		cursor := ""
		for page := 0; page < 10; page++ {
			r := toolsList(t, url, tt.token, cursor)
			if r.CacheScope != "private" {
				t.Errorf("token %s page %d: cacheScope %q, want private", tt.token, page, r.CacheScope)
			}
			for _, tool := range r.Tools {
				names = append(names, tool.Name)
			}
			if cursor = r.NextCursor; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(tt.want, names); diff != "" {
			t.Errorf("token %s: tools (-want +got):\n%s", tt.token, diff)
		}
	}
}

// TestAuthListPublicWithoutScopedTools checks that a protected server
// whose tools declare no scopes keeps its lists public: they do not depend
// on the caller.
func TestAuthListPublicWithoutScopedTools(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Auth: testAuthOptions("on")})
	mcp.AddTool(s, &mcp.Tool{Name: "plain", Description: "Needs no scope."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	ts := httptest.NewServer(s)
	defer ts.Close()
	r := toolsList(t, ts.URL, aliceToken, "")
	if r.CacheScope != "public" || len(r.Tools) != 1 {
		t.Errorf("got %+v, want one tool, public", r)
	}
}

// TestAuthPrincipalReachesHandler checks that handlers see the principal
// and never the token.
func TestAuthPrincipalReachesHandler(t *testing.T) {
	_, url := authServer(t, nil, nil)
	r := rpc{method: "tools/call", name: "whoami", token: adminToken, params: `"name":"whoami"`}.do(t, url)
	want := `root scopes=[mcp admin] admin=true authorization-header-visible=false`
	if !strings.Contains(r.body, want) {
		t.Errorf("got %s, want text %q", r.body, want)
	}
}

// TestAuthScopeIncludes checks scope hierarchies: a broader granted scope
// satisfies a narrower required one when ScopeIncludes says so.
func TestAuthScopeIncludes(t *testing.T) {
	ao := testAuthOptions("on")
	ao.RequiredScopes = []string{"mcp:read"}
	ao.ScopeIncludes = func(granted, required string) bool {
		return strings.HasPrefix(required, granted+":")
	}
	_, url := authServer(t, &mcp.ServerOptions{Auth: ao}, nil)
	if r := (rpc{method: "tools/list", token: aliceToken}).do(t, url); r.status != 200 {
		t.Errorf("scope mcp should include mcp:read: %d %s", r.status, r.body)
	}
	if r := (rpc{method: "tools/list", token: bareToken}).do(t, url); r.status != 403 {
		t.Errorf("no scopes: %d, want 403", r.status)
	}
}

// TestAuthTransportRulesHold checks that Origin checks, the body limit and
// media type checks still come first and still answer JSON-RPC errors on a
// protected server, with or without a token.
func TestAuthTransportRulesHold(t *testing.T) {
	o := &mcp.ServerOptions{Auth: testAuthOptions("on"), MaxMessageBytes: 512}
	_, url := authServer(t, o, nil)
	tests := []struct {
		name   string
		q      rpc
		status int
		msg    string
	}{
		{"evil origin with token", rpc{method: "tools/list", token: aliceToken, header: http.Header{"Origin": {"http://evil.example"}}}, 403, "Forbidden: Origin not allowed"},
		{"evil origin without token", rpc{method: "tools/list", header: http.Header{"Origin": {"http://evil.example"}}}, 403, "Forbidden: Origin not allowed"},
		{"too large with token", rpc{method: "tools/list", token: aliceToken, params: `"pad":"` + strings.Repeat("x", 600) + `"`}, 413, "Request body too large"},
		{"too large without token", rpc{method: "tools/list", params: `"pad":"` + strings.Repeat("x", 600) + `"`}, 413, "Request body too large"},
		{"wrong media type", rpc{method: "tools/list", token: aliceToken, header: http.Header{"Content-Type": {"text/plain"}}}, 415, "Unsupported Media Type: Content-Type must be application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.q.do(t, url)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + tt.msg + `"}}`
			if r.body != want {
				t.Errorf("body %s\nwant %s", r.body, want)
			}
		})
	}
}

// TestProtectedResourceMetadata checks the RFC 9728 document at both
// well-known paths.
func TestProtectedResourceMetadata(t *testing.T) {
	ao := testAuthOptions("on")
	ao.ScopesSupported = []string{"mcp", "admin"}
	ao.ResourceDocumentation = "https://mcp.example.com/docs"
	s, url := authServer(t, &mcp.ServerOptions{Info: mcp.Implementation{Title: "Example MCP"}, Auth: ao}, nil)
	if got := s.ProtectedResourceMetadataPath(); got != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("ProtectedResourceMetadataPath() = %q", got)
	}
	want := `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp","admin"],"bearer_methods_supported":["header"],"resource_name":"Example MCP","resource_documentation":"https://mcp.example.com/docs"}`
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		r := send(t, req)
		if r.status != 200 || r.body != want {
			t.Errorf("GET %s: %d %s\nwant %s", path, r.status, r.body, want)
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=3600"} {
			if got := r.header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, v)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/.well-known/oauth-protected-resource/mcp", strings.NewReader("{}"))
	if r := send(t, req); r.status != 405 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(r.body, `"code":-32600`) {
		t.Errorf("POST: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
}

// TestProtectedResourceMetadataUnprotected checks the handler of a server
// without AuthOptions, and that NewHTTPServer does not mount it.
func TestProtectedResourceMetadataUnprotected(t *testing.T) {
	s := mcp.NewServer(nil)
	w := httptest.NewRecorder()
	s.ProtectedResourceMetadata().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource", nil))
	if w.Code != 404 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("handler: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	w = httptest.NewRecorder()
	s.NewHTTPServer("", "").Handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	if w.Code != 404 {
		t.Errorf("NewHTTPServer mounted metadata on an unprotected server: %d", w.Code)
	}
}

// TestAuthStdioUnaffected checks that stdio needs no token and is not
// filtered: its caller is trusted by the environment.
func TestAuthStdioUnaffected(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Auth: testAuthOptions("discover")})
	addScopedTools(s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami",` + meta + `}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}` + "\n"
	var out bytes.Buffer
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"text":"anonymous"`, `"name":"admin_only"`, `"cacheScope":"public"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout lacks %s:\n%s", want, got)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes by a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestAuthLogsNoTokens checks that no token reaches the server's logs, at
// debug level, even from a verifier whose errors quote the token.
func TestAuthLogsNoTokens(t *testing.T) {
	var logs syncBuffer
	_, url := authServer(t, nil, &logs)
	tokens := []string{"secret-garbage-token-4242", brokenToken, bareToken, stepUpToken, aliceToken}
	for _, tok := range tokens {
		rpc{method: "tools/list", token: tok}.do(t, url)
		rpc{method: "tools/call", name: "admin_only", token: tok, params: `"name":"admin_only"`}.do(t, url)
	}
	out := logs.String()
	if !strings.Contains(out, "access token rejected") || !strings.Contains(out, "could not be verified") {
		t.Fatalf("expected auth failures to be logged:\n%s", out)
	}
	for _, tok := range tokens {
		if strings.Contains(out, tok) {
			t.Errorf("the logs contain token %q:\n%s", tok, out)
		}
	}
}

// TestAuthOptionsPanics checks that configuration mistakes are caught by
// NewServer and AddTool, naming what is wrong.
func TestAuthOptionsPanics(t *testing.T) {
	ok := func() *mcp.AuthOptions { return testAuthOptions("on") }
	tests := []struct {
		name string
		mod  func(*mcp.AuthOptions)
		want string
	}{
		{"no verifier", func(a *mcp.AuthOptions) { a.Verifier = nil }, "missing Verifier"},
		{"no resource", func(a *mcp.AuthOptions) { a.Resource = "" }, "Resource"},
		{"relative resource", func(a *mcp.AuthOptions) { a.Resource = "mcp.example.com" }, "absolute"},
		{"fragment", func(a *mcp.AuthOptions) { a.Resource = "https://mcp.example.com/mcp#x" }, "fragment"},
		{"query", func(a *mcp.AuthOptions) { a.Resource = "https://mcp.example.com/mcp?x=1" }, "query"},
		{"no authorization server", func(a *mcp.AuthOptions) { a.AuthorizationServers = nil }, "AuthorizationServers"},
		{"bad scope", func(a *mcp.AuthOptions) { a.RequiredScopes = []string{"two words"} }, "scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ok()
			tt.mod(a)
			msg := catchPanic(func() { mcp.NewServer(&mcp.ServerOptions{Auth: a}) })
			if !strings.Contains(msg, "Auth") || !strings.Contains(msg, tt.want) {
				t.Errorf("panic %q, want one mentioning %q", msg, tt.want)
			}
		})
	}
	msg := catchPanic(func() {
		mcp.AddTool(mcp.NewServer(nil), &mcp.Tool{Name: "x", Description: "d", Scopes: []string{`bad"scope`}},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	})
	if !strings.Contains(msg, `AddTool "x"`) {
		t.Errorf("AddTool panic %q", msg)
	}
}

func catchPanic(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestInsufficientScopeError checks the error value tool handlers return.
func TestInsufficientScopeError(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", mcp.InsufficientScope("files:write"))
	if !errors.Is(err, mcp.ErrInsufficientScope) {
		t.Error("errors.Is(err, ErrInsufficientScope) = false")
	}
	var e *mcp.Error
	if !errors.As(err, &e) || e.HTTPStatus() != 403 || e.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("got %#v", e)
	}
}

// ExampleAuthOptions puts a server behind an authorization server and
// shows what a client without a token gets.
func ExampleAuthOptions() {
	verifier := mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
		// In production: oauth.NewJWTVerifier(...), or token introspection.
		return nil, mcp.ErrInvalidToken
	})
	s := mcp.NewServer(&mcp.ServerOptions{Auth: &mcp.AuthOptions{
		Verifier:             verifier,
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		RequiredScopes:       []string{"mcp:tools"},
	}})
	h := s.NewHTTPServer(":8080", "/mcp").Handler

	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	fmt.Println(w.Code)
	fmt.Println(w.Header().Get("WWW-Authenticate"))

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, s.ProtectedResourceMetadataPath(), nil))
	fmt.Println(w.Body.String())
	// Output:
	// 401
	// Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"
	// {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"mcpkit"}
}

// ExampleServer_ProtectedResourceMetadata mounts a protected server on a
// mux of one's own: the MCP endpoint, and the metadata where clients look
// for it.
func ExampleServer_ProtectedResourceMetadata() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "files"}, Auth: &mcp.AuthOptions{
		Verifier:             testVerifier,
		Resource:             "https://api.example.com/files/mcp",
		AuthorizationServers: []string{"https://login.example.com"},
	}})
	mux := http.NewServeMux()
	mux.Handle("/files/mcp", s)
	mux.Handle(s.ProtectedResourceMetadataPath(), s.ProtectedResourceMetadata())

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/files/mcp", nil))
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 200 {"resource":"https://api.example.com/files/mcp","authorization_servers":["https://login.example.com"],"bearer_methods_supported":["header"],"resource_name":"files"}
}

// ExampleInsufficientScope shows a tool that decides from its arguments
// which scopes a call needs, and asks for them (step-up authorization).
func ExampleInsufficientScope() {
	s := mcp.NewServer(&mcp.ServerOptions{Auth: testAuthOptions("on")})
	type in struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Reads a file; files under /secret need the secret scope."},
		func(ctx context.Context, req *mcp.ToolRequest, in in) (string, error) {
			if strings.HasPrefix(in.Path, "/secret/") && !req.Info.Principal.HasScope("secret") {
				return "", mcp.InsufficientScope("mcp", "secret")
			}
			return "contents of " + in.Path, nil
		})

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/secret/plan"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "read_file")
	req.Header.Set("Authorization", "Bearer "+aliceToken) // grants "mcp" only
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	fmt.Println(w.Code)
	fmt.Println(w.Header().Get("WWW-Authenticate"))
	// Output:
	// 403
	// Bearer error="insufficient_scope", scope="mcp secret", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"
}

// TestAuthPrimitiveScopes checks that scopes declared on prompts, resources
// and resource templates hide them from lists (which become private) and
// make get/read answer 403 insufficient_scope, as scoped tools do.
func TestAuthPrimitiveScopes(t *testing.T) {
	s, url := authServer(t, nil, nil)
	text := func(s string) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: s}}}, nil
		}
	}
	s.AddPrompt(&mcp.Prompt{Name: "admin_prompt", Description: "Needs admin.", Scopes: []string{"admin"}},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "secret prompt"}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "open_prompt", Description: "For everyone."},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "open"}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://admin", Name: "admin", Scopes: []string{"admin"}}, text("secret"))
	s.AddResource(&mcp.Resource{URI: "test://open", Name: "open"}, text("open"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "vault://{id}", Name: "vault", Scopes: []string{"admin"}}, text("vaulted"))

	tests := []struct {
		name   string
		q      rpc
		status int
		has    []string // substrings the body must hold
		hasNot []string // and must not
	}{
		{"prompts/list hides scoped prompts", rpc{method: "prompts/list", token: aliceToken}, 200, []string{`"cacheScope":"private"`, "open_prompt"}, []string{"admin_prompt"}},
		{"prompts/list shows them to admin", rpc{method: "prompts/list", token: adminToken}, 200, []string{`"cacheScope":"private"`, "open_prompt", "admin_prompt"}, nil},
		{"prompts/get needs the scope", rpc{method: "prompts/get", name: "admin_prompt", token: aliceToken, params: `"name":"admin_prompt"`}, 403, []string{"insufficient_scope", "mcp admin"}, []string{"secret prompt"}},
		{"prompts/get with the scope", rpc{method: "prompts/get", name: "admin_prompt", token: adminToken, params: `"name":"admin_prompt"`}, 200, []string{"secret prompt"}, nil},
		{"resources/list hides scoped resources", rpc{method: "resources/list", token: aliceToken}, 200, []string{`"cacheScope":"private"`, "test://open"}, []string{"test://admin"}},
		{"templates/list hides scoped templates", rpc{method: "resources/templates/list", token: aliceToken}, 200, []string{`"cacheScope":"private"`}, []string{"vault://"}},
		{"resources/read needs the scope", rpc{method: "resources/read", name: "test://admin", token: aliceToken, params: `"uri":"test://admin"`}, 403, []string{"insufficient_scope"}, []string{"secret"}},
		{"template read needs the scope", rpc{method: "resources/read", name: "vault://7", token: aliceToken, params: `"uri":"vault://7"`}, 403, []string{"insufficient_scope"}, []string{"vaulted"}},
		{"resources/read with the scope", rpc{method: "resources/read", name: "vault://7", token: adminToken, params: `"uri":"vault://7"`}, 200, []string{"vaulted"}, nil},
		{"unscoped resource for everyone", rpc{method: "resources/read", name: "test://open", token: aliceToken, params: `"uri":"test://open"`}, 200, []string{`"text":"open"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.q.do(t, url)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			for _, s := range tt.has {
				if !strings.Contains(r.body, s) {
					t.Errorf("body lacks %q: %s", s, r.body)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(r.body, s) {
					t.Errorf("body holds %q: %s", s, r.body)
				}
			}
		})
	}
}

// TestAuthLogBounded sends a method name of 3 MiB with a token the
// verifier rejects: the debug line that says so carries at most 256 bytes
// of the method.
func TestAuthLogBounded(t *testing.T) {
	var logs strings.Builder
	_, url := authServer(t, nil, &logs)
	huge := strings.Repeat("m", 3<<20)
	body := `{"jsonrpc":"2.0","id":1,"method":"` + huge + `","params":{}}`
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer not-a-known-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	out := logs.String()
	if !strings.Contains(out, "access token rejected") {
		t.Fatalf("no rejection logged:\n%.1000s", out)
	}
	if len(out) > 8<<10 {
		t.Errorf("the log holds %d bytes after one rejected request: %.300s", len(out), out)
	}
}
