package appsbrowser_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCSPHeader: the sandbox's policy is the specification's default plus
// exactly the declared origins.
func TestCSPHeader(t *testing.T) {
	cases := []struct{ ui, want string }{
		{``, "default-src 'none'; script-src 'self' 'unsafe-inline' ; style-src 'self' 'unsafe-inline' ; connect-src 'self' ; img-src 'self' data: ; font-src 'self' ; media-src 'self' data: ; frame-src 'none'; object-src 'none'; base-uri 'self'"},
		{`{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"],"frameDomains":["https://player.example.com"],"baseUriDomains":["https://base.example.com"]}}`,
			"default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; style-src 'self' 'unsafe-inline' https://cdn.example.com; connect-src 'self' https://api.example.com; img-src 'self' data: https://cdn.example.com; font-src 'self' https://cdn.example.com; media-src 'self' data: https://cdn.example.com; frame-src https://player.example.com; object-src 'none'; base-uri https://base.example.com"},
	}
	for _, tc := range cases {
		if d := cmp.Diff(tc.want, cspHeader([]byte(tc.ui))); d != "" {
			t.Errorf("cspHeader(%s) (-want +got):\n%s", tc.ui, d)
		}
	}
}
