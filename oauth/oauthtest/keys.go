package oauthtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// newSigningKey generates a key for the JWS algorithm alg; its kid is set by addKey.
func newSigningKey(alg string) (*signingKey, error) {
	k := &signingKey{method: jwt.GetSigningMethod(alg), published: true}
	var err error
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		k.private, err = rsa.GenerateKey(rand.Reader, 2048) // oauth's verifier refuses smaller
	case "ES256":
		k.private, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		k.private, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ES512":
		k.private, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "EdDSA":
		_, k.private, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("unsupported signing algorithm %q (want one of oauth.DefaultAlgorithms)", alg)
	}
	if err != nil {
		return nil, fmt.Errorf("generating a %s key: %w", alg, err)
	}
	return k, nil
}

// addKey gives k the next kid, publishes it and makes it the signing key. s.mu is held, or
// s is not shared yet.
func (s *Server) addKey(k *signingKey) {
	k.kid = fmt.Sprintf("oauthtest-%d", len(s.keys)+1)
	s.keys = append(s.keys, k)
	s.signer = k
}

// key returns the key named kid, published or not, or nil. s.mu is held.
func (s *Server) key(kid string) *signingKey {
	for _, k := range s.keys {
		if k.kid == kid {
			return k
		}
	}
	return nil
}

// jwk is k's public key as a JSON Web Key (RFC 7517, RFC 7518, RFC 8037).
func (k *signingKey) jwk() map[string]string {
	b64 := base64.RawURLEncoding.EncodeToString
	m := map[string]string{"kid": k.kid, "use": "sig", "alg": k.method.Alg()}
	switch pub := k.private.Public().(type) {
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, err := pub.Bytes() // 0x04 || X || Y, each the curve's size
		if err != nil {
			panic("oauthtest: encoding an ECDSA key: " + err.Error()) // a key we generated
		}
		size := (len(raw) - 1) / 2
		m["kty"], m["crv"], m["x"], m["y"] = "EC", pub.Curve.Params().Name, b64(raw[1:1+size]), b64(raw[1+size:])
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["x"] = "OKP", "Ed25519", b64(pub)
	}
	return m
}

// KeyID returns the kid of the current signing key: the first one ("oauthtest-1") until
// RotateKey makes another.
func (s *Server) KeyID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signer.kid
}

// RotateKey generates a new key for the JWS algorithm alg ("" for the current key's; the
// others are those of Options.Algorithm), publishes it in the JWK Set and makes it the signing
// key of every token that follows, as an authorization server that rotates its keys does. The
// keys it replaces stay published until RetireKey. It returns the new key's kid, and panics on
// an algorithm Options.Algorithm does not allow.
func (s *Server) RotateKey(alg string) string {
	if alg == "" {
		s.mu.Lock()
		alg = s.signer.method.Alg()
		s.mu.Unlock()
	}
	k, err := newSigningKey(alg) // outside s.mu: an RSA key takes a while
	if err != nil {
		panic("oauthtest: RotateKey: " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addKey(k)
	return k.kid
}

// RetireKey removes the key kid from the JWK Set. The server keeps it: TokenOptions.KeyID can
// still sign with it, for a token a verifier must refuse once it has fetched the key set again.
// Retiring the current signing key leaves it the signing key, so that the server's tokens no
// longer verify, as a misconfigured server's do; a kid the server never had is ignored.
func (s *Server) RetireKey(kid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.key(kid); k != nil {
		k.published = false
	}
}

// PublicKey returns the public key of the key kid, published or retired: an *rsa.PublicKey,
// an *ecdsa.PublicKey or an ed25519.PublicKey. It returns nil when the server never had kid.
func (s *Server) PublicKey(kid string) crypto.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.key(kid); k != nil {
		return k.private.Public()
	}
	return nil
}

// SetJWKSFailure makes the JWK Set endpoint answer every request with the HTTP status (500,
// say) and a short text body instead of the keys, as an authorization server that is down
// does, until it is called with 0.
func (s *Server) SetJWKSFailure(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jwks.status = status
}

// SetJWKSDelay makes the JWK Set endpoint wait d before it answers (with the keys, or with
// SetJWKSFailure's status), or until the request is canceled, when it answers nothing; 0
// answers at once. The wait is on the clock of the goroutine that serves the request: through
// Transport, inside a testing/synctest bubble, the bubble's.
func (s *Server) SetJWKSDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jwks.delay = d
}

// JWKSRequests returns how many requests the JWK Set endpoint has had, through the network
// or Transport: how often a verifier fetched the keys.
func (s *Server) JWKSRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jwks.requests
}

// Transport returns an http.RoundTripper that serves requests for URL in memory, without a
// connection: it calls the server's handler (wrapped by Options.Wrap) on the goroutine that
// sends the request, and returns what it wrote. A verifier whose HTTP client uses it runs
// inside a testing/synctest bubble, where a real connection would not be durably blocking, and
// SetJWKSDelay then waits on the bubble's fake clock. Requests for any other host fail. It is
// safe for concurrent use, and works after Close.
func (s *Server) Transport() http.RoundTripper { return memTransport{s} }

type memTransport struct{ s *Server }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	if r.URL.Scheme+"://"+r.URL.Host != t.s.URL {
		return nil, fmt.Errorf("oauthtest: Transport serves %s only, not %s", t.s.URL, r.URL.Redacted())
	}
	req := r.Clone(r.Context())
	req.RequestURI = r.URL.RequestURI()
	req.RemoteAddr = "127.0.0.1:1"
	if req.Body == nil {
		req.Body = http.NoBody
	}
	w := httptest.NewRecorder()
	t.s.handler.ServeHTTP(w, req)
	if err := r.Context().Err(); err != nil {
		return nil, context.Cause(r.Context())
	}
	resp := w.Result()
	resp.Request = r
	return resp, nil
}
