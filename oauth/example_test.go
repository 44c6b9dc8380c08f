package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
)

// ExampleNewJWTVerifier protects a server with JWT access tokens from one
// authorization server. The key set is fetched on first use; a token that
// is not even a JWT is refused without fetching anything.
func ExampleNewJWTVerifier() {
	const resource = "https://mcp.example.com/mcp"
	v, err := oauth.NewJWTVerifier(&oauth.JWTOptions{
		Issuer:   "https://auth.example.com",
		Audience: resource, // tokens for any other resource are refused
		JWKSURL:  "https://auth.example.com/.well-known/jwks.json",
	})
	if err != nil {
		log.Fatal(err)
	}
	s := mcp.NewServer(&mcp.ServerOptions{Auth: &mcp.AuthOptions{
		Verifier:             v,
		Resource:             resource,
		AuthorizationServers: []string{"https://auth.example.com"},
		RequiredScopes:       []string{"mcp"},
	}})
	fmt.Println(s.ProtectedResourceMetadataPath())

	_, err = v.VerifyToken(context.Background(), "not-a-jwt")
	fmt.Println(errors.Is(err, mcp.ErrInvalidToken))
	// Output:
	// /.well-known/oauth-protected-resource/mcp
	// true
}
