package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpkit/mcpkit/mcp"
)

// slowJWKS is a transport that answers key set requests from the test
// issuer's handler after delay (or with 500 when fail is set), counting
// them; it does no network I/O, so it runs inside a synctest bubble.
type slowJWKS struct {
	is      *testIssuer
	delay   time.Duration
	fail    atomic.Bool
	fetches atomic.Int32
}

func (s *slowJWKS) RoundTrip(r *http.Request) (*http.Response, error) {
	s.fetches.Add(1)
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	w := httptest.NewRecorder()
	if s.fail.Load() {
		http.Error(w, "down", http.StatusInternalServerError)
	} else {
		s.is.srv.Config.Handler.ServeHTTP(w, r)
	}
	return w.Result(), nil
}

// TestJWKSSingleFlight checks that concurrent requests needing the key set
// share one fetch, each waiting no longer than its own context, and that
// after a failed fetch requests fail at once until the retry delay passed.
func TestJWKSSingleFlight(t *testing.T) {
	is := newTestIssuer(t) // outside the bubble: its server does network I/O
	synctest.Test(t, func(t *testing.T) {
		tr := &slowJWKS{is: is, delay: 12 * time.Second}
		v := newVerifier(t, is, func(o *JWTOptions) { o.HTTPClient = &http.Client{Transport: tr} })
		token := is.mint(jwt.SigningMethodRS256, is.rsa, "rsa-1", is.claims(resource))
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
		if n := tr.fetches.Load(); n != 1 {
			t.Errorf("%d fetches for 5 waiters, want 1", n)
		}
		// The fetch goes on for whoever comes next, and then serves them.
		if _, err := v.VerifyToken(context.Background(), token); err != nil {
			t.Fatalf("after the fetch: %v", err)
		}
		if d := time.Since(start); d != 12*time.Second {
			t.Errorf("the fetch ended after %v, want 12s", d)
		}
		if n := tr.fetches.Load(); n != 1 {
			t.Errorf("%d fetches, want 1", n)
		}

		// A failing key set: one fetch fails; during the backoff, requests
		// fail at once without fetching.
		tr2 := &slowJWKS{is: is, delay: 12 * time.Second}
		tr2.fail.Store(true)
		v2 := newVerifier(t, is, func(o *JWTOptions) { o.HTTPClient = &http.Client{Transport: tr2} })
		if _, err := v2.VerifyToken(context.Background(), token); err == nil || errors.Is(err, mcp.ErrInvalidToken) {
			t.Fatalf("failing key set: %v, want keys unavailable", err)
		}
		failed := time.Now()
		for range 3 {
			if _, err := v2.VerifyToken(context.Background(), token); err == nil || !strings.Contains(err.Error(), "signing keys unavailable") {
				t.Errorf("during the backoff: %v, want keys unavailable", err)
			}
		}
		if d := time.Since(failed); d != 0 {
			t.Errorf("failures during the backoff took %v, want none", d)
		}
		if n := tr2.fetches.Load(); n != 1 {
			t.Errorf("%d fetches during the backoff, want 1", n)
		}
		time.Sleep(retryUnavailable)
		tr2.fail.Store(false)
		if _, err := v2.VerifyToken(context.Background(), token); err != nil {
			t.Errorf("after the backoff: %v", err)
		}
		if n := tr2.fetches.Load(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})
}
