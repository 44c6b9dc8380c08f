//go:build !only_mcpkit && !only_mcpgo && !only_floor

package servers

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func init() {
	built[GoSDK] = implementation{http: newGoSDKHandler, stdio: serveGoSDKStdio}
}

func newGoSDK() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, &mcp.ServerOptions{
		Instructions: Instructions,
		SetCacheable: func(ctx context.Context, req mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = int(CacheTTL.Milliseconds())
			c.CacheScope = CacheScope
		},
	})
	// go-sdk infers the input schema from EchoIn and validates arguments
	// against it before the handler runs.
	mcp.AddTool(s, &mcp.Tool{Name: ToolName, Description: ToolDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: BurnTool, Description: BurnDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			Burn(BurnIters)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: SleepTool, Description: SleepDesc},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			if !sleepCtx(ctx.Done()) {
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	if Touch {
		var present atomic.Bool
		mcp.AddTool(s, &mcp.Tool{Name: TouchTool, Description: TouchDesc},
			func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
				if present.CompareAndSwap(false, true) {
					mcp.AddTool(s, &mcp.Tool{Name: TransientTool, Description: TransientDesc},
						func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
							return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
						})
				} else if present.CompareAndSwap(true, false) {
					s.RemoveTools(TransientTool)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: TouchText}}}, nil, nil
			})
	}
	return s
}

func newGoSDKHandler() http.Handler {
	s := newGoSDK()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: !Stateful, JSONResponse: true})
}

func serveGoSDKStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return newGoSDK().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
