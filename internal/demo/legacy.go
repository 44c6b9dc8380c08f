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
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_logging", Description: "Sends three info log messages about 50 ms apart, then answers."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				req.Log(mcp.LevelInfo, "test_tool_with_logging", msg)
			}
			return "Tool with logging executed successfully", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_reconnection", Description: "Closes the SSE stream of a 2025-11-25 client mid-call, so that the client polls for the result with Last-Event-ID."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.CloseSSEStream()
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "Reconnection test completed successfully", nil
		})
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
