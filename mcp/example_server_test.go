package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// A minimal server: one typed tool, served over Streamable HTTP. The
// request below is what any 2026-07-28 client sends; no handshake comes
// first.
func ExampleNewServer() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}})

	type In struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(ctx context.Context, req *mcp.ToolRequest, in In) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	// In production: http.ListenAndServe("127.0.0.1:8080", s) or s.NewHTTPServer.
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call",
		"params":{"name":"greet","arguments":{"name":"Ada"},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "greet")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
}

// ServeStdio serves newline-delimited JSON-RPC, as a server launched by a
// client as a subprocess does with os.Stdin and os.Stdout.
func ExampleServer_ServeStdio() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "stdio-demo", Version: "1.0.0"}, Cache: mcp.CacheOptions{TTL: mcp.Off}})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), in, &out); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"stdio-demo","version":"1.0.0"}}}}
}
