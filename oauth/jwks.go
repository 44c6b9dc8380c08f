package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxDocumentBytes bounds a fetched key set or metadata document.
const maxDocumentBytes = 1 << 20

// minRSABits is the smallest RSA modulus accepted in a key set.
const minRSABits = 2048

// errKeysUnavailable marks failures to obtain the key set at all; a token
// that could not be checked for that reason is not called invalid.
var errKeysUnavailable = errors.New("signing keys unavailable")

// errUnknownKey: the token names a key that the key set does not have.
var errUnknownKey = errors.New("no matching signing key")

// publicKey is one usable signing key of a key set.
type publicKey struct {
	kid string
	alg string // the JWK's "alg", "" when absent
	key any    // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// keySet is an immutable fetched JWK Set.
type keySet struct {
	byKid   map[string][]publicKey
	all     []publicKey
	fetched time.Time
}

// find returns the key for a token header's kid and alg. Without a kid,
// the one key compatible with alg is used; two or more make it ambiguous.
func (ks *keySet) find(kid, alg string) (any, bool) {
	if kid != "" {
		for _, k := range ks.byKid[kid] {
			if compatible(k, alg) {
				return k.key, true
			}
		}
		return nil, false
	}
	var found any
	n := 0
	for _, k := range ks.all {
		if compatible(k, alg) {
			found = k.key
			n++
		}
	}
	return found, n == 1
}

// compatible reports whether k may verify a signature made with alg: the
// key type must be the algorithm's (no RSA key for an HMAC or EC
// algorithm, and so on) and a JWK that names its algorithm must name this
// one.
func compatible(k publicKey, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return key.Curve == elliptic.P256()
		case "ES384":
			return key.Curve == elliptic.P384()
		case "ES512":
			return key.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// keySource fetches a JWK Set and keeps it fresh: the set in use is
// refetched in the background once it is older than refresh, and a token
// naming an unknown key triggers a refetch at most once per minRefresh, so
// that rotated keys are picked up quickly while made-up key ids cannot make
// the server hammer the authorization server. At most one fetch is in
// flight at a time and every caller that needs it waits for that one, each
// for no longer than its own context allows; after a failed fetch, callers
// fail at once until retryUnavailable has passed since it ended. It is safe
// for concurrent use.
type keySource struct {
	client     *http.Client
	issuer     string // for discovering jwks_uri when url is ""
	refresh    time.Duration
	minRefresh time.Duration

	set        atomic.Pointer[keySet]
	background atomic.Bool

	mu       sync.Mutex // guards the fields below
	url      string     // written only by the fetch in flight
	inflight *flight    // the fetch in progress, or nil
	lastDone time.Time  // when the last fetch ended
	lastErr  error      // of the last fetch, while there is no newer success
}

// flight is one fetch of the key set, shared by everyone waiting for it.
type flight struct {
	done chan struct{} // closed when ks and err are set
	ks   *keySet
	err  error
}

// retryUnavailable is how soon a key set that could not be fetched at all
// is tried again.
const retryUnavailable = time.Second

// key returns the verification key for a token's kid and alg.
func (s *keySource) key(ctx context.Context, kid, alg string) (any, error) {
	ks := s.set.Load()
	if ks != nil {
		if k, ok := ks.find(kid, alg); ok {
			if time.Since(ks.fetched) > s.refresh && s.background.CompareAndSwap(false, true) {
				go func() {
					defer s.background.Store(false)
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					s.fetch(ctx, ks)
				}()
			}
			return k, nil
		}
	}
	ks, err := s.fetch(ctx, ks)
	if err != nil {
		return nil, err
	}
	if k, ok := ks.find(kid, alg); ok {
		return k, nil
	}
	if kid == "" {
		return nil, fmt.Errorf("%w: the token has no kid and the key set has no single key for %s", errUnknownKey, alg)
	}
	return nil, fmt.Errorf("%w for kid %q and alg %s", errUnknownKey, kid, alg)
}

// fetch refetches the key set unless another caller already replaced seen,
// or the last fetch ended too recently: minRefresh after a success,
// retryUnavailable after a failure. It joins the fetch in flight if there
// is one. It returns the current set, or an error wrapping
// errKeysUnavailable when the fetch failed or ctx ended first, so that a
// token signed with a key the server could not load is not called invalid.
func (s *keySource) fetch(ctx context.Context, seen *keySet) (*keySet, error) {
	s.mu.Lock()
	cur := s.set.Load()
	switch {
	case cur != nil && cur != seen:
		s.mu.Unlock()
		return cur, nil // someone else fetched meanwhile
	case s.inflight != nil:
	case s.lastErr != nil && time.Since(s.lastDone) < retryUnavailable:
		err := s.lastErr
		s.mu.Unlock()
		return nil, err
	case cur != nil && s.lastErr == nil && time.Since(s.lastDone) < s.minRefresh:
		s.mu.Unlock()
		return cur, nil
	default:
		s.startLocked()
	}
	f := s.inflight
	s.mu.Unlock()
	return f.wait(ctx)
}

// startLocked starts a fetch; s.mu is held and no fetch is in flight. The
// fetch serves every waiter, so it runs detached from any one request,
// bounded by fetchTimeout.
func (s *keySource) startLocked() {
	f := &flight{done: make(chan struct{})}
	s.inflight = f
	go func() {
		ks, err := s.download(context.Background())
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lastDone = time.Now()
		if err != nil {
			s.lastErr = fmt.Errorf("%w: %w", errKeysUnavailable, err)
			f.err = s.lastErr
		} else {
			s.lastErr = nil
			s.set.Store(ks)
			f.ks = ks
		}
		s.inflight = nil
		close(f.done)
	}()
}

// wait waits for the fetch or for ctx to end.
func (f *flight) wait(ctx context.Context) (*keySet, error) {
	select {
	case <-f.done:
		return f.ks, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: still fetching the key set: %w", errKeysUnavailable, context.Cause(ctx))
	}
}

// fetchTimeout bounds one fetch of metadata and key set.
const fetchTimeout = 30 * time.Second

// download fetches and decodes the key set. Only the fetch in flight calls
// it, so it may set s.url.
func (s *keySource) download(ctx context.Context) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if s.url == "" {
		u, err := discoverJWKSURI(ctx, s.client, s.issuer)
		if err != nil {
			return nil, err
		}
		s.url = u
	}
	body, err := getJSON(ctx, s.client, s.url, "application/jwk-set+json, application/json")
	if err != nil {
		return nil, err
	}
	ks, err := parseKeySet(body)
	if err != nil {
		return nil, fmt.Errorf("key set %s: %w", s.url, err)
	}
	ks.fetched = time.Now()
	return ks, nil
}

// getJSON GETs a JSON document of at most maxDocumentBytes.
func getJSON(ctx context.Context, c *http.Client, u, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("GET %s: the document is larger than %d bytes", u, maxDocumentBytes)
	}
	return body, nil
}

// jwk is the wire form of one JSON Web Key (RFC 7517, RFC 7518, RFC 8037).
type jwk struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Use    string   `json:"use"`
	Alg    string   `json:"alg"`
	KeyOps []string `json:"key_ops"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
}

// parseKeySet decodes a JWK Set. Keys this package cannot or must not use
// for verifying signatures (symmetric "oct" keys, encryption keys, weak or
// malformed keys, unknown types) are skipped; a set without one usable key
// is an error.
func parseKeySet(data []byte) (*keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %w", err)
	}
	ks := &keySet{byKid: make(map[string][]publicKey)}
	for _, raw := range doc.Keys {
		var k jwk
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		pk, err := k.publicKey()
		if err != nil {
			continue
		}
		ks.all = append(ks.all, pk)
		if pk.kid != "" {
			ks.byKid[pk.kid] = append(ks.byKid[pk.kid], pk)
		}
	}
	if len(ks.all) == 0 {
		return nil, errors.New("the key set has no usable signature verification key")
	}
	return ks, nil
}

func (k *jwk) publicKey() (publicKey, error) {
	if k.Use != "" && k.Use != "sig" {
		return publicKey{}, errors.New("not a signature key")
	}
	if len(k.KeyOps) > 0 && !contains(k.KeyOps, "verify") {
		return publicKey{}, errors.New("not a verification key")
	}
	pk := publicKey{kid: k.Kid, alg: k.Alg}
	switch k.Kty {
	case "RSA":
		n, err1 := b64(k.N)
		e, err2 := b64(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return pk, errors.New("malformed RSA key")
		}
		var exp int
		for _, b := range e {
			exp = exp<<8 | int(b)
		}
		key := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
		if key.N.BitLen() < minRSABits || exp < 3 || exp%2 == 0 {
			return pk, errors.New("weak RSA key")
		}
		pk.key = key
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return pk, errors.New("unsupported curve")
		}
		x, err1 := b64(k.X)
		y, err2 := b64(k.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return pk, errors.New("malformed EC key")
		}
		point := append(append([]byte{4}, x...), y...)
		key, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return pk, err
		}
		pk.key = key
	case "OKP":
		x, err := b64(k.X)
		if k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return pk, errors.New("unsupported or malformed OKP key")
		}
		pk.key = ed25519.PublicKey(x)
	default:
		return pk, errors.New("unsupported key type")
	}
	return pk, nil
}

func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func contains(list []string, v string) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}

// discoverJWKSURI reads the jwks_uri of an issuer from its authorization
// server metadata (RFC 8414) or OpenID Connect discovery document, trying
// the well-known locations in the order MCP prescribes, and checks that the
// document names the same issuer.
func discoverJWKSURI(ctx context.Context, c *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	base := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	candidates := []string{
		base + "/.well-known/oauth-authorization-server" + path,
		base + "/.well-known/openid-configuration" + path,
	}
	if path != "" {
		candidates = append(candidates, base+path+"/.well-known/openid-configuration")
	}
	var errs []error
	for _, c2 := range candidates {
		body, err := getJSON(ctx, c, c2, "application/json")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &md); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c2, err))
			continue
		}
		if md.Issuer != issuer {
			return "", fmt.Errorf("%s names issuer %q, not %q", c2, md.Issuer, issuer)
		}
		if md.JWKSURI == "" {
			return "", fmt.Errorf("%s has no jwks_uri", c2)
		}
		if err := checkEndpoint(md.JWKSURI); err != nil {
			return "", fmt.Errorf("%s: jwks_uri: %w", c2, err)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("discovering the key set of issuer %s: %w", issuer, errors.Join(errs...))
}
