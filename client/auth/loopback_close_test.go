package auth

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLoopbackPageBeforeClose: the browser gets the whole "signed in" page even when the
// application closes the Loopback as soon as Authorize returns, as its doc tells it to.
func TestLoopbackPageBeforeClose(t *testing.T) {
	l, err := NewLoopback("", nil)
	if err != nil {
		t.Fatal(err)
	}
	type page struct {
		status int
		body   string
		err    error
	}
	got := make(chan page, 1)
	l.Open = func(string) error {
		go func() {
			resp, err := http.Get(l.RedirectURL() + "?state=S1&code=good")
			if err != nil {
				got <- page{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- page{resp.StatusCode, string(b), err}
		}()
		return nil
	}
	q, err := l.Authorize(context.Background(), "https://as.example/authorize?state=S1")
	l.Close()
	if err != nil || q.Get("code") != "good" {
		t.Fatalf("Authorize = %v, %v", q, err)
	}
	p := <-got
	if p.err != nil || p.status != http.StatusOK || !strings.Contains(p.body, "You can close this window") {
		t.Errorf("the browser got %d %q, %v; want the whole page", p.status, p.body, p.err)
	}
}
