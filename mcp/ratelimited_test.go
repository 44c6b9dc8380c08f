package mcp_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestRateLimitedRetryAfter checks that a handler's RateLimited error is
// answered 429 with its own Retry-After over HTTP, and with the JSON-RPC
// error alone in a legacy session (whose responses are all 200).
func TestRateLimitedRetryAfter(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "rl", Version: "1"}})
	mcp.AddTool(s, &mcp.Tool{Name: "busy", Description: "Always past its limit."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "", mcp.RateLimited("Rate limit exceeded: 1/m", map[string]any{"quota": "rateLimit"}, 2500*time.Millisecond)
		})
	ts := httptest.NewServer(s.NewHTTPServer("", "/mcp").Handler)
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	ctx := context.Background()
	call := mcpwire.Request{Method: "tools/call", Params: `{"name":"busy","arguments":{}}`}
	check := func(era string, resp *mcpwire.Response) {
		t.Helper()
		if resp.Status != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(resp.Raw), `"code":-32603`) ||
			!strings.Contains(string(resp.Raw), `"data":{"quota":"rateLimit"}`) {
			t.Errorf("%s: %d Retry-After %q %s\nwant 429, Retry-After 3 (2.5s rounded up) and the error", era, resp.Status, resp.Header.Get("Retry-After"), resp.Raw)
		}
	}
	check("modern", mcpwire.Post(t, ctx, url, call))

	init := mcpwire.Post(t, ctx, url, mcpwire.Initialize("", ""))
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %d %s", init.Status, init.Raw)
	}
	call.Legacy, call.Session = true, session
	if resp := mcpwire.Post(t, ctx, url, call); resp.Status != 200 || !strings.Contains(string(resp.Raw), `"code":-32603`) {
		t.Errorf("legacy: %d %s, want 200 and the error", resp.Status, resp.Raw)
	}

	if e := mcp.RateLimited("x", nil, time.Millisecond); e.HTTPStatus() != 429 {
		t.Errorf("RateLimited HTTPStatus = %d, want 429", e.HTTPStatus())
	}
}
