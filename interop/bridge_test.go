package interop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// everythingBridge is a bridge in front of the npm reference server (a
// legacy stdio server on the TypeScript SDK).
func everythingBridge(t *testing.T) *bridge.Bridge {
	command := everythingServer(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := bridge.New(context.Background(), &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: command[0], Args: command[1:], Stderr: io.Discard}
		},
		Server:     mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}}},
		Logger:     quiet,
		MinBackoff: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func frontClient(t *testing.T, b *bridge.Bridge, o *client.Options) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: b.Server()}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	var names []string
	for tool, err := range c.ListTools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestBridgeEverything(t *testing.T) {
	b := everythingBridge(t)
	plain := frontClient(t, b, nil)
	if plain.Era() != mcp.EraModern || plain.ServerInfo().Name != "mcp-servers/everything" || plain.Instructions() == "" {
		t.Fatalf("front: %s %+v, instructions %q; want a modern front with the backend's identity", plain.Era(), plain.ServerInfo(), plain.Instructions())
	}

	// Capability-gated tools: the backend lists trigger-sampling-request
	// only to a session whose client declared sampling.
	if names := toolNames(t, plain); slices.Contains(names, "trigger-sampling-request") || !slices.Contains(names, "echo") {
		t.Errorf("tools without sampling: %v", names)
	}
	var mu sync.Mutex
	var prompts []string
	sampler := frontClient(t, b, &client.Options{Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		mu.Lock()
		prompts = append(prompts, p.Messages[0].Content[0].(*mcp.TextContent).Text)
		mu.Unlock()
		return &mcp.CreateMessageResult{Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "a sampled answer"}}}, nil
	}})
	if names := toolNames(t, sampler); !slices.Contains(names, "trigger-sampling-request") {
		t.Errorf("tools with sampling lack trigger-sampling-request: %v", names)
	}

	t.Run("sampling as input_required", func(t *testing.T) {
		res, err := sampler.CallTool(context.Background(), "trigger-sampling-request", map[string]any{"prompt": "hello"})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(text, "a sampled answer") || !strings.Contains(text, "test-model") {
			t.Errorf("result %q lacks the sampled answer", text)
		}
		if len(prompts) != 1 || !strings.Contains(prompts[0], "hello") {
			t.Errorf("the front client was asked %q", prompts)
		}
	})

	t.Run("progress", func(t *testing.T) {
		var got []float64
		_, err := plain.CallTool(context.Background(), "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3},
			client.WithProgress(func(p client.Progress) { got = append(got, p.Progress) }))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []float64{1, 2, 3}) {
			t.Errorf("progress %v, want 1 2 3", got)
		}
	})

	t.Run("elicitation as input_required", func(t *testing.T) { bridgeElicitation(t, b) })
	t.Run("listen with resources/updated", func(t *testing.T) { bridgeListenUpdated(t, b) })
	url := serveFront(t, b)
	t.Run("legacy client", func(t *testing.T) { bridgeLegacyClient(t, b, url) })
	t.Run("TypeScript client", func(t *testing.T) { bridgeTypeScript(t, url) })

	// Last: it kills every backend process of this bridge.
	t.Run("killed backend", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("finds the backend processes in /proc")
		}
		errc := make(chan error, 1)
		started := make(chan struct{}, 1)
		go func() {
			_, err := plain.CallTool(context.Background(), "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 30},
				client.WithProgress(func(client.Progress) {
					select {
					case started <- struct{}{}:
					default:
					}
				}))
			errc <- err
		}()
		<-started // the backend runs the call
		kids := childProcesses(t, "server-everything")
		if len(kids) == 0 {
			t.Fatal("no backend process found")
		}
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		err := <-errc
		var e *mcp.Error
		if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "backend exited") {
			t.Fatalf("call on a killed backend: %v, want -32603 naming the exit", err)
		}
		// The bridge restarts it: a later call works.
		res, err := plain.CallTool(context.Background(), "echo", map[string]any{"message": "again"})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "again") {
			t.Errorf("echo after the restart: %q", text)
		}
	})
}

// childProcesses returns the pids of this process's children whose command
// line contains match.
func childProcesses(t *testing.T, match string) []int {
	t.Helper()
	me := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[1] != me {
			continue
		}
		dir := filepath.Dir(st)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if bytes.Contains(cmdline, []byte(match)) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			pids = append(pids, pid)
		}
	}
	return pids
}
