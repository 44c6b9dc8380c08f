package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newTransport(t *testing.T, a *testAS, mod func(*Options)) (*Transport, *headless) {
	t.Helper()
	h := &headless{}
	opts := Options{Interaction: h}
	if mod != nil {
		mod(&opts)
	}
	tr, err := NewTransport(a.mcpURL(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr, h
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want an *auth.Error with code %s", err, code)
	}
	if ae.Code != code {
		t.Fatalf("error code = %q (%v), want %q", ae.Code, err, code)
	}
}

func TestAuthorizationCodeFlow(t *testing.T) {
	a := newTestAS(t)
	a.wwwScope = "mcp:read"
	tr, h := newTransport(t, a, nil)
	c := tr.Client()
	for range 2 {
		resp, err := post(t, c, a.mcpURL(), "tools/list")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", resp, err)
		}
	}
	if h.calls != 1 || a.registrations != 1 {
		t.Errorf("interactions = %d, registrations = %d; want one of each", h.calls, a.registrations)
	}
	q := a.authorizeQueries[0]
	got := map[string]string{"resource": q.Get("resource"), "scope": q.Get("scope"), "method": q.Get("code_challenge_method"), "client_id": q.Get("client_id")}
	want := map[string]string{"resource": a.mcpURL(), "scope": "mcp:read", "method": "S256", "client_id": a.clientIDs[0]}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("authorization request (-want +got):\n%s", d)
	}
	f := a.tokenForms[0]
	// The authorization server supports public clients ("none"), which the client prefers: it
	// names itself in the form, without a secret.
	if f.Get("resource") != a.mcpURL() || f.Get("code_verifier") == "" || a.tokenAuth[0] != "" || f.Get("client_id") != a.clientIDs[0] {
		t.Errorf("token request: resource %q, verifier set %v, auth %q, client_id %q", f.Get("resource"), f.Get("code_verifier") != "", a.tokenAuth[0], f.Get("client_id"))
	}
	if want := []string{"", "Bearer " + a.issued[0], "Bearer " + a.issued[0]}; !cmp.Equal(a.seenAuth, want) {
		t.Errorf("Authorization headers at the server = %q, want %q", a.seenAuth, want)
	}
}

func TestScopeSelection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		www       string
		prm       []string
		asScopes  []string
		noOffline bool
		want      string
	}{
		{"challenge wins", "a b", []string{"c"}, nil, false, "a b"},
		{"scopes_supported", "", []string{"c", "d"}, nil, false, "c d"},
		{"omitted", "", nil, nil, false, ""},
		{"offline_access added", "a", nil, []string{"a", "offline_access"}, false, "a offline_access"},
		{"offline_access not wanted", "a", nil, []string{"a", "offline_access"}, true, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAS(t)
			a.wwwScope = tc.www
			if tc.prm != nil {
				a.prm = map[string]any{"scopes_supported": tc.prm}
			}
			if tc.asScopes != nil {
				a.meta = map[string]any{"scopes_supported": tc.asScopes}
			}
			tr, _ := newTransport(t, a, func(o *Options) { o.NoOfflineAccess = tc.noOffline })
			if _, err := post(t, tr.Client(), a.mcpURL(), "tools/list"); err != nil {
				t.Fatal(err)
			}
			q := a.authorizeQueries[0]
			if _, has := q["scope"]; tc.want == "" && has {
				t.Errorf("scope sent (%q), want it omitted", q.Get("scope"))
			}
			if got := q.Get("scope"); got != tc.want {
				t.Errorf("scope = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAuthorizationResponseChecks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		iss        string
		advertised bool
		tamper     func(url.Values)
		code       string
	}{
		{"wrong iss", "wrong", true, nil, CodeIssuerMismatch},
		{"iss not normalized", "slash", true, nil, CodeIssuerMismatch},
		{"missing iss when advertised", "omit", true, nil, CodeIssuerMismatch},
		{"unadvertised wrong iss", "wrong", false, nil, CodeIssuerMismatch},
		{"state", "correct", true, func(q url.Values) { q.Set("state", "forged") }, CodeStateMismatch},
		{"error response", "correct", true, func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }, "access_denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAS(t)
			a.issInRedir = tc.iss
			if !tc.advertised {
				a.meta = map[string]any{"authorization_response_iss_parameter_supported": nil}
			}
			tr, h := newTransport(t, a, nil)
			h.tamper = tc.tamper
			_, err := post(t, tr.Client(), a.mcpURL(), "tools/list")
			wantCode(t, err, tc.code)
			if len(a.tokenForms) != 0 {
				t.Errorf("the code was sent to the token endpoint after a rejected response")
			}
		})
	}
	t.Run("unadvertised and absent proceeds", func(t *testing.T) {
		a := newTestAS(t)
		a.issInRedir = "omit"
		a.meta = map[string]any{"authorization_response_iss_parameter_supported": nil}
		tr, _ := newTransport(t, a, nil)
		if resp, err := post(t, tr.Client(), a.mcpURL(), "tools/list"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", resp, err)
		}
	})
}

func TestMetadataValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string]any
		prm  map[string]any
		code string
	}{
		{"issuer mismatch", map[string]any{"issuer": "https://attacker.example"}, nil, CodeIssuerMismatch},
		{"no PKCE", map[string]any{"code_challenge_methods_supported": nil}, nil, CodeDiscovery},
		{"plain PKCE only", map[string]any{"code_challenge_methods_supported": []string{"plain"}}, nil, CodeDiscovery},
		{"insecure token endpoint", map[string]any{"token_endpoint": "http://as.example/token"}, nil, CodeInsecureEndpoint},
		{"resource of another server", nil, map[string]any{"resource": "https://evil.example/mcp"}, CodeResourceMismatch},
		{"no authorization server", nil, map[string]any{"authorization_servers": []string{}}, CodeDiscovery},
		{"huge document", nil, map[string]any{"padding": strings.Repeat("x", MaxDocumentBytes)}, CodeInvalidResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAS(t)
			a.meta, a.prm = tc.meta, tc.prm
			tr, h := newTransport(t, a, nil)
			_, err := post(t, tr.Client(), a.mcpURL(), "tools/list")
			wantCode(t, err, tc.code)
			if h.calls != 0 || len(a.tokenForms) != 0 {
				t.Errorf("the client went on to authorize after invalid metadata")
			}
		})
	}
}

type redirectTo struct {
	headless
	u string
}

func (r *redirectTo) RedirectURL() string { return r.u }

func TestRedirectURLChecked(t *testing.T) {
	for _, u := range []string{"http://app.example/callback", "/callback", "https://app.example/cb#frag"} {
		a := newTestAS(t)
		tr, err := NewTransport(a.mcpURL(), &Options{Interaction: &redirectTo{u: u}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := post(t, tr.Client(), a.mcpURL(), "tools/list"); err == nil || len(a.authorizeQueries) != 0 || a.registrations != 0 {
			t.Errorf("redirect URL %q: err %v, %d registrations, %d authorization requests", u, err, a.registrations, len(a.authorizeQueries))
		}
	}
}

func TestTokenOnlyToItsResource(t *testing.T) {
	a := newTestAS(t)
	var other []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other = append(other, r.Header.Get("Authorization"))
	}))
	defer elsewhere.Close()
	tr, _ := newTransport(t, a, nil)
	c := tr.Client()
	if _, err := post(t, c, a.mcpURL(), "tools/list"); err != nil {
		t.Fatal(err)
	}
	if _, err := post(t, c, elsewhere.URL+"/mcp", "tools/list"); err != nil {
		t.Fatal(err)
	}
	if _, err := post(t, c, a.rs.URL+"/other", "tools/list"); err != nil {
		t.Fatal(err)
	}
	if resp, err := post(t, c, a.rs.URL+"/other401", "tools/list"); err != nil || resp.StatusCode != 401 || len(a.authorizeQueries) != 1 {
		t.Errorf("a 401 outside the resource: %v %v, %d authorizations; want it passed through", resp, err, len(a.authorizeQueries))
	}
	if !cmp.Equal(other, []string{""}) {
		t.Errorf("another host got Authorization %q", other)
	}
	if last := a.seenAuth[len(a.seenAuth)-1]; last != "" {
		// /other is not under the resource /mcp.
		t.Errorf("a path outside the resource got Authorization %q", last)
	}
}

func TestStepUp(t *testing.T) {
	a := newTestAS(t)
	a.wwwScope = "read"
	a.need = func(m string) string {
		if m == "tools/call" {
			return "write"
		}
		return "read"
	}
	tr, h := newTransport(t, a, nil)
	c := tr.Client()
	if resp, err := post(t, c, a.mcpURL(), "tools/list"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("tools/list: %v %v", resp, err)
	}
	if resp, err := post(t, c, a.mcpURL(), "tools/call"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("tools/call: %v %v", resp, err)
	}
	if h.calls != 2 {
		t.Fatalf("authorizations = %d, want 2", h.calls)
	}
	if got := a.authorizeQueries[1].Get("scope"); got != "read write" {
		t.Errorf("step-up scope = %q, want the union %q", got, "read write")
	}
}

// TestStepUpNothingNew: when a step-up gets a token with no scope the refused one lacked, the
// transport stops there (asking again would get the same answer), and its error names the
// scope the server needs.
func TestStepUpNothingNew(t *testing.T) {
	a := newTestAS(t)
	a.wwwScope = "admin"
	a.need = func(string) string { return "never-granted" }
	a.withhold = "never-granted"
	tr, h := newTransport(t, a, nil)
	_, err := post(t, tr.Client(), a.mcpURL(), "tools/call")
	wantCode(t, err, "insufficient_scope")
	if h.calls != 2 {
		t.Errorf("authorizations = %d, want 2 (one, then one step-up that granted nothing new)", h.calls)
	}
	var ae *Error
	if errors.As(err, &ae) {
		if !cmp.Equal(ae.MissingScopes, []string{"never-granted"}) || !strings.Contains(ae.Error(), `"never-granted"`) {
			t.Errorf("error %q (MissingScopes %q) does not name the missing scope never-granted", ae, ae.MissingScopes)
		}
	}
}

func TestStepUpLimit(t *testing.T) {
	a := newTestAS(t)
	a.wwwScope = "admin"
	n := 0
	a.need = func(string) string { // each request needs a scope the token does not have yet
		n++
		return fmt.Sprintf("s%d", n)
	}
	tr, h := newTransport(t, a, nil)
	_, err := post(t, tr.Client(), a.mcpURL(), "tools/call")
	wantCode(t, err, "insufficient_scope")
	if h.calls != 3 {
		t.Errorf("authorizations = %d, want 3 (one, then two step-ups)", h.calls)
	}
	tr2, h2 := newTransport(t, a, func(o *Options) { o.MaxStepUps = -1 })
	_, err = post(t, tr2.Client(), a.mcpURL(), "tools/call")
	wantCode(t, err, "insufficient_scope")
	if h2.calls != 1 {
		t.Errorf("with MaxStepUps < 0: authorizations = %d, want 1", h2.calls)
	}
}

func TestRefresh(t *testing.T) {
	t.Run("before expiry", func(t *testing.T) {
		a := newTestAS(t)
		a.refresh = true
		a.oas.SetExpiry(10 * time.Second) // inside the refresh margin
		tr, h := newTransport(t, a, nil)
		c := tr.Client()
		post(t, c, a.mcpURL(), "tools/list")
		post(t, c, a.mcpURL(), "tools/list")
		if h.calls != 1 || len(a.tokenForms) != 2 {
			t.Fatalf("interactions %d, token requests %d; want 1 and 2", h.calls, len(a.tokenForms))
		}
		f := a.tokenForms[1]
		if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != a.refreshIssued[0] || f.Get("resource") != a.mcpURL() {
			t.Errorf("refresh request = %v", f)
		}
		if last := a.seenAuth[len(a.seenAuth)-1]; last != "Bearer "+a.issued[1] {
			t.Errorf("after refresh the server got %q", last)
		}
	})
	t.Run("on 401", func(t *testing.T) {
		a := newTestAS(t)
		a.refresh = true
		tr, h := newTransport(t, a, nil)
		c := tr.Client()
		post(t, c, a.mcpURL(), "tools/list")
		a.mu.Lock()
		a.rejectOnce = true
		a.mu.Unlock()
		if resp, err := post(t, c, a.mcpURL(), "tools/list"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", resp, err)
		}
		if h.calls != 1 || a.tokenForms[1].Get("grant_type") != "refresh_token" {
			t.Errorf("interactions %d, second grant %q; want a refresh and no new interaction", h.calls, a.tokenForms[1].Get("grant_type"))
		}
	})
}

func TestNoSecretsInErrorsOrLogs(t *testing.T) {
	a := newTestAS(t)
	var logs bytes.Buffer
	a.oas.AddClient("pre", "s3cret-value")
	tr, _ := newTransport(t, a, func(o *Options) {
		o.Client = &Client{ID: "pre", Secret: "s3cret-value"}
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	a.tokenStatus = 400
	a.tokenBody = `{"error":"invalid_client","error_description":"bad\nclient","echo":"s3cret-value"}`
	_, err := post(t, tr.Client(), a.mcpURL(), "tools/list")
	wantCode(t, err, "invalid_client")
	a.tokenStatus = 0
	if _, err := post(t, tr.Client(), a.mcpURL(), "tools/list"); err != nil {
		t.Fatal(err)
	}
	all := err.Error() + logs.String()
	for _, secret := range append(append([]string{"s3cret-value"}, a.issued...), a.codes...) {
		if strings.Contains(all, secret) {
			t.Errorf("%q appears in errors or logs:\n%s", secret, all)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error keeps a control character: %q", err)
	}
}

func TestMachineGrants(t *testing.T) {
	a := newTestAS(t)
	a.wwwScope = "svc"
	a.oas.AddClient("svc", "pw")
	tr, _ := newTransport(t, a, func(o *Options) {
		o.Interaction = nil
		o.Grant = ClientCredentialsGrant{}
		o.Client = &Client{ID: "svc", Secret: "pw"}
	})
	if resp, err := post(t, tr.Client(), a.mcpURL(), "tools/list"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	f := a.tokenForms[0]
	if f.Get("grant_type") != "client_credentials" || f.Get("scope") != "svc" || f.Get("resource") != a.mcpURL() || !strings.HasPrefix(a.tokenAuth[0], "Basic ") {
		t.Errorf("client credentials request = %v, auth %q", f, a.tokenAuth[0])
	}

	b := newTestAS(t)
	tr, _ = newTransport(t, b, func(o *Options) { o.Interaction = nil })
	_, err := post(t, tr.Client(), b.mcpURL(), "tools/list")
	wantCode(t, err, CodeInteractionRequired)
}

func TestMigrationReregisters(t *testing.T) {
	a := newTestAS(t)
	store := &MemoryStore{}
	tr, _ := newTransport(t, a, func(o *Options) { o.Store = store })
	post(t, tr.Client(), a.mcpURL(), "tools/list")
	// The server moves to another authorization server.
	b := newTestAS(t)
	a.mu.Lock()
	a.prm = map[string]any{"authorization_servers": []string{b.as.URL}}
	a.rejectOnce = true
	a.mu.Unlock()
	b.mu.Lock()
	b.registrations = 10
	b.mu.Unlock()
	// b's tokens must be accepted by a's resource server for the retry.
	b.tokens = a.tokens
	post(t, tr.Client(), a.mcpURL(), "tools/list")
	if b.registrations != 11 || len(b.clientIDs) != 1 || b.authorizeQueries[0].Get("client_id") != b.clientIDs[0] {
		t.Errorf("the new authorization server got client_id %q; want a new registration", b.authorizeQueries[0].Get("client_id"))
	}
	e, _ := store.Load(context.Background(), a.mcpURL())
	if len(e.Registrations) != 2 || e.Registrations[a.as.URL].ClientID != a.clientIDs[0] {
		t.Errorf("registrations = %v, want one per issuer", e.Registrations)
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	s := &FileStore{Path: filepath.Join(dir, "sub", "tokens.json")}
	ctx := context.Background()
	if e, err := s.Load(ctx, "k"); e != nil || err != nil {
		t.Fatalf("empty store: %v %v", e, err)
	}
	want := &Entry{Token: &Token{AccessToken: "x", Issuer: "https://as", Resource: "https://rs"}}
	if err := s.Save(ctx, "k", want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.Path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode = %v (%v), want 0600", st.Mode().Perm(), err)
	}
	got, err := s.Load(ctx, "k")
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("Load = %v, %v", got, err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Load(ctx, "k"); e != nil {
		t.Errorf("entry survived Delete")
	}
	os.Chmod(s.Path, 0o644)
	if _, err := s.Load(ctx, "k"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable file was accepted: %v", err)
	}
}

func TestLoopback(t *testing.T) {
	l, err := NewLoopback("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasPrefix(l.RedirectURL(), "http://127.0.0.1:") {
		t.Fatalf("RedirectURL = %q", l.RedirectURL())
	}
	var stray int
	l.Open = func(string) error {
		go func() {
			resp, _ := http.Get(l.RedirectURL() + "?state=other&code=evil")
			stray = resp.StatusCode
			resp.Body.Close()
			resp, _ = http.Get(l.RedirectURL() + "?state=S1&code=good")
			resp.Body.Close()
		}()
		return nil
	}
	q, err := l.Authorize(context.Background(), "https://as.example/authorize?state=S1")
	if err != nil || q.Get("code") != "good" {
		t.Fatalf("Authorize = %v, %v", q, err)
	}
	if stray != http.StatusBadRequest {
		t.Errorf("a redirect with another state got %d, want 400", stray)
	}
	if _, err := NewLoopback("0.0.0.0:0", nil); err == nil {
		t.Errorf("a non-loopback address was accepted")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestConcurrentRequestsShareOneAuthorization(t *testing.T) {
	a := newTestAS(t)
	tr, h := newTransport(t, a, nil)
	c := tr.Client()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			resp, err := post(t, c, a.mcpURL(), "tools/list")
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if h.calls != 1 || a.registrations != 1 {
		t.Errorf("interactions = %d, registrations = %d; want one authorization for all", h.calls, a.registrations)
	}
}

// BenchmarkRoundTripWithToken measures what the transport adds to a
// request once it has a token.
func BenchmarkRoundTripWithToken(b *testing.B) {
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer rs.Close()
	store := &MemoryStore{}
	store.Save(context.Background(), rs.URL+"/mcp", &Entry{Token: &Token{AccessToken: "tok", TokenType: "Bearer", Resource: rs.URL + "/mcp"}})
	tr, err := NewTransport(rs.URL+"/mcp", &Options{Store: store})
	if err != nil {
		b.Fatal(err)
	}
	c := tr.Client()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, rs.URL+"/mcp", bytes.NewReader(body))
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

func TestHostileAuthorizationServer(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reg, tokenBody string
		tokenStatus    int
		code           string
	}{
		{"registration without client_id", `{"client_secret":"x"}`, "", 0, CodeInvalidResponse},
		{"registration with an unknown auth method", `{"client_id":"c","token_endpoint_auth_method":"tls_client_auth"}`, "", 0, CodeInvalidResponse},
		{"token without access_token", "", `{"token_type":"Bearer"}`, 200, CodeInvalidResponse},
		{"unknown token_type", "", `{"access_token":"a","token_type":"MAC"}`, 200, CodeInvalidResponse},
		{"DPoP token without a DPoP key", "", `{"access_token":"a","token_type":"DPoP"}`, 200, CodeInvalidResponse},
		{"token body not JSON", "", `<html>`, 200, CodeInvalidResponse},
		{"huge token error", "", `{"error":"invalid_grant","error_description":"` + strings.Repeat("x", 5000) + `"}`, 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAS(t)
			a.regBody, a.tokenBody, a.tokenStatus = tc.reg, tc.tokenBody, tc.tokenStatus
			tr, _ := newTransport(t, a, nil)
			_, err := post(t, tr.Client(), a.mcpURL(), "tools/list")
			wantCode(t, err, tc.code)
			if len(err.Error()) > 2*maxDescription {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			if tok, _ := tr.Token(context.Background()); tok != nil {
				t.Errorf("a token was kept: %+v", tok)
			}
		})
	}
}

func TestLoopbackTimeout(t *testing.T) {
	l, err := NewLoopback("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	synctest.Test(t, func(t *testing.T) {
		l.Timeout = time.Minute
		start := time.Now()
		_, err := l.Authorize(context.Background(), "https://as.example/authorize?state=S")
		wantCode(t, err, "timeout")
		if d := time.Since(start); d != time.Minute {
			t.Errorf("gave up after %v, want 1m", d)
		}
	})
}

func TestFileStoreLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(p, bytes.Repeat([]byte(" "), maxStoreBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (&FileStore{Path: p}).Load(context.Background(), "k"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized token file was read: %v", err)
	}
}
