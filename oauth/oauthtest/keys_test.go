package oauthtest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

const resource = "https://mcp.example.test/mcp"

// jwks returns the kid, kty and alg of every key as publishes.
func jwks(t *testing.T, as *oauthtest.Server) [][3]string {
	t.Helper()
	resp, err := http.Get(as.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/jwk-set+json" {
		t.Fatalf("GET /jwks: %s, Content-Type %q", resp.Status, ct)
	}
	var set struct{ Keys []map[string]string }
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	out := [][3]string{}
	for _, k := range set.Keys {
		out = append(out, [3]string{k["kid"], k["kty"], k["alg"]})
	}
	return out
}

// header returns the JOSE header of token, unverified.
func header(t *testing.T, token string) map[string]any {
	t.Helper()
	tok, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Header
}

// TestAlgorithms: a server signs with the algorithm Options.Algorithm names, publishes the
// matching key, and oauth's verifier accepts its tokens, for every algorithm the verifier
// supports; any other algorithm is refused.
func TestAlgorithms(t *testing.T) {
	kty := map[string]string{"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
	for _, alg := range oauth.DefaultAlgorithms {
		t.Run(alg, func(t *testing.T) {
			as := oauthtest.NewServer(t, &oauthtest.Options{Algorithm: alg})
			if diff := cmp.Diff([][3]string{{"oauthtest-1", kty[alg[:2]], alg}}, jwks(t, as)); diff != "" {
				t.Errorf("JWK Set (-want +got):\n%s", diff)
			}
			token := as.Token(&oauthtest.TokenOptions{Audience: resource})
			if h := header(t, token); h["alg"] != alg || h["kid"] != "oauthtest-1" || h["typ"] != "at+jwt" {
				t.Errorf("header %v", h)
			}
			if _, err := as.Verifier(resource).VerifyToken(context.Background(), token); err != nil {
				t.Errorf("VerifyToken: %v", err)
			}
		})
	}
	for _, alg := range []string{"HS256", "none", "RS1"} {
		if s, err := oauthtest.Start(&oauthtest.Options{Algorithm: alg}); err == nil || !strings.Contains(err.Error(), "Options.Algorithm") {
			if s != nil {
				s.Close()
			}
			t.Errorf("Start with Algorithm %q: %v, want an error naming Options.Algorithm", alg, err)
		}
	}
}

// TestRotateAndRetire: a rotated key signs what follows and is published next to the old
// one, until RetireKey takes the old one out of the JWK Set; the server can still sign with
// it, and a verifier that fetches the keys again refuses such tokens.
func TestRotateAndRetire(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	ctx := context.Background()
	first := as.KeyID()
	before := as.Token(&oauthtest.TokenOptions{Audience: resource})
	second := as.RotateKey("") // the same algorithm
	third := as.RotateKey("EdDSA")
	if first != "oauthtest-1" || second != "oauthtest-2" || third != "oauthtest-3" || as.KeyID() != third {
		t.Fatalf("kids %s %s %s, current %s", first, second, third, as.KeyID())
	}
	after := as.Token(&oauthtest.TokenOptions{Audience: resource})
	if h := header(t, after); h["kid"] != third || h["alg"] != "EdDSA" {
		t.Errorf("a token after the rotation has header %v, want kid %s and alg EdDSA", h, third)
	}
	want := [][3]string{{first, "EC", "ES256"}, {second, "EC", "ES256"}, {third, "OKP", "EdDSA"}}
	if diff := cmp.Diff(want, jwks(t, as)); diff != "" {
		t.Errorf("JWK Set after rotating (-want +got):\n%s", diff)
	}
	v := as.Verifier(resource)
	for _, tok := range []string{before, after} {
		if _, err := v.VerifyToken(ctx, tok); err != nil {
			t.Errorf("before RetireKey: %v", err)
		}
	}

	as.RetireKey(first)
	as.RetireKey("never-had") // ignored
	if diff := cmp.Diff(want[1:], jwks(t, as)); diff != "" {
		t.Errorf("JWK Set after RetireKey (-want +got):\n%s", diff)
	}
	old := as.Token(&oauthtest.TokenOptions{Audience: resource, KeyID: first})
	if h := header(t, old); h["kid"] != first || h["alg"] != "ES256" {
		t.Errorf("a token of the retired key has header %v", h)
	}
	fresh := as.Verifier(resource)
	for _, tok := range []string{before, old} {
		if _, err := fresh.VerifyToken(ctx, tok); !errors.Is(err, mcp.ErrInvalidToken) || !strings.Contains(err.Error(), "no matching signing key") {
			t.Errorf("a token of the retired key: %v, want ErrInvalidToken for an unknown key", err)
		}
	}
	if _, err := fresh.VerifyToken(ctx, after); err != nil {
		t.Errorf("a token of the current key: %v", err)
	}

	if _, ok := as.PublicKey(first).(*ecdsa.PublicKey); !ok {
		t.Errorf("PublicKey(%s) = %T, want an ECDSA key", first, as.PublicKey(first))
	}
	if _, ok := as.PublicKey(third).(ed25519.PublicKey); !ok {
		t.Errorf("PublicKey(%s) = %T, want an Ed25519 key", third, as.PublicKey(third))
	}
	if k := as.PublicKey("never-had"); k != nil {
		t.Errorf("PublicKey of an unknown kid = %T, want nil", k)
	}
	for name, f := range map[string]func(){
		"Token with an unknown KeyID": func() { as.Token(&oauthtest.TokenOptions{KeyID: "never-had"}) },
		"RotateKey to HS256":          func() { as.RotateKey("HS256") },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "oauthtest: ") {
					t.Errorf("%s: recovered %v, want a panic naming the package", name, r)
				}
			}()
			f()
		}()
	}
}

// TestTokenClaimsAndHeader: TokenOptions.Claims and Header set, replace and remove members,
// for tokens a verifier must refuse.
func TestTokenClaimsAndHeader(t *testing.T) {
	as := oauthtest.NewServer(t, &oauthtest.Options{Algorithm: "PS256"})
	nbf := time.Now().Add(time.Hour).Unix()
	token := as.Token(&oauthtest.TokenOptions{Audience: resource, Scopes: []string{"a", "b"},
		Claims: map[string]any{"nbf": nbf, "sub": nil, "aud": []string{resource, "https://other.example"}, "scp": []string{"x"}},
		Header: map[string]any{"typ": nil, "kid": "elsewhere", "crit": []string{"exp"}}})
	claims := jwt.MapClaims{}
	tok, _, err := jwt.NewParser().ParseUnverified(token, claims)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := map[string]any{"alg": "PS256", "kid": "elsewhere", "crit": []any{"exp"}}
	if diff := cmp.Diff(wantHeader, tok.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	for k, want := range map[string]any{"nbf": float64(nbf), "aud": []any{resource, "https://other.example"},
		"scp": []any{"x"}, "scope": "a b", "iss": as.URL, "client_id": as.ClientID} {
		if !cmp.Equal(claims[k], want) {
			t.Errorf("claim %s = %v, want %v", k, claims[k], want)
		}
	}
	if _, ok := claims["sub"]; ok {
		t.Errorf("claim sub = %v, want it removed", claims["sub"])
	}
	// The signature is still the server's: only the header's kid is foreign.
	if _, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return as.PublicKey(as.KeyID()), nil }); err == nil ||
		!errors.Is(err, jwt.ErrTokenNotValidYet) {
		t.Errorf("the token with the server's key: %v, want only not valid yet", err)
	}
	if _, ok := as.PublicKey(as.KeyID()).(*rsa.PublicKey); !ok {
		t.Errorf("PublicKey = %T, want an RSA key", as.PublicKey(as.KeyID()))
	}
}

// TestJWKSFailureAndDelay: the JWK Set endpoint fails and answers late on demand, and counts
// its requests; through Transport, its delay is on a synctest bubble's clock.
func TestJWKSFailureAndDelay(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	get := func(c *http.Client, ctx context.Context) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.URL+"/jwks", nil)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	as.SetJWKSFailure(http.StatusServiceUnavailable)
	if code, err := get(http.DefaultClient, context.Background()); code != 503 || err != nil {
		t.Errorf("with SetJWKSFailure(503): %d, %v", code, err)
	}
	as.SetJWKSFailure(0)
	if code, err := get(http.DefaultClient, context.Background()); code != 200 || err != nil {
		t.Errorf("after SetJWKSFailure(0): %d, %v", code, err)
	}
	if n := as.JWKSRequests(); n != 2 {
		t.Errorf("JWKSRequests = %d, want 2", n)
	}

	as.SetJWKSDelay(5 * time.Second)
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: as.Transport()}
		start := time.Now()
		if code, err := get(c, context.Background()); code != 200 || err != nil || time.Since(start) != 5*time.Second {
			t.Errorf("with SetJWKSDelay(5s): %d, %v after %v", code, err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if _, err := get(c, ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("a request that gives up during the delay: %v after %v, want its deadline", err, time.Since(start))
		}
		as.SetJWKSFailure(http.StatusInternalServerError)
		start = time.Now()
		if code, err := get(c, context.Background()); code != 500 || err != nil || time.Since(start) != 5*time.Second {
			t.Errorf("delay and failure: %d, %v after %v, want 500 after 5s", code, err, time.Since(start))
		}
		if _, err := c.Get("http://elsewhere.example/jwks"); err == nil || !strings.Contains(err.Error(), "serves "+as.URL+" only") {
			t.Errorf("Transport to another host: %v", err)
		}
	})
	if n := as.JWKSRequests(); n != 5 {
		t.Errorf("JWKSRequests = %d, want 5", n)
	}
}
