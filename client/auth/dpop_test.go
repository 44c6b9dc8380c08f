package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestDPoPProof(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := loadDPoPKey(k.marshal())
	if err != nil || !k2.priv.Equal(k.priv) {
		t.Fatalf("stored key does not round-trip: %v", err)
	}
	p, err := k.proof("POST", mustURL(t, "https://rs.example/mcp?x=1#f"), "n-1", "tok")
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(p, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := parsed.Headers[0]
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatalf("header = %+v; want typ dpop+jwt and a public jwk", h)
	}
	var c map[string]any
	if err := parsed.Claims(h.JSONWebKey.Key, &c); err != nil {
		t.Fatalf("proof does not verify with its own jwk: %v", err)
	}
	sum := sha256.Sum256([]byte("tok"))
	if c["htu"] != "https://rs.example/mcp" || c["htm"] != "POST" || c["nonce"] != "n-1" || c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || c["jti"] == "" {
		t.Errorf("claims = %v", c)
	}
	p2, _ := k.proof("POST", mustURL(t, "https://rs.example/mcp"), "", "")
	if p2 == p {
		t.Errorf("two proofs are identical")
	}
}
