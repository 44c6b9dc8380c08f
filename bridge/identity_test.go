package bridge_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// identityBackend serves, on stdio, a backend whose identity is its run:
// the nth process started with dir is version n, says "run n" in its
// instructions, and has prompts from its second run on. It writes its
// process id to dir/run-n.
func identityBackend(dir string) {
	n := 1
	var f *os.File
	for {
		var err error
		f, err = os.OpenFile(filepath.Join(dir, "run-"+strconv.Itoa(n)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			os.Exit(2)
		}
		n++
	}
	f.WriteString(strconv.Itoa(os.Getpid()))
	f.Close()
	run := strconv.Itoa(n)
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "identity", Version: run}, Instructions: "run " + run, Logger: quiet})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return run, nil
	})
	if n > 1 {
		s.AddPrompt(&mcp.Prompt{Name: "hello", Description: "Says hello."}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	s.ServeStdio(context.Background(), os.Stdin, os.Stdout)
}

// A backend that restarts with another identity (serverInfo, instructions,
// capabilities) changes what server/discover says, and listen streams are
// told that the lists changed.
func TestBackendIdentityChanges(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_IDENTITY_DIR=" + dir}, Stderr: io.Discard}
		},
		MinBackoff: time.Millisecond,
	})
	c := mcptest.NewClient(t, b.Server())
	type identity struct {
		Info         mcp.Implementation
		Instructions string
		Prompts      bool
	}
	discover := func() identity {
		t.Helper()
		r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "server/discover"})
		var d struct {
			Result struct {
				Capabilities mcp.ServerCapabilities
				Instructions string
				Meta         struct {
					Info mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
				} `json:"_meta"`
			}
		}
		r.Decode(t, &d)
		return identity{d.Result.Meta.Info, d.Result.Instructions, d.Result.Capabilities.Prompts != nil}
	}
	if diff := cmp.Diff(identity{mcp.Implementation{Name: "identity", Version: "1"}, "run 1", false}, discover()); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "run-1"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(raw))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			// End the probe's process: the bridge restarts the backend.
			p, err := os.FindProcess(pid)
			if err != nil {
				t.Fatal(err)
			}
			p.Kill()
			continue
		}
		if ev.Notification.Method != "notifications/tools/list_changed" {
			t.Fatalf("got %s, want the list change of the restart", ev.Notification.Method)
		}
		break
	}
	// Run 2 is the shared backend session the bridge opened at start-up
	// for the modern backend's list-changes stream (and its calls): the
	// restarted probe is run 3.
	if diff := cmp.Diff(identity{mcp.Implementation{Name: "identity", Version: "3"}, "run 3", true}, discover()); diff != "" {
		t.Errorf("after the restart (-want +got):\n%s", diff)
	}
}
