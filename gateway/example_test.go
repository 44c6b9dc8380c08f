package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef")}

// Two servers in the same process behind one gateway: their tools are
// listed as SERVER_NAME and routed back by that prefix, and a resource
// keeps its URI and is read from the server that listed it.
func Example() {
	weather := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "weather", Version: "1.0.0"}, Logger: quiet})
	mcp.AddTool(weather, &mcp.Tool{Name: "forecast", Description: "Forecasts the weather."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	notes := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "notes", Version: "1.0.0"}, Logger: quiet})
	mcp.AddTool(notes, &mcp.Tool{Name: "add", Description: "Adds a note."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "added", nil })
	notes.AddResource(&mcp.Resource{URI: "notes://all", Name: "all notes"},
		func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "buy milk"}}}, nil
		})

	g, err := gateway.New(context.Background(), []gateway.Backend{
		{Name: "weather", Transport: func() client.Transport { return &client.MemoryTransport{Server: weather} }},
		{Name: "notes", Transport: func() client.Transport { return &client.MemoryTransport{Server: notes} }},
	}, &gateway.Options{Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}}, Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer g.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: g.Server()}, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name)
	for tool, err := range c.ListTools(ctx) {
		if err != nil {
			panic(err)
		}
		fmt.Println(tool.Name)
	}
	res, err := c.CallTool(ctx, "weather_forecast", map[string]any{"city": "Oslo"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	r, err := c.ReadResource(ctx, "notes://all")
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Contents[0].Text)
	// Output:
	// mcpkit-gateway
	// weather_forecast
	// notes_add
	// sunny in Oslo
	// buy milk
}
