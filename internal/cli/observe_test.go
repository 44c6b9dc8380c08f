package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestServeLogRequests serves two calls on stdio with --log-requests and
// checks the access log: one line per call, with method, name and
// outcome, and never the arguments.
func TestServeLogRequests(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"secret-argument"},` + meta + `}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no-such-tool","arguments":{},` + meta + `}}` + "\n"
	var stdout, stderr strings.Builder
	if code := serveContext(context.Background(), []string{"--stdio", "--log-requests"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, `msg="mcp request"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("got %d access log lines, want 2:\n%s", len(lines), stderr.String())
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"method=tools/call name=echo transport=stdio era=modern", "outcome=complete", "name=no-such-tool", "outcome=error code=-32602"} {
		if !strings.Contains(all, want) {
			t.Errorf("access log lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(stderr.String(), "secret-argument") {
		t.Errorf("the log shows a tool argument:\n%s", stderr.String())
	}
}

// TestServeHealthEndpoints checks that `mcpkit serve` answers /healthz
// and /readyz next to its MCP endpoint, and that --log-requests logs HTTP
// calls with their status.
func TestServeHealthEndpoints(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--log-requests"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/mcp`)
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatal("serve did not log its URL")
	}
	logLines := make(chan string, 16)
	go func() {
		for sc.Scan() {
			if strings.Contains(sc.Text(), `msg="mcp request"`) {
				logLines <- sc.Text()
			}
		}
		close(logLines)
	}()
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, b, want)
		}
	}
	resp := mcpwire.Send(t, context.Background(), base+"/mcp", mcpwire.Request{Method: "server/discover"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if l := <-logLines; !strings.Contains(l, "method=server/discover") || !strings.Contains(l, "transport=streamable-http") || !strings.Contains(l, "status=200") {
		t.Errorf("access log line %q", l)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
