package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// TestJWKSSingleFlight checks that concurrent requests needing the key set
// share one fetch, each waiting no longer than its own context, and that
// after a failed fetch requests fail at once until the retry delay passed.
// The key sets come through oauthtest's in-memory transport, 12 seconds
// late on the bubble's clock.
func TestJWKSSingleFlight(t *testing.T) {
	// Outside the bubble: their listeners do network I/O.
	as := oauthtest.NewServer(t, nil)
	as.SetJWKSDelay(12 * time.Second)
	failing := oauthtest.NewServer(t, nil)
	failing.SetJWKSDelay(12 * time.Second)
	failing.SetJWKSFailure(http.StatusInternalServerError)
	synctest.Test(t, func(t *testing.T) {
		v := newVerifier(t, as, func(o *oauth.JWTOptions) { o.HTTPClient = &http.Client{Transport: as.Transport()} })
		token := as.Token(tokenOptions(nil))
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i+1)*time.Second)
				defer cancel()
				_, err := v.VerifyToken(ctx, token)
				if err == nil || errors.Is(err, mcp.ErrInvalidToken) || !strings.Contains(err.Error(), "signing keys unavailable") {
					t.Errorf("waiter %d: %v, want keys unavailable", i, err)
				}
				if d := time.Since(start); d != time.Duration(i+1)*time.Second {
					t.Errorf("waiter %d answered after %v, want its own deadline %v", i, d, time.Duration(i+1)*time.Second)
				}
			})
		}
		wg.Wait()
		if n := as.JWKSRequests(); n != 1 {
			t.Errorf("%d fetches for 5 waiters, want 1", n)
		}
		// The fetch goes on for whoever comes next, and then serves them.
		if _, err := v.VerifyToken(context.Background(), token); err != nil {
			t.Fatalf("after the fetch: %v", err)
		}
		if d := time.Since(start); d != 12*time.Second {
			t.Errorf("the fetch ended after %v, want 12s", d)
		}
		if n := as.JWKSRequests(); n != 1 {
			t.Errorf("%d fetches, want 1", n)
		}

		// A failing key set: one fetch fails; during the backoff, requests
		// fail at once without fetching.
		v2 := newVerifier(t, failing, func(o *oauth.JWTOptions) { o.HTTPClient = &http.Client{Transport: failing.Transport()} })
		token2 := failing.Token(tokenOptions(nil))
		if _, err := v2.VerifyToken(context.Background(), token2); err == nil || errors.Is(err, mcp.ErrInvalidToken) {
			t.Fatalf("failing key set: %v, want keys unavailable", err)
		}
		failed := time.Now()
		for range 3 {
			if _, err := v2.VerifyToken(context.Background(), token2); err == nil || !strings.Contains(err.Error(), "signing keys unavailable") {
				t.Errorf("during the backoff: %v, want keys unavailable", err)
			}
		}
		if d := time.Since(failed); d != 0 {
			t.Errorf("failures during the backoff took %v, want none", d)
		}
		if n := failing.JWKSRequests(); n != 1 {
			t.Errorf("%d fetches during the backoff, want 1", n)
		}
		time.Sleep(oauth.RetryUnavailable)
		failing.SetJWKSFailure(0)
		if _, err := v2.VerifyToken(context.Background(), token2); err != nil {
			t.Errorf("after the backoff: %v", err)
		}
		if n := failing.JWKSRequests(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})
}
