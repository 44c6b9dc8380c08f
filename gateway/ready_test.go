package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// readyz returns the status and body of the gateway's /readyz.
func readyz(t *testing.T, g *gateway.Gateway) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	g.Server().ReadinessHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(body)
}

// TestReadyzLines checks /readyz: 503 only while every required backend
// is down (or the server shuts down), and one line per backend either way.
func TestReadyzLines(t *testing.T) {
	down := late(srv{name: "down", tools: []string{"t"}}, &atomic.Bool{})
	down.Required = true
	g, _ := start(t, []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend(), down}, &gateway.Options{HealthInterval: mcp.Off})
	status, body := readyz(t, g)
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if status != 503 || len(lines) != 3 || lines[0] != "not ready" || lines[1] != "backend ok: up" ||
		!strings.HasPrefix(lines[2], "backend down (required): down: not started: ") || !strings.Contains(lines[2], "/nonexistent/mcp-backend") {
		t.Errorf("/readyz with the only required backend down: %d\n%s\nwant 503, not ready, ok up, down down and why", status, body)
	}

	notRequired := late(srv{name: "down", tools: []string{"t"}}, &atomic.Bool{})
	g2, _ := start(t, []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend(), notRequired}, &gateway.Options{HealthInterval: mcp.Off})
	status, body = readyz(t, g2)
	if status != 200 || !strings.HasPrefix(body, "ready\nbackend ok: up\nbackend down: down: not started: ") {
		t.Errorf("/readyz with a backend that is not required down: %d\n%s\nwant 200 with a line per backend", status, body)
	}

	g2.Server().Shutdown(context.Background())
	status, body = readyz(t, g2)
	if status != 503 || body != "not ready: "+mcp.ErrShuttingDown.Error()+"\n" {
		t.Errorf("/readyz shutting down: %d %q", status, body)
	}
}
