package demo

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// AddLegacyFixtures registers the fixtures that only the legacy
// (2025-11-25) conformance scenarios use. They work for modern clients
// too.
func AddLegacyFixtures(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "test_reconnection", Description: "Closes the SSE stream of a 2025-11-25 client mid-call, so that the client polls for the result with Last-Event-ID."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.CloseSSEStream()
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "Reconnection test completed successfully", nil
		})
}
