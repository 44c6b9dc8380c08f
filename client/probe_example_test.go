package client_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func ExampleClient_Probe() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "probed", Version: "1.0.0"}})
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, st := range c.Probe() {
		fmt.Printf("%s: %s\n", st.Request, st.Meaning)
	}
	fmt.Println(c.Era(), c.ProtocolVersion())
	// Output:
	// server/discover at 2026-07-28: a DiscoverResult: a modern server
	// modern 2026-07-28
}

func ExampleConnectError() {
	_, err := client.Connect(context.Background(), &client.HTTPTransport{URL: "http://127.0.0.1:1/mcp"}, nil)
	var ce *client.ConnectError
	if errors.As(err, &ce) {
		fmt.Println(ce.Kind, len(ce.Steps) > 0)
	}
	// Output:
	// unreachable true
}
