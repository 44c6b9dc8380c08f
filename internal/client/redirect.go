package client

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects is how many redirects, all within the first request's
// origin, an HTTP client of this package follows.
const MaxRedirects = 10

// SameOriginRedirect is the redirect policy (an http.Client CheckRedirect)
// of every HTTP client the library and the CLI build: it follows at most
// MaxRedirects redirects and none that leave the origin (scheme, host and
// port) of the first request, since a followed redirect carries the
// request's headers (Authorization, API keys) and, on 307 and 308, its
// body to wherever the server points. A refused redirect fails the
// request with an error naming both origins.
func SameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if from := via[0].URL; !SameOrigin(from, req.URL) {
		return fmt.Errorf("refused a redirect from %s to %s: it leaves the server's origin, and would carry the request's credentials there", Origin(from), Origin(req.URL))
	}
	return nil
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (a missing port being the scheme's default).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// Origin returns u's scheme://host:port.
func Origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port(u)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// httpClient returns hc with the same-origin redirect policy when it has
// none of its own (a shallow copy; hc is not changed), or a client of its
// own with no overall timeout (contexts bound each request) if hc is nil.
func httpClient(hc *http.Client) *http.Client {
	if hc == nil {
		return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), CheckRedirect: SameOriginRedirect}
	}
	if hc.CheckRedirect == nil {
		c := *hc
		c.CheckRedirect = SameOriginRedirect
		return &c
	}
	return hc
}
