package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Connect to a server over Streamable HTTP, list its tools and call one.
// The same code works against a legacy (2025-11-25) server.
func Example() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "calc", Version: "1.0.0"}})
	type In struct {
		A, B int
	}
	type Out struct {
		Sum int `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *mcp.ToolRequest, in In) (Out, error) {
			return Out{Sum: in.A + in.B}, nil
		})
	hs := httptest.NewServer(s)
	defer hs.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.Era(), c.ProtocolVersion())

	for tool, err := range c.ListTools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("tool:", tool.Name)
	}
	out, err := client.CallToolAs[Out](ctx, c, "add", In{A: 2, B: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sum:", out.Sum)
	// Output:
	// calc modern 2026-07-28
	// tool: add
	// sum: 5
}

// A MemoryTransport reaches a server in the same process, without
// sockets: what tests build on.
func ExampleMemoryTransport() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "mem"}})
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.Era())
	// Output: mem modern
}

// Options.Elicit answers a server's elicitation, whichever era the server
// is of: in input_required rounds (2026-07-28) or as elicitation/create
// requests (2025-11-25).
func ExampleOptions_elicit() {
	opts := &client.Options{
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			fmt.Println("the server asks:", p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	}
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes......")}}})
	type Who struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets the user."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			who, _, err := mcp.ElicitForm[Who](req, "who", "What is your name?")
			if err != nil {
				return "", err
			}
			return "Hello, " + who.Name, nil
		})
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(context.Background(), "greet", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// the server asks: What is your name?
	// Hello, Ada
}
