package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

const validMeta = `"_meta":{` + mcpwire.MetaFields + `}`

// blockingServer has a tool that blocks until its context is cancelled and
// reports the cancellation on the returned channel.
func blockingServer(t *testing.T) (*mcp.Server, chan error, chan struct{}) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
	cancelled := make(chan error, 1)
	started := make(chan struct{}, 1)
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- ctx.Err()
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				return "not cancelled", nil
			}
		})
	return s, cancelled, started
}

func TestHTTPClientDisconnectCancelsHandler(t *testing.T) {
	s, cancelled, started := blockingServer(t)
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := mcpwire.Request{Method: "tools/call", Params: `{"name":"block"}`}.NewRequest(ctx, ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel() // the client goes away
	select {
	case err := <-cancelled:
		if err != context.Canceled {
			t.Errorf("handler saw %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled when the client disconnected")
	}
	<-errc
}

// TestStdioCancelledNotification runs in a synctest bubble (pipes in process: its 5 s guard is the bubble's time).
func TestStdioCancelledNotification(t *testing.T) { synctest.Test(t, testStdioCancelledNotification) }

func testStdioCancelledNotification(t *testing.T) {
	s, cancelled, started := blockingServer(t)
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), pr, outW); outW.Close() }()
	var lines []string
	readDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		close(readDone)
	}()
	io.WriteString(pw, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block",`+validMeta+`}}`+"\n")
	<-started
	io.WriteString(pw, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`+"\n")
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not cancel the handler's context")
	}
	// A later request is still served, and the cancelled one gets no response.
	io.WriteString(pw, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{`+validMeta+`}}`+"\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-readDone
	if len(lines) != 1 || !strings.Contains(lines[0], `"id":2`) {
		t.Fatalf("stdout = %q, want only the discover response", lines)
	}
}

// TestStdioConcurrentRequests runs in a synctest bubble (in process: if fewer than 8 ran at once, the 10 s the handlers wait pass on the bubble's clock at once).
func TestStdioConcurrentRequests(t *testing.T) { synctest.Test(t, testStdioConcurrentRequests) }

func testStdioConcurrentRequests(t *testing.T) {
	s := mcp.NewServer(nil)
	var inflight, peak atomic.Int32
	release := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			n := inflight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if n == 8 {
				close(release) // all 8 run at once
			}
			select {
			case <-release:
			case <-time.After(10 * time.Second): // fewer ran at once: peak says so below
			}
			inflight.Add(-1)
			return "ok", nil
		})
	var in strings.Builder
	for i := range 8 {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": json.RawMessage(`{"name":"slow",` + validMeta + `}`)})
		in.Write(b)
		in.WriteByte('\n')
	}
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n"); got != 8 {
		t.Fatalf("got %d response lines, want 8", got)
	}
	if peak.Load() != 8 {
		t.Fatalf("at most %d requests ran at once, want all 8 concurrently", peak.Load())
	}
}

func TestSSEKeepsLinesWhole(t *testing.T) {
	// Every SSE data line holds one whole JSON message (no pretty printing).
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "p", Description: "Progress."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				req.Progress(float64(i), 3, "step\nwith newline")
			}
			return "multi\nline", nil
		})
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp := mcpwire.Send(t, context.Background(), ts.URL, mcpwire.Request{Method: "tools/call", Params: `{"name":"p"}`, Meta: `"progressToken":"t"`})
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var events int
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events++
			if !json.Valid([]byte(d)) {
				t.Errorf("data line is not one JSON message: %q", d)
			}
		}
	}
	if events != 4 {
		t.Errorf("got %d events, want 3 progress notifications and the result", events)
	}
}

func TestHandlerPanicBecomesInternalError(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mcp.AddTool(s, &mcp.Tool{Name: "boom", Description: "Panics."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { panic("boom") })
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom",` + validMeta + `}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + validMeta + `}}` + "\n"
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`) || !strings.Contains(got, `"id":2,"result"`) {
		t.Fatalf("stdout = %s", got)
	}
}

func TestHostName(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "127.0.0.1", "localhost": "localhost", "[::1]:9": "::1", "[::1]": "::1",
		"example.com:443": "example.com", "Example.COM": "Example.COM", "localhost:": "localhost",
		// Not a Host value: no host.
		"::1": "", "localhost:evil": "", "[::1]evil.com": "", "[::1]:8o": "", "localhost:123456": "",
		"127.0.0.1:80:80": "", "[::1": "",
	} {
		if got := mcp.HostNameForTest(in); got != want {
			t.Errorf("hostName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOriginAndHostStrict: a request with a second Origin, or a Host that
// does not parse as host[:port], is refused with 403 on a loopback server.
func TestOriginAndHostStrict(t *testing.T) {
	s := mcp.NewServer(nil)
	ts := httptest.NewServer(s)
	defer ts.Close()
	tests := []struct {
		name    string
		origins []string
		host    string
		want    int
	}{
		{"one loopback origin", []string{"http://localhost:3000"}, "", 200},
		{"a second origin", []string{"http://localhost:3000", "https://evil.example"}, "", 403},
		{"two loopback origins", []string{"http://localhost:3000", "http://127.0.0.1"}, "", 403},
		{"host with a port", nil, "localhost:8080", 200},
		{"port of letters", nil, "localhost:evil", 403},
		{"junk after the brackets", nil, "[::1]evil.com", 403},
	}
	for _, tt := range tests {
		req, err := mcpwire.Request{Method: "server/discover"}.NewRequest(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range tt.origins {
			req.Header.Add("Origin", o)
		}
		if tt.host != "" {
			req.Host = tt.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
}
