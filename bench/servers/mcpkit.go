package servers

import (
	"context"
	"io"
	"log/slog"

	"github.com/mcpkit/mcpkit/mcp"
)

func newMcpkit() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{
		Name:         Name,
		Version:      Version,
		Instructions: Instructions,
		CacheTTL:     CacheTTL,
		CacheScope:   mcp.CachePublic,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolName, Description: ToolDesc},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			return in.Text, nil
		})
	return s
}
