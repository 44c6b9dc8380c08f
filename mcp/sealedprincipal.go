package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// HeaderSealedPrincipal is the HTTP header in which one replica of a
// protected server hands a request to another replica on behalf of the
// request's caller, without the caller's access token (which no handler
// sees, so that none can pass it on): see MethodRequest.SealPrincipal. A
// protected server accepts it in place of an Authorization header, and
// removes it from the request's headers before any handler runs.
const HeaderSealedPrincipal = "Mcpkit-Sealed-Principal"

// sealedPrincipalTTL is how long a sealed principal authenticates its
// request: long enough for one hop between replicas, short enough that a
// copy caught on the way is worth little.
const sealedPrincipalTTL = time.Minute

// sealedPrincipal is the wire form of a sealed principal.
type sealedPrincipal struct {
	Subject  string         `json:"s,omitempty"`
	Issuer   string         `json:"i,omitempty"`
	ClientID string         `json:"c,omitempty"`
	Scopes   []string       `json:"sc,omitempty"`
	Expiry   int64          `json:"e,omitempty"` // the token's, Unix ms; 0 when unknown
	Until    int64          `json:"u"`           // the seal's own end, Unix ms
	Claims   map[string]any `json:"cl,omitempty"`
}

// principalMethod keeps sealed principals apart from sealed requestStates
// and cursors.
func principalMethod(method string) string { return "principal\x00" + method }

// SealPrincipal returns the request's verified principal (Info.Principal)
// sealed with the server's state keys (ServerOptions.State) and bound to
// this request's method and params (its _meta, inputResponses and
// requestState aside), for another replica of the same server that the
// handler sends the request to: there, in the HeaderSealedPrincipal
// header of a POST with the same method and params, it authenticates the
// request as this caller for one minute, with the scopes the token
// granted. It is how a bridge replica forwards a retry to the replica
// holding its call when the front is protected: the caller's token never
// leaves the replica that verified it. It returns "" and no error when the
// request has no principal. Replicas trust each other through the shared
// state keys, as they do for requestState.
func (r *MethodRequest) SealPrincipal() (string, error) {
	x := r.x
	p := x.info.Principal
	if p == nil {
		return "", nil
	}
	sp := sealedPrincipal{Subject: p.Subject, Issuer: p.Issuer, ClientID: p.ClientID, Scopes: p.Scopes,
		Until: x.s.state.now().Add(sealedPrincipalTTL).UnixMilli(), Claims: p.Claims}
	if !p.Expiry.IsZero() {
		sp.Expiry = p.Expiry.UnixMilli()
	}
	b, err := json.Marshal(sp)
	if err != nil {
		return "", err
	}
	return x.s.state.sealState(principalMethod(x.method), x.params, "", b, nil)
}

// errSealedPrincipal is why a sealed principal was refused (for the log).
var errSealedPrincipal = errors.New("the sealed principal failed verification, belongs to another request, or has expired")

// openPrincipal verifies the sealed principal token presented with the
// request (method, params) and returns the principal it carries.
func (s *Server) openPrincipal(token, method string, params []byte) (*Principal, error) {
	pl, e := s.state.openState(token, principalMethod(method), params, "")
	if e != nil {
		return nil, errSealedPrincipal
	}
	var sp sealedPrincipal
	if err := json.Unmarshal(pl.user, &sp); err != nil {
		return nil, errSealedPrincipal
	}
	now := s.state.now().UnixMilli()
	if now >= sp.Until || (sp.Expiry != 0 && now >= sp.Expiry) {
		return nil, errSealedPrincipal
	}
	p := &Principal{Subject: sp.Subject, Issuer: sp.Issuer, ClientID: sp.ClientID, Scopes: sp.Scopes, Claims: sp.Claims}
	if sp.Expiry != 0 {
		p.Expiry = time.UnixMilli(sp.Expiry)
	}
	return p, nil
}

// takeSealedPrincipal removes the HeaderSealedPrincipal header from r and
// returns its value ("" when absent; more than one is refused as
// malformed).
func takeSealedPrincipal(r *http.Request) (v string, malformed bool) {
	h := r.Header[HeaderSealedPrincipal]
	if h == nil {
		return "", false
	}
	delete(r.Header, HeaderSealedPrincipal)
	if len(h) != 1 || h[0] == "" {
		return "", true
	}
	return h[0], false
}
