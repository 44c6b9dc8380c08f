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

// describer is a ReadyDescriber whose readiness and lines the test sets.
type describer struct {
	err   error
	lines []string
}

func (d *describer) Ready(context.Context) error            { return d.err }
func (d *describer) DescribeReady(context.Context) []string { return d.lines }

// TestReadyDescriber checks that /readyz adds the lines of a
// ReadyDescriber, ready or not, bounded and on one line each.
func TestReadyDescriber(t *testing.T) {
	d := &describer{lines: []string{"backend a: up", "backend b: down: bad\nline\x1b[31m" + strings.Repeat("é", MaxReadyLineBytes)}}
	s := NewServer(&ServerOptions{ReadyChecks: []ReadyChecker{ReadyFunc(func(context.Context) error { return nil }), d}, Logger: slog.New(slog.DiscardHandler)})
	get := func() (int, string) {
		w := httptest.NewRecorder()
		s.ReadinessHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code, w.Body.String()
	}
	status, body := get()
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if status != 200 || len(lines) != 3 || lines[0] != "ready" || lines[1] != "backend a: up" ||
		!strings.HasPrefix(lines[2], "backend b: down: bad line [31mé") || len(lines[2]) > MaxReadyLineBytes {
		t.Errorf("ready: %d %q", status, body)
	}
	d.err = errors.New("every required backend is down")
	if status, body := get(); status != 503 || !strings.HasPrefix(body, "not ready\nbackend a: up\n") {
		t.Errorf("not ready: %d %q", status, body)
	}
	d.lines = make([]string, MaxReadyLines+5)
	if _, body := get(); strings.Count(body, "\n") != 1+MaxReadyLines+1 || !strings.HasSuffix(body, "\n…\n") {
		t.Errorf("past MaxReadyLines: %d lines, want %d and an ellipsis", strings.Count(body, "\n"), MaxReadyLines+2)
	}
}
