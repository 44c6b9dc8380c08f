package apps_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/mcp"
)

// A tool with an interactive view: the view first, then the tool that
// links it. The tool still returns text for hosts without MCP Apps.
func ExampleAddTool() {
	s := mcp.NewServer(&mcp.ServerOptions{
		Extensions: map[string]any{apps.ExtensionID: apps.Extension()},
	})
	view := apps.AddView(s, &apps.View{
		URI:  "ui://weather/dashboard.html",
		Name: "dashboard",
		HTML: `<!doctype html><html><body><h1>Weather</h1></body></html>`,
		CSP:  &apps.CSP{ConnectDomains: []string{"https://api.example.com"}},
	})
	apps.AddTool(s, &mcp.Tool{Name: "weather", Description: "Shows the weather"}, apps.ToolUI{View: view},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ City string }) (string, error) {
			return "Sunny in " + in.City, nil
		})
	fmt.Println(view)
	fmt.Println(apps.Validate(s))
	// Output:
	// ui://weather/dashboard.html
	// []
}

// A content-hash URI changes whenever the document does.
func ExampleView_hashURI() {
	s := mcp.NewServer(&mcp.ServerOptions{})
	uri := apps.AddView(s, &apps.View{URI: "ui://demo/counter.html", Name: "counter", HTML: "<!doctype html><p>0</p>", HashURI: true})
	fmt.Println(uri)
	// Output:
	// ui://demo/counter-3cca32f51606.html
}

// Supported is asked per request, from the request's own capabilities.
func ExampleSupported() {
	info := &mcp.RequestInfo{ClientCapabilities: mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{apps.ExtensionID: json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`)},
	}}
	fmt.Println(apps.Supported(info), apps.Supported(&mcp.RequestInfo{}))
	// Output:
	// true false
}

// ToolView reads a listed tool's view on the client side.
func ExampleToolView() {
	var t mcp.Tool
	_ = json.Unmarshal([]byte(`{"name":"refresh","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://w/d.html","visibility":["app"]}}}`), &t)
	uri, vis, ok := apps.ToolView(&t)
	fmt.Println(uri, vis, ok)
	// Output:
	// ui://w/d.html [app] true
}
