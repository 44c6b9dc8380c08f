package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/url"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Grant type and token type URIs.
const (
	GrantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	assertionTypeJWT   = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// Token endpoint authentication methods.
const (
	AuthNone          = "none"
	AuthSecretBasic   = "client_secret_basic"
	AuthSecretPost    = "client_secret_post"
	AuthPrivateKeyJWT = "private_key_jwt"
)

// Client is a pre-registered OAuth client.
type Client struct {
	// ID is the client identifier.
	ID string
	// Secret is the client secret, for client_secret_basic or client_secret_post.
	Secret string
	// PrivateKey signs client assertions (private_key_jwt, RFC 7523 §2.2):
	// an *ecdsa.PrivateKey, *rsa.PrivateKey or ed25519.PrivateKey.
	PrivateKey crypto.Signer
	// SigningAlg is the assertion's JWS algorithm; default from the key
	// (ES256 for P-256, RS256 for RSA, EdDSA for Ed25519).
	SigningAlg string
	// KeyID, when set, is the assertion header's kid.
	KeyID string
	// AuthMethod forces a token endpoint authentication method; by default
	// it is chosen from the key, the secret and the server's metadata.
	AuthMethod string
	// Issuer, when set, is the only authorization server these credentials
	// are used with (credentials are specific to the server that issued them).
	Issuer string
}

// ParsePrivateKeyPEM reads a PKCS #8, PKCS #1 or SEC 1 private key in PEM form.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("auth: no PEM block in private key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
	}
	if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("auth: unsupported private key")
}

// Grant selects how the transport obtains tokens. The zero value of
// Options.Grant (nil) is the authorization code grant with PKCE.
type Grant interface{ grant() }

// ClientCredentialsGrant is the client credentials grant (OAuth 2.1 §4.2,
// the MCP client credentials extension): the client acts on its own behalf
// with the credentials of Options.Client (a secret or a private key).
type ClientCredentialsGrant struct{}

// JWTBearerGrant is the JWT bearer grant (RFC 7523 §2.1), used for workload
// identity federation: the assertion is a JWT the workload's platform issued,
// with the authorization server as audience. Options.Client is optional.
type JWTBearerGrant struct {
	// Assertion returns the JWT to present; it is called for every token request.
	Assertion func(ctx context.Context) (string, error)
}

// EnterpriseGrant is enterprise-managed authorization (the MCP extension):
// the user's identity assertion (an ID token from the enterprise identity
// provider) is exchanged at the identity provider for an Identity Assertion
// JWT Authorization Grant (ID-JAG, RFC 8693 token exchange), which the
// authorization server trades for an access token (RFC 7523 JWT bearer),
// authenticated with Options.Client.
type EnterpriseGrant struct {
	// TokenURL is the identity provider's token endpoint.
	TokenURL string
	// ClientID and ClientSecret authenticate the client at the identity provider.
	ClientID, ClientSecret string
	// IDToken returns the user's ID token from the identity provider.
	IDToken func(ctx context.Context) (string, error)
}

func (ClientCredentialsGrant) grant() {}
func (JWTBearerGrant) grant()         {}
func (EnterpriseGrant) grant()        {}

// clientAuth is how the client authenticates at one authorization server.
type clientAuth struct {
	id, secret, method string
	key                crypto.Signer
	alg, kid           string
}

// chooseMethod picks the token endpoint authentication method.
func chooseMethod(m *ServerMetadata, secret string, key crypto.Signer) string {
	if key != nil {
		return AuthPrivateKeyJWT
	}
	if secret == "" {
		return AuthNone
	}
	sup := m.TokenEndpointAuthMethodsSupported
	switch {
	case len(sup) == 0 || slices.Contains(sup, AuthSecretBasic): // RFC 8414 default
		return AuthSecretBasic
	case slices.Contains(sup, AuthSecretPost):
		return AuthSecretPost
	}
	return AuthSecretBasic
}

func keyAlg(k crypto.Signer) string {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 384:
			return "ES384"
		case 521:
			return "ES512"
		}
		return "ES256"
	case *rsa.PrivateKey:
		return "RS256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return ""
}

// assertion signs a client assertion for the authorization server issuer
// (RFC 7523 §3: the audience is the issuer identifier).
func (ca *clientAuth) assertion(audience string) (string, error) {
	alg := ca.alg
	if alg == "" {
		alg = keyAlg(ca.key)
	}
	opts := &jose.SignerOptions{}
	if ca.kid != "" {
		opts = opts.WithHeader("kid", ca.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: ca.key}, opts.WithType("JWT"))
	if err != nil {
		return "", errf("token", CodeNoClient, "cannot sign a client assertion with algorithm %s", alg)
	}
	jti := make([]byte, 16)
	rand.Read(jti)
	now := time.Now()
	return jwt.Signed(s).Claims(jwt.Claims{
		Issuer:   ca.id,
		Subject:  ca.id,
		Audience: jwt.Audience{audience},
		ID:       base64.RawURLEncoding.EncodeToString(jti),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}).Serialize()
}

// authParams applies the client authentication to a token request:
// the oauth2 auth style, the secret to pass, and any assertion parameters.
func (ca *clientAuth) authParams(audience string, params url.Values) (oauth2.AuthStyle, string, error) {
	switch ca.method {
	case AuthSecretBasic:
		return oauth2.AuthStyleInHeader, ca.secret, nil
	case AuthSecretPost:
		return oauth2.AuthStyleInParams, ca.secret, nil
	case AuthPrivateKeyJWT:
		a, err := ca.assertion(audience)
		if err != nil {
			return 0, "", err
		}
		params.Set("client_assertion_type", assertionTypeJWT)
		params.Set("client_assertion", a)
		return oauth2.AuthStyleInParams, "", nil
	}
	return oauth2.AuthStyleInParams, "", nil
}

// tokenRequest posts a grant to a token endpoint with golang.org/x/oauth2's
// token client (clientcredentials.Config allows any grant_type), which
// bounds the response to 1 MiB and requires an access_token.
func tokenRequest(ctx context.Context, op, tokenURL, audience string, ca *clientAuth, params url.Values, scopes []string) (*oauth2.Token, error) {
	if params == nil {
		params = url.Values{}
	}
	style, secret, err := ca.authParams(audience, params)
	if err != nil {
		return nil, err
	}
	cc := clientcredentials.Config{
		ClientID:       ca.id,
		ClientSecret:   secret,
		TokenURL:       tokenURL,
		Scopes:         scopes,
		EndpointParams: params,
		AuthStyle:      style,
	}
	tok, err := cc.Token(ctx)
	if err != nil {
		return nil, tokenError(op, err)
	}
	return tok, nil
}
