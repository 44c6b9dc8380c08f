// Package gosdkserver builds small MCP servers on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) for interoperability tests of
// mcpkit's client and of `mcpkit discover`.
package gosdkserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name, Version and Instructions identify the servers.
const (
	Name         = "gosdk-interop"
	Version      = "1.8.0-test"
	Instructions = "A go-sdk server used by mcpkit's interop tests."
)

// Modes are the ways a server can be served.
const (
	// HTTPStateless: Streamable HTTP, stateless (every version, modern
	// requests answered without a session).
	HTTPStateless = "http-stateless"
	// HTTPStateful: Streamable HTTP with sessions (dual-era).
	HTTPStateful = "http-stateful"
	// HTTPLegacy: Streamable HTTP with sessions, 2025-11-25 and older only.
	HTTPLegacy = "http-legacy"
	// SSE: the 2024-11-05 HTTP+SSE transport.
	SSE = "sse"
	// Stdio: stdio, every version.
	Stdio = "stdio"
	// StdioLegacy: stdio, 2025-11-25 and older only.
	StdioLegacy = "stdio-legacy"
)

// legacyVersions are the versions a legacy-only server serves.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// EchoIn is the input of the echo tool.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// New returns a server with tools, a prompt and a resource. With legacy
// set it serves only the initialize-handshake versions. pageSize (0 means
// the SDK's default) makes listing paginate.
func New(legacy bool, pageSize int) *mcp.Server {
	opts := &mcp.ServerOptions{Instructions: Instructions, PageSize: pageSize}
	if legacy {
		opts.SupportedProtocolVersions = legacyVersions
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, opts)
	for _, name := range []string{"echo", "echo2", "echo3"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Echoes the text back."},
			func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "readme", URI: "test://readme", MIMEType: "text/plain", Description: "A text resource."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "read me"}}}, nil
		})
	return s
}

// Handler returns the HTTP handler for an HTTP mode.
func Handler(mode string) (http.Handler, error) {
	switch mode {
	case HTTPStateless:
		s := New(false, 2)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}), nil
	case HTTPStateful:
		s := New(false, 2)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), nil
	case HTTPLegacy:
		s := New(true, 2)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), nil
	case SSE:
		s := New(true, 2)
		return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil), nil
	}
	return nil, fmt.Errorf("gosdkserver: %q is not an HTTP mode", mode)
}

// ServeStdio serves a stdio mode on os.Stdin and os.Stdout until stdin
// closes.
func ServeStdio(ctx context.Context, mode string) error {
	if mode != Stdio && mode != StdioLegacy {
		return fmt.Errorf("gosdkserver: %q is not a stdio mode", mode)
	}
	s := New(mode == StdioLegacy, 2)
	return s.Run(ctx, &mcp.StdioTransport{})
}

// IsStdio reports whether mode is a stdio mode.
func IsStdio(mode string) bool { return strings.HasPrefix(mode, "stdio") }

// Main runs a server in the mode named by args[0]: stdio modes on stdin
// and stdout, HTTP modes on 127.0.0.1 (port args[1], default a free one),
// printing the URL to stderr.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: gosdk-server MODE [PORT]; modes: http-stateless http-stateful http-legacy sse stdio stdio-legacy")
		return 2
	}
	mode := args[0]
	if IsStdio(mode) {
		if err := ServeStdio(context.Background(), mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	h, err := Handler(mode)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	port := "0"
	if len(args) > 1 {
		port = args[1]
	}
	return listen(h, port)
}
