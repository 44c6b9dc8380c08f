package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/client"
)

// TestRedirectLeavingOriginRefused: a server answers with a 307 or 308 to
// another port. Following it would post the body and the credentials
// (Authorization, X-Api-Key) to that other server: the client refuses it,
// with its own HTTP client and with a caller's that has no redirect policy.
// A redirect within the origin is still followed.
func TestRedirectLeavingOriginRefused(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		t.Errorf("the other origin got %s %s with Authorization %q, X-Api-Key %q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer other.Close()
	header := http.Header{"Authorization": {"Bearer secret"}, "X-Api-Key": {"key"}}
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/mcp", status)
		}))
		defer ts.Close()
		for name, hc := range map[string]*http.Client{"own client": nil, "caller's client": {}} {
			t.Run(http.StatusText(status)+"/"+name, func(t *testing.T) {
				c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: ts.URL, Header: header, HTTPClient: hc}, nil)
				if err == nil {
					c.Close()
					t.Fatal("Connect succeeded through a redirect to another origin")
				}
				if !strings.Contains(err.Error(), "leaves the server's origin") {
					t.Errorf("Connect = %v, want the refused redirect named", err)
				}
			})
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", testServer(nil))
	mux.Handle("/old", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
	same := httptest.NewServer(mux)
	defer same.Close()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: same.URL + "/old", Header: header}, nil)
	if err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	c.Close()
}
