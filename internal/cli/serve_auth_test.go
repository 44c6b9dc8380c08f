package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// lockedBuffer collects the server's log output while the test reads it.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // if not nil, gets a value (without blocking) after each Write
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.b.Write(p)
	if b.wrote != nil {
		select {
		case b.wrote <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// localIssuer starts a test authorization server (oauth/oauthtest) on
// 127.0.0.1 and returns its URL and a function that mints an access
// token for subject "ada" with the audience and scope given.
func localIssuer(t *testing.T) (url string, mint func(aud, scope string) string) {
	t.Helper()
	as := oauthtest.NewServer(t, &oauthtest.Options{Subject: "ada"})
	return as.URL, func(aud, scope string) string {
		return as.Token(&oauthtest.TokenOptions{Audience: aud, Scopes: strings.Fields(scope), Expiry: time.Minute})
	}
}

// startServe runs `mcpkit serve args...` until the test ends and returns
// the URL it listens at.
func startServe(t *testing.T, args ...string) (url string, logs *lockedBuffer) {
	t.Helper()
	return startFront(t, serveCommand, args...)
}

// startFront runs cmd (serve, bridge or gateway) with args until the test
// ends and returns the URL it listens at.
func startFront(t *testing.T, cmd *Command, args ...string) (url string, logs *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &lockedBuffer{wrote: make(chan struct{}, 1)}
	done := make(chan int, 1)
	go func() { done <- runCommand(ctx, cmd, args, strings.NewReader(""), io.Discard, logs) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	re := regexp.MustCompile(`msg=listening url=(\S+)`)
	timeout := time.After(10 * time.Second)
	for {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs
		}
		select {
		case <-logs.wrote: // look again
		case code := <-done:
			done <- code // for the cleanup
			t.Fatalf("mcpkit %s exited with %d:\n%s", cmd.Name(), code, logs.String())
		case <-timeout:
			t.Fatalf("mcpkit %s did not start:\n%s", cmd.Name(), logs.String())
		}
	}
}

// post sends method with params (members with a trailing comma, without
// _meta) and token ("" for none); name, when set, is the Mcp-Name header.
func post(t *testing.T, url, method, name, params, token string) (int, http.Header, string) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	r := mcpwire.Request{Method: method, Name: name, Params: "{" + strings.TrimSuffix(params, ",") + "}", Header: h}
	resp := mcpwire.Post(t, context.Background(), url, r)
	return resp.Status, resp.Header, string(resp.Raw)
}

// TestServeAuth runs `mcpkit serve` behind a local issuer, with the audience
// defaulting to the served URL and the key set discovered from the
// issuer's metadata.
func TestServeAuth(t *testing.T) {
	issuer, mint := localIssuer(t)
	url, logs := startServe(t, "--addr", "127.0.0.1:0", "--auth-issuer", issuer, "--auth-scopes", "mcp:tools")
	base := strings.TrimSuffix(url, "/mcp")

	status, h, body := post(t, url, "tools/list", "", "", "")
	wantChallenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`
	if status != 401 || h.Get("WWW-Authenticate") != wantChallenge || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("without a token: %d %q %s\nwant 401 %q", status, h.Get("WWW-Authenticate"), body, wantChallenge)
	}
	if status, _, body := post(t, url, "server/discover", "", "", ""); status != 200 {
		t.Errorf("discover: %d %s", status, body)
	}
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantMD := `{"resource":"` + url + `","authorization_servers":["` + issuer + `"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"mcpkit-demo"}`
	if string(md) != wantMD {
		t.Errorf("metadata %s\nwant %s", md, wantMD)
	}

	token := mint(url, "mcp:tools")
	status, _, body = post(t, url, "tools/call", "whoami", `"name":"whoami",`, token)
	if status != 200 || !strings.Contains(body, `subject: ada`) {
		t.Errorf("whoami: %d %s", status, body)
	}
	if status, _, _ := post(t, url, "tools/list", "", "", mint("https://elsewhere.example/mcp", "mcp:tools")); status != 401 {
		t.Errorf("token for another audience: %d, want 401", status)
	}
	if status, _, _ := post(t, url, "tools/list", "", "", mint(url, "other")); status != 403 {
		t.Errorf("token without mcp:tools: %d, want 403", status)
	}
	if out := logs.String(); strings.Contains(out, token[len(token)-20:]) || !strings.Contains(out, "authorization required") {
		t.Errorf("logs:\n%s", out)
	}
}

// TestServeAuthFlagErrors checks the flag combinations that make no sense.
func TestServeAuthFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--stdio", "--auth-issuer", "https://auth.example"}, "HTTP only"},
		{[]string{"--addr", "127.0.0.1:0", "--auth-scopes", "x"}, "need --auth-issuer"},
		{[]string{"--addr", "127.0.0.1:0", "--auth-issuer", "http://auth.example"}, "https"},
	}
	for _, tt := range tests {
		var stderr lockedBuffer
		code := serveContext(context.Background(), tt.args, strings.NewReader(""), io.Discard, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
