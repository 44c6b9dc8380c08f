package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
)

// slowBodyServer serves s on a loopback port and returns its address.
func slowBodyServer(t *testing.T, s *Server) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// openPost writes the head of a POST to /mcp declaring a body of
// contentLength bytes and the first bytes of it, and returns the
// connection with the bytes still to come unsent. A guard deadline keeps a
// test from hanging when the server never answers (that is the failure).
func openPost(t *testing.T, addr string, contentLength int, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	h := mcpwire.Request{Method: "tools/call", Name: "echo"}.Headers()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, contentLength)
	for k, vs := range h {
		for _, v := range vs {
			fmt.Fprintf(c, "%s: %s\r\n", k, v)
		}
	}
	io.WriteString(c, "\r\n"+first)
	return c
}

// readStatus reads the status line of the response on c.
func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDeclaredBodyTooLarge: a Content-Length above MaxMessageBytes is
// answered 413 at once, before any of the body arrives (it used to reserve
// the length in the byte budget and wait for the body).
func TestDeclaredBodyTooLarge(t *testing.T) {
	s := NewServer(&ServerOptions{MaxMessageBytes: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	addr := slowBodyServer(t, s)
	c := openPost(t, addr, 268435456, "")
	if got := readStatus(t, c); got != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", got)
	}
}

// TestStalledBodyHoldsNoBudget: a request that declared a large body and
// stalls holds none of the in-flight byte budget for bytes that have not
// arrived, so other large requests are still admitted (it used to reserve
// its declared length up front, and every request of 64 KiB or more got
// 503).
func TestStalledBodyHoldsNoBudget(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightBytes: 1 << 20}, Logger: slog.New(slog.DiscardHandler)})
	addTestTool(s)
	addr := slowBodyServer(t, s)
	openPost(t, addr, 1<<20, `{"jsonrpc":"2.0",`)
	// The kernel delivers the stalled request: wait until its handler
	// holds its in-flight slot (it reads the body right after).
	realtime.Poll(t, 10*time.Second, "the stalled request's slot", func() bool { return s.quota.requests.Load() == 1 })
	big := strings.Repeat("x", 100<<10)
	resp := mcpwire.Send(t, context.Background(), "http://"+addr, mcpwire.Request{Method: "tools/call", Name: "echo", Params: `{"name":"echo","arguments":{"Text":"` + big + `"}}`})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a 100 KiB request beside a stalled 1 MiB one: status %d, want 200", resp.StatusCode)
	}
}

// TestSlowBodyTimeout: a body that does not arrive within
// HTTP.BodyTimeout is answered 408 and its in-flight slot is given back,
// so that a client trickling its bodies cannot hold the slots for ever.
func TestSlowBodyTimeout(t *testing.T) {
	s := NewServer(&ServerOptions{
		HTTP:   HTTPOptions{BodyTimeout: 50 * time.Millisecond},
		Quotas: QuotaOptions{MaxInFlightRequests: 1, MaxQueueDelay: Off},
		Logger: slog.New(slog.DiscardHandler),
	})
	addTestTool(s)
	addr := slowBodyServer(t, s)
	c := openPost(t, addr, 1000, `{"jsonrpc":"2.0",`)
	if got := readStatus(t, c); got != http.StatusRequestTimeout {
		t.Errorf("status %d, want 408", got)
	}
	resp := mcpwire.Send(t, context.Background(), "http://"+addr, mcpwire.Request{Method: "tools/call", Name: "echo", Params: `{"name":"echo","arguments":{}}`})
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		t.Errorf("the timed-out request still holds the only in-flight slot")
	}
}

// TestBodyTimeoutOptions: BodyTimeout's zero value is 30 seconds, Off
// removes it.
func TestBodyTimeoutOptions(t *testing.T) {
	for _, c := range []struct {
		set  time.Duration
		want time.Duration
	}{{0, 30 * time.Second}, {Off, Off}, {time.Second, time.Second}} {
		s := NewServer(&ServerOptions{HTTP: HTTPOptions{BodyTimeout: c.set}, Logger: slog.New(slog.DiscardHandler)})
		if s.bodyTimeout != c.want {
			t.Errorf("BodyTimeout %v: in force %v, want %v", c.set, s.bodyTimeout, c.want)
		}
	}
}

func addTestTool(s *Server) {
	AddTool(s, &Tool{Name: "echo", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{ Text string }) (string, error) {
		return fmt.Sprint(len(in.Text)), nil
	})
}
