package oauthtest_test

import (
	"context"
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
