package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// recordingBackend is a legacy Streamable HTTP server that records what
// reaches it: the Authorization headers, the bodies, and the sessions
// opened. Its "whoami" tool names the session.
type recordingBackend struct {
	url string

	mu      sync.Mutex
	auth    []string // every Authorization header seen
	bodies  [][]byte
	inits   int
	headers []http.Header
}

func newRecordingBackend(t *testing.T) *recordingBackend {
	t.Helper()
	rb := &recordingBackend{}
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "recorded", Version: "1.0.0"}, Legacy: mcp.LegacyOptions{Only: true}, Logger: slog.New(slog.DiscardHandler)})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the backend session."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "session " + req.Info.Header.Get("Mcp-Session-Id"), nil
		})
	h := s.NewHTTPServer("", "/mcp").Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rb.mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			rb.auth = append(rb.auth, a)
		}
		rb.bodies = append(rb.bodies, body)
		rb.headers = append(rb.headers, r.Header.Clone())
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			rb.inits++
		}
		rb.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rb.url = srv.URL + "/mcp"
	return rb
}

// sawSecret reports whether any recorded header or body holds secret.
func (rb *recordingBackend) sawSecret(secret string) bool {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	for _, b := range rb.bodies {
		if bytes.Contains(b, []byte(secret)) {
			return true
		}
	}
	for _, h := range rb.headers {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					return true
				}
			}
		}
	}
	return false
}

// mcpkit bridge --auth-issuer AS --isolate principal URL, with tokens of
// the test authorization server: a call without a token gets 401 with the
// challenge; with one it succeeds, on a backend session of the caller's
// own; and no token ever reaches the backend.
func TestBridgeAuthInFront(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	be := newRecordingBackend(t)
	url, logs := startFront(t, bridgeCommand, "--addr", "127.0.0.1:0", "--auth-issuer", as.URL, "--isolate", "principal", be.url)
	base := strings.TrimSuffix(url, "/mcp")

	status, h, body := post(t, url, "tools/call", "whoami", `"name":"whoami",`, "")
	want := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if status != 401 || h.Get("WWW-Authenticate") != want {
		t.Errorf("without a token: %d %q %s\nwant 401 %q", status, h.Get("WWW-Authenticate"), body, want)
	}

	sessions := map[string]string{}
	var tokens []string
	for _, who := range []string{"alice", "bob", "alice"} {
		tok := as.Token(&oauthtest.TokenOptions{Subject: who, Audience: url})
		tokens = append(tokens, tok)
		status, _, body := post(t, url, "tools/call", "whoami", `"name":"whoami",`, tok)
		i := strings.Index(body, "session ")
		if status != 200 || i < 0 {
			t.Fatalf("%s's call: %d %s\nlog:\n%s", who, status, body, logs.String())
		}
		sess := body[i : i+strings.IndexByte(body[i:], '"')]
		if prev, ok := sessions[who]; ok && prev != sess {
			t.Errorf("%s's calls went to %s and %s, want her own one session", who, prev, sess)
		}
		sessions[who] = sess
	}
	if sessions["alice"] == sessions["bob"] {
		t.Errorf("alice and bob share backend %s, want one each", sessions["alice"])
	}
	be.mu.Lock()
	auth, inits := be.auth, be.inits
	be.mu.Unlock()
	if len(auth) != 0 {
		t.Errorf("the backend got Authorization headers %q, want none", auth)
	}
	if inits != 3 {
		t.Errorf("the backend saw %d initialize requests, want 3 (the probe, alice's and bob's sessions)", inits)
	}
	for i, tok := range tokens {
		if be.sawSecret(tok) {
			t.Errorf("token %d reached the backend", i)
		}
	}
}

func TestBridgeIsolateUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--isolate", "principal", "http://127.0.0.1:1/mcp"}, "--auth-issuer"},
		{[]string{"--stdio", "--isolate", "principal", "http://127.0.0.1:1/mcp"}, "--stdio"},
		{[]string{"--isolate", "user", "http://127.0.0.1:1/mcp"}, "want none or principal"},
		{[]string{"--max-listen-streams", "-1", "http://127.0.0.1:1/mcp"}, "--max-listen-streams"},
	} {
		var out strings.Builder
		if code := run(append([]string{"bridge"}, tc.args...), strings.NewReader(""), io.Discard, &out); code != exitUsage || !strings.Contains(out.String(), tc.want) {
			t.Errorf("bridge %q: exit %d, %s\nwant exit 2 naming %q", tc.args, code, out.String(), tc.want)
		}
	}
}
