package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// testAS is an authorization server (oauth/oauthtest, wrapped to record what the client sent
// and to misbehave on demand) and a protected MCP resource server, both on 127.0.0.1.
type testAS struct {
	t   *testing.T
	oas *oauthtest.Server
	as  *oauthtest.Server // the same: a.as.URL is the issuer
	rs  *httptest.Server

	mu sync.Mutex
	// configuration
	meta        map[string]any             // extra or overriding AS metadata (nil removes)
	prm         map[string]any             // overriding PRM fields
	issInRedir  string                     // "correct" (default), "omit", "wrong", "slash"
	refresh     bool                       // let refresh tokens through to the client
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
	clientIDs        []string // client IDs the AS registered, in order
	codes            []string // authorization codes it issued
	issued           []string // access tokens it issued, in order
	refreshIssued    []string // refresh tokens it issued, in order
	seenAuth         []string // Authorization headers at the RS
	challenges       map[string]string
	tokens           map[string][]string // access token -> granted scopes, what the RS accepts
}

func newTestAS(t *testing.T) *testAS {
	a := &testAS{t: t, issInRedir: "correct", challenges: map[string]string{}, tokens: map[string][]string{}}
	a.oas = oauthtest.NewServer(t, &oauthtest.Options{Wrap: a.wrap})
	a.as = a.oas
	a.rs = httptest.NewServer(http.HandlerFunc(a.serveRS))
	t.Cleanup(a.rs.Close)
	return a
}

func (a *testAS) mcpURL() string { return a.rs.URL + "/mcp" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// wrap records the requests to the authorization server and applies the configuration:
// answers of its own (tokenStatus, regBody), and changes to oauthtest's answers (meta,
// issInRedir, withhold, refresh).
func (a *testAS) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		switch r.URL.Path {
		case "/register":
			a.registrations++
			if a.regBody != "" {
				body := a.regBody
				a.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(201)
				w.Write([]byte(body))
				return
			}
		case "/authorize":
			a.authorizeQueries = append(a.authorizeQueries, r.URL.Query())
		case "/token":
			r.ParseForm()
			a.tokenForms = append(a.tokenForms, r.PostForm)
			a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
			if a.tokenStatus != 0 {
				status, body := a.tokenStatus, a.tokenBody
				a.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				w.Write([]byte(body))
				return
			}
		}
		a.mu.Unlock()

		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		a.mu.Lock()
		defer a.mu.Unlock()
		body := rec.Body.Bytes()
		edit := func(f func(m map[string]any)) {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				f(m)
				body, _ = json.Marshal(m)
			}
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			edit(func(m map[string]any) {
				for k, v := range a.meta {
					if v == nil {
						delete(m, k)
					} else {
						m[k] = v
					}
				}
			})
		case "/register":
			edit(func(m map[string]any) { a.clientIDs = append(a.clientIDs, fmt.Sprint(m["client_id"])) })
		case "/authorize":
			if loc, err := url.Parse(rec.Header().Get("Location")); err == nil {
				q := loc.Query()
				a.codes = append(a.codes, q.Get("code"))
				switch a.issInRedir {
				case "omit":
					q.Del("iss")
				case "wrong":
					q.Set("iss", "https://evil.example")
				case "slash":
					q.Set("iss", a.oas.URL+"/")
				}
				loc.RawQuery = q.Encode()
				rec.Header().Set("Location", loc.String())
			}
		case "/token":
			if rec.Code == http.StatusOK {
				edit(func(m map[string]any) {
					scopes := strings.Fields(fmt.Sprint(m["scope"]))
					if i := slices.Index(scopes, a.withhold); a.withhold != "" && i >= 0 {
						scopes = slices.Delete(scopes, i, i+1)
						m["scope"] = strings.Join(scopes, " ")
					}
					at := fmt.Sprint(m["access_token"])
					a.tokens[at] = scopes
					a.issued = append(a.issued, at)
					if rt, ok := m["refresh_token"].(string); ok {
						if a.refresh {
							a.refreshIssued = append(a.refreshIssued, rt)
						} else {
							delete(m, "refresh_token")
						}
					}
				})
			}
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
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
