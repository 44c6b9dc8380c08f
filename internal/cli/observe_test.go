package cli

import (
	"context"
	"strings"
	"testing"
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
