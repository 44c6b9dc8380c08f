package oauthtest

import "testing"

// TestSameRedirect: a loopback redirect URI over http matches whatever
// port the native client listens on this time (RFC 8252, section 7.3);
// anything else must match exactly.
func TestSameRedirect(t *testing.T) {
	for _, tc := range []struct {
		registered, asked string
		want              bool
	}{
		{"http://127.0.0.1:4000/callback", "http://127.0.0.1:4000/callback", true},
		{"http://127.0.0.1:4000/callback", "http://127.0.0.1:5123/callback", true},
		{"http://[::1]:4000/callback", "http://[::1]:5123/callback", true},
		{"http://127.0.0.1:4000/callback", "http://127.0.0.1:5123/other", false},
		{"http://127.0.0.1:4000/callback", "http://127.0.0.2:4000/callback", false},
		{"http://localhost:4000/callback", "http://localhost:5123/callback", false},
		{"https://app.example/cb", "https://app.example:8443/cb", false},
		{"https://app.example/cb", "https://evil.example/cb", false},
	} {
		if got := sameRedirect(tc.registered, tc.asked); got != tc.want {
			t.Errorf("sameRedirect(%q, %q) = %v, want %v", tc.registered, tc.asked, got, tc.want)
		}
	}
}
