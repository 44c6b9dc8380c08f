package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// dpopKey is the ES256 key a DPoP-bound token is bound to (RFC 9449).
type dpopKey struct {
	priv   *ecdsa.PrivateKey
	signer jose.Signer
}

func newDPoPKey() (*dpopKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return dpopFromKey(priv)
}

func dpopFromKey(priv *ecdsa.PrivateKey) (*dpopKey, error) {
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, opts)
	if err != nil {
		return nil, err
	}
	return &dpopKey{priv: priv, signer: s}, nil
}

// loadDPoPKey reads a stored private JWK.
func loadDPoPKey(raw json.RawMessage) (*dpopKey, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return nil, errors.New("auth: stored DPoP key is not a JWK")
	}
	priv, ok := k.Key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, errors.New("auth: stored DPoP key is not a P-256 private key")
	}
	return dpopFromKey(priv)
}

func (k *dpopKey) marshal() json.RawMessage {
	b, _ := jose.JSONWebKey{Key: k.priv, Algorithm: string(jose.ES256)}.MarshalJSON()
	return b
}

// htu is the request URI of a proof: no query, no fragment (RFC 9449 §4.2).
func htu(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// proof signs a DPoP proof for one request. accessToken, when not empty,
// is bound by its hash (ath).
func (k *dpopKey) proof(method string, u *url.URL, nonce, accessToken string) (string, error) {
	jti := make([]byte, 16)
	rand.Read(jti)
	claims := map[string]any{
		"jti": base64.RawURLEncoding.EncodeToString(jti),
		"htm": method,
		"htu": htu(u),
		"iat": time.Now().Unix(),
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		h := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(h[:])
	}
	return jwt.Signed(k.signer).Claims(claims).Serialize()
}

// nonces remembers the latest DPoP nonce of each server origin.
type nonces struct {
	mu sync.Mutex
	m  map[string]string
}

func (n *nonces) get(u *url.URL) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[u.Scheme+"://"+u.Host]
}

// update records a DPoP-Nonce header; it reports whether the nonce changed.
func (n *nonces) update(u *url.URL, h http.Header) bool {
	v := h.Get("DPoP-Nonce")
	if v == "" || len(v) > 1024 {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]string{}
	}
	k := u.Scheme + "://" + u.Host
	if n.m[k] == v {
		return false
	}
	n.m[k] = v
	return true
}

// dpopTransport adds a DPoP proof to token requests and retries once with
// the server's nonce on a use_dpop_nonce answer (RFC 9449 §8).
type dpopTransport struct {
	base   http.RoundTripper
	key    *dpopKey
	nonces *nonces
}

func (d *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, MaxDocumentBytes+1))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		p, err := d.key.proof(r.Method, r.URL, d.nonces.get(r.URL), "")
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
		resp, err := d.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		changed := d.nonces.update(r.URL, resp.Header)
		if attempt == 0 && changed && resp.StatusCode == http.StatusBadRequest {
			io.Copy(io.Discard, io.LimitReader(resp.Body, MaxDocumentBytes))
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
}
