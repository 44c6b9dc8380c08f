package auth

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/oauth2"
)

// Error codes that are not OAuth error codes. The OAuth codes an
// authorization server returns (invalid_grant, access_denied, ...) are
// passed through as they are.
const (
	// CodeDiscovery: no usable Protected Resource Metadata or authorization
	// server metadata was found.
	CodeDiscovery = "discovery_failed"
	// CodeResourceMismatch: the Protected Resource Metadata names another
	// resource than the server.
	CodeResourceMismatch = "resource_mismatch"
	// CodeIssuerMismatch: an issuer (in metadata or in the authorization
	// response) is not the one expected.
	CodeIssuerMismatch = "issuer_mismatch"
	// CodeStateMismatch: the authorization response carries another state.
	CodeStateMismatch = "state_mismatch"
	// CodeInvalidResponse: an authorization server answered something that
	// is not a valid response.
	CodeInvalidResponse = "invalid_response"
	// CodeNoClient: the client cannot identify itself to the authorization
	// server (no pre-registration, no Client ID Metadata Document support,
	// no registration endpoint).
	CodeNoClient = "no_client_identity"
	// CodeInteractionRequired: the authorization code grant needs an
	// [Interaction] and none was configured.
	CodeInteractionRequired = "interaction_required"
	// CodeUnauthorized: the server still refuses the request after
	// authorization (401), or a step-up did not help within the limit (403).
	CodeUnauthorized = "unauthorized"
	// CodeInsecureEndpoint: an endpoint is not HTTPS and not on a loopback host.
	CodeInsecureEndpoint = "insecure_endpoint"
)

// Error is an authorization failure. It never contains a token, a secret,
// an authorization code or a PKCE verifier.
type Error struct {
	// Op is the step that failed: "discover", "metadata", "register",
	// "authorize", "token", "refresh" or "request".
	Op string
	// Code is an OAuth error code from the authorization server, or one of
	// the Code constants of this package.
	Code string
	// Description is a human-readable explanation (from the server, with
	// control characters removed and its length bounded, or from this package).
	Description string
	// Status is the HTTP status of the response that failed, or 0.
	Status int
	// Err is the underlying error, if any (a network error, say).
	Err error
	// MissingScopes are, for an insufficient_scope refusal, the scopes the
	// server's challenge asks for that the token lacks (also named in
	// Description); empty when the server did not say.
	MissingScopes []string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("auth: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Code)
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func errf(op, code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Description: fmt.Sprintf(format, args...)}
}

// maxDescription bounds a description taken from a server.
const maxDescription = 300

// clean makes a server-supplied string safe to show: printable characters
// only, bounded in length.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxDescription {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tokenError turns an error of golang.org/x/oauth2 into an *Error. The
// RetrieveError's message quotes the response body; only its code and
// description are kept.
func tokenError(op string, err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		e := &Error{Op: op, Code: re.ErrorCode, Description: clean(re.ErrorDescription)}
		if re.Response != nil {
			e.Status = re.Response.StatusCode
		}
		if e.Code == "" {
			e.Code = CodeInvalidResponse
		}
		return e
	}
	if strings.HasPrefix(err.Error(), "oauth2: ") {
		// Parse failures and a missing access_token; these messages do not
		// quote the response.
		return &Error{Op: op, Code: CodeInvalidResponse, Description: strings.TrimPrefix(err.Error(), "oauth2: ")}
	}
	return &Error{Op: op, Code: CodeInvalidResponse, Err: err}
}
