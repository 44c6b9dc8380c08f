package client_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func benchServer() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "bench"}})
	type In struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in In) (string, error) {
		return in.Text, nil
	})
	return s
}

func benchCall(b *testing.B, tr client.Transport) {
	ctx := context.Background()
	c, err := client.Connect(ctx, tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "hello"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.CallTool(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallToolMemory is one tools/call through the in-memory
// transport: the client's own cost, plus the server's Handle.
func BenchmarkCallToolMemory(b *testing.B) {
	benchCall(b, &client.MemoryTransport{Server: benchServer()})
}

// BenchmarkCallToolHTTP is one tools/call over loopback HTTP.
func BenchmarkCallToolHTTP(b *testing.B) {
	hs := httptest.NewServer(benchServer())
	defer hs.Close()
	benchCall(b, &client.HTTPTransport{URL: hs.URL})
}

// TestCallToolMemoryAllocs pins the allocations of one tools/call in
// memory (the client's and the server's together; 42 when this test was
// written): a change that adds some to the call path fails it.
func TestCallToolMemoryAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and the race detector add allocations")
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: benchServer()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "hello"}
	var callErr error
	n := testing.AllocsPerRun(200, func() {
		if _, err := c.CallTool(ctx, "echo", args); err != nil {
			callErr = err
		}
	})
	if callErr != nil {
		t.Fatal(callErr)
	}
	const limit = 45
	if n > limit {
		t.Errorf("one tools/call in memory allocates %.0f times, more than %d", n, limit)
	}
}
