package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// A merged tools/list carries ttlMs at most Options.MaxListTTL (what
// mcpkit gateway --watch sets), though its backend allows an hour.
func TestMaxListTTL(t *testing.T) {
	be := mcp.NewServer(&mcp.ServerOptions{Logger: quiet})
	mcp.AddTool(be, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", nil
	})
	for _, tc := range []struct {
		max  time.Duration
		want float64
	}{{0, 3600000}, {5 * time.Second, 5000}} {
		g, err := gateway.New(context.Background(), []gateway.Backend{
			{Name: "be", Transport: func() client.Transport { return &client.MemoryTransport{Server: be} }},
		}, &gateway.Options{Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}}, Logger: quiet, MaxListTTL: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result struct {
				TTLMs float64 `json:"ttlMs"`
				Tools []any   `json:"tools"`
			}
		}
		mcpwire.Serve(t, g.Server(), mcpwire.Request{Method: "tools/list"}).Decode(t, &resp)
		g.Close()
		if len(resp.Result.Tools) != 1 || resp.Result.TTLMs != tc.want {
			t.Errorf("MaxListTTL %v: ttlMs %v with %d tools, want %v", tc.max, resp.Result.TTLMs, len(resp.Result.Tools), tc.want)
		}
	}
}
