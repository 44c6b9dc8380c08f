package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	iclient "github.com/mcpkit/mcpkit/internal/client"
)

// MaxDocumentBytes bounds every response body read from an authorization
// server or a metadata endpoint. A longer body is an error.
const MaxDocumentBytes = 256 << 10

// ResourceMetadata is the part of an RFC 9728 Protected Resource Metadata
// document the client uses.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is the part of an RFC 8414 authorization server metadata
// document (or an OpenID Provider configuration) the client uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// readBody reads at most MaxDocumentBytes of a response body.
func readBody(op string, resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return nil, &Error{Op: op, Code: CodeInvalidResponse, Status: resp.StatusCode, Err: err}
	}
	if len(body) > MaxDocumentBytes {
		return nil, errf(op, CodeInvalidResponse, "response from %s is larger than %d bytes", safeURL(resp.Request.URL), MaxDocumentBytes)
	}
	return body, nil
}

// getJSON fetches a JSON document. found is false for a 3xx or 4xx answer,
// which well-known probing takes for "not here".
func getJSON(ctx context.Context, c *http.Client, op, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, &Error{Op: op, Code: CodeDiscovery, Description: "bad URL " + safeString(u)}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false, &Error{Op: op, Code: CodeDiscovery, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 500 {
		// Not there (redirects are not followed: a document must be at its own URL).
		io.Copy(io.Discard, io.LimitReader(resp.Body, MaxDocumentBytes))
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, &Error{Op: op, Code: CodeDiscovery, Status: resp.StatusCode, Description: "unexpected status from " + safeURL(req.URL)}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return false, errf(op, CodeInvalidResponse, "%s answered %q, not JSON", safeURL(req.URL), clean(mt))
		}
	}
	body, err := readBody(op, resp)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, errf(op, CodeInvalidResponse, "%s: malformed JSON: %v", safeURL(req.URL), jsonErr(err))
	}
	return true, nil
}

// jsonErr describes a JSON error without quoting the document.
func jsonErr(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	return "not a JSON object"
}

// safeURL renders a URL without its query, fragment and user information.
func safeURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.RawQuery, c.Fragment, c.RawFragment = nil, "", "", ""
	return clean(c.String())
}

func safeString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return safeURL(u)
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint requires an absolute https URL without a fragment, or
// http on a loopback host.
func checkEndpoint(op, what, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, errf(op, CodeInvalidResponse, "%s %s is not an absolute URL", what, safeString(s))
	}
	if u.Fragment != "" || u.User != nil {
		return nil, errf(op, CodeInvalidResponse, "%s %s has a fragment or user information", what, safeURL(u))
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, errf(op, CodeInsecureEndpoint, "%s %s is not an https URL", what, safeURL(u))
	}
	return u, nil
}

// covers reports whether the resource identifier res names the server at
// target: the same origin, and res's path a prefix of target's path at a
// segment boundary (RFC 9728 §3.3 with the MCP canonical server URI).
func covers(res string, target *url.URL) bool {
	r, err := url.Parse(res)
	if err != nil || !r.IsAbs() || r.Fragment != "" || !iclient.SameOrigin(r, target) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	tp := strings.TrimSuffix(target.EscapedPath(), "/")
	return rp == "" || tp == rp || strings.HasPrefix(tp, rp+"/")
}

// prmURLs returns the well-known Protected Resource Metadata URLs for a
// server, in the order the specification gives: path-based, then root.
func prmURLs(server *url.URL) []string {
	base := url.URL{Scheme: server.Scheme, Host: server.Host}
	var out []string
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		u := base
		u.Path = "/.well-known/oauth-protected-resource" + server.Path
		u.Path = strings.TrimSuffix(u.Path, "/")
		out = append(out, u.String())
	}
	u := base
	u.Path = "/.well-known/oauth-protected-resource"
	return append(out, u.String())
}

// discoverResource fetches the Protected Resource Metadata, from the
// challenge's resource_metadata when present, else from the well-known URLs,
// and validates it against the server URL.
func discoverResource(ctx context.Context, c *http.Client, server *url.URL, metadataURL string) (*ResourceMetadata, error) {
	const op = "discover"
	var urls []string
	if metadataURL != "" {
		if _, err := checkEndpoint(op, "resource_metadata", metadataURL); err != nil {
			return nil, err
		}
		urls = []string{metadataURL}
	} else {
		urls = prmURLs(server)
	}
	for _, u := range urls {
		var m ResourceMetadata
		found, err := getJSON(ctx, c, op, u, &m)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if m.Resource == "" {
			return nil, errf(op, CodeInvalidResponse, "protected resource metadata at %s has no resource", safeString(u))
		}
		if !covers(m.Resource, server) {
			return nil, errf(op, CodeResourceMismatch, "protected resource metadata names resource %s, not this server (%s)", safeString(m.Resource), safeURL(server))
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, errf(op, CodeDiscovery, "protected resource metadata at %s lists no authorization server", safeString(u))
		}
		return &m, nil
	}
	return nil, errf(op, CodeDiscovery, "no protected resource metadata for %s", safeURL(server))
}

// asMetadataURLs returns the metadata URLs for an issuer, in the
// specification's priority order.
func asMetadataURLs(issuer *url.URL) []string {
	base := url.URL{Scheme: issuer.Scheme, Host: issuer.Host}
	p := strings.TrimSuffix(issuer.Path, "/")
	mk := func(path string) string { u := base; u.Path = path; return u.String() }
	if p == "" {
		return []string{mk("/.well-known/oauth-authorization-server"), mk("/.well-known/openid-configuration")}
	}
	return []string{
		mk("/.well-known/oauth-authorization-server" + p),
		mk("/.well-known/openid-configuration" + p),
		mk(p + "/.well-known/openid-configuration"),
	}
}

// discoverServer fetches and validates the metadata of the authorization
// server with the given issuer identifier.
func discoverServer(ctx context.Context, c *http.Client, issuer string) (*ServerMetadata, error) {
	const op = "metadata"
	iu, err := checkEndpoint(op, "issuer", issuer)
	if err != nil {
		return nil, err
	}
	if iu.RawQuery != "" {
		return nil, errf(op, CodeInvalidResponse, "issuer %s has a query", safeURL(iu))
	}
	for _, u := range asMetadataURLs(iu) {
		var m ServerMetadata
		found, err := getJSON(ctx, c, op, u, &m)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		// RFC 8414 §3.3: the issuer must be identical to the one the URL was built from.
		if m.Issuer != issuer {
			return nil, errf(op, CodeIssuerMismatch, "metadata at %s is for issuer %s, not %s", safeString(u), safeString(m.Issuer), safeURL(iu))
		}
		if _, err := checkEndpoint(op, "token_endpoint", m.TokenEndpoint); err != nil {
			return nil, err
		}
		for what, e := range map[string]string{"authorization_endpoint": m.AuthorizationEndpoint, "registration_endpoint": m.RegistrationEndpoint} {
			if e != "" {
				if _, err := checkEndpoint(op, what, e); err != nil {
					return nil, err
				}
			}
		}
		return &m, nil
	}
	return nil, errf(op, CodeDiscovery, "no authorization server metadata for issuer %s", safeURL(iu))
}

// supportsPKCE reports whether the metadata advertises S256; without
// code_challenge_methods_supported the client must not proceed.
func (m *ServerMetadata) supportsPKCE() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}
