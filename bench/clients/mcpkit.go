package clients

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func init() {
	register(Client{Name: "mcpkit", HTTP: mcpkitHTTP, Stdio: mcpkitStdio})
}

// mcpkitCaller is mcpkit's client (package client).
type mcpkitCaller struct {
	c    *client.Client
	args map[string]any
}

func mcpkitConnect(ctx context.Context, t client.Transport) (Caller, error) {
	c, err := client.Connect(ctx, t, &client.Options{
		ClientInfo: mcp.Implementation{Name: "bench-mcpkit", Version: "1"},
		Version:    Version,
	})
	if err != nil {
		return nil, err
	}
	if v := c.ProtocolVersion(); v != Version {
		c.Close()
		return nil, fmt.Errorf("mcpkit's client settled on %s, not %s", v, Version)
	}
	return &mcpkitCaller{c: c, args: map[string]any{"text": EchoText}}, nil
}

func mcpkitHTTP(ctx context.Context, url string) (Caller, error) {
	return mcpkitConnect(ctx, &client.HTTPTransport{URL: url})
}

func mcpkitStdio(ctx context.Context, argv []string) (Caller, error) {
	return mcpkitConnect(ctx, &client.CommandTransport{Command: argv[0], Args: argv[1:]})
}

// MemoryCaller connects mcpkit's client in memory to an echo server of
// its own (no socket, no process): the client's cost with the transport
// taken away, plus the server's, in one process.
func MemoryCaller(ctx context.Context) (Caller, error) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "bench-memory", Version: "1"}})
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text back."},
		func(ctx context.Context, req *mcp.ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	return mcpkitConnect(ctx, &client.MemoryTransport{Server: s})
}

func (c *mcpkitCaller) Call(ctx context.Context) (string, error) {
	res, err := c.c.CallTool(ctx, "echo", c.args)
	if err != nil {
		return "", err
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("echo: %d content items", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("echo: content %T", res.Content[0])
	}
	return tc.Text, nil
}

func (c *mcpkitCaller) Close() error { return c.c.Close() }
