// Package auth is the OAuth side of an MCP client: an [http.RoundTripper]
// that finds the authorization server of a protected MCP server, obtains an
// access token for it and attaches that token to the server's requests.
//
// A [Transport] wraps the client's HTTP transport. On a 401 from the MCP
// server it reads the WWW-Authenticate challenge, fetches the Protected
// Resource Metadata (RFC 9728) and the authorization server metadata
// (RFC 8414, then OpenID Connect discovery), checks that both name the
// server and the issuer they claim, identifies the client (pre-registered
// credentials, a Client ID Metadata Document, or dynamic registration, in
// the specification's order of preference) and runs a grant: the
// authorization code grant with PKCE and the resource parameter (RFC 8707),
// or one of the machine grants ([ClientCredentialsGrant], [JWTBearerGrant],
// [EnterpriseGrant]). Tokens are refreshed before they expire and after a
// 401, a 403 insufficient_scope challenge triggers a step-up authorization
// with a bounded number of attempts, and tokens are bound to a DPoP key
// (RFC 9449) when the authorization server supports it.
//
// The interactive step of the authorization code grant, sending the user to
// the authorization server and receiving the redirect, is the host's:
// it implements [Interaction]. [Loopback] is one for command-line programs.
// Tokens and dynamic registrations live in a [TokenStore]; the default is
// in memory, and [FileStore] keeps them in a file only the user can read.
//
// Safety: a token is only sent to the resource it was issued for; tokens,
// secrets and codes never appear in errors or logs; every response from an
// authorization server is size-limited and validated; the state and the
// PKCE verifier are checked, as is the issuer of the authorization
// response (RFC 9207); authorization server endpoints must be HTTPS (plain
// HTTP is accepted for loopback hosts only); and redirects of metadata,
// registration and token requests are not followed.
//
// Errors are [*Error] values: match them with [errors.As] and read Code.
package auth
