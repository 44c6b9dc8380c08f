package otel_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestAnnotatedAttributes checks that the attributes a handler attaches
// with mcp.Annotate (mcp.backend, as a gateway does) reach the call's span
// and its operation metric.
func TestAnnotatedAttributes(t *testing.T) {
	h := newHarness(t)
	mcp.AddTool(h.s, &mcp.Tool{Name: "routed", Description: "Says where it went."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		mcp.Annotate(ctx, "mcp.backend", "elsewhere")
		mcp.Annotate(ctx, "mcp.backend", "files") // the last value counts
		return "routed", nil
	})
	serveStdio(t, h, mcpwire.Request{Method: "tools/call", Params: `{"name":"routed","arguments":{}}`})
	ended := h.spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want the call's", len(ended))
	}
	if got := view(ended[0]).Attrs["mcp.backend"]; got != "files" {
		t.Errorf("span %q: mcp.backend %q, want files", ended[0].Name(), got)
	}
	if got := findMetric(t, h, "mcp.server.operation.duration")["mcp.backend"]; got != "files" {
		t.Errorf("operation metric: mcp.backend %q, want files", got)
	}
}
