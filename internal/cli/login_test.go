package cli

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// loginAS is the test authorization server (oauth/oauthtest) on
// 127.0.0.1, which approves every authorization request at once and mints
// RFC 9068 access tokens for the resource and scopes asked for, with a
// record of the authorization requests and registrations it saw.
type loginAS struct {
	*oauthtest.Server

	mu            sync.Mutex
	authorized    []url.Values // the authorization requests
	registrations int
}

func newLoginAS(t *testing.T) *loginAS {
	a := &loginAS{}
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.mu.Lock()
			switch {
			case r.Method == http.MethodGet && r.URL.Path == "/authorize":
				a.authorized = append(a.authorized, r.URL.Query())
			case r.Method == http.MethodPost && r.URL.Path == "/register":
				a.registrations++
			}
			a.mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}
	a.Server = oauthtest.NewServer(t, &oauthtest.Options{Subject: "ada", Wrap: record})
	return a
}

func (a *loginAS) authorizations() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.authorized...)
}

func (a *loginAS) registered() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registrations
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
	srv, _ := startServe(t, "--addr", "127.0.0.1:0", "--auth-issuer", as.URL, "--auth-scopes", "mcp:tools", "--auth-whoami-scopes", "mcp:admin")

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
	if n := as.registered(); n != 1 {
		t.Errorf("%d registrations, want 1 (the registration is kept)", n)
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
	as.SetAudience("https://elsewhere.example/mcp")
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
