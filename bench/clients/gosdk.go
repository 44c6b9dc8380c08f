package clients

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func init() {
	register(Client{Name: "gosdk", HTTP: gosdkHTTP, Stdio: gosdkStdio})
}

// gosdkCaller is go-sdk v1.8.0's client.
type gosdkCaller struct {
	s    *mcp.ClientSession
	args map[string]any
}

func gosdkConnect(ctx context.Context, t mcp.Transport) (Caller, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-gosdk", Version: "1"}, nil)
	s, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: Version})
	if err != nil {
		return nil, err
	}
	if v := s.InitializeResult().ProtocolVersion; v != Version {
		s.Close()
		return nil, fmt.Errorf("go-sdk's client settled on %s, not %s", v, Version)
	}
	return &gosdkCaller{s: s, args: map[string]any{"text": EchoText}}, nil
}

func gosdkHTTP(ctx context.Context, url string) (Caller, error) {
	return gosdkConnect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}, DisableStandaloneSSE: true})
}

func gosdkStdio(ctx context.Context, argv []string) (Caller, error) {
	return gosdkConnect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)})
}

func (c *gosdkCaller) Call(ctx context.Context) (string, error) {
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: c.args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("echo: unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("echo: content %T", res.Content[0])
	}
	return tc.Text, nil
}

func (c *gosdkCaller) Close() error { return c.s.Close() }
