package client_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Options.Timeout bounds a call whose context has no deadline (60s by
// default) and mcp.Off takes the bound away.
func TestTimeoutOff(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		wantErr error
	}{
		{"default", 0, client.ErrTimeout},
		{"off", mcp.Off, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mcp.NewServer(nil)
				mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Takes two minutes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
					select {
					case <-time.After(2 * time.Minute):
						return "done", nil
					case <-ctx.Done():
						return "", ctx.Err()
					}
				})
				c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Timeout: tt.timeout})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_, err = c.CallTool(context.Background(), "slow", nil)
				if !errors.Is(err, tt.wantErr) && (err != nil || tt.wantErr != nil) {
					t.Errorf("CallTool of a 2-minute tool with Timeout %v: %v, want %v", tt.timeout, err, tt.wantErr)
				}
			})
		})
	}
}
