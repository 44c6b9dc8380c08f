package auth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/auth"
	"github.com/mcpkit/mcpkit/mcp"
)

// followRedirect is an Interaction without a user: the example's
// authorization server approves at once, so requesting the authorization
// URL yields the redirect. A real host opens a browser (see Loopback).
type followRedirect struct{}

func (followRedirect) RedirectURL() string { return "http://127.0.0.1:9999/callback" }

func (followRedirect) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return loc.Query(), nil
}

// The public client against a protected server: the first request gets
// 401, the transport discovers the authorization server, registers, signs
// in and retries; the tool then sees who called it.
func ExampleTransport_client() {
	// A toy authorization server: it approves every request and issues
	// the opaque token "t-<scope>".
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/authorize","token_endpoint":"%[1]s/token",
				"registration_endpoint":"%[1]s/register","code_challenge_methods_supported":["S256"]}`, as.URL)
		case "/register":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"client_id":"example-client"}`)
		case "/authorize":
			q := r.URL.Query()
			back := url.Values{"code": {"c-" + q.Get("scope")}, "state": {q.Get("state")}}
			http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
		case "/token":
			r.ParseForm()
			fmt.Fprintf(w, `{"access_token":"t-%s","token_type":"Bearer","expires_in":3600}`, strings.TrimPrefix(r.PostForm.Get("code"), "c-"))
		}
	}))
	defer as.Close()

	// The MCP server, a resource server of that authorization server.
	var handler http.Handler
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer rs.Close()
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "protected", Version: "1.0.0"}, Auth: &mcp.AuthOptions{
		Resource:             rs.URL + "/mcp",
		AuthorizationServers: []string{as.URL},
		RequiredScopes:       []string{"notes"},
		Verifier: mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
			if token != "t-notes" {
				return nil, mcp.ErrInvalidToken
			}
			return &mcp.Principal{Subject: "ada", Issuer: as.URL, Scopes: []string{"notes"}}, nil
		}),
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the caller."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "you are " + req.Info.Principal.Subject, nil
		})
	handler = s.NewHTTPServer("", "/mcp").Handler

	tr, err := auth.NewTransport(rs.URL+"/mcp", &auth.Options{Interaction: followRedirect{}})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: rs.URL + "/mcp", HTTPClient: tr.Client()}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "whoami", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	tok, _ := tr.Token(ctx)
	fmt.Println("scopes:", tok.Scopes)
	// Output:
	// you are ada
	// scopes: [notes]
}
