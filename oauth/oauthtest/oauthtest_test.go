package oauthtest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/auth"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// protected starts an MCP server on 127.0.0.1 that needs a token of as with scope "notes:read",
// and "notes:write" for the tool "write". It returns its URL.
func protected(t *testing.T, as *oauthtest.Server) string {
	t.Helper()
	var h http.Handler
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(rs.Close)
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "notes"}, Auth: &mcp.AuthOptions{
		Verifier: as.Verifier(rs.URL + "/mcp"), Resource: rs.URL + "/mcp",
		AuthorizationServers: []string{as.URL}, RequiredScopes: []string{"notes:read"},
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the caller."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			p := req.Info.Principal
			return p.Subject + " " + strings.Join(p.Scopes, ","), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes.", Scopes: []string{"notes:write"}},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "written", nil })
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	h = s.NewHTTPServer("", "/mcp").Handler
	return rs.URL + "/mcp"
}

func connect(t *testing.T, mcpURL string, opts auth.Options) (*client.Client, error) {
	t.Helper()
	tr, err := auth.NewTransport(mcpURL, &opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: mcpURL, HTTPClient: tr.Client()}, nil)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func call(t *testing.T, c *client.Client, tool string) (string, error) {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, nil)
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// TestGrants runs both grants end to end: the client/auth transport finds the server through
// the MCP server's metadata, gets a token, and the MCP server's verifier accepts it.
func TestGrants(t *testing.T) {
	tests := []struct {
		name string
		opts func(as *oauthtest.Server) auth.Options
		want string
	}{
		{name: "client credentials", opts: func(as *oauthtest.Server) auth.Options {
			return auth.Options{Grant: auth.ClientCredentialsGrant{}, Client: &auth.Client{ID: as.ClientID, Secret: as.ClientSecret}}
		}, want: "oauthtest-client notes:read"},
		{name: "authorization code with PKCE, registered dynamically", opts: func(as *oauthtest.Server) auth.Options {
			return auth.Options{Interaction: as.Interaction(), NoDPoP: true}
		}, want: "oauthtest-user notes:read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.NewServer(t, &oauthtest.Options{Scopes: []string{"notes:read", "notes:write"}})
			c, err := connect(t, protected(t, as), tt.opts(as))
			if err != nil {
				t.Fatal(err)
			}
			got, err := call(t, c, "whoami")
			if err != nil || got != tt.want {
				t.Errorf("whoami = %q, %v; want %q", got, err, tt.want)
			}
			// A step-up for notes:write, which the server grants.
			if got, err := call(t, c, "write"); err != nil || got != "written" {
				t.Errorf("write after a step-up = %q, %v", got, err)
			}
		})
	}
}

// TestWithheldScope: a scope the server does not grant ends in an insufficient_scope error
// naming it, after one step-up.
func TestWithheldScope(t *testing.T) {
	as := oauthtest.NewServer(t, &oauthtest.Options{Scopes: []string{"notes:read"}})
	c, err := connect(t, protected(t, as), auth.Options{Grant: auth.ClientCredentialsGrant{}, Client: &auth.Client{ID: as.ClientID, Secret: as.ClientSecret}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, c, "write")
	var ae *auth.Error
	if !errors.As(err, &ae) || ae.Code != "insufficient_scope" || !cmp.Equal(ae.MissingScopes, []string{"notes:write"}) {
		t.Fatalf("write = %v, want an insufficient_scope error naming notes:write", err)
	}
	if n := len(as.TokenRequests()); n != 2 {
		t.Errorf("%d token requests, want 2 (the token, one step-up)", n)
	}
}

// TestMintedTokens: what a test sets on the server shows in the tokens the MCP server sees.
func TestMintedTokens(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	mcpURL := protected(t, as)
	tests := []struct {
		name     string
		token    string
		wantCode int
	}{
		{name: "good", token: as.Token(&oauthtest.TokenOptions{Audience: mcpURL, Scopes: []string{"notes:read"}}), wantCode: 200},
		{name: "another audience", token: as.Token(&oauthtest.TokenOptions{Audience: "https://elsewhere.example/mcp", Scopes: []string{"notes:read"}}), wantCode: 401},
		{name: "expired", token: as.Token(&oauthtest.TokenOptions{Audience: mcpURL, Scopes: []string{"notes:read"}, Expiry: -time.Hour}), wantCode: 401},
		{name: "without the scope", token: as.Token(&oauthtest.TokenOptions{Audience: mcpURL}), wantCode: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := mcpwire.Request{Method: "tools/list"}.NewRequest(context.Background(), mcpURL)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tt.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tt.wantCode)
			}
		})
	}

	// SetAudience: tokens from a grant now name another resource, and the MCP server refuses them.
	as.SetAudience("https://elsewhere.example/mcp")
	c, err := connect(t, mcpURL, auth.Options{Grant: auth.ClientCredentialsGrant{}, Client: &auth.Client{ID: as.ClientID, Secret: as.ClientSecret}})
	if err == nil {
		_, err = call(t, c, "whoami")
	}
	if err == nil {
		t.Error("a client whose tokens are for another audience was let in")
	}
}

// TestTokenEndpointRefuses: the token endpoint checks what a strict server checks.
func TestTokenEndpointRefuses(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	post := func(form url.Values, id, secret string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, as.URL+"/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if id != "" {
			req.SetBasicAuth(id, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A code for a PKCE challenge, through /authorize.
	code := func(challenge string) string {
		q := url.Values{"response_type": {"code"}, "client_id": {as.ClientID}, "redirect_uri": {"http://127.0.0.1:1/cb"},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"s"}}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(as.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc.Query().Get("iss") != as.URL || loc.Query().Get("state") != "s" {
			t.Errorf("the redirect %s lacks iss or state", loc)
		}
		return loc.Query().Get("code")
	}
	tests := []struct {
		name     string
		form     url.Values
		id, sec  string
		wantCode int
		wantErr  string
	}{
		{name: "client credentials", form: url.Values{"grant_type": {"client_credentials"}}, id: as.ClientID, sec: as.ClientSecret, wantCode: 200},
		{name: "wrong secret", form: url.Values{"grant_type": {"client_credentials"}}, id: as.ClientID, sec: "nope", wantCode: 401, wantErr: "invalid_client"},
		{name: "wrong PKCE verifier", form: url.Values{"grant_type": {"authorization_code"}, "code": {code("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")},
			"redirect_uri": {"http://127.0.0.1:1/cb"}, "code_verifier": {"not-the-verifier"}}, id: as.ClientID, sec: as.ClientSecret, wantCode: 400, wantErr: "invalid_grant"},
		{name: "right PKCE verifier", form: url.Values{"grant_type": {"authorization_code"}, "code": {code("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")},
			"redirect_uri": {"http://127.0.0.1:1/cb"}, "code_verifier": {"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}}, id: as.ClientID, sec: as.ClientSecret, wantCode: 200},
		{name: "unknown grant", form: url.Values{"grant_type": {"password"}}, id: as.ClientID, sec: as.ClientSecret, wantCode: 400, wantErr: "unsupported_grant_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(tt.form, tt.id, tt.sec)
			if code != tt.wantCode || !strings.Contains(body, tt.wantErr) {
				t.Errorf("HTTP %d %s; want %d with %q", code, body, tt.wantCode, tt.wantErr)
			}
		})
	}
}
