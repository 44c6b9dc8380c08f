package gateway_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// A modern backend's own list change (sent only on its listen streams)
// reaches the gateway's listeners, and the gateway lists the new tool.
func TestModernBackendListChanged(t *testing.T) {
	m := srv{name: "a", tools: []string{"t"}}.build()
	be := gateway.Backend{Name: "a", Transport: func() client.Transport { return &client.MemoryTransport{Server: m} }}
	_, c := start(t, []gateway.Backend{be}, nil)
	changes := listenTools(t, c)
	mcp.AddTool(m, &mcp.Tool{Name: "added", Description: "New."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	select {
	case <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed from the gateway")
	}
	if names := toolNames(t, c); len(names) != 2 || !slices.ContainsFunc(names, func(n string) bool { return len(n) >= 5 && n[len(n)-5:] == "added" }) {
		t.Errorf("tools after the change = %v, want the added one too", names)
	}
}
