package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// loginAS is an authorization server on 127.0.0.1 that approves every
// authorization request at once and mints RFC 9068 access tokens
// (typ at+jwt) for the resource and scopes asked for.
type loginAS struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey

	mu            sync.Mutex
	audience      string // when set, the aud of every token instead of the resource
	codes         map[string]url.Values
	authorized    []url.Values // the authorization requests
	registrations int
}

func newLoginAS(t *testing.T) *loginAS {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a := &loginAS{key: key, codes: map[string]url.Values{}}
	mux := http.NewServeMux()
	enc := base64.RawURLEncoding.EncodeToString
	pub, _ := key.PublicKey.Bytes()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "kid": "k1", "x": enc(pub[1:33]), "y": enc(pub[33:])}}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		u := a.srv.URL
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": u, "jwks_uri": u + "/jwks", "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
			"registration_endpoint": u + "/register", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none"},
			"authorization_response_iss_parameter_supported": true,
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.registrations++
		id := fmt.Sprintf("cli-%d", a.registrations)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]string{"client_id": id, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := enc([]byte(fmt.Sprint(time.Now().UnixNano())))
		a.mu.Lock()
		a.codes[code] = q
		a.authorized = append(a.authorized, q)
		a.mu.Unlock()
		ru, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || ru.Hostname() != "127.0.0.1" {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		ru.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {a.srv.URL}}.Encode()
		http.Redirect(w, r, ru.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		q, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		aud := a.audience
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		w.Header().Set("Content-Type", "application/json")
		if !ok || r.PostForm.Get("grant_type") != "authorization_code" || enc(sum[:]) != q.Get("code_challenge") || r.PostForm.Get("resource") != q.Get("resource") {
			w.WriteHeader(400)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		if aud == "" {
			aud = q.Get("resource")
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
			"iss": a.srv.URL, "sub": "ada", "aud": aud, "scope": q.Get("scope"), "client_id": q.Get("client_id"),
			"iat": time.Now().Unix(), "exp": time.Now().Add(5 * time.Minute).Unix(), "jti": enc(sum[:8]),
		})
		tok.Header["kid"] = "k1"
		tok.Header["typ"] = "at+jwt"
		s, _ := tok.SignedString(key)
		json.NewEncoder(w).Encode(map[string]any{"access_token": s, "token_type": "Bearer", "expires_in": 300})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *loginAS) authorizations() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.authorized...)
}

// fakeBrowser follows the sign-in URL and its redirect, as a browser would.
func fakeBrowser(t *testing.T) {
	old := openBrowser
	openBrowser = func(u string) error {
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	t.Cleanup(func() { openBrowser = old })
}

// TestLoginEndToEnd logs in to `mcpkit serve --auth-issuer` from the CLI:
// the first call logs in, the token is kept (0600) and reused, a tool
// needing a wider scope steps up, logout forgets the token, and a token
// for another audience is refused without a loop.
func TestLoginEndToEnd(t *testing.T) {
	as := newLoginAS(t)
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg)
	fakeBrowser(t)
	srv, _ := startServe(t, "--addr", "127.0.0.1:0", "--auth-issuer", as.srv.URL, "--auth-scopes", "mcp:tools", "--auth-whoami-scopes", "mcp:admin")

	cli := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		code := run(args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errOut := cli("call", "--auth", srv, "echo", `{"text":"hello"}`)
	if code != exitOK || !strings.Contains(out, "hello") || !strings.Contains(errOut, "sign in") {
		t.Fatalf("first call: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	auths := as.authorizations()
	if len(auths) != 1 || auths[0].Get("scope") != "mcp:tools" || auths[0].Get("resource") != srv || auths[0].Get("code_challenge_method") != "S256" {
		t.Fatalf("authorization requests: %v", auths)
	}
	file := filepath.Join(cfg, "mcpkit", "tokens.json")
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", st, err)
	}

	// discover --auth uses the kept token for the lists.
	if code, out, errOut := cli("discover", "--auth", "--list", srv); code != exitOK || !strings.Contains(out, "echo") || strings.Contains(errOut, "sign in") {
		t.Fatalf("discover: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// The kept token is reused: no new sign-in.
	if code, out, errOut := cli("tools", "--auth", srv); code != exitOK || !strings.Contains(out, "echo") || strings.Contains(errOut, "sign in") {
		t.Fatalf("tools: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if n := len(as.authorizations()); n != 1 {
		t.Fatalf("%d authorizations after the second command, want 1", n)
	}

	// whoami needs mcp:admin too: step-up with the union of the scopes.
	code, out, errOut = cli("call", "--auth", srv, "whoami")
	if code != exitOK || !strings.Contains(out, "scopes: mcp:tools mcp:admin") {
		t.Fatalf("whoami: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	auths = as.authorizations()
	if len(auths) != 2 || auths[1].Get("scope") != "mcp:tools mcp:admin" {
		t.Fatalf("step-up authorization: %v", auths)
	}
	if as.registrations != 1 {
		t.Errorf("%d registrations, want 1 (the registration is kept)", as.registrations)
	}

	// The same step-up as a legacy (2025-11-25) client: the server's 403
	// carries the challenge in that era too.
	if code, out, errOut := cli("logout", srv); code != exitOK {
		t.Fatalf("logout: exit %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli("call", "--auth", "--version", "2025-11-25", srv, "whoami")
	if code != exitOK || !strings.Contains(out, "scopes: mcp:tools mcp:admin") {
		t.Fatalf("legacy whoami: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if n := len(as.authorizations()); n != 4 {
		t.Fatalf("%d authorizations after the legacy step-up, want 4", n)
	}

	// Logout forgets tokens and registration.
	if code, out, _ := cli("logout", srv); code != exitOK || !strings.Contains(out, "forgot the tokens for "+srv) {
		t.Fatalf("logout: exit %d, %s", code, out)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), srv) {
		t.Fatalf("the token file still names the server after logout:\n%s", b)
	}
	if code, out, _ := cli("logout", srv); code != exitOK || !strings.Contains(out, "no tokens kept") {
		t.Fatalf("second logout: exit %d, %s", code, out)
	}

	// A token minted for another audience is refused by the server; the
	// client signs in once more and then gives up.
	as.mu.Lock()
	as.audience = "https://elsewhere.example/mcp"
	as.mu.Unlock()
	code, out, errOut = cli("call", "--auth", srv, "echo", `{"text":"x"}`)
	if code == exitOK || !strings.Contains(errOut, "unauthorized") {
		t.Fatalf("another audience: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if n := len(as.authorizations()); n != 5 {
		t.Errorf("%d authorizations, want 5 (one more, no loop)", n)
	}
	if strings.Contains(errOut, "eyJ") {
		t.Errorf("a token appears in the error output:\n%s", errOut)
	}
}

// TestLoginFlags checks the flag combinations --auth refuses.
func TestLoginFlags(t *testing.T) {
	for _, args := range [][]string{
		{"call", "--client-id", "x", "http://127.0.0.1:1/mcp", "echo"},
		{"tools", "--auth", "--", "mcpkit", "serve", "--fixtures", "--stdio"},
		{"discover", "--auth", "--", "mcpkit", "serve", "--fixtures", "--stdio"},
		{"logout"},
	} {
		var out, errb strings.Builder
		if code := run(args, strings.NewReader(""), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errb.String())
		}
	}
}
