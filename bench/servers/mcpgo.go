//go:build !only_mcpkit && !only_gosdk && !only_floor

package servers

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func init() {
	built[McpGo] = implementation{http: newMcpGoHandler, stdio: serveMcpGoStdio}
}

func newMcpGo() *server.MCPServer {
	s := server.NewMCPServer(Name, Version,
		server.WithInstructions(Instructions),
		// listChanged: true, as go-sdk and mcpkit advertise; without it
		// mcp-go ends a subscriptions/listen for tool changes at once.
		server.WithToolCapabilities(true),
		// Off by default in mcp-go; on here so that every implementation
		// validates the arguments against the schema.
		server.WithInputSchemaValidation(),
		server.WithMethodCacheHints(mcp.MethodServerDiscover, CacheTTL.Milliseconds(), mcp.CacheScope(CacheScope)),
	)
	tool := mcp.NewTool(ToolName,
		mcp.WithDescription(ToolDesc),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
	)
	s.AddTool(tool, mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(in.Text), nil
	}))
	s.AddTool(mcp.NewTool(BurnTool,
		mcp.WithDescription(BurnDesc),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
	), mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
		Burn(BurnIters)
		return mcp.NewToolResultText(in.Text), nil
	}))
	s.AddTool(mcp.NewTool(SleepTool,
		mcp.WithDescription(SleepDesc),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
	), mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
		if !sleepCtx(ctx.Done()) {
			return nil, ctx.Err()
		}
		return mcp.NewToolResultText(in.Text), nil
	}))
	if Touch {
		var present atomic.Bool
		s.AddTool(mcp.NewTool(TouchTool, mcp.WithDescription(TouchDesc)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if present.CompareAndSwap(false, true) {
					s.AddTool(mcp.NewTool(TransientTool, mcp.WithDescription(TransientDesc),
						mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back"))),
						mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
							return mcp.NewToolResultText(in.Text), nil
						}))
				} else if present.CompareAndSwap(true, false) {
					s.DeleteTools(TransientTool)
				}
				return mcp.NewToolResultText(TouchText), nil
			})
	}
	return s
}

func newMcpGoHandler() http.Handler {
	return server.NewStreamableHTTPServer(newMcpGo(), server.WithStateLess(!Stateful))
}

func serveMcpGoStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return server.NewStdioServer(newMcpGo()).Listen(ctx, r, w)
}
