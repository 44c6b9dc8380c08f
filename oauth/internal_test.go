package oauth

import "testing"

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
