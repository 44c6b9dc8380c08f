package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestServeMaxInFlight checks that --max-inflight caps the requests being
// handled at once: with a cap of 1, a request whose body has not arrived
// yet holds the one slot (admission comes before the body is read), and
// the next request gets 503 with Retry-After naming the cap; once the
// first request is done, the next is served. The log says which cap is in
// force.
func TestServeMaxInFlight(t *testing.T) {
	url, logs := startServeCap(t, "--max-inflight", "1")
	if !strings.Contains(strings.Join(logs, "\n"), "max_inflight=1") {
		t.Errorf("no log line names the cap:\n%s", strings.Join(logs, "\n"))
	}
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	head := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	// The held request is admitted once the server has read its headers;
	// until then the probe below may still be served, so retry until it
	// is refused.
	var resp *http.Response
	for i := 0; ; i++ {
		resp = postDiscover(t, url)
		if resp.StatusCode != 200 {
			break
		}
		resp.Body.Close()
		if i == 10000 {
			t.Fatal("10,000 requests served while one was held past a cap of 1")
		}
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"quota":"maxInFlightRequests","limit":1`) {
		t.Errorf("a request past the cap: %d, Retry-After %q, %s; want 503 with Retry-After naming the limit 1", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	held, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	held.Body.Close()
	if held.StatusCode != 200 {
		t.Errorf("the held request: status %d, want 200", held.StatusCode)
	}
	// Its slot is given back when its handler returns, after the answer
	// is written: retry until the next request is served.
	for i := 0; ; i++ {
		resp := postDiscover(t, url)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if i == 10000 {
			t.Fatal("10,000 requests refused after the held request was answered")
		}
		if resp.StatusCode != 503 {
			t.Fatalf("after the held request: status %d, want 200", resp.StatusCode)
		}
	}
}

// TestServeMaxInFlightBad checks that a bad --max-inflight is refused.
func TestServeMaxInFlightBad(t *testing.T) {
	var stderr strings.Builder
	if code := serveContext(context.Background(), []string{"--max-inflight", "-2"}, strings.NewReader(""), io.Discard, &stderr); code != 2 {
		t.Errorf("--max-inflight -2: exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "--max-inflight -2") {
		t.Errorf("--max-inflight -2: stderr %q", stderr.String())
	}
}

func postDiscover(t *testing.T, url string) *http.Response {
	t.Helper()
	return mcpwire.Send(t, context.Background(), url, mcpwire.Request{ID: "2", Method: "server/discover"})
}
