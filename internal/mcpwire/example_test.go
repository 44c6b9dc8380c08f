package mcpwire_test

import (
	"fmt"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// A request is valid by default, body and headers; each field breaks or
// changes one rule.
func ExampleRequest() {
	r := mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"hi"}}`}
	fmt.Println(string(r.Bytes()))
	h := r.Headers()
	fmt.Println(h.Get("Mcp-Protocol-Version"), h.Get("Mcp-Method"), h.Get("Mcp-Name"))

	// The same call with a Mcp-Name header that contradicts the body.
	r.Header = http.Header{"Mcp-Name": {"other"}}
	fmt.Println(r.Headers().Get("Mcp-Name"))
	// Output:
	// {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
	// 2026-07-28 tools/call echo
	// other
}

// Legacy requests: Initialize opens a session, and a request in it carries
// the session id and the negotiated version.
func ExampleInitialize() {
	fmt.Println(string(mcpwire.Initialize("", `{"roots":{}}`).Bytes()))
	r := mcpwire.Request{Legacy: true, Session: "s-1", ID: "2", Method: "tools/list"}
	fmt.Println(string(r.Bytes()))
	fmt.Println(r.Headers().Get("Mcp-Session-Id"), r.Headers().Get("Mcp-Protocol-Version"))
	// Output:
	// {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"test","version":"1"}}}
	// {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
	// s-1 2025-11-25
}
