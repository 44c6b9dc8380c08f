package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// hostile is a backend whose tools/list answers body, whatever it is.
func hostile(name, body string) gateway.Backend {
	s := mcp.NewServer(&mcp.ServerOptions{Logger: quiet, Provider: mcp.ProviderFunc(func(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
		if req.Method == "tools/list" {
			return &mcp.ProvidedResult{Body: json.RawMessage(body)}, nil
		}
		return nil, mcp.InvalidParams("no")
	})})
	s.Advertise(&mcp.Advertisement{Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListCapability{}}})
	return gateway.Backend{Name: name, Transport: func() client.Transport { return &client.MemoryTransport{Server: s} }}
}

// TestHostileLists checks what the gateway makes of backends' lists it
// cannot use as they are: items without a usable name and names outside
// the tool-name characters are left out, a list that is not a list is left
// out whole, a nextCursor that is not a string ends that backend's pages;
// the other backends' items are listed.
func TestHostileLists(t *testing.T) {
	_, c := start(t, []gateway.Backend{
		hostile("a", `{"tools":[{"name":"bad name"},{"name":"ok"},{"nope":1},{"name":7},{"name":"x/y"},{"name":""}],"nextCursor":5}`),
		hostile("b", `{"tools":{"name":"not a list"}}`),
		hostile("c", `{"tools":[{"name":"fine","inputSchema":{"type":"object"}}]}`),
	}, nil)
	if d := cmp.Diff([]string{"a_ok", "c_fine"}, toolNames(t, c)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}
