package apps_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/apps"
)

func TestCheckOrigin(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"https://example.com", true},
		{"wss://rt.example.com:8443", true},
		{"https://*.example.com", true},
		{"https://[2001:db8::1]:443", true},
		{"http://localhost:8080", true},
		{"http://127.0.0.1", true},
		{"ws://[::1]:9000", true},
		{"http://example.com", false},
		{"ws://example.com", false},
		{"ftp://example.com", false},
		{"example.com", false},
		{"*", false},
		{"https://*", false},
		{"https://a.*.example.com", false},
		{"https://example.com/", false},
		{"https://example.com/path", false},
		{"https://example.com?q=1", false},
		{"https://example.com#f", false},
		{"https://user@example.com", false},
		{"https://'self'", false},
		{"https://example.com'", false},
		{"https://exa mple.com", false},
		{"https://example.com;", false},
		{"https://example.com:0", false},
		{"https://example.com:65536", false},
		{"https://example.com:+1", false},
		{"https://example.com:", false},
		{"https://", false},
		{"https://-a.com", false},
		{"https://a..com", false},
		{"https://[1.2.3.4]", false},
		{"https://[::1", false},
		{"https://[::1]x", false},
	}
	for _, tc := range cases {
		if err := apps.CheckOrigin(tc.in); (err == nil) != tc.ok {
			t.Errorf("checkOrigin(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

func TestLooksLikeHTML(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"<!doctype html><html></html>", true},
		{"<!DOCTYPE HTML>\n<html>", true},
		{"\uFEFF  \n<!DocType html>", true},
		{"<!-- built 2026 -->\n<!-- x --><html lang=en>", true},
		{"<html>", true},
		{"<HTML\n>", true},
		{"<div>hi</div>", false},
		{"<htmlx>", false},
		{"<!doctype htm>", false},
		{"<!-- unclosed <html>", false},
		{"", false},
		{"text <html>", false},
		{"<!doctype html", false},
	}
	for _, tc := range cases {
		if got := apps.LooksLikeHTML(tc.in); got != tc.ok {
			t.Errorf("looksLikeHTML(%q) = %v, want %v", tc.in, got, tc.ok)
		}
	}
}

// FuzzCheckOrigin: the parser never panics, and an origin it accepts
// cannot break out of a CSP source list (no space, quote, semicolon or
// comma), has no path, and is https/wss or on loopback.
func FuzzCheckOrigin(f *testing.F) {
	for _, s := range []string{"https://example.com", "https://*.a.b:1", "http://[::1]:80", "ws://localhost", "https://a.com/x", "*", "https://'none'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if apps.CheckOrigin(s) != nil {
			return
		}
		rest := s[strings.Index(s, "://")+3:]
		if strings.ContainsAny(rest, " \t\r\n\f;,'\"\\/?#@") {
			t.Fatalf("accepted %q, which could break a CSP", s)
		}
		if strings.Count(rest, "*") > 1 || (strings.Contains(rest, "*") && !strings.HasPrefix(rest, "*.")) {
			t.Fatalf("accepted a wildcard outside the host's start: %q", s)
		}
		scheme := s[:strings.Index(s, "://")]
		if scheme != "https" && scheme != "wss" && scheme != "http" && scheme != "ws" {
			t.Fatalf("accepted scheme %q", scheme)
		}
	})
}

// htmlRef is a reference for looksLikeHTML written another way, with
// regular expressions: drop leading comments one by one (a comment ends at
// its first -->), then match the start.
var (
	refComment = regexp.MustCompile(`(?s)^[ \t\r\n\f]*<!--.*?-->`)
	refStart   = regexp.MustCompile(`(?i)^[ \t\r\n\f]*(?:<!doctype html|<html)[ \t\r\n\f>]`)
)

func htmlRef(s string) bool {
	s = strings.TrimPrefix(s, "\uFEFF")
	for {
		loc := refComment.FindStringIndex(s)
		if loc == nil {
			return refStart.MatchString(s)
		}
		s = s[loc[1]:]
	}
}

// FuzzLooksLikeHTML checks the hand-written heuristic against the regular
// expression.
func FuzzLooksLikeHTML(f *testing.F) {
	for _, s := range []string{"<!doctype html>", "\uFEFF<!-- a --> <html>", "<!-- <html> -->x", "<HTML ", "<!---->\n<html>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := apps.LooksLikeHTML(s), htmlRef(s); got != want {
			t.Fatalf("looksLikeHTML(%q) = %v, the reference says %v", s, got, want)
		}
	})
}
