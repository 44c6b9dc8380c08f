package oauth_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

const resource = "https://mcp.example.test/mcp"

const (
	challengeInvalid = `Bearer error="invalid_token", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`
	challengeMissing = `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`
)

func challengeScope(scope string) string {
	return `Bearer error="insufficient_scope", scope="` + scope + `", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"`
}

// newVerifier returns a verifier of as's tokens for resource, with the options mod changes.
func newVerifier(t *testing.T, as *oauthtest.Server, mod func(*oauth.JWTOptions)) *oauth.JWTVerifier {
	t.Helper()
	o := oauth.JWTOptions{Issuer: as.URL, Audience: resource, JWKSURL: as.URL + "/jwks"}
	if mod != nil {
		mod(&o)
	}
	v, err := oauth.NewJWTVerifier(&o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tokenOptions are the options of a token for resource that newVerifier's verifier accepts,
// with the changes mod makes (nil for none).
func tokenOptions(mod func(*oauthtest.TokenOptions)) *oauthtest.TokenOptions {
	o := &oauthtest.TokenOptions{Subject: "user-1234", ClientID: "client-abc", Scopes: []string{"mcp:read"},
		Audience: resource, Expiry: 5 * time.Minute}
	if mod != nil {
		mod(o)
	}
	return o
}

// forge re-signs the header and claims of token with method and key: the tokens of attacks
// that no authorization server mints (alg "none", or HMAC keyed with the RSA public key), which
// a verifier must refuse.
func forge(t *testing.T, token string, method jwt.SigningMethod, key any) string {
	t.Helper()
	claims := jwt.MapClaims{}
	parsed, _, err := jwt.NewParser().ParseUnverified(token, claims)
	if err != nil {
		t.Fatal(err)
	}
	f := jwt.NewWithClaims(method, claims)
	for k, v := range parsed.Header {
		if k != "alg" {
			f.Header[k] = v
		}
	}
	s, err := f.SignedString(key)
	if err != nil {
		t.Fatalf("forging a %s token: %v", method.Alg(), err)
	}
	return s
}

// publicPEM is the PEM encoding of a public key: what an attacker uses as the HMAC secret in
// a key confusion attack.
func publicPEM(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// syncBuffer collects log output written concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// protectedServer serves an MCP server protected by v on 127.0.0.1. Every
// request needs mcp:read; the tool "write" also needs mcp:write; the tool
// "whoami" returns the principal's subject, client and scopes.
func protectedServer(t *testing.T, v mcp.TokenVerifier, logs io.Writer) string {
	t.Helper()
	s := mcp.NewServer(&mcp.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Auth: &mcp.AuthOptions{
			Verifier:             v,
			Resource:             resource,
			AuthorizationServers: []string{"https://auth.example.test"},
			RequiredScopes:       []string{"mcp:read"},
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Describes the caller."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			p := req.Info.Principal
			return p.Subject + " " + p.ClientID + " " + strings.Join(p.Scopes, ","), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Needs mcp:write.", Scopes: []string{"mcp:write"}},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "written", nil })
	ts := httptest.NewServer(s.NewHTTPServer("", "/mcp").Handler)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

type answer struct {
	status    int
	challenge string
	body      string
}

// call calls a tool with token ("" for none) over Streamable HTTP.
func call(t *testing.T, url, tool, token string) answer {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	resp := mcpwire.Post(t, context.Background(), url, mcpwire.Request{Method: "tools/call", Params: `{"name":` + strconv.Quote(tool) + `}`, Header: h})
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return answer{resp.Status, resp.Header.Get("WWW-Authenticate"), string(resp.Raw)}
}

// TestJWTEndToEnd runs a protected MCP server against a local issuer and
// presents a token minted for each case.
func TestJWTEndToEnd(t *testing.T) {
	// The issuer publishes an EC key and an RSA key, and signs with the RSA
	// one; it has retired an older RSA key, which it still has.
	as := oauthtest.NewServer(t, nil) // ES256
	ecKid := as.KeyID()
	retired := as.RotateKey("RS256")
	rsaKid := as.RotateKey("RS256")
	as.RetireKey(retired)
	var logs syncBuffer
	url := protectedServer(t, newVerifier(t, as, nil), &logs)
	now := time.Now()
	token := func(mod func(*oauthtest.TokenOptions)) string { return as.Token(tokenOptions(mod)) }
	with := func(claims map[string]any) string {
		return token(func(o *oauthtest.TokenOptions) { o.Claims = claims })
	}
	valid := token(nil)
	// Change four characters in the middle of the signature (not at its
	// end, where base64 padding bits would make it malformed instead).
	i := len(valid) - 40
	tampered := valid[:i] + flip(valid[i:i+4]) + valid[i+4:]
	parts := strings.Split(valid, ".")
	otherPayload := with(map[string]any{"sub": "someone-else"})
	swapped := parts[0] + "." + strings.Split(otherPayload, ".")[1] + "." + parts[2]

	tests := []struct {
		name      string
		tool      string
		token     string
		status    int
		challenge string
		text      string // in the body
		why       string // in the error of VerifyToken, for 401 cases
	}{
		{"valid RS256", "whoami", valid, 200, "", "user-1234 client-abc mcp:read", ""},
		{"valid ES256", "whoami", token(func(o *oauthtest.TokenOptions) { o.KeyID = ecKid }), 200, "", "user-1234", ""},
		{"audience list", "whoami", with(map[string]any{"aud": []string{"https://other.example", resource}}), 200, "", "user-1234", ""},
		{"audience in upper case", "whoami", token(func(o *oauthtest.TokenOptions) { o.Audience = "HTTPS://MCP.EXAMPLE.TEST/mcp" }), 200, "", "user-1234", ""},
		{"scp list", "whoami", with(map[string]any{"scope": nil, "scp": []string{"mcp:read", "x"}}), 200, "", "mcp:read,x", ""},
		{"azp as client", "whoami", with(map[string]any{"client_id": nil, "azp": "client-azp"}), 200, "", "client-azp", ""},
		{"expired within leeway", "whoami", token(func(o *oauthtest.TokenOptions) { o.Expiry = -10 * time.Second }), 200, "", "user-1234", ""},
		{"no token", "whoami", "", 401, challengeMissing, "Unauthorized", ""},
		{"expired", "whoami", token(func(o *oauthtest.TokenOptions) { o.Expiry = -10 * time.Minute }), 401, challengeInvalid, "invalid or expired", "token is expired"},
		{"no exp", "whoami", with(map[string]any{"exp": nil}), 401, challengeInvalid, "", "exp claim is required"},
		{"not yet valid", "whoami", with(map[string]any{"nbf": now.Add(10 * time.Minute).Unix()}), 401, challengeInvalid, "", "token is not valid yet"},
		{"issued in the future", "whoami", with(map[string]any{"iat": now.Add(10 * time.Minute).Unix()}), 401, challengeInvalid, "", "token used before issued"},
		{"wrong audience", "whoami", token(func(o *oauthtest.TokenOptions) { o.Audience = "https://other.example/mcp" }), 401, challengeInvalid, "", "not issued for this resource"},
		{"audience prefix", "whoami", token(func(o *oauthtest.TokenOptions) { o.Audience = "https://mcp.example.test" }), 401, challengeInvalid, "", "not issued for this resource"},
		{"no audience", "whoami", with(map[string]any{"aud": nil}), 401, challengeInvalid, "", "not issued for this resource"},
		{"wrong issuer", "whoami", with(map[string]any{"iss": "https://evil.example"}), 401, challengeInvalid, "", "token has invalid issuer"},
		{"no subject", "whoami", with(map[string]any{"sub": nil}), 401, challengeInvalid, "", "no sub claim"},
		{"bad scope claim", "whoami", with(map[string]any{"scope": 7}), 401, challengeInvalid, "", "scope claim is not a string"},
		{"missing required scope", "whoami", token(func(o *oauthtest.TokenOptions) { o.Scopes = []string{"profile"} }), 403, challengeScope("mcp:read"), "insufficient scope", ""},
		{"missing tool scope", "write", valid, 403, challengeScope("mcp:read mcp:write"), "mcp:write", ""},
		{"tool scope held", "write", token(func(o *oauthtest.TokenOptions) { o.Scopes = []string{"mcp:read", "mcp:write"} }), 200, "", "written", ""},
		{"tampered signature", "whoami", tampered, 401, challengeInvalid, "", "signature is invalid"},
		{"payload swapped", "whoami", swapped, 401, challengeInvalid, "", "signature is invalid"},
		{"alg none", "whoami", forge(t, valid, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType), 401, challengeInvalid, "", "signing method none is invalid"},
		{"HMAC with the public key", "whoami", forge(t, valid, jwt.SigningMethodHS256, publicPEM(t, as.PublicKey(rsaKid))), 401, challengeInvalid, "", "signing method HS256 is invalid"},
		{"RSA token naming the EC key", "whoami", token(func(o *oauthtest.TokenOptions) { o.Header = map[string]any{"kid": ecKid} }), 401, challengeInvalid, "", "no matching signing key"},
		{"unknown kid", "whoami", token(func(o *oauthtest.TokenOptions) { o.Header = map[string]any{"kid": "rsa-9"} }), 401, challengeInvalid, "", "no matching signing key"},
		{"retired key", "whoami", token(func(o *oauthtest.TokenOptions) { o.KeyID = retired }), 401, challengeInvalid, "", "no matching signing key"},
		{"unpublished key, known kid", "whoami", token(func(o *oauthtest.TokenOptions) { o.KeyID, o.Header = retired, map[string]any{"kid": rsaKid} }), 401, challengeInvalid, "", "signature is invalid"},
		{"not a JWT", "whoami", "definitely-not-a-jwt", 401, challengeInvalid, "", "token is malformed"},
	}
	v := newVerifier(t, as, nil)
	var tokens []string
	for _, tt := range tests {
		if tt.token != "" {
			tokens = append(tokens, tt.token)
		}
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, url, tt.tool, tt.token)
			if a.status != tt.status {
				t.Fatalf("status %d, want %d: %s", a.status, tt.status, a.body)
			}
			if a.challenge != tt.challenge {
				t.Errorf("WWW-Authenticate:\n got %s\nwant %s", a.challenge, tt.challenge)
			}
			if !strings.Contains(a.body, tt.text) || !strings.HasPrefix(a.body, `{"jsonrpc":"2.0","id":1,`) {
				t.Errorf("body %s, want a JSON-RPC response for id 1 containing %q", a.body, tt.text)
			}
			if tt.status == 401 && tt.token != "" {
				_, err := v.VerifyToken(context.Background(), tt.token)
				if !errors.Is(err, mcp.ErrInvalidToken) || !strings.Contains(err.Error(), tt.why) {
					t.Errorf("VerifyToken: %v, want ErrInvalidToken because %q", err, tt.why)
				}
			}
		})
	}
	out := logs.String()
	if !strings.Contains(out, "access token rejected") {
		t.Fatalf("rejections were not logged:\n%s", out)
	}
	for _, tok := range tokens {
		for _, part := range strings.Split(tok, ".") {
			if len(part) >= 16 && strings.Contains(out, part) {
				t.Errorf("the logs contain part of a token (%s...):\n%s", part[:16], out)
			}
		}
	}
}

// flip changes every character of s to another base64url character.
func flip(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
	}
	return string(b)
}

// TestJWKSCaching checks that the key set is fetched once and reused.
func TestJWKSCaching(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	v := newVerifier(t, as, nil)
	for range 5 {
		if _, err := v.VerifyToken(context.Background(), as.Token(tokenOptions(nil))); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.JWKSRequests(); n != 1 {
		t.Errorf("%d fetches of the key set, want 1", n)
	}
}

// TestJWKSRotation checks that a token signed with a newly published key is
// accepted after a refetch, and that unknown key ids refetch at most once
// per MinRefreshInterval.
func TestJWKSRotation(t *testing.T) {
	as := oauthtest.NewServer(t, &oauthtest.Options{Algorithm: "RS256"})
	v := newVerifier(t, as, func(o *oauth.JWTOptions) { o.MinRefreshInterval = time.Hour })
	ctx := context.Background()
	if _, err := v.VerifyToken(ctx, as.Token(tokenOptions(nil))); err != nil {
		t.Fatal(err)
	}
	// The authorization server rotates to a new key.
	as.RotateKey("RS256")
	rotated := as.Token(tokenOptions(nil))
	if _, err := v.VerifyToken(ctx, rotated); !errors.Is(err, mcp.ErrInvalidToken) {
		t.Fatalf("within MinRefreshInterval of the last fetch: %v, want ErrInvalidToken", err)
	}
	if n := as.JWKSRequests(); n != 1 {
		t.Fatalf("%d fetches, want 1: an unknown kid must not refetch within MinRefreshInterval", n)
	}
	oauth.SetLastFetch(v, time.Now().Add(-2*time.Hour)) // an hour has passed
	p, err := v.VerifyToken(ctx, rotated)
	if err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if p.Subject != "user-1234" {
		t.Errorf("subject %q", p.Subject)
	}
	// A flood of made-up key ids causes no further fetches.
	for i := range 20 {
		bogus := as.Token(tokenOptions(func(o *oauthtest.TokenOptions) {
			o.Header = map[string]any{"kid": "made-up-" + string(rune('a'+i))}
		}))
		if _, err := v.VerifyToken(ctx, bogus); !errors.Is(err, mcp.ErrInvalidToken) {
			t.Fatalf("made-up kid: %v", err)
		}
	}
	if n := as.JWKSRequests(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// TestJWKSBackgroundRefresh checks that a key set older than
// RefreshInterval is refetched while verification goes on with the old
// one. It runs in a synctest bubble (the key set comes through oauthtest's
// in-memory transport), so that "older than" and "while" are the bubble's
// clock, not the machine's.
func TestJWKSBackgroundRefresh(t *testing.T) {
	as := oauthtest.NewServer(t, nil) // outside the bubble: its listener does network I/O
	as.SetJWKSDelay(10 * time.Second)
	synctest.Test(t, func(t *testing.T) {
		v := newVerifier(t, as, func(o *oauth.JWTOptions) {
			o.HTTPClient = &http.Client{Transport: as.Transport()}
			o.RefreshInterval, o.MinRefreshInterval = time.Minute, time.Minute
		})
		ctx := context.Background()
		token := as.Token(tokenOptions(nil))                 // in the bubble: issued at its time
		if _, err := v.VerifyToken(ctx, token); err != nil { // the first fetch
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // the key set is older than RefreshInterval now
		start := time.Now()
		if _, err := v.VerifyToken(ctx, token); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("verification waited %v for the refresh, want it to go on with the old key set", d)
		}
		synctest.Wait() // the refresh is under way, held by the delay
		if n := as.JWKSRequests(); n != 2 {
			t.Fatalf("%d fetches, want a background refresh", n)
		}
		if !oauth.RefreshInFlight(v) {
			t.Error("no refresh in flight while the key set endpoint holds it")
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if oauth.RefreshInFlight(v) {
			t.Error("the background refresh did not end once its fetch was answered")
		}
		if n := as.JWKSRequests(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})
}

// TestJWKSUnavailable checks that a token that cannot be checked because
// the key set is unreachable gets 503, not 401, and that verification
// recovers when the key set is back.
func TestJWKSUnavailable(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	as.SetJWKSFailure(http.StatusInternalServerError)
	v := newVerifier(t, as, nil)
	var logs syncBuffer
	url := protectedServer(t, v, &logs)
	token := as.Token(tokenOptions(nil))
	_, err := v.VerifyToken(context.Background(), token)
	if err == nil || errors.Is(err, mcp.ErrInvalidToken) {
		t.Fatalf("VerifyToken: %v, want an error that is not ErrInvalidToken", err)
	}
	if a := call(t, url, "whoami", token); a.status != 503 || !strings.Contains(a.body, `"code":-32603`) {
		t.Errorf("got %d %s, want 503 with a JSON-RPC error", a.status, a.body)
	}
	if !strings.Contains(logs.String(), "could not be verified") {
		t.Errorf("the failure was not logged:\n%s", logs.String())
	}
	as.SetJWKSFailure(0)
	oauth.SetLastFetch(v, time.Time{}) // the retry delay has passed
	if a := call(t, url, "whoami", token); a.status != 200 {
		t.Errorf("after recovery: %d %s", a.status, a.body)
	}
}

// TestJWKSFetchOutlivesCaller checks that a key set fetch started by a
// request whose client goes away still completes and serves later requests,
// instead of leaving an error behind. It runs in a synctest bubble, so that
// "while the fetch is held" is an event, not a sleep.
func TestJWKSFetchOutlivesCaller(t *testing.T) {
	as := oauthtest.NewServer(t, nil) // outside the bubble: its listener does network I/O
	as.SetJWKSDelay(10 * time.Second) // less than the fetch's own timeout
	synctest.Test(t, func(t *testing.T) {
		v := newVerifier(t, as, func(o *oauth.JWTOptions) { o.HTTPClient = &http.Client{Transport: as.Transport()} })
		token := as.Token(tokenOptions(nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := v.VerifyToken(ctx, token)
			done <- err
		}()
		synctest.Wait() // the fetch has arrived and is held
		if n := as.JWKSRequests(); n != 1 {
			t.Fatalf("%d fetches while the first request waits, want 1", n)
		}
		cancel() // its client is gone before the keys arrive
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil || errors.Is(err, mcp.ErrInvalidToken) {
				t.Errorf("the canceled request: %v, want keys unavailable (not an invalid token)", err)
			}
		default:
			t.Fatal("VerifyToken did not return when its context ended")
		}
		time.Sleep(10 * time.Second) // the keys arrive
		if _, err := v.VerifyToken(context.Background(), token); err != nil {
			t.Fatalf("the next request: %v", err)
		}
		if n := as.JWKSRequests(); n != 1 {
			t.Errorf("%d fetches, want 1", n)
		}
	})
}

// TestJWKSDiscovery checks that without JWKSURL the key set is found
// through the issuer's authorization server metadata, and that metadata
// naming another issuer is refused.
func TestJWKSDiscovery(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	v := newVerifier(t, as, func(o *oauth.JWTOptions) { o.JWKSURL = "" })
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyToken(context.Background(), as.Token(tokenOptions(nil))); err != nil {
		t.Fatal(err)
	}

	// An authorization server whose metadata names another issuer.
	as2 := oauthtest.NewServer(t, &oauthtest.Options{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/.well-known/oauth-authorization-server" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"issuer": "https://honest.example", "jwks_uri": "http://" + r.Host + "/jwks"})
		})
	}})
	v2 := newVerifier(t, as2, func(o *oauth.JWTOptions) { o.JWKSURL = "" })
	if err := v2.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "honest.example") {
		t.Errorf("Refresh with mismatched issuer metadata: %v", err)
	}
}

// TestNewJWTVerifierOptions checks the configuration errors.
func TestNewJWTVerifierOptions(t *testing.T) {
	tests := []struct {
		name string
		o    oauth.JWTOptions
		want string
	}{
		{"no issuer", oauth.JWTOptions{Audience: resource}, "Issuer is required"},
		{"no audience", oauth.JWTOptions{Issuer: "https://auth.example"}, "Audience is required"},
		{"plain http issuer", oauth.JWTOptions{Issuer: "http://auth.example", Audience: resource}, "https"},
		{"plain http key set", oauth.JWTOptions{Issuer: "https://auth.example", Audience: resource, JWKSURL: "http://auth.example/jwks"}, "https"},
		{"HMAC", oauth.JWTOptions{Issuer: "https://auth.example", Audience: resource, Algorithms: []string{"HS256"}}, "HS256"},
		{"none", oauth.JWTOptions{Issuer: "https://auth.example", Audience: resource, Algorithms: []string{"none"}}, "none"},
		{"loopback http is fine", oauth.JWTOptions{Issuer: "http://127.0.0.1:9", Audience: resource}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oauth.NewJWTVerifier(&tt.o)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tt.want == "") != (err == nil) || !strings.Contains(got, tt.want) {
				t.Errorf("error %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// TestParseKeySet checks which keys of a JWK Set are usable: the RSA, EC and
// Ed25519 keys an authorization server publishes, but no symmetric, weak,
// encryption or off-curve key.
func TestParseKeySet(t *testing.T) {
	as := oauthtest.NewServer(t, &oauthtest.Options{Algorithm: "RS256"})
	rsaKid := as.KeyID()
	ecKid := as.RotateKey("ES256")
	edKid := as.RotateKey("EdDSA")
	resp, err := http.Get(as.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	var published struct{ Keys []map[string]any }
	err = json.NewDecoder(resp.Body).Decode(&published)
	resp.Body.Close()
	if err != nil || len(published.Keys) != 3 {
		t.Fatalf("the published key set: %v, %d keys, want 3", err, len(published.Keys))
	}
	weak := map[string]string{"kty": "RSA", "kid": "weak", "n": base64.RawURLEncoding.EncodeToString(make([]byte, 128)), "e": "AQAB"}
	enc := map[string]any{}
	for k, v := range published.Keys[0] { // the RSA key, for encryption
		enc[k] = v
	}
	enc["kid"], enc["use"] = "enc", "enc"
	zero := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	set := map[string]any{"keys": []any{
		published.Keys[0], published.Keys[1], published.Keys[2],
		map[string]string{"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
		weak, enc,
		map[string]string{"kty": "EC", "kid": "off-curve", "crv": "P-256", "x": zero, "y": zero},
		"not an object",
	}}
	data, _ := json.Marshal(set)
	kids, err := oauth.UsableKeyIDs(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{rsaKid, ecKid, edKid}, kids); diff != "" {
		t.Errorf("usable keys (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{}`, `{"keys":[]}`, `[]`, `{"keys":[{"kty":"oct","k":"AA"}]}`} {
		if _, err := oauth.UsableKeyIDs([]byte(bad)); err == nil {
			t.Errorf("parseKeySet(%s) succeeded", bad)
		}
	}
}

// BenchmarkVerifyToken measures the verification of a valid token with a
// cached key set, per algorithm.
func BenchmarkVerifyToken(b *testing.B) {
	as := oauthtest.NewServer(b, nil) // ES256
	ecKid := as.KeyID()
	rsaKid := as.RotateKey("RS256")
	v, err := oauth.NewJWTVerifier(&oauth.JWTOptions{Issuer: as.URL, Audience: resource, JWKSURL: as.URL + "/jwks"})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		kid  string
	}{
		{"RS256", rsaKid},
		{"ES256", ecKid},
	} {
		token := as.Token(tokenOptions(func(o *oauthtest.TokenOptions) { o.KeyID = bc.kid }))
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if _, err := v.VerifyToken(ctx, token); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.VerifyToken(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJWTTypAndCrit checks the JOSE header rules: a "crit" header is always
// refused (this verifier understands no extension), and "typ" must be an
// accepted token type, by default the compatible set, or RFC 9068's alone.
func TestJWTTypAndCrit(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	compatible := newVerifier(t, as, nil)
	strict := newVerifier(t, as, func(o *oauth.JWTOptions) { o.TokenTypes = oauth.StrictTokenTypes })
	tok := func(hdr map[string]any) string {
		return as.Token(tokenOptions(func(o *oauthtest.TokenOptions) { o.Header = hdr }))
	}
	tests := []struct {
		name         string
		token        string
		compat, strc string // "" accepted, else in the error
	}{
		{"at+jwt", tok(nil), "", ""},
		{"application/at+jwt", tok(map[string]any{"typ": "application/at+jwt"}), "", ""},
		{"AT+JWT", tok(map[string]any{"typ": "AT+JWT"}), "", ""},
		{"JWT", tok(map[string]any{"typ": "JWT"}), "", `type "JWT" is not an accepted`},
		{"no typ", tok(map[string]any{"typ": nil}), "", "no typ header"},
		{"id token type", tok(map[string]any{"typ": "id+jwt"}), `type "id+jwt"`, `type "id+jwt"`},
		{"logout token type", tok(map[string]any{"typ": "logout+jwt"}), "not an accepted access token type", "not an accepted"},
		{"typ not a string", tok(map[string]any{"typ": 7}), "typ header is not a string", "typ header is not a string"},
		{"crit unknown", tok(map[string]any{"crit": []string{"x-unknown"}, "x-unknown": true}), "crit header", "crit header"},
		{"crit b64", tok(map[string]any{"crit": []string{"b64"}, "b64": false}), "crit header", "crit header"},
		{"crit empty", tok(map[string]any{"crit": []string{}}), "crit header", "crit header"},
		{"crit not a list", tok(map[string]any{"crit": "exp"}), "crit header", "crit header"},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			v    *oauth.JWTVerifier
			want string
		}{{compatible, tt.compat}, {strict, tt.strc}} {
			_, err := c.v.VerifyToken(context.Background(), tt.token)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %v, want accepted", tt.name, err)
			case c.want != "" && (!errors.Is(err, mcp.ErrInvalidToken) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s: %v, want ErrInvalidToken because %q", tt.name, err, c.want)
			}
		}
	}
}
