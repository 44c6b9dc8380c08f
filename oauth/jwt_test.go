package oauth

import (
	"bytes"
	"context"
	"encoding/json"
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
)

const resource = "https://mcp.example.test/mcp"

const (
	challengeInvalid = `Bearer error="invalid_token", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`
	challengeMissing = `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`
)

func challengeScope(scope string) string {
	return `Bearer error="insufficient_scope", scope="` + scope + `", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a scope this operation requires"`
}

func newVerifier(t *testing.T, is *testIssuer, mod func(*JWTOptions)) *JWTVerifier {
	t.Helper()
	o := JWTOptions{Issuer: is.URL, Audience: resource, JWKSURL: is.URL + "/jwks"}
	if mod != nil {
		mod(&o)
	}
	v, err := NewJWTVerifier(&o)
	if err != nil {
		t.Fatal(err)
	}
	return v
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
	is := newTestIssuer(t)
	var logs syncBuffer
	url := protectedServer(t, newVerifier(t, is, nil), &logs)
	now := time.Now()
	with := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := is.claims(resource)
		mod(c)
		return c
	}
	valid := is.rs256(is.claims(resource))
	// Change four characters in the middle of the signature (not at its
	// end, where base64 padding bits would make it malformed instead).
	i := len(valid) - 40
	tampered := valid[:i] + flip(valid[i:i+4]) + valid[i+4:]
	parts := strings.Split(valid, ".")
	otherPayload := is.rs256(with(func(c jwt.MapClaims) { c["sub"] = "someone-else" }))
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
		{"valid ES256", "whoami", is.mint(jwt.SigningMethodES256, is.ec, "ec-1", is.claims(resource)), 200, "", "user-1234", ""},
		{"audience list", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example", resource} })), 200, "", "user-1234", ""},
		{"audience in upper case", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["aud"] = "HTTPS://MCP.EXAMPLE.TEST/mcp" })), 200, "", "user-1234", ""},
		{"scp list", "whoami", is.rs256(with(func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = []string{"mcp:read", "x"} })), 200, "", "mcp:read,x", ""},
		{"azp as client", "whoami", is.rs256(with(func(c jwt.MapClaims) { delete(c, "client_id"); c["azp"] = "client-azp" })), 200, "", "client-azp", ""},
		{"expired within leeway", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), 200, "", "user-1234", ""},
		{"no token", "whoami", "", 401, challengeMissing, "Unauthorized", ""},
		{"expired", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Minute).Unix() })), 401, challengeInvalid, "invalid or expired", "token is expired"},
		{"no exp", "whoami", is.rs256(with(func(c jwt.MapClaims) { delete(c, "exp") })), 401, challengeInvalid, "", "exp claim is required"},
		{"not yet valid", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), 401, challengeInvalid, "", "token is not valid yet"},
		{"issued in the future", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["iat"] = now.Add(10 * time.Minute).Unix() })), 401, challengeInvalid, "", "token used before issued"},
		{"wrong audience", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" })), 401, challengeInvalid, "", "not issued for this resource"},
		{"audience prefix", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["aud"] = "https://mcp.example.test" })), 401, challengeInvalid, "", "not issued for this resource"},
		{"no audience", "whoami", is.rs256(with(func(c jwt.MapClaims) { delete(c, "aud") })), 401, challengeInvalid, "", "not issued for this resource"},
		{"wrong issuer", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), 401, challengeInvalid, "", "token has invalid issuer"},
		{"no subject", "whoami", is.rs256(with(func(c jwt.MapClaims) { delete(c, "sub") })), 401, challengeInvalid, "", "no sub claim"},
		{"bad scope claim", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["scope"] = 7 })), 401, challengeInvalid, "", "scope claim is not a string"},
		{"missing required scope", "whoami", is.rs256(with(func(c jwt.MapClaims) { c["scope"] = "profile" })), 403, challengeScope("mcp:read"), "insufficient scope", ""},
		{"missing tool scope", "write", valid, 403, challengeScope("mcp:read mcp:write"), "mcp:write", ""},
		{"tool scope held", "write", is.rs256(with(func(c jwt.MapClaims) { c["scope"] = "mcp:read mcp:write" })), 200, "", "written", ""},
		{"tampered signature", "whoami", tampered, 401, challengeInvalid, "", "signature is invalid"},
		{"payload swapped", "whoami", swapped, 401, challengeInvalid, "", "signature is invalid"},
		{"alg none", "whoami", is.mint(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa-1", is.claims(resource)), 401, challengeInvalid, "", "signing method none is invalid"},
		{"HMAC with the public key", "whoami", is.mint(jwt.SigningMethodHS256, is.publicPEM(), "rsa-1", is.claims(resource)), 401, challengeInvalid, "", "signing method HS256 is invalid"},
		{"RSA token naming the EC key", "whoami", is.mint(jwt.SigningMethodRS256, is.rsa, "ec-1", is.claims(resource)), 401, challengeInvalid, "", "no matching signing key"},
		{"unknown kid", "whoami", is.mint(jwt.SigningMethodRS256, rsaOther, "rsa-9", is.claims(resource)), 401, challengeInvalid, "", "no matching signing key"},
		{"unpublished key, known kid", "whoami", is.mint(jwt.SigningMethodRS256, rsaOther, "rsa-1", is.claims(resource)), 401, challengeInvalid, "", "signature is invalid"},
		{"not a JWT", "whoami", "definitely-not-a-jwt", 401, challengeInvalid, "", "token is malformed"},
	}
	v := newVerifier(t, is, nil)
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
	is := newTestIssuer(t)
	v := newVerifier(t, is, nil)
	for range 5 {
		if _, err := v.VerifyToken(context.Background(), is.rs256(is.claims(resource))); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d fetches of the key set, want 1", n)
	}
}

// TestJWKSRotation checks that a token signed with a newly published key is
// accepted after a refetch, and that unknown key ids refetch at most once
// per MinRefreshInterval.
func TestJWKSRotation(t *testing.T) {
	is := newTestIssuer(t)
	v := newVerifier(t, is, func(o *JWTOptions) { o.MinRefreshInterval = time.Hour })
	ctx := context.Background()
	if _, err := v.VerifyToken(ctx, is.rs256(is.claims(resource))); err != nil {
		t.Fatal(err)
	}
	// The authorization server rotates to a new key.
	is.publish(rsaJWK("rsa-1", &is.rsa.PublicKey), rsaJWK("rsa-2", &rsaOther.PublicKey))
	rotated := is.mint(jwt.SigningMethodRS256, rsaOther, "rsa-2", is.claims(resource))
	if _, err := v.VerifyToken(ctx, rotated); !errors.Is(err, mcp.ErrInvalidToken) {
		t.Fatalf("within MinRefreshInterval of the last fetch: %v, want ErrInvalidToken", err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1: an unknown kid must not refetch within MinRefreshInterval", n)
	}
	v.keys.mu.Lock()
	v.keys.lastDone = time.Now().Add(-2 * time.Hour) // an hour has passed
	v.keys.mu.Unlock()
	p, err := v.VerifyToken(ctx, rotated)
	if err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if p.Subject != "user-1234" {
		t.Errorf("subject %q", p.Subject)
	}
	// A flood of made-up key ids causes no further fetches.
	for i := range 20 {
		bogus := is.mint(jwt.SigningMethodRS256, rsaOther, "made-up-"+string(rune('a'+i)), is.claims(resource))
		if _, err := v.VerifyToken(ctx, bogus); !errors.Is(err, mcp.ErrInvalidToken) {
			t.Fatalf("made-up kid: %v", err)
		}
	}
	if n := is.fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// TestJWKSBackgroundRefresh checks that a key set older than
// RefreshInterval is refetched while verification goes on with the old
// one. It runs in a synctest bubble (the key set comes through an
// in-memory transport), so that "older than" and "while" are the bubble's
// clock, not the machine's.
func TestJWKSBackgroundRefresh(t *testing.T) {
	is := newTestIssuer(t) // outside the bubble: its server does network I/O
	synctest.Test(t, func(t *testing.T) {
		tr := &slowJWKS{is: is, delay: 10 * time.Second}
		v := newVerifier(t, is, func(o *JWTOptions) {
			o.HTTPClient = &http.Client{Transport: tr}
			o.RefreshInterval, o.MinRefreshInterval = time.Minute, time.Minute
		})
		ctx := context.Background()
		token := is.rs256(is.claims(resource))
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
		synctest.Wait() // the refresh is under way, held by the transport
		if n := tr.fetches.Load(); n != 2 {
			t.Fatalf("%d fetches, want a background refresh", n)
		}
		if !v.keys.background.Load() {
			t.Error("no refresh in flight while the transport holds it")
		}
		time.Sleep(tr.delay)
		synctest.Wait()
		if v.keys.background.Load() {
			t.Error("the background refresh did not end once its fetch was answered")
		}
		if n := tr.fetches.Load(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})
}

// TestJWKSUnavailable checks that a token that cannot be checked because
// the key set is unreachable gets 503, not 401, and that verification
// recovers when the key set is back.
func TestJWKSUnavailable(t *testing.T) {
	is := newTestIssuer(t)
	is.fail.Store(true)
	v := newVerifier(t, is, nil)
	var logs syncBuffer
	url := protectedServer(t, v, &logs)
	token := is.rs256(is.claims(resource))
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
	is.fail.Store(false)
	v.keys.mu.Lock()
	v.keys.lastDone = time.Time{} // the retry delay has passed
	v.keys.mu.Unlock()
	if a := call(t, url, "whoami", token); a.status != 200 {
		t.Errorf("after recovery: %d %s", a.status, a.body)
	}
}

// TestJWKSFetchOutlivesCaller checks that a key set fetch started by a
// request whose client goes away still completes and serves later requests,
// instead of leaving an error behind.
func TestJWKSFetchOutlivesCaller(t *testing.T) {
	is := newTestIssuer(t)
	is.slow.Store(true)
	v := newVerifier(t, is, nil)
	token := is.rs256(is.claims(resource))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.VerifyToken(ctx, token)
	}()
	<-is.fetching
	cancel() // its client is gone before the keys arrive
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		close(is.release)
		t.Fatal("VerifyToken did not return when its context ended")
	}
	close(is.release)
	if _, err := v.VerifyToken(context.Background(), token); err != nil {
		t.Fatalf("the next request: %v", err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// TestJWKSDiscovery checks that without JWKSURL the key set is found
// through the issuer's authorization server metadata, and that metadata
// naming another issuer is refused.
func TestJWKSDiscovery(t *testing.T) {
	is := newTestIssuer(t)
	v := newVerifier(t, is, func(o *JWTOptions) { o.JWKSURL = "" })
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyToken(context.Background(), is.rs256(is.claims(resource))); err != nil {
		t.Fatal(err)
	}

	is2 := newTestIssuer(t)
	is2.mu.Lock()
	is2.metadata["issuer"] = "https://honest.example"
	is2.mu.Unlock()
	v2 := newVerifier(t, is2, func(o *JWTOptions) { o.JWKSURL = "" })
	if err := v2.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "honest.example") {
		t.Errorf("Refresh with mismatched issuer metadata: %v", err)
	}
}

// TestNewJWTVerifierOptions checks the configuration errors.
func TestNewJWTVerifierOptions(t *testing.T) {
	tests := []struct {
		name string
		o    JWTOptions
		want string
	}{
		{"no issuer", JWTOptions{Audience: resource}, "Issuer is required"},
		{"no audience", JWTOptions{Issuer: "https://auth.example"}, "Audience is required"},
		{"plain http issuer", JWTOptions{Issuer: "http://auth.example", Audience: resource}, "https"},
		{"plain http key set", JWTOptions{Issuer: "https://auth.example", Audience: resource, JWKSURL: "http://auth.example/jwks"}, "https"},
		{"HMAC", JWTOptions{Issuer: "https://auth.example", Audience: resource, Algorithms: []string{"HS256"}}, "HS256"},
		{"none", JWTOptions{Issuer: "https://auth.example", Audience: resource, Algorithms: []string{"none"}}, "none"},
		{"loopback http is fine", JWTOptions{Issuer: "http://127.0.0.1:9", Audience: resource}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewJWTVerifier(&tt.o)
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

// TestParseKeySet checks which keys of a JWK Set are usable.
func TestParseKeySet(t *testing.T) {
	testKeys(t)
	weak := map[string]string{"kty": "RSA", "kid": "weak", "n": b64u(make([]byte, 128)), "e": "AQAB"}
	enc := rsaJWK("enc", &rsaKey.PublicKey)
	enc["use"] = "enc"
	set := map[string]any{"keys": []any{
		rsaJWK("rsa-1", &rsaKey.PublicKey),
		ecJWK("ec-1", &ecKey.PublicKey),
		map[string]string{"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
		weak, enc,
		map[string]string{"kty": "EC", "kid": "off-curve", "crv": "P-256", "x": b64u(make([]byte, 32)), "y": b64u(make([]byte, 32))},
		"not an object",
	}}
	data, _ := json.Marshal(set)
	ks, err := parseKeySet(data)
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range ks.all {
		kids = append(kids, k.kid)
	}
	if diff := cmp.Diff([]string{"rsa-1", "ec-1"}, kids); diff != "" {
		t.Errorf("usable keys (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{}`, `{"keys":[]}`, `[]`, `{"keys":[{"kty":"oct","k":"AA"}]}`} {
		if _, err := parseKeySet([]byte(bad)); err == nil {
			t.Errorf("parseKeySet(%s) succeeded", bad)
		}
	}
}

// FuzzParseKeySet checks that no key set document makes the decoder panic.
func FuzzParseKeySet(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},{"kty":"EC","crv":"P-256","x":"AA","y":"AA"},{"kty":"OKP","crv":"Ed25519","x":"AA"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","e":"AAAAAAAB","n":""}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := parseKeySet(data)
		if err == nil && len(ks.all) == 0 {
			t.Error("a key set without keys was accepted")
		}
	})
}

// TestCanonicalResource checks the audience comparison rules.
func TestCanonicalResource(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://MCP.Example.com/mcp", "https://mcp.example.com/mcp"},
		{"HTTPS://mcp.example.com/", "https://mcp.example.com"},
		{"https://mcp.example.com/Path", "https://mcp.example.com/Path"},
		{"urn:not-a-url", "urn:not-a-url"},
	}
	for _, tt := range tests {
		if got := canonicalResource(tt.in); got != tt.want {
			t.Errorf("canonicalResource(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkVerifyToken measures the verification of a valid token with a
// cached key set, per algorithm.
func BenchmarkVerifyToken(b *testing.B) {
	is := newTestIssuer(b)
	v, err := NewJWTVerifier(&JWTOptions{Issuer: is.URL, Audience: resource, JWKSURL: is.URL + "/jwks"})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		token string
	}{
		{"RS256", is.rs256(is.claims(resource))},
		{"ES256", is.mint(jwt.SigningMethodES256, is.ec, "ec-1", is.claims(resource))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if _, err := v.VerifyToken(ctx, bc.token); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.VerifyToken(ctx, bc.token); err != nil {
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
	is := newTestIssuer(t)
	compatible := newVerifier(t, is, nil)
	strict := newVerifier(t, is, func(o *JWTOptions) { o.TokenTypes = StrictTokenTypes })
	tok := func(hdr map[string]any) string {
		return is.mintHeader(jwt.SigningMethodRS256, is.rsa, "rsa-1", is.claims(resource), hdr)
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
			v    *JWTVerifier
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
