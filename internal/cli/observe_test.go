package cli

import (
	"context"
	"io"
	"net/http"
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
	base, cancel, lines, done := runServe(t, "--log-requests", "--drain", "0")
	logLines := make(chan string, 16)
	go func() {
		for l := range lines {
			if strings.Contains(l, `msg="mcp request"`) {
				logLines <- l
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

// TestServeLogRequestsBounded sends a tool name of 3 MiB with
// --log-requests: the access log line carries at most 256 bytes of it.
func TestServeLogRequestsBounded(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	huge := strings.Repeat("x", 3<<20)
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + huge + `","arguments":{},` + meta + `}}` + "\n"
	var stdout, stderr strings.Builder
	if code := serveContext(context.Background(), []string{"--stdio", "--log-requests"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %.2000s", code, stderr.String())
	}
	var line string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, `msg="mcp request"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no access log line:\n%.2000s", stderr.String())
	}
	if len(line) > 1024 || !strings.Contains(line, "name="+strings.Repeat("x", 253)+"…") {
		t.Errorf("access log line of %d bytes: %.400s", len(line), line)
	}
	if len(stderr.String()) > 64<<10 {
		t.Errorf("stderr holds %d bytes after one call", len(stderr.String()))
	}
}
