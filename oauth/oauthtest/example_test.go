package oauthtest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// A protected MCP server and a client that signs in with the client-credentials grant, both
// against a test authorization server. (In a test, oauthtest.NewServer(t, opts) also stops it.)
func ExampleStart() {
	as, err := oauthtest.Start(&oauthtest.Options{Scopes: []string{"notes:read"}})
	if err != nil {
		log.Fatal(err)
	}
	defer as.Close()

	var h http.Handler
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer rs.Close()
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "notes"}, Auth: &mcp.AuthOptions{
		Verifier: as.Verifier(rs.URL + "/mcp"), Resource: rs.URL + "/mcp",
		AuthorizationServers: []string{as.URL}, RequiredScopes: []string{"notes:read"},
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the caller."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "you are " + req.Info.Principal.Subject, nil
		})
	h = s.NewHTTPServer("", "/mcp").Handler

	tr, err := auth.NewTransport(rs.URL+"/mcp", &auth.Options{Grant: auth.ClientCredentialsGrant{}, Client: &auth.Client{ID: as.ClientID, Secret: as.ClientSecret}})
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
	// Output:
	// you are oauthtest-client
}

// A verifier under test against an authorization server that rotates its signing key, retires
// the old one, and then has its JWK Set go down. (In a test, oauthtest.NewServer(t, opts) also
// stops the server.)
func ExampleServer_RotateKey() {
	as, err := oauthtest.Start(&oauthtest.Options{Algorithm: "EdDSA"})
	if err != nil {
		log.Fatal(err)
	}
	defer as.Close()
	const resource = "https://mcp.example.com/mcp"
	ctx := context.Background()
	v := as.Verifier(resource) // or oauth.NewJWTVerifier with the options under test
	token := func(o oauthtest.TokenOptions) string {
		o.Audience = resource
		return as.Token(&o)
	}

	old := as.KeyID()
	_, err = v.VerifyToken(ctx, token(oauthtest.TokenOptions{}))
	fmt.Println("signed with", old, "->", err)

	current := as.RotateKey("ES256") // published next to the old key, and signs from now on
	as.RetireKey(old)                // out of the JWK Set, though the server can still sign with it
	v.Refresh(ctx)                   // as the verifier does on its own schedule
	_, err = v.VerifyToken(ctx, token(oauthtest.TokenOptions{}))
	fmt.Println("signed with", current, "->", err)
	_, err = v.VerifyToken(ctx, token(oauthtest.TokenOptions{KeyID: old}))
	fmt.Println("signed with the retired", old, "-> invalid token:", errors.Is(err, mcp.ErrInvalidToken))
	_, err = v.VerifyToken(ctx, token(oauthtest.TokenOptions{Claims: map[string]any{"iss": "https://evil.example"}}))
	fmt.Println("another issuer -> invalid token:", errors.Is(err, mcp.ErrInvalidToken))

	as.SetJWKSFailure(http.StatusServiceUnavailable)
	_, err = as.Verifier(resource).VerifyToken(ctx, token(oauthtest.TokenOptions{}))
	fmt.Println("JWK Set down -> invalid token:", errors.Is(err, mcp.ErrInvalidToken), "| fetches:", as.JWKSRequests())
	// Output:
	// signed with oauthtest-1 -> <nil>
	// signed with oauthtest-2 -> <nil>
	// signed with the retired oauthtest-1 -> invalid token: true
	// another issuer -> invalid token: true
	// JWK Set down -> invalid token: false | fetches: 3
}
