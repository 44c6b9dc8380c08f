package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

const exampleMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// exampleStdio serves s on pipes and returns a function that sends a line
// and a function that returns the next line the server wrote.
func exampleStdio(s *mcp.Server) (send func(string), next func() string) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go s.ServeStdio(context.Background(), inR, outW)
	lines := bufio.NewScanner(outR)
	send = func(line string) { io.WriteString(inW, line+"\n") }
	next = func() string {
		lines.Scan()
		return lines.Text()
	}
	return send, next
}

// A subscriptions/listen stream over stdio: the acknowledgement first, then
// a notification when a tool is registered at run time, and on Shutdown the
// graceful completion result.
func ExampleServer_Shutdown() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "example", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ Text string }) (string, error) {
			return in.Text, nil
		})
	send, next := exampleStdio(s)

	send(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + exampleMeta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	fmt.Println(next()) // promptsListChanged is not honoured: the server has no prompts

	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Shouts text."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ Text string }) (string, error) {
			return strings.ToUpper(in.Text), nil
		})
	fmt.Println(next())

	s.Shutdown(context.Background())
	fmt.Println(next())
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}
	// {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":1}}}
}

// A client lists resource URIs in resourceSubscriptions; the server tells it
// when one of them changes.
func ExampleServer_NotifyResourceUpdated() {
	s := mcp.NewServer(nil)
	s.AddResource(&mcp.Resource{URI: "file:///config.json", Name: "config"},
		func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "{}"}}}, nil
		})
	send, next := exampleStdio(s)

	send(`{"jsonrpc":"2.0","id":"cfg","method":"subscriptions/listen","params":{` + exampleMeta + `,"notifications":{"resourceSubscriptions":["file:///config.json"]}}}`)
	fmt.Println(next())

	s.NotifyResourceUpdated("file:///other.txt") // nobody asked: not sent
	s.NotifyResourceUpdated("file:///config.json")
	fmt.Println(next())
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"cfg"},"notifications":{"resourceSubscriptions":["file:///config.json"]}}}
	// {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"cfg"},"uri":"file:///config.json"}}
}

// A Bus carries the changes of every Server that uses it to the listen
// streams of all of them; LocalBus does so within one process. Here a
// plain subscriber watches what a server publishes.
func ExampleLocalBus() {
	bus := new(mcp.LocalBus)
	unsubscribe := bus.Subscribe(func(c mcp.Change) { fmt.Println("got", c.Kind, c.URI) })
	a := mcp.NewServer(&mcp.ServerOptions{Bus: bus})
	b := mcp.NewServer(&mcp.ServerOptions{Bus: bus})
	a.NotifyResourceUpdated("file:///a.txt")
	b.NotifyResourceUpdated("file:///b.txt")
	unsubscribe()
	a.NotifyResourceUpdated("file:///c.txt") // no subscriber left
	// Output:
	// got notifications/resources/updated file:///a.txt
	// got notifications/resources/updated file:///b.txt
}

// The text form of a Change is what distributed buses send.
func ExampleChange_MarshalText() {
	b, _ := mcp.Change{Kind: mcp.ResourceUpdated, URI: "file:///a.txt"}.MarshalText()
	fmt.Println(string(b))
	var c mcp.Change
	err := c.UnmarshalText([]byte("notifications/tools/list_changed"))
	fmt.Println(c.Kind == mcp.ToolsListChanged, err)
	// Output:
	// notifications/resources/updated file:///a.txt
	// true <nil>
}
