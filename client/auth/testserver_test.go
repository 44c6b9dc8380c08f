package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// testAS is an authorization server and a protected MCP resource server,
// both on 127.0.0.1, recording what the client sent.
type testAS struct {
	t  *testing.T
	as *httptest.Server
	rs *httptest.Server

	mu sync.Mutex
	// configuration
	meta        map[string]any             // extra or overriding AS metadata
	prm         map[string]any             // overriding PRM fields
	issInRedir  string                     // "correct" (default), "omit", "wrong"
	expiresIn   int                        // default 3600
	refresh     bool                       // issue refresh tokens
	need        func(method string) string // scope a JSON-RPC method needs; "" none
	wwwScope    string                     // scope in the 401 challenge
	rejectOnce  bool                       // answer 401 to the next valid token
	tokenStatus int                        // force an error status at the token endpoint
	tokenBody   string                     // with this body
	withhold    string                     // a scope never granted
	regBody     string                     // when set, the registration answer (201)

	// records
	authorizeQueries []url.Values
	tokenForms       []url.Values
	tokenAuth        []string
	registrations    int
	seenAuth         []string // Authorization headers at the RS
	challenges       map[string]string
	tokens           map[string][]string // access token -> scopes
	refreshTokens    map[string][]string
}

func newTestAS(t *testing.T) *testAS {
	a := &testAS{t: t, issInRedir: "correct", expiresIn: 3600, challenges: map[string]string{},
		tokens: map[string][]string{}, refreshTokens: map[string][]string{}}
	a.as = httptest.NewServer(http.HandlerFunc(a.serveAS))
	a.rs = httptest.NewServer(http.HandlerFunc(a.serveRS))
	t.Cleanup(a.as.Close)
	t.Cleanup(a.rs.Close)
	return a
}

func (a *testAS) mcpURL() string { return a.rs.URL + "/mcp" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (a *testAS) serveAS(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer":                                         a.as.URL,
			"authorization_endpoint":                         a.as.URL + "/authorize",
			"token_endpoint":                                 a.as.URL + "/token",
			"registration_endpoint":                          a.as.URL + "/register",
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic"},
			"authorization_response_iss_parameter_supported": true,
		}
		for k, v := range a.meta {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		writeJSON(w, 200, m)
	case "/register":
		a.registrations++
		if a.regBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(a.regBody))
			return
		}
		writeJSON(w, 201, map[string]any{"client_id": fmt.Sprintf("client-%d", a.registrations), "client_secret": "reg-secret", "token_endpoint_auth_method": "client_secret_basic"})
	case "/authorize":
		q := r.URL.Query()
		a.authorizeQueries = append(a.authorizeQueries, q)
		ru, _ := url.Parse(q.Get("redirect_uri"))
		rq := url.Values{"code": {"code-" + q.Get("code_challenge")}, "state": {q.Get("state")}}
		switch a.issInRedir {
		case "correct":
			rq.Set("iss", a.as.URL)
		case "wrong":
			rq.Set("iss", "https://evil.example")
		case "slash":
			rq.Set("iss", a.as.URL+"/")
		}
		ru.RawQuery = rq.Encode()
		http.Redirect(w, r, ru.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		a.tokenForms = append(a.tokenForms, r.PostForm)
		a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
		if a.tokenStatus != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.tokenStatus)
			w.Write([]byte(a.tokenBody))
			return
		}
		var scopes []string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			code := r.PostForm.Get("code")
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if code != "code-"+base64.RawURLEncoding.EncodeToString(sum[:]) {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
				return
			}
			last := a.authorizeQueries[len(a.authorizeQueries)-1]
			scopes = strings.Fields(last.Get("scope"))
		case "refresh_token":
			s, ok := a.refreshTokens[r.PostForm.Get("refresh_token")]
			if !ok {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			scopes = s
		case "client_credentials":
			scopes = strings.Fields(r.PostForm.Get("scope"))
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		withheld := false
		for i, sc := range scopes {
			if sc == a.withhold {
				scopes = append(scopes[:i:i], scopes[i+1:]...)
				withheld = true
				break
			}
		}
		tok := fmt.Sprintf("at-%d", len(a.tokenForms))
		a.tokens[tok] = scopes
		resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": a.expiresIn}
		if withheld { // RFC 6749 §5.1: the granted scope, as it differs from the requested one
			resp["scope"] = strings.Join(scopes, " ")
		}
		if a.refresh {
			rt := fmt.Sprintf("rt-%d", len(a.tokenForms))
			a.refreshTokens[rt] = scopes
			resp["refresh_token"] = rt
		}
		writeJSON(w, 200, resp)
	default:
		http.NotFound(w, r)
	}
}

func (a *testAS) serveRS(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	prmURL := a.rs.URL + "/.well-known/oauth-protected-resource/mcp"
	if r.URL.Path != "/mcp" && !strings.HasPrefix(r.URL.Path, "/.well-known/") {
		a.seenAuth = append(a.seenAuth, r.Header.Get("Authorization"))
	}
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		m := map[string]any{"resource": a.mcpURL(), "authorization_servers": []string{a.as.URL}}
		for k, v := range a.prm {
			m[k] = v
		}
		writeJSON(w, 200, m)
	case "/mcp":
		var msg struct {
			Method string `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&msg)
		h := r.Header.Get("Authorization")
		a.seenAuth = append(a.seenAuth, h)
		challenge := `Bearer resource_metadata="` + prmURL + `"`
		if a.wwwScope != "" {
			challenge += `, scope="` + a.wwwScope + `"`
		}
		scopes, ok := a.tokens[strings.TrimPrefix(h, "Bearer ")]
		if !ok || !strings.HasPrefix(h, "Bearer ") {
			w.Header().Set("WWW-Authenticate", challenge)
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		if a.rejectOnce {
			a.rejectOnce = false
			delete(a.tokens, strings.TrimPrefix(h, "Bearer "))
			w.Header().Set("WWW-Authenticate", challenge+`, error="invalid_token"`)
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		if a.need != nil {
			if s := a.need(msg.Method); s != "" && !strings.Contains(" "+strings.Join(scopes, " ")+" ", " "+s+" ") {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+s+`", resource_metadata="`+prmURL+`"`)
				writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
				return
			}
		}
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
	case "/other401":
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+prmURL+`"`)
		w.WriteHeader(401)
	default:
		http.NotFound(w, r)
	}
}

// headless is an Interaction that follows the authorization server's
// redirect without a browser, optionally tampering with the response.
type headless struct {
	tamper func(url.Values)
	calls  int
}

func (h *headless) RedirectURL() string { return "http://127.0.0.1:1/callback" }

func (h *headless) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	h.calls++
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	q := loc.Query()
	if h.tamper != nil {
		h.tamper(q)
	}
	return q, nil
}

// post sends one JSON-RPC request through the client.
func post(t *testing.T, c *http.Client, u, method string) (*http.Response, error) {
	t.Helper()
	req, err := mcpwire.Request{Method: method}.NewRequest(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}
