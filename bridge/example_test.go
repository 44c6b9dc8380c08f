package bridge_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// A legacy server (one that needs initialize) served as a 2026-07-28
// endpoint: the bridge discovers it through a probe session, and a tool
// that samples reaches the modern caller as an input_required round that
// its client answers.
func Example() {
	legacy := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "legacy-backend", Version: "1.0.0"}, Logger: quiet, State: mcp.StateOptions{Keys: testKeys}})
	mcp.AddTool(legacy, &mcp.Tool{Name: "haiku", Description: "Asks the model for a haiku."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Sample("haiku", &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "a haiku"}}}},
				MaxTokens: 50,
			})
			if err != nil {
				return "", err
			}
			return "the model wrote: " + r.Text(), nil
		})

	b, err := bridge.New(context.Background(), &bridge.Options{
		// Every backend session is a new connection (a process, for a
		// client.CommandTransport); here, the legacy era in memory.
		Backend: func() client.Transport { return &client.MemoryTransport{Server: legacy} },
		Eras:    client.LegacyOnly,
		Server:  mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}},
		Logger:  quiet,
	})
	if err != nil {
		panic(err)
	}
	defer b.Close()

	// A modern client of the bridge.
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: b.Server()}, &client.Options{
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "old pond, a frog"}}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(c.Era(), c.ServerInfo().Name)
	res, err := c.CallTool(context.Background(), "haiku", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// modern legacy-backend
	// the model wrote: old pond, a frog
}
