package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestCancelledCallReportsCancellation checks that a call whose context
// is cancelled reports context.Canceled even when the server's error
// answer (the handler saw the cancellation too) reaches the client first;
// the server's error stays in the chain. Each era and transport order is
// tried several times, since which of the two arrives first is a race.
func TestCancelledCallReportsCancellation(t *testing.T) {
	for _, era := range []client.EraPreference{client.ModernOnly, client.LegacyOnly} {
		for range 20 {
			ctx, cancel := context.WithCancel(context.Background())
			s := mcp.NewServer(nil)
			mcp.AddTool(s, &mcp.Tool{Name: "stop", Description: "Cancels its caller, then fails."}, func(context.Context, *mcp.ToolRequest, struct{}) (string, error) {
				cancel()
				return "", &mcp.Error{Code: -32603, Message: "stopped"}
			})
			c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Eras: era})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CallTool(ctx, "stop", nil)
			c.Close()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("era %v: err = %v, want context.Canceled", era, err)
			}
		}
	}
}
