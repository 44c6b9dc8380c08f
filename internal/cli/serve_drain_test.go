package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// runServe runs `mcpkit serve` on a loopback port with args and returns
// its base URL, a function that cancels it (the signal), a channel of its
// log lines after the URL (dropped when the test does not keep up), and
// one of its exit code.
func runServe(t *testing.T, args ...string) (base string, signal func(), logs <-chan string, done <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- serveContext(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/mcp`)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatal("serve did not log its URL")
	}
	lines := make(chan string, 64)
	go func() {
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	return base, cancel, lines, exit
}

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestServeDrain: after the signal, a server whose /readyz was probed
// keeps its listener for the drain window: /readyz answers 503 (instead
// of refusing the connection) and MCP requests are still served; then it
// exits cleanly.
func TestServeDrain(t *testing.T) {
	base, signal, logs, done := runServe(t, "--drain", "2s")
	if st, body := getText(t, base+"/readyz"); st != 200 || body != "ready" {
		t.Fatalf("before the signal: GET /readyz = %d %q", st, body)
	}
	signal()
	for l := range logs {
		if strings.Contains(l, "draining") {
			break
		}
	}
	if st, body := getText(t, base+"/readyz"); st != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready") {
		t.Errorf("draining: GET /readyz = %d %q, want 503 not ready", st, body)
	}
	resp := mcpwire.Send(t, context.Background(), base+"/mcp", mcpwire.Request{Method: "server/discover"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("draining: server/discover got %d, want 200", resp.StatusCode)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestServeNoDrainUnprobed: a server whose readiness nobody asked about
// has no load balancer to wait for: it stops at once, drain or not.
func TestServeNoDrainUnprobed(t *testing.T) {
	_, signal, _, done := runServe(t, "--drain", "1h")
	signal()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(30 * time.Second): // a guard: a drain would last an hour
		t.Fatal("serve still drains, though nothing probed /readyz")
	}
}
