// Package mcpgoserver builds a small MCP server on mcp-go
// (github.com/mark3labs/mcp-go v1.2.1) for interoperability tests of
// mcpkit's client and command line: the same tools, prompt and resource as
// package gosdkserver, so that the tests can ask every peer the same
// questions.
package mcpgoserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name, Version and Instructions identify the server.
const (
	Name         = "mcpgo-interop"
	Version      = "1.2.1-test"
	Instructions = "An mcp-go server used by mcpkit's interop tests."
)

// Modes are the ways the server can be served.
const (
	// HTTPStateless: Streamable HTTP without sessions.
	HTTPStateless = "http-stateless"
	// HTTPStateful: Streamable HTTP with sessions (Mcp-Session-Id).
	HTTPStateful = "http-stateful"
	// Stdio: newline-delimited JSON-RPC on stdin and stdout.
	Stdio = "stdio"
)

// IsStdio reports whether mode is a stdio mode.
func IsStdio(mode string) bool { return strings.HasPrefix(mode, "stdio") }

// EchoIn is the input of the echo tools.
type EchoIn struct {
	Text string `json:"text"`
}

// New returns the server: tools echo, echo2 and echo3, the prompt greet and
// the resource test://readme; lists are paged two items at a time.
func New() *server.MCPServer {
	s := server.NewMCPServer(Name, Version,
		server.WithInstructions(Instructions),
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithInputSchemaValidation(),
		server.WithPaginationLimit(2),
	)
	for _, name := range []string{"echo", "echo2", "echo3"} {
		s.AddTool(mcp.NewTool(name,
			mcp.WithDescription("Echoes the text back."),
			mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo")),
		), mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(in.Text), nil
		}))
	}
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets someone.")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A greeting.", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello")),
			}), nil
		})
	s.AddResource(mcp.NewResource("test://readme", "readme", mcp.WithMIMEType("text/plain"), mcp.WithResourceDescription("A text resource.")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}, nil
		})
	return s
}

// Handler returns the HTTP handler of an HTTP mode.
func Handler(mode string) (http.Handler, error) {
	switch mode {
	case HTTPStateless:
		return server.NewStreamableHTTPServer(New(), server.WithStateLess(true)), nil
	case HTTPStateful:
		return server.NewStreamableHTTPServer(New(), server.WithStateful(true)), nil
	}
	return nil, fmt.Errorf("mcpgoserver: %q is not an HTTP mode", mode)
}

// ServeStdio serves the stdio mode on r and w until r ends.
func ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return server.NewStdioServer(New()).Listen(ctx, r, w)
}
