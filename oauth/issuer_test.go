package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testIssuer is a real, local authorization server as far as a resource
// server can tell: it publishes its metadata and a JWK Set over HTTP on
// 127.0.0.1, and mints tokens signed with keys generated for the test.
type testIssuer struct {
	t    testing.TB
	srv  *httptest.Server
	URL  string
	rsa  *rsa.PrivateKey   // kid "rsa-1"
	ec   *ecdsa.PrivateKey // kid "ec-1"
	fail atomic.Bool       // answer 500 instead of the key set
	slow atomic.Bool       // hold the key set until release is closed
	// fetching gets a value when a held key set request arrives; release
	// lets held requests answer.
	fetching, release chan struct{}

	mu        sync.Mutex
	published []map[string]string
	fetches   atomic.Int32
	metadata  map[string]string // the authorization server metadata
}

// Keys are expensive to generate on a shared machine: make them once.
var (
	keysOnce         sync.Once
	rsaKey, rsaOther *rsa.PrivateKey
	ecKey            *ecdsa.PrivateKey
)

func testKeys(t testing.TB) {
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if rsaOther, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	testKeys(t)
	is := &testIssuer{t: t, rsa: rsaKey, ec: ecKey, fetching: make(chan struct{}, 1), release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if is.slow.Load() {
			select {
			case is.fetching <- struct{}{}:
			default:
			}
			select {
			case <-is.release:
			case <-r.Context().Done():
				return
			}
		}
		if is.fail.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		is.mu.Lock()
		b, _ := json.Marshal(map[string]any{"keys": is.published})
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(b)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		b, _ := json.Marshal(is.metadata)
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	is.srv = httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(is.srv.Close)
	is.URL = is.srv.URL
	is.metadata = map[string]string{"issuer": is.URL, "jwks_uri": is.URL + "/jwks"}
	is.publish(rsaJWK("rsa-1", &is.rsa.PublicKey), ecJWK("ec-1", &is.ec.PublicKey))
	return is
}

// publish replaces the published key set.
func (is *testIssuer) publish(keys ...map[string]string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = keys
}

func b64u(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, k *rsa.PublicKey) map[string]string {
	return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64u(k.N.Bytes()), "e": b64u(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]string {
	b, err := k.Bytes()
	if err != nil {
		panic(err)
	}
	size := (len(b) - 1) / 2
	return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64u(b[1 : 1+size]), "y": b64u(b[1+size:])}
}

// claims returns the claims of a valid token for resource, to be changed
// per case.
func (is *testIssuer) claims(resource string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss":       is.URL,
		"sub":       "user-1234",
		"aud":       resource,
		"client_id": "client-abc",
		"scope":     "mcp:read",
		"iat":       now.Unix(),
		"exp":       now.Add(5 * time.Minute).Unix(),
		"jti":       "id-" + now.Format(time.RFC3339Nano),
	}
}

// mint signs claims with method, key and kid ("" for none).
func (is *testIssuer) mint(method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	is.t.Helper()
	return is.mintHeader(method, key, kid, c, nil)
}

// mintHeader is mint with header members set (a nil value deletes one).
// Tokens are typed at+jwt, as RFC 9068 asks, unless hdr changes "typ".
func (is *testIssuer) mintHeader(method jwt.SigningMethod, key any, kid string, c jwt.MapClaims, hdr map[string]any) string {
	is.t.Helper()
	tok := jwt.NewWithClaims(method, c)
	tok.Header["typ"] = "at+jwt"
	for k, v := range hdr {
		if v == nil {
			delete(tok.Header, k)
		} else {
			tok.Header[k] = v
		}
	}
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		is.t.Fatalf("minting a %s token: %v", method.Alg(), err)
	}
	return s
}

// rs256 mints a token signed with the published RSA key.
func (is *testIssuer) rs256(c jwt.MapClaims) string {
	return is.mint(jwt.SigningMethodRS256, is.rsa, "rsa-1", c)
}

// publicPEM is the PEM encoding of the issuer's RSA public key: what an
// attacker would use as the HMAC secret in a key confusion attack.
func (is *testIssuer) publicPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(&is.rsa.PublicKey)
	if err != nil {
		is.t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
