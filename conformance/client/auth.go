package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/auth"
)

// The auth/* scenarios: every one connects through client/auth, lists the
// tools and calls each, as an application would. What differs is how the
// client is set up (its grant, its pre-registered credentials), which comes
// from the scenario's name and MCP_CONFORMANCE_CONTEXT.
var authScenarios = []string{
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
	"auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	"auth/pre-registration", "auth/resource-mismatch",
	"auth/offline-access-scope", "auth/offline-access-not-supported",
	"auth/authorization-server-migration",
	"auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer",
	"auth/iss-unexpected", "auth/iss-normalized", "auth/metadata-issuer-mismatch",
	// Extensions.
	"auth/client-credentials-basic", "auth/client-credentials-jwt", "auth/enterprise-managed-authorization",
	"auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer",
}

func init() {
	for _, name := range authScenarios {
		scenarios[name] = authorized
	}
}

// clientMetadataURL is the Client ID Metadata Document URL the suite
// expects (auth/basic-cimd); nothing is served there, and the scenario
// servers do not fetch it.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// authorized runs the generic scenario through an authorizing transport.
func authorized(ctx context.Context, serverURL string) error {
	opts, err := authOptions(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		return err
	}
	tr, err := auth.NewTransport(serverURL, &opts)
	if err != nil {
		return err
	}
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: serverURL, HTTPClient: tr.Client()}, options())
	if err != nil {
		return err
	}
	defer c.Close()
	return callAll(ctx, c)
}

// authOptions configures client/auth for a scenario.
func authOptions(name, rawContext string) (auth.Options, error) {
	var cx map[string]string
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &cx); err != nil {
			return auth.Options{}, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	opts := auth.Options{
		Interaction:       headless{},
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "mcpkit-conformance-client",
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if cx["client_id"] != "" {
		opts.Client = &auth.Client{ID: cx["client_id"], Secret: cx["client_secret"]}
	}
	switch name {
	case "auth/client-credentials-basic":
		opts.Grant = auth.ClientCredentialsGrant{}
	case "auth/client-credentials-jwt":
		key, err := auth.ParsePrivateKeyPEM([]byte(cx["private_key_pem"]))
		if err != nil {
			return opts, err
		}
		opts.Grant = auth.ClientCredentialsGrant{}
		opts.Client = &auth.Client{ID: cx["client_id"], PrivateKey: key, SigningAlg: cx["signing_algorithm"]}
	case "auth/enterprise-managed-authorization":
		opts.Grant = auth.EnterpriseGrant{
			TokenURL: cx["idp_token_endpoint"],
			ClientID: cx["idp_client_id"],
			IDToken:  func(context.Context) (string, error) { return cx["idp_id_token"], nil },
		}
	case "auth/wif-jwt-bearer":
		opts.Grant = auth.JWTBearerGrant{Assertion: func(context.Context) (string, error) { return cx["valid_jwt"], nil }}
	}
	return opts, nil
}

// headless is the user's step without a user: it requests the
// authorization URL, which the scenario servers answer at once with a
// redirect, and hands back the redirect's query. The redirect must go to
// the redirect URL the client registered.
type headless struct{}

const redirectURL = "http://127.0.0.1:3000/callback"

func (headless) RedirectURL() string { return redirectURL }

func (headless) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		return nil, fmt.Errorf("the authorization endpoint answered %d, not a redirect", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectURL+"?") {
		return nil, errors.New("the authorization endpoint redirected elsewhere than the redirect URL")
	}
	return loc.Query(), nil
}
