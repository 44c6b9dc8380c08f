//go:build unix

package bridge_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func init() {
	stdioBackendTools = append(stdioBackendTools, func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: "freeze", Description: "Stops its own process (SIGSTOP, again whenever it is continued): it answers nothing more, and does not exit."},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
				for {
					// The kernel may continue a stopped process whose
					// process group is orphaned: stop it again.
					syscall.Kill(os.Getpid(), syscall.SIGSTOP)
					time.Sleep(10 * time.Millisecond)
				}
			})
	})
}

// A backend that stops answering without exiting is found by a ping that
// times out: the call in flight gets -32603 saying so, never a hang, and
// the next call gets a new backend session.
func TestBackendStopsAnswering(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_BACKEND=1"}, Stderr: io.Discard, Grace: 50 * time.Millisecond}
		},
		PingInterval: 20 * time.Millisecond,
		PingTimeout:  time.Second, // a loaded machine must not end the healthy sessions
	})
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = c.Client().CallTool(ctx, "freeze", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "stopped answering") {
		t.Fatalf("err = %v, want -32603 saying that the backend stopped answering", err)
	}
	res, err := c.Client().CallTool(ctx, "echo", map[string]any{"text": "fresh"})
	if err != nil {
		t.Fatalf("a call after the backend was ended: %v", err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "fresh" {
		t.Errorf("echo = %q", got)
	}
}
