package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// flakyBus is a LocalBus whose readiness the test sets.
type flakyBus struct {
	LocalBus
	down atomic.Bool
}

func (b *flakyBus) Ready(ctx context.Context) error {
	if b.down.Load() {
		return errors.New("redis: connection refused")
	}
	return nil
}

func TestHealthEndpoints(t *testing.T) {
	bus := &flakyBus{}
	var logs syncLog
	s := NewServer(&ServerOptions{Bus: bus, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	hs := s.NewHTTPServer("", "")
	srv := httptest.NewServer(hs.Handler)
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	type probe struct {
		status int
		body   string
	}
	check := func(step, path string, want probe) {
		t.Helper()
		if st, body := get(path); st != want.status || body != want.body {
			t.Errorf("%s: GET %s = %d %q, want %d %q", step, path, st, body, want.status, want.body)
		}
	}
	check("up", "/healthz", probe{200, "ok"})
	check("up", "/readyz", probe{200, "ready"})
	bus.down.Store(true)
	// The reason is logged, once, and not shown to whoever asks.
	check("bus down", "/readyz", probe{503, "not ready"})
	check("bus down", "/readyz", probe{503, "not ready"})
	check("bus down", "/healthz", probe{200, "ok"})
	if got := strings.Count(logs.String(), "redis: connection refused"); got != 1 {
		t.Errorf("the reason is logged %d times, want once:\n%s", got, logs.String())
	}
	bus.down.Store(false)
	check("bus back", "/readyz", probe{200, "ready"})
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("shutting down", "/readyz", probe{503, "not ready: " + ErrShuttingDown.Error()})
	check("shutting down", "/healthz", probe{200, "ok"})
	if err := s.Ready(context.Background()); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("Ready after Shutdown: %v", err)
	}
}
